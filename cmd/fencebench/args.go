package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/fencebench/fencebench/outcome"
)

// positional parses the arguments of a command that takes no flags but -h: it returns the
// positional arguments, and an exit code >= 0 when the command must end now.
func positional(cmd, usage string, args []string, stderr io.Writer) ([]string, int) {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintf(stderr, "usage: fencebench %s %s\n", cmd, usage) }
	pos, err := parseAnywhere(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return nil, outcome.ExitPass
	case err != nil:
		return nil, outcome.ExitBadInput
	}
	return pos, -1
}

// parseAnywhere parses the flags of fs wherever they stand among the positional arguments
// (`run steady-state --seed 3` is `run --seed 3 steady-state`) and returns the positional
// arguments in order. Everything after "--" is positional.
func parseAnywhere(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" && !isFlagValue(fs, args[:consumed-1]) {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

// isFlagValue reports whether the argument after args would be the value of args' last
// element, a flag that takes a separate value (so a "--" there is a value, not the end of
// the flags).
func isFlagValue(fs *flag.FlagSet, args []string) bool {
	if len(args) == 0 {
		return false
	}
	last := args[len(args)-1]
	if !strings.HasPrefix(last, "-") || strings.Contains(last, "=") {
		return false
	}
	f := fs.Lookup(strings.TrimLeft(last, "-"))
	if f == nil {
		return false
	}
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return !ok || !b.IsBoolFlag()
}

// flagValues returns the values the command line gives to flag name (in any of its forms),
// so that the redactor knows a secret before anything, a flag error included, is printed.
func flagValues(args []string, name string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if args[i] == "--" {
			break
		}
		n, value, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if !strings.HasPrefix(args[i], "-") || n != name {
			continue
		}
		if !hasValue && i+1 < len(args) {
			i++
			value = args[i]
		}
		out = append(out, value)
	}
	return out
}
