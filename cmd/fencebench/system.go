package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/runner"
	"github.com/fencebench/fencebench/scenarios"
	"github.com/fencebench/fencebench/system"
)

// systemFlags are run's flags that put a system of the user's in place of the simulated
// copies (docs/bring-your-own.md).
type systemFlags struct {
	cmd      *string
	timeout  *time.Duration
	kill     *bool
	violates *string
}

func registerSystemFlags(fs *flag.FlagSet) *systemFlags {
	return &systemFlags{
		cmd: fs.String("system", "", "test this command's nodes instead of the simulated copies: one process per writer, speaking\n"+
			"the process protocol "+system.Version+" on stdin/stdout (docs/bring-your-own.md); words split like a shell's, no shell runs"),
		timeout: fs.Duration("answer-timeout", 15*time.Second, "with --system: how long a running node may take to answer a request"),
		kill:    fs.Bool("expect-broken", false, "with --system: the system is broken on purpose; a cell passes when an invariant fails"),
		violates: fs.String("expect-violated", "", "with --system --expect-broken: comma-separated invariants that must fail "+
			"(default: any)"),
	}
}

// run runs scs: against the system when --system is set, else as runner.Run does.
func (f *systemFlags) run(ctx context.Context, scs []*scenarios.Scenario, opts runner.Options) (*outcome.Summary, error) {
	if f == nil || *f.cmd == "" {
		if f != nil && (*f.kill || *f.violates != "") {
			return nil, fmt.Errorf("%w: --expect-broken and --expect-violated need --system", outcome.ErrBadInput)
		}
		return runner.Run(ctx, scs, opts)
	}
	if opts.Variant != "" || opts.Matrix {
		return nil, fmt.Errorf("%w: --variant and --matrix choose the bench's own protocol; a system's variant is its command's business", outcome.ErrBadInput)
	}
	words, err := splitWords(*f.cmd)
	if err != nil || len(words) == 0 {
		return nil, fmt.Errorf("%w: --system %q: %v", outcome.ErrBadInput, *f.cmd, err)
	}
	so := runner.SystemOptions{Launcher: system.Command(system.ProcOptions{Command: words, AnswerTimeout: *f.timeout}), Kill: *f.kill}
	if *f.violates != "" {
		for _, v := range strings.Split(*f.violates, ",") {
			so.Violates = append(so.Violates, history.Invariant(strings.TrimSpace(v)))
		}
	}
	return runner.RunSystem(ctx, scs, opts, so)
}

// splitWords splits a command line into words as a POSIX shell would for plain words and
// single- or double-quoted ones (a backslash escapes the next character outside single
// quotes); nothing is expanded.
func splitWords(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	in, quote, esc := false, rune(0), false
	for _, r := range s {
		switch {
		case esc:
			cur.WriteRune(r)
			esc = false
		case r == '\\' && quote != '\'':
			esc, in = true, true
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if quote != 0 || esc {
		return nil, errors.New("unterminated quote or escape")
	}
	if in {
		out = append(out, cur.String())
	}
	return out, nil
}
