package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fencebench/fencebench/internal/mutate"
)

// reach is where the unmutated code ran (--reach): the statements one exploration of it
// ran and, for each test of each mutated package, the statements that test ran alone.
//
// A mutant changes one statement. Where the unmutated exploration never ran that statement,
// the mutant's exploration runs the very same code and cannot notice it, so it is not
// explored (it counts as survived by the exploration); and only the tests that ran the
// statement can notice it, so only those run. The one caveat is a statement that some runs
// reach and others do not (a race met now and then): one measurement can miss it, which
// makes a mutant survive that a full run might have killed, never the reverse.
type reach struct {
	explore profile
	// tests maps a package directory to its tests' profiles; a package missing here runs
	// all its tests.
	tests map[string]map[string]profile
	// anchor is the start of the statement each mutant changes: a mutation in a case
	// clause anchors at its switch, as swapping bodies matters wherever the switch runs.
	anchor map[string]token.Position
}

// block is one counted block of a coverage profile: [start, end] and whether it ran.
type block struct {
	sl, sc, el, ec int
	ran            bool
}

// profile maps a file (slash-separated, relative to the module) to its blocks.
type profile map[string][]block

// contains reports whether the block holds the position line:col.
func (b block) contains(line, col int) bool {
	return (line > b.sl || line == b.sl && col >= b.sc) && (line < b.el || line == b.el && col <= b.ec)
}

// ran reports whether the profile ran the position; a position no block holds (a file
// the profile does not cover) counts as run, so that nothing is skipped for want of a
// measurement.
func (p profile) ran(file string, pos token.Position) bool {
	held := false
	for _, b := range p[file] {
		if b.contains(pos.Line, pos.Column) {
			if b.ran {
				return true
			}
			held = true
		}
	}
	return !held
}

// profileLine is one line of a text coverage profile: file:sl.sc,el.ec statements count.
var profileLine = regexp.MustCompile(`^(.+\.go):(\d+)\.(\d+),(\d+)\.(\d+) \d+ (\d+)$`)

// parseProfile reads a text coverage profile (go tool covdata textfmt), keeping the files
// under the module path modPath, keyed relative to it.
func parseProfile(r io.Reader, modPath string) (profile, error) {
	p := profile{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if n == 1 && strings.HasPrefix(line, "mode:") || line == "" {
			continue
		}
		m := profileLine.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("coverage profile line %d: %q is not file:line.col,line.col statements count", n, line)
		}
		file, ok := strings.CutPrefix(m[1], modPath+"/")
		if !ok {
			continue
		}
		var v [5]int
		for i := range v {
			v[i], _ = strconv.Atoi(m[i+2])
		}
		p[file] = append(p[file], block{sl: v[0], sc: v[1], el: v[2], ec: v[3], ran: v[4] > 0})
	}
	return p, sc.Err()
}

// anchors finds, for every mutant, the start of the innermost statement that holds the
// changed token (its switch or select for a case clause, and for swapped case bodies).
func anchors(moduleDir string, ms []mutate.Mutant) (map[string]token.Position, error) {
	out := map[string]token.Position{}
	files := map[string]*ast.File{}
	fset := token.NewFileSet()
	for _, m := range ms {
		f, ok := files[m.File]
		if !ok {
			var err error
			f, err = parser.ParseFile(fset, filepath.Join(moduleDir, filepath.FromSlash(m.File)), nil, parser.SkipObjectResolution)
			if err != nil {
				return nil, err
			}
			files[m.File] = f
		}
		tf := fset.File(f.Pos())
		if m.Line < 1 || m.Line > tf.LineCount() {
			return nil, fmt.Errorf("%s: no line %d", m.File, m.Line)
		}
		at := tf.LineStart(m.Line) + token.Pos(m.Col-1)
		var stack []ast.Stmt
		ast.Inspect(f, func(n ast.Node) bool {
			if n == nil || at < n.Pos() || at >= n.End() {
				return false
			}
			if s, ok := n.(ast.Stmt); ok {
				stack = append(stack, s)
			}
			return true
		})
		pos := fset.Position(at)
		for i := len(stack) - 1; i >= 0; i-- {
			switch stack[i].(type) {
			case *ast.BlockStmt, *ast.CaseClause, *ast.CommClause:
				continue // climb to the statement that runs them
			case *ast.SwitchStmt, *ast.TypeSwitchStmt, *ast.SelectStmt:
			default:
				if m.Kind == mutate.SwapCase {
					continue // a body moved into another case: anchor at the switch
				}
			}
			pos = fset.Position(stack[i].Pos())
			break
		}
		out[m.ID] = token.Position{Line: pos.Line, Column: pos.Column}
	}
	return out, nil
}

// explored reports whether the unmutated exploration ran the statement m changes.
func (r *reach) explored(m mutate.Mutant) bool {
	return r.explore == nil || r.explore.ran(m.File, r.anchor[m.ID])
}

// testsOf returns the tests of m's package that ran the statement m changes, sorted, and
// whether the package's tests were measured at all (false: run them all).
func (r *reach) testsOf(m mutate.Mutant) ([]string, bool) {
	byTest, ok := r.tests[pkgKey(path.Dir(m.File))]
	if !ok {
		return nil, false
	}
	var out []string
	for name, p := range byTest {
		if p.ran(m.File, r.anchor[m.ID]) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out, true
}

// runPattern is a -test.run pattern that runs exactly the named top-level tests.
func runPattern(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = regexp.QuoteMeta(n)
	}
	return "^(" + strings.Join(q, "|") + ")$"
}

// measureReach builds the unmutated bench, and with a test stage each package's test
// binary, with coverage of the mutated packages, runs the exploration once and each test
// alone, and keeps where they went.
func (d *driver) measureReach(ctx context.Context, ms []mutate.Mutant) error {
	start := time.Now()
	r := &reach{tests: map[string]map[string]profile{}}
	var err error
	if r.anchor, err = anchors(d.dir, ms); err != nil {
		return err
	}
	dir := filepath.Join(d.tmp, "reach")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	modPath, err := d.goList(ctx, "-m", "-f", "{{.Path}}")
	if err != nil {
		return err
	}
	var pkgPaths []string
	for _, p := range d.c.pkgs {
		ip, err := d.goList(ctx, "-f", "{{.ImportPath}}", "./"+pkgKey(p))
		if err != nil {
			return err
		}
		pkgPaths = append(pkgPaths, ip)
	}
	mainPath, err := d.goList(ctx, "-f", "{{.ImportPath}}", d.c.main)
	if err != nil {
		return err
	}
	// The main package is among the covered ones so that the binary writes its counters.
	bin := filepath.Join(dir, d.bin)
	args := append(append([]string{}, d.c.build[1:]...), "-cover", "-coverpkg="+strings.Join(append(slices.Clone(pkgPaths), mainPath), ","), "-o", bin, d.c.main)
	if out, err := d.command(ctx, d.dir, nil, d.c.build[0], args...); err != nil {
		return fmt.Errorf("the unmutated bench does not build with coverage: %v\n%s", err, tail(out))
	}
	covDir := filepath.Join(dir, "explore")
	work := filepath.Join(dir, "work")
	for _, p := range []string{covDir, work} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			return err
		}
	}
	code, timeout, out, err := d.explore(ctx, work, bin, 0, d.c.timeout, "GOCOVERDIR="+covDir)
	switch {
	case err != nil:
		return fmt.Errorf("the exploration with coverage did not run: %v", err)
	case timeout || code != 0:
		return fmt.Errorf("the exploration with coverage exits %d (timed out: %v), want 0\n%s", code, timeout, out)
	}
	if r.explore, err = d.readCoverage(ctx, covDir, modPath); err != nil {
		return err
	}
	if len(d.c.test) > 0 {
		if err := d.measureTests(ctx, r, dir, modPath, pkgPaths); err != nil {
			return err
		}
	}
	unreached := 0
	for _, m := range ms {
		if !r.explored(m) {
			unreached++
		}
	}
	d.reach = r
	d.logf("measured where the unmutated code runs in %s: the exploration never runs the statement of %d of %d mutants",
		time.Since(start).Round(time.Second), unreached, len(ms))
	return nil
}

// measureTests runs each test of each mutated package alone, with coverage, --jobs at a
// time. A test that fails alone leaves its package unmeasured: every mutant then meets all
// of the package's tests, as without --reach.
func (d *driver) measureTests(ctx context.Context, r *reach, dir, modPath string, pkgPaths []string) error {
	build, run, err := splitTestFlags(d.c.test)
	if err != nil {
		return err
	}
	for _, f := range run {
		if strings.HasPrefix(f, "-test.run=") {
			d.logf("--test names its own -run: the tests are not chosen by reach")
			return nil
		}
	}
	for i, p := range d.c.pkgs {
		key := pkgKey(p)
		bin := filepath.Join(dir, strings.ReplaceAll(key, "/", "_")+".cover.test")
		args := append(append([]string{"test", "-c"}, build...), "-cover", "-coverpkg="+pkgPaths[i], "-o", bin, "./"+key)
		if out, err := d.command(ctx, d.dir, nil, d.c.test[0], args...); err != nil {
			return fmt.Errorf("the tests of %s do not build with coverage: %v\n%s", p, err, tail(out))
		}
		pkgDir := filepath.Join(d.dir, filepath.FromSlash(key))
		out, err := d.command(ctx, pkgDir, nil, bin, "-test.list", ".")
		if err != nil {
			return fmt.Errorf("listing the tests of %s: %v\n%s", p, err, tail(out))
		}
		var names []string
		for _, n := range strings.Fields(out) {
			if strings.HasPrefix(n, "Test") || strings.HasPrefix(n, "Fuzz") || strings.HasPrefix(n, "Example") {
				names = append(names, n)
			}
		}
		byTest := map[string]profile{}
		var mu sync.Mutex
		var failed []string
		next := make(chan int)
		var wg sync.WaitGroup
		for range d.c.jobs {
			wg.Go(func() {
				for j := range next {
					name := names[j]
					cov := filepath.Join(dir, "tests", key, strconv.Itoa(j))
					if err := os.MkdirAll(cov, 0o755); err != nil {
						mu.Lock()
						failed = append(failed, name+": "+err.Error())
						mu.Unlock()
						continue
					}
					tctx, cancel := context.WithTimeout(ctx, d.c.timeout)
					args := append(append([]string{}, run...), "-test.run="+runPattern([]string{name}), "-test.gocoverdir="+cov)
					out, err := d.command(tctx, pkgDir, nil, bin, args...)
					cancel()
					var p profile
					if err == nil {
						p, err = d.readCoverage(ctx, cov, modPath)
					}
					mu.Lock()
					if err != nil {
						failed = append(failed, fmt.Sprintf("%s: %v\n%s", name, err, firstFailure(out)))
					} else {
						byTest[name] = p
					}
					mu.Unlock()
				}
			})
		}
		for j := range names {
			next <- j
		}
		close(next)
		wg.Wait()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if len(failed) > 0 {
			slices.Sort(failed)
			d.logf("warning: %d tests of %s fail when run alone, so every mutant of %s meets all its tests; the first: %s", len(failed), p, p, failed[0])
			continue
		}
		r.tests[key] = byTest
		d.logf("measured the %d tests of %s one by one", len(names), p)
	}
	return nil
}

// readCoverage turns a GOCOVERDIR's counters into a profile of the module's files.
func (d *driver) readCoverage(ctx context.Context, covDir, modPath string) (profile, error) {
	txt := covDir + ".txt"
	if out, err := d.command(ctx, d.dir, nil, "go", "tool", "covdata", "textfmt", "-i", covDir, "-o", txt); err != nil {
		return nil, fmt.Errorf("reading the coverage in %s: %v\n%s", covDir, err, tail(out))
	}
	f, err := os.Open(txt)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseProfile(f, modPath)
}

// goList runs go list with args in the module and returns its one line of output.
func (d *driver) goList(ctx context.Context, args ...string) (string, error) {
	out, err := d.command(ctx, d.dir, nil, "go", append([]string{"list"}, args...)...)
	if err != nil {
		return "", fmt.Errorf("go list %s: %v\n%s", strings.Join(args, " "), err, tail(out))
	}
	return strings.TrimSpace(out), nil
}

// command runs name with args in dir, with env added to this process's environment, and
// returns its combined output.
func (d *driver) command(ctx context.Context, dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(mutantEnv(0), env...)
	cmd.WaitDelay = 10 * time.Second
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	return buf.String(), err
}
