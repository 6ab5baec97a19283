package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/runner"
)

// mergeUsage is the merge command's synopsis.
const mergeUsage = "usage: fencebench merge [--no-trend] <out/run-id> <shard-run-dir | folder of shard runs>...\n\n" +
	"Joins the N runs of `fencebench run --shard K/N` into one run folder, as one unsharded run would have\n" +
	"written it; the exit code is that run's. Shards or cells missing or given twice are refused (exit 255).\n\nflags:"

// mergeFlagSet builds the merge command's flag set, the one its command line is parsed with.
func mergeFlagSet(stderr io.Writer) (*flag.FlagSet, *bool) {
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	noTrend := fs.Bool("no-trend", false, "leave the trend page of the folder above <out/run-id> alone")
	fs.Usage = func() {
		fmt.Fprintln(stderr, mergeUsage)
		fs.PrintDefaults()
	}
	return fs, noTrend
}

// mergeCmd merges shard runs into one run folder and exits with the merged run's code.
func mergeCmd(args []string, stdout, stderr io.Writer) int {
	fs, noTrend := mergeFlagSet(stderr)
	pos, err := parseAnywhere(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return outcome.ExitPass
		}
		return outcome.ExitBadInput
	}
	if len(pos) < 2 {
		fs.Usage()
		return outcome.ExitBadInput
	}
	dirs, err := runner.ShardDirs(pos[1:])
	if err == nil {
		var sum *outcome.Summary
		sum, err = runner.Merge(pos[0], dirs, runner.MergeOptions{Command: "fencebench merge " + strings.Join(args, " "), NoTrend: *noTrend})
		if err == nil {
			fmt.Fprintf(stdout, "merged %d shard runs: %s\n", len(dirs), strings.Join(sum.MergedFrom, ", "))
			printSummary(stdout, sum)
			return sum.ExitCode()
		}
	}
	fmt.Fprintf(stderr, "fencebench merge: %v\n", err)
	if errors.Is(err, outcome.ErrBadInput) && !errors.Is(err, runner.ErrShards) {
		return outcome.ExitBadInput
	}
	return outcome.ExitHarness
}
