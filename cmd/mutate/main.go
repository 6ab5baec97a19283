// Command mutate measures how many mutants of the protocol's decision points an exploration
// kills. It builds the bench once with every mutant of internal/mutate (or of a sample) laid
// over the tree as mutant schemata (mutate.Schemata through go build -overlay, no copy of the
// tree; --schemata=false builds each mutant alone instead), and for each mutant runs the
// exploration command against that binary with the mutant selected by mutate.EnvVar:
//
//   - the build fails: invalid, not scored (in the schemata: its copy of the function does
//     not compile, or a survivor does not build alone);
//   - the binary is byte-identical to the unmutated build with the same flags: equivalent (the
//     compiler removed the difference), not scored; so is a mutant listed, with its reason, in
//     the equivalence file a person keeps (--equivalent). With the schemata only a survivor
//     is built alone to find this out: a mutant something killed is not the unmutated binary;
//   - the exploration exits 1 (an invariant failed): killed;
//   - it exits 0: survived;
//   - it outlives --explore-timeout: killed-by-timeout, listed on its own and counted as a
//     kill. The unmutated bench must finish its exploration (exit 0, within --timeout) before
//     any mutant runs; --explore-timeout is by default four times that run's time, at least
//     45 seconds and at most --timeout, so a hang costs a minute rather than the minutes a
//     package's tests may need. A mutant that then hangs the exploration has broken the
//     protocol's progress, which a run of the bench would notice as surely as a failed
//     invariant (the usual convention of mutation testing);
//   - it exits 255 (harness errors: the bench could not run the protocol, e.g. the
//     conditional-write probe or the auditor broke): killed-by-harness, listed on its own and
//     counted as a kill, since the unmutated bench explored without one;
//   - any other exit: error, not scored.
//
// With --variants (the file declaring the protocol's broken variants), a mutant the
// exploration did not kill first meets the explorations of the variants named where it sits
// (variants.go): when one that fails unmutated passes, the mutant took away a bug the bench
// must catch, and it is killed-by-variant, an exploration kill.
//
// With --test, a mutant the exploration did not kill then meets the tests of the package it
// mutates (with the schemata, the package's test binary built once by go test -c and run
// with the mutant selected; otherwise go test -overlay with the mutated file): when they fail, or outlive
// --timeout, it is killed-by-test. The unmutated packages' tests must pass first. A kill by
// test shows what the bench's verification as a whole notices; the exploration's own power
// is reported beside it as the exploration score, which counts those mutants as survivors.
//
// The score is killed (timeouts, harness and test kills included) / (killed + survived); the
// exploration score leaves the test kills out of the numerator. A survivor a person
// examined is listed, with its reason, in the survivors file (--survivors): it still counts
// as survived, and mutate.txt shows the reason beside it (why nothing tells it apart: a
// wake-up no waiter needs, a defence another check backs up, a counter no verdict reads), so
// the list says which survivors nobody has looked at yet. The
// results are written to --out as mutate.json and mutate.txt (survivors with their one-line
// diff and file:line), and
// the command exits 0 when the score reaches --min, 1 below it, 2 when no mutant was scored,
// 254 on bad flags or an unreadable equivalence file, and 255 when the unmutated bench does
// not build or does not pass its exploration: the codes of the bench itself.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/fencebench/fencebench/internal/mutate"
)

// The exit codes, the bench's own.
const (
	exitPass     = 0
	exitFail     = 1
	exitNoScore  = 2
	exitBadInput = 254
	exitHarness  = 255
)

// config is the command line.
type config struct {
	moduleDir string
	pkgs      []string
	main      string
	build     []string
	explore   []string
	test      []string // the test command, "" for no test stage
	timeout   time.Duration
	// exploreTimeout bounds a mutant's exploration; 0 derives it from the unmutated run.
	exploreTimeout time.Duration
	jobs           int
	max            int
	sampleSeed     uint64
	only           *regexp.Regexp
	equivalent     string
	equivSet       bool // --equivalent was given: a missing file is then an error
	survivors      string
	survSet        bool // --survivors was given: a missing file is then an error
	out            string
	min            float64
	// schemata builds every mutant at once (mutate.Schemata) instead of one build each.
	schemata bool
	// reach: measure where the unmutated code runs, explore only the mutants whose statement
	// the exploration runs, and test each with the tests that run it.
	reach bool
	// variants is the Go file declaring the protocol's variants (constants of type Variant),
	// relative to moduleDir; "" for no variants' stage. variantFlag is the exploration's flag
	// that chooses one, ownVariant the variant the exploration explores by default.
	variants, variantFlag, ownVariant string
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func parse(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("mutate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.moduleDir, "module-dir", ".", "the module whose packages are mutated and whose bench is built")
	pkgs := fs.String("pkgs", "fence,writers", "comma-separated package directories to mutate, relative to --module-dir")
	fs.StringVar(&c.main, "main", "./cmd/fencebench", "the main package built with each mutant")
	build := fs.String("build", "go build", "the build command; -overlay, -trimpath, -o and --main are appended")
	explore := fs.String("explore", "explore --stack sim --variant correct --schedules 300 --seed 1",
		"the exploration: split on spaces and appended after the built binary")
	test := fs.String("test", "", "the tests that judge a mutant the exploration did not kill, split on spaces; -overlay "+
		"and the mutated package are appended (e.g. \"go test -count=1 -vet=off\"); empty: no test stage")
	fs.DurationVar(&c.timeout, "timeout", 3*time.Minute, "how long the unmutated exploration, or one package's tests, may run")
	fs.DurationVar(&c.exploreTimeout, "explore-timeout", 0,
		"how long one mutant's exploration may run (0: four times the unmutated exploration's, at least 45s, at most --timeout)")
	fs.BoolVar(&c.schemata, "schemata", true, "build every mutant at once, selected at run time, instead of one build each "+
		"(a survivor is still built alone, to find it equivalent or invalid as without)")
	fs.BoolVar(&c.reach, "reach", true, "measure with coverage where the unmutated exploration and each test go; skip the "+
		"exploration of a mutant whose statement it never runs, and give a mutant only the tests that run its statement")
	fs.StringVar(&c.variants, "variants", "", "the Go file declaring the protocol's broken variants (string "+
		"constants of type Variant): a mutant the exploration did not kill meets the explorations of the variants named where "+
		"it sits, and is killed-by-variant when one of them no longer fails (e.g. fence/variant.go); empty: no variants' stage")
	fs.StringVar(&c.variantFlag, "variant-flag", "--variant", "the exploration's flag that chooses a variant")
	fs.StringVar(&c.ownVariant, "own-variant", "", "the variant the exploration explores when not told, left out of the "+
		"variants' stage (one whose unmutated exploration passes is left out anyway)")
	fs.IntVar(&c.jobs, "jobs", 1, "mutants built and explored at once")
	fs.IntVar(&c.max, "max", 0, "run a sample of at most this many mutants (0: all)")
	fs.Uint64Var(&c.sampleSeed, "sample-seed", 1, "the seed of the sample --max draws")
	only := fs.String("only", "", "run only the mutants whose id matches this regular expression")
	fs.StringVar(&c.equivalent, "equivalent", "mutate-equivalent.txt",
		"mutant ids a person judged equivalent, one a line with a \"# why\" comment")
	fs.StringVar(&c.survivors, "survivors", "mutate-survivors.txt",
		"mutant ids a person examined that survive, one a line with a \"# why\" comment; they still count as survived")
	fs.StringVar(&c.out, "out", filepath.Join("results", "mutate"), "the folder of mutate.json and mutate.txt")
	fs.Float64Var(&c.min, "min", 0.9, "the lowest passing score")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	fs.Visit(func(f *flag.Flag) {
		c.equivSet = c.equivSet || f.Name == "equivalent"
		c.survSet = c.survSet || f.Name == "survivors"
	})
	if fs.NArg() != 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	for _, p := range strings.Split(*pkgs, ",") {
		if p = strings.TrimSpace(p); p != "" {
			c.pkgs = append(c.pkgs, p)
		}
	}
	c.build, c.explore, c.test = strings.Fields(*build), strings.Fields(*explore), strings.Fields(*test)
	var err error
	c.only, err = regexp.Compile(*only)
	switch {
	case err != nil:
		return c, fmt.Errorf("--only: %v", err)
	case len(c.pkgs) == 0 || len(c.build) == 0 || c.main == "":
		return c, errors.New("--pkgs, --build and --main must not be empty")
	case c.jobs < 1 || c.max < 0 || c.timeout <= 0 || c.exploreTimeout < 0:
		return c, errors.New("--jobs and --timeout must be positive, --max and --explore-timeout not negative")
	case c.min < 0 || c.min > 1:
		return c, errors.New("--min must be between 0 and 1")
	}
	return c, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, err := parse(args, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "mutate:", err)
		}
		return exitBadInput
	}
	ms, judged, examined, stale, err := load(c)
	if err != nil {
		fmt.Fprintln(stderr, "mutate:", err)
		return exitBadInput
	}
	for _, s := range stale {
		fmt.Fprintln(stderr, "mutate: warning:", s)
	}
	d, err := newDriver(c, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "mutate:", err)
		return exitHarness
	}
	defer d.close()
	if err := d.baseline(ctx, ms); err != nil {
		fmt.Fprintln(stderr, "mutate:", err)
		return exitHarness
	}
	results := d.runAll(ctx, ms, judged)
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "mutate: interrupted")
		return exitHarness
	}
	rep := newReport(c, d, results, examined)
	if err := rep.write(c.out); err != nil {
		fmt.Fprintln(stderr, "mutate:", err)
		return exitHarness
	}
	fmt.Fprintln(stdout, rep.summary())
	fmt.Fprintf(stdout, "mutate: %s\n", filepath.Join(c.out, "mutate.txt"))
	return rep.exitCode()
}

// load enumerates the mutants, reads the equivalence and survivors files and draws the
// sample. stale names each id in those files that no mutant of the whole set (not only of
// the sample) has, as a file goes stale when the code it describes moves.
func load(c config) (ms []mutate.Mutant, judged, examined map[string]string, stale []string, err error) {
	all, err := mutate.Packages(c.moduleDir, c.pkgs)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	judged, err = readJudged(c.equivalent, c.equivSet, "why it is equivalent")
	if err != nil {
		return nil, nil, nil, nil, err
	}
	examined, err = readJudged(c.survivors, c.survSet, "why it survives")
	if err != nil {
		return nil, nil, nil, nil, err
	}
	known := map[string]bool{}
	for _, m := range all {
		known[m.ID] = true
		if c.only.MatchString(m.ID) {
			ms = append(ms, m)
		}
	}
	stale = append(staleIDs(judged, known, c.equivalent), staleIDs(examined, known, c.survivors)...)
	return sample(ms, c.max, c.sampleSeed), judged, examined, stale, nil
}

// staleIDs lists, sorted, the ids of file that name no known mutant.
func staleIDs(ids map[string]string, known map[string]bool, file string) []string {
	var out []string
	for id := range ids {
		if !known[id] {
			out = append(out, fmt.Sprintf("%s names no mutant: %s", file, id))
		}
	}
	slices.Sort(out)
	return out
}
