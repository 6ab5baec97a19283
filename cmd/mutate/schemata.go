package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fencebench/fencebench/internal/mutate"
)

// schemaBuild is the one build of every mutant (--schemata): the bench and, with a test
// stage, each mutated package's test binary, all of them selecting the active mutant from
// mutate.EnvVar.
type schemaBuild struct {
	s     *mutate.Schema
	bin   string            // the bench
	tests map[string]string // package directory -> its test binary
	// invalid holds the mutants whose copy the compiler refused, with its error.
	invalid map[string]string
	run     []string // the test binaries' flags
}

// maxSchemaBuilds bounds the builds it takes to leave out the mutants that do not compile:
// each build reports every error of the packages it reaches (-gcflags -e), so each round
// clears a package and the next round reaches its importers.
const maxSchemaBuilds = 8

// compileError is one line of a compiler's error: file:line:col: message.
var compileError = regexp.MustCompile(`(?m)^(\S+\.go):(\d+):\d+: (.*)$`)

// prepareSchema builds the schemata of ms into dir: the bench, then (with a test stage) the
// test binary of each package in pkgs. A mutant whose copy does not compile is left out
// and listed as invalid; an error the compiler reports outside every copy is the tool's own
// failure.
func (d *driver) prepareSchema(ctx context.Context, ms []mutate.Mutant) (*schemaBuild, error) {
	dir := filepath.Join(d.tmp, "schema")
	sb := &schemaBuild{invalid: map[string]string{}, tests: map[string]string{}}
	live := ms
	var ovPath string
	for round := 1; ; round++ {
		s, err := mutate.Schemata(d.dir, live)
		if err != nil {
			return nil, err
		}
		sb.s = s
		if ovPath, err = d.writeSchema(dir, s); err != nil {
			return nil, err
		}
		out := filepath.Join(dir, d.bin)
		args := append(append([]string{}, d.c.build[1:]...), "-overlay", ovPath, "-trimpath")
		args = append(append(args, d.gcflags()...), "-o", out, d.c.main)
		cmd := exec.CommandContext(ctx, d.c.build[0], args...)
		cmd.Dir = d.dir
		var buf bytes.Buffer
		cmd.Stdout, cmd.Stderr = &buf, &buf
		start := time.Now()
		err = cmd.Run()
		if err == nil {
			d.logf("built the schemata of %d mutants (%d left out: they do not compile) in %s", len(live), len(sb.invalid), time.Since(start).Round(time.Millisecond))
			sb.bin = out
			break
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		bad, err := d.refused(dir, s, buf.String())
		if err != nil {
			return nil, err
		}
		for id, why := range bad {
			sb.invalid[id] = why
		}
		if round == maxSchemaBuilds {
			return nil, fmt.Errorf("the schemata still do not build after %d rounds\n%s", round, tail(buf.String()))
		}
		var next []mutate.Mutant
		for _, m := range live {
			if _, ok := bad[m.ID]; !ok {
				next = append(next, m)
			}
		}
		live = next
	}
	if len(d.c.test) == 0 {
		return sb, nil
	}
	build, run, err := splitTestFlags(d.c.test)
	if err != nil {
		return nil, err
	}
	sb.run = run
	for _, p := range d.c.pkgs {
		bin := filepath.Join(dir, strings.ReplaceAll(path.Clean(filepath.ToSlash(p)), "/", "_")+".test")
		args := append(append([]string{"test", "-c"}, build...), "-overlay", ovPath, "-o", bin, "./"+filepath.ToSlash(p))
		cmd := exec.CommandContext(ctx, d.c.test[0], args...)
		cmd.Dir = d.dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("the tests of %s do not build over the schemata: %v\n%s", p, err, tail(string(out)))
		}
		sb.tests[pkgKey(p)] = bin
	}
	return sb, nil
}

// gcflags asks the compiler for every error of the mutated packages.
func (d *driver) gcflags() []string {
	var args []string
	for _, p := range d.c.pkgs {
		args = append(args, "-gcflags", "./"+pkgKey(p)+"=-e")
	}
	return args
}

// writeSchema writes the schema's files and their overlay into dir and returns the overlay.
func (d *driver) writeSchema(dir string, s *mutate.Schema) (string, error) {
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	replace := map[string]string{}
	for f, b := range s.Files {
		p := filepath.Join(dir, "src", filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return "", err
		}
		replace[filepath.Join(d.dir, filepath.FromSlash(f))] = p
	}
	ov, err := json.Marshal(map[string]map[string]string{"Replace": replace})
	if err != nil {
		return "", err
	}
	ovPath := filepath.Join(dir, "overlay.json")
	return ovPath, os.WriteFile(ovPath, ov, 0o644)
}

// refused maps a failed build's errors to the mutants whose copies they are in.
func (d *driver) refused(dir string, s *mutate.Schema, out string) (map[string]string, error) {
	src := filepath.Join(dir, "src") + string(filepath.Separator)
	bad := map[string]string{}
	for _, m := range compileError.FindAllStringSubmatch(out, -1) {
		at := compilerPath(d.dir, m[1])
		file, ok := strings.CutPrefix(filepath.Clean(at), src)
		line, _ := strconv.Atoi(m[2])
		id, owned := s.Owner(filepath.ToSlash(file), line)
		if !ok || !owned {
			return nil, fmt.Errorf("the schemata do not build, and not because of a mutant\n%s", tail(out))
		}
		if bad[id] == "" {
			bad[id] = m[3]
		}
	}
	if len(bad) == 0 {
		return nil, fmt.Errorf("the schemata do not build\n%s", tail(out))
	}
	return bad, nil
}

// compilerPath makes a path from the go command's error output absolute. The go command
// shortens a path under its working directory dir to a relative one, and it does so by
// replacing dir as a string prefix: a temporary folder /tmp/mutate-1 beside a module at
// /tmp/mut comes out as ".ate-1/...".
func compilerPath(dir, at string) string {
	switch {
	case filepath.IsAbs(at):
		return at
	case strings.HasPrefix(at, "."+string(filepath.Separator)), strings.HasPrefix(at, ".."+string(filepath.Separator)):
		return filepath.Join(dir, at)
	case strings.HasPrefix(at, "."):
		return dir + at[1:]
	}
	return filepath.Join(dir, at)
}

// testRunFlags are the flags of go test that its test binary takes, as -test.<name>; those
// in testValueFlags take a value.
var (
	testRunFlags   = map[string]bool{"count": true, "failfast": true, "run": true, "skip": true, "short": true, "v": true, "timeout": true, "parallel": true, "cpu": true, "shuffle": true, "list": true}
	testValueFlags = map[string]bool{"count": true, "run": true, "skip": true, "timeout": true, "parallel": true, "cpu": true, "shuffle": true, "list": true}
)

// splitTestFlags splits a "go test ..." command's flags into the build's (for go test -c)
// and the test binary's.
func splitTestFlags(test []string) (build, run []string, err error) {
	if len(test) < 2 || test[1] != "test" {
		return nil, nil, fmt.Errorf("--schemata needs a --test of the form \"go test [flags]\", not %q", strings.Join(test, " "))
	}
	args := test[2:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			return nil, nil, fmt.Errorf("--test: %q: the package is the mutated one; give flags only", a)
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !testRunFlags[name] {
			build = append(build, a)
			continue
		}
		if testValueFlags[name] && !hasValue {
			if i+1 == len(args) {
				return nil, nil, fmt.Errorf("--test: %s needs a value", a)
			}
			i++
			value, hasValue = args[i], true
		}
		f := "-test." + name
		if hasValue {
			f += "=" + value
		}
		run = append(run, f)
	}
	return build, run, nil
}

// testSchema runs package p's test binary with mutant n active (0: none), only the tests
// named in tests when not nil, in the package's folder as go test does, and returns whether
// they failed, whether they outlived the timeout, and what failed.
func (d *driver) testSchema(ctx context.Context, p string, n int, tests []string) (bool, bool, string, error) {
	ctx, cancel := context.WithTimeout(ctx, d.c.timeout)
	defer cancel()
	bin, ok := d.schema.tests[pkgKey(p)]
	if !ok {
		return false, false, "", fmt.Errorf("no test binary of package %s: it is not among --pkgs", p)
	}
	args := d.schema.run
	if tests != nil {
		args = append(slices.Clone(args), "-test.run="+runPattern(tests))
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = filepath.Join(d.dir, filepath.FromSlash(p))
	cmd.Env = mutantEnv(n)
	return runTests(ctx, cmd)
}

// pkgKey is how the test binaries are keyed: a package directory, cleaned and slash-separated.
func pkgKey(p string) string { return path.Clean(filepath.ToSlash(p)) }

// mutantEnv is this process's environment with mutant n active (0: none).
func mutantEnv(n int) []string {
	env := os.Environ()
	out := env[:0:0]
	for _, e := range env {
		if !strings.HasPrefix(e, mutate.EnvVar+"=") {
			out = append(out, e)
		}
	}
	if n > 0 {
		out = append(out, mutate.EnvVar+"="+strconv.Itoa(n))
	}
	return out
}
