package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fencebench/fencebench/internal/mutate"
)

// The statuses of a mutant.
const (
	killed    = "killed"
	timedOut  = "killed-by-timeout"
	harness   = "killed-by-harness"
	testKill  = "killed-by-test"
	survived  = "survived"
	equiv     = "equivalent"
	invalid   = "invalid"
	errStatus = "error"
)

// result is what became of one mutant.
type result struct {
	mutate.Mutant
	Status string
	// Exit is the exploration's exit code, when it ran to an end.
	Exit *int
	// Detail is why a person judged it equivalent, the tail of a failed build's output, or
	// the tail of an erring exploration's output.
	Detail  string
	Seconds float64
	// Unexplored is set when the unmutated exploration never ran the changed statement: the
	// mutant was not explored, and survived the exploration.
	Unexplored bool
	// Tests are the tests the mutant met when --reach chose them; NoTest is set when no test
	// of its package ran the changed statement, so none ran.
	Tests  []string
	NoTest bool
	// Variants are the broken variants whose explorations the mutant met (--variants).
	Variants []string
}

// driver builds and explores mutants in a temporary folder it owns.
type driver struct {
	c       config
	dir     string // absolute module directory
	tmp     string
	bin     string // the binary's file name
	base    [sha256.Size]byte
	baseDur time.Duration
	// exploreTimeout bounds each mutant's exploration (--explore-timeout, or derived from
	// baseDur by baseline).
	exploreTimeout time.Duration
	log            io.Writer
	logMu          sync.Mutex
	// schema is the one build of every mutant (--schemata), nil when each is built alone.
	schema *schemaBuild
	// reach is where the unmutated code ran (--reach), nil when not measured.
	reach *reach
	// variants is the variants' stage (--variants), nil without it.
	variants *variantSet
}

func newDriver(c config, log io.Writer) (*driver, error) {
	dir, err := filepath.Abs(c.moduleDir)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "mutate-")
	if err != nil {
		return nil, err
	}
	bin := filepath.Base(c.main)
	if bin == "." || bin == string(filepath.Separator) {
		bin = "bench"
	}
	return &driver{c: c, dir: dir, tmp: tmp, bin: bin, log: log}, nil
}

func (d *driver) close() { os.RemoveAll(d.tmp) }

func (d *driver) logf(format string, args ...any) {
	d.logMu.Lock()
	defer d.logMu.Unlock()
	fmt.Fprintf(d.log, "mutate: "+format+"\n", args...)
}

// baseline builds the unmutated bench (and with --schemata the schemata of ms) and requires
// its exploration, and its packages' tests, to pass.
func (d *driver) baseline(ctx context.Context, ms []mutate.Mutant) error {
	work := filepath.Join(d.tmp, "base")
	if err := os.Mkdir(work, 0o755); err != nil {
		return err
	}
	d.logf("building the unmutated %s", d.c.main)
	sum, out, err := d.build(ctx, work, nil)
	if err != nil {
		return fmt.Errorf("the unmutated bench does not build: %v\n%s", err, out)
	}
	d.base = sum
	bin := filepath.Join(work, d.bin)
	if d.c.schemata {
		if d.schema, err = d.prepareSchema(ctx, ms); err != nil {
			return err
		}
		bin = d.schema.bin
		d.logf("exploring the schemata with no mutant active: %s", strings.Join(d.c.explore, " "))
	} else {
		d.logf("exploring the unmutated bench: %s", strings.Join(d.c.explore, " "))
	}
	start := time.Now()
	code, timeout, out, err := d.explore(ctx, work, bin, 0, d.c.timeout)
	d.baseDur = time.Since(start)
	switch {
	case err != nil:
		return fmt.Errorf("the unmutated exploration did not run: %v", err)
	case timeout:
		return fmt.Errorf("the unmutated exploration outlived --timeout %s", d.c.timeout)
	case code != 0:
		return fmt.Errorf("the unmutated exploration exits %d, want 0; no mutant can be judged against it\n%s", code, out)
	}
	d.logf("the unmutated exploration passed in %s", d.baseDur.Round(time.Millisecond))
	if d.c.variants != "" {
		if err := d.prepareVariants(ctx, work, bin, ms); err != nil {
			return err
		}
	}
	if d.c.reach {
		if err := d.measureReach(ctx, ms); err != nil {
			return err
		}
	}
	if len(d.c.test) > 0 {
		for _, p := range d.c.pkgs {
			d.logf("testing the unmutated %s: %s", p, strings.Join(d.c.test, " "))
			start := time.Now()
			failed, timeout, out, err := d.testMutant(ctx, work, p, 0, nil)
			switch {
			case err != nil:
				return fmt.Errorf("the unmutated tests of %s did not run: %v", p, err)
			case timeout:
				return fmt.Errorf("the unmutated tests of %s outlived --timeout %s", p, d.c.timeout)
			case failed:
				return fmt.Errorf("the unmutated tests of %s fail; no mutant can be judged by them\n%s", p, out)
			}
			d.logf("the unmutated tests of %s passed in %s", p, time.Since(start).Round(time.Second))
		}
	}
	d.exploreTimeout = exploreTimeout(d.c.exploreTimeout, d.c.timeout, d.baseDur)
	d.logf("a mutant's exploration may run %s", d.exploreTimeout)
	if d.exploreTimeout < 2*d.baseDur {
		d.logf("warning: the exploration timeout %s is under twice the unmutated exploration's time; slow mutants may count as killed-by-timeout", d.exploreTimeout)
	}
	return nil
}

// exploreTimeout is the bound of a mutant's exploration: given (--explore-timeout), or four
// times the unmutated exploration's time base (a mutant's exploration shares the machine with
// --jobs others, which makes it up to about twice as slow), at least 45 seconds and at most limit.
func exploreTimeout(given, limit, base time.Duration) time.Duration {
	if given > 0 {
		return given
	}
	return min(max(4*base, 45*time.Second), limit)
}

// build builds the bench into work with the overlay replace (nil: none) and returns the
// binary's hash, or the build's output when it fails.
func (d *driver) build(ctx context.Context, work string, replace map[string]string) ([sha256.Size]byte, string, error) {
	if replace == nil {
		replace = map[string]string{}
	}
	ov, err := json.Marshal(map[string]map[string]string{"Replace": replace})
	if err != nil {
		return [sha256.Size]byte{}, "", err
	}
	ovPath := filepath.Join(work, "overlay.json")
	if err := os.WriteFile(ovPath, ov, 0o644); err != nil {
		return [sha256.Size]byte{}, "", err
	}
	out := filepath.Join(work, d.bin)
	args := append(append([]string{}, d.c.build[1:]...), "-overlay", ovPath, "-trimpath", "-o", out, d.c.main)
	cmd := exec.CommandContext(ctx, d.c.build[0], args...)
	cmd.Dir = d.dir
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		return [sha256.Size]byte{}, tail(buf.String()), err
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return [sha256.Size]byte{}, "", err
	}
	return sha256.Sum256(b), "", nil
}

// explore runs the exploration against bin with mutant n active (0: none; a schemata build
// reads it), with work as its folder and env added to the environment, and returns its exit
// code, whether it outlived timeout, and the tail of its output.
func (d *driver) explore(ctx context.Context, work, bin string, n int, timeout time.Duration, env ...string) (int, bool, string, error) {
	return d.exploreWith(ctx, work, bin, n, timeout, d.c.explore, env...)
}

// exploreWith is explore with the exploration's arguments args.
func (d *driver) exploreWith(ctx context.Context, work, bin string, n int, timeout time.Duration, args []string, env ...string) (int, bool, string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = work
	cmd.Env = append(mutantEnv(n), env...)
	cmd.WaitDelay = 10 * time.Second
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return -1, true, tail(buf.String()), nil
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return -1, false, "", err
	}
	return cmd.ProcessState.ExitCode(), false, tail(buf.String()), nil
}

// testMutant runs the tests of package p with mutant n active (only those named in tests,
// when not nil): the schemata's test binary, or go test with the overlay build wrote into
// work.
func (d *driver) testMutant(ctx context.Context, work, p string, n int, tests []string) (bool, bool, string, error) {
	if d.schema != nil {
		return d.testSchema(ctx, p, n, tests)
	}
	return d.test(ctx, work, "./"+filepath.ToSlash(p), tests)
}

// test runs the tests of pkg (a ./ path in the module), only those named in tests when not
// nil, with the overlay build wrote into work, and returns whether they failed, whether they outlived the timeout, and the tail of
// their output.
func (d *driver) test(ctx context.Context, work, pkg string, tests []string) (bool, bool, string, error) {
	ctx, cancel := context.WithTimeout(ctx, d.c.timeout)
	defer cancel()
	args := append(append([]string{}, d.c.test[1:]...), "-overlay", filepath.Join(work, "overlay.json"))
	if tests != nil {
		args = append(args, "-run", runPattern(tests))
	}
	args = append(args, pkg)
	cmd := exec.CommandContext(ctx, d.c.test[0], args...)
	cmd.Dir = d.dir
	return runTests(ctx, cmd)
}

// runTests runs a test command whose context ends at the tests' timeout, and returns whether
// they failed, whether they outlived the timeout, and what failed.
func runTests(ctx context.Context, cmd *exec.Cmd) (bool, bool, string, error) {
	cmd.WaitDelay = 10 * time.Second
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return true, true, tail(buf.String()), nil
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return false, false, "", err
	}
	return err != nil, false, firstFailure(buf.String()), nil
}

// firstFailure is the part of a test run's output that says what failed: from the first
// "--- FAIL" (or a panic) on, cut to the length of a tail.
func firstFailure(s string) string {
	for _, mark := range []string{"--- FAIL", "panic:"} {
		if i := strings.Index(s, mark); i >= 0 {
			s = s[i:]
			break
		}
	}
	const n = 2000
	if s = strings.TrimSpace(s); len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// tail is the end of a command's output, enough to say why it failed.
func tail(s string) string {
	const n = 2000
	s = strings.TrimSpace(s)
	if len(s) > n {
		s = "…" + s[len(s)-n:]
	}
	return s
}
