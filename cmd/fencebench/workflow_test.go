package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/fencebench/fencebench/runner"
)

// plausible are the values the substitutions of the shipped workflow and manifest stand for.
var plausible = map[string]string{"matrix.shard": "3", "SHARDS": "4", "JOB_COMPLETION_INDEX": "2", "matrix.client": "aws-sdk",
	"SEED": "20260101", "FENCEBENCH_STACK": "local"}

var substitution = regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}|\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)`)

// substitute replaces ${{ x }}, ${VAR} and $VAR by plausible values.
func substitute(s string) string {
	return substitution.ReplaceAllStringFunc(s, func(m string) string {
		sub := substitution.FindStringSubmatch(m)
		name := sub[1] + sub[2] + sub[3]
		if v, ok := plausible[name]; ok {
			return v
		}
		return "v1"
	})
}

// fencebenchLines returns every fencebench command line in the scalars of a YAML document:
// continuation lines joined, the arguments after "fencebench" up to the end of the command.
func fencebenchLines(n *yaml.Node) []string {
	var out []string
	if n.Kind == yaml.ScalarNode {
		text := strings.ReplaceAll(n.Value, "\\\n", " ")
		for _, line := range strings.Split(text, "\n") {
			_, rest, ok := strings.Cut(line, "fencebench ")
			if !ok || !(strings.HasPrefix(rest, "run ") || strings.HasPrefix(rest, "merge ")) {
				continue
			}
			for _, end := range []string{"||", "&&", ";", "|"} {
				rest, _, _ = strings.Cut(rest, end)
			}
			out = append(out, rest)
		}
	}
	for _, c := range n.Content {
		out = append(out, fencebenchLines(c)...)
	}
	return out
}

// shellWords splits a command line into words, honouring single and double quotes.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	quote, in := rune(0), false
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				words, in = append(words, cur.String()), false
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// checkCommand parses one fencebench command line with the command's own flag set.
func checkCommand(line string) error {
	words := shellWords(substitute(line))
	var stderr bytes.Buffer
	switch words[0] {
	case "run":
		fs, f := runFlagSet(&stderr)
		if _, err := parseAnywhere(fs, words[1:]); err != nil {
			return errors.New(stderr.String())
		}
		if *f.shard != "" {
			if _, err := runner.ParseShard(*f.shard); err != nil {
				return err
			}
		}
		return nil
	default:
		fs, _ := mergeFlagSet(&stderr)
		pos, err := parseAnywhere(fs, words[1:])
		if err != nil {
			return errors.New(stderr.String())
		}
		if len(pos) < 2 {
			return errors.New("merge needs an out folder and shard runs")
		}
		return nil
	}
}

// TestShippedCommandLinesParse: the nightly workflow and the Kubernetes manifest parse, run
// and merge fencebench, and every fencebench command line in them passes the command's own
// flag parser (and --shard its parser), substitutions replaced by plausible values.
func TestShippedCommandLinesParse(t *testing.T) {
	for _, file := range []string{"../../compose/nightly-workflow.yml", "../../compose/k8s-indexed-job.yaml"} {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		dec := yaml.NewDecoder(f)
		var lines []string
		for {
			var doc yaml.Node
			err := dec.Decode(&doc)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			lines = append(lines, fencebenchLines(&doc)...)
		}
		seen := map[string]bool{}
		for _, l := range lines {
			seen[strings.Fields(l)[0]] = true
			if err := checkCommand(l); err != nil {
				t.Errorf("%s: fencebench %s: %v", file, l, err)
			}
		}
		if !seen["run"] || !seen["merge"] {
			t.Errorf("%s: want fencebench run and merge command lines, found %q", file, lines)
		}
	}
}

// TestCheckCommandRefusesUnknownFlags keeps the test above able to fail.
func TestCheckCommandRefusesUnknownFlags(t *testing.T) {
	for _, l := range []string{`run --matrix --shards 1/4`, `run --shard "${JOB_COMPLETION_INDEX}/1"`, `merge --out x y`, `merge only-out`} {
		if checkCommand(l) == nil {
			t.Errorf("fencebench %s passed", l)
		}
	}
	if err := checkCommand(`run --matrix --shard "${{ matrix.shard }}/$SHARDS" --client ${{ matrix.client }} --out shards`); err != nil {
		t.Errorf("a good line: %v", err)
	}
}
