package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"sync"

	"github.com/fencebench/fencebench/internal/guard"
	"github.com/fencebench/fencebench/outcome"
)

// watchSignals turns the first SIGINT, SIGTERM or SIGHUP into the cancellation of the
// command (which then stops everything and cleans up), and a second one into an immediate
// exit that names what the abandoned cleanup may have left behind.
func watchSignals(sigs <-chan os.Signal, cancel context.CancelCauseFunc, stderr io.Writer, exit func(int)) {
	s := <-sigs
	fmt.Fprintf(stderr, "fencebench: %v: stopping and cleaning up (again to abandon the cleanup)\n", s)
	cancel(fmt.Errorf("%v received", s))
	s = <-sigs
	fmt.Fprintf(stderr, "fencebench: %v again: abandoning the cleanup\n", s)
	for _, x := range held.list() {
		fmt.Fprintf(stderr, "fencebench: may be left behind: %s\n", x)
	}
	exit(outcome.ExitHarness)
}

// leftovers are what the process holds outside itself (a store's data folder, a container,
// objects under a prefix) until its cleanup releases them.
type leftovers struct {
	mu    sync.Mutex
	next  int
	items map[int]string
}

// held is the process's leftovers, named when a cleanup is abandoned.
var held = &leftovers{items: map[int]string{}}

// hold records what and returns the function that forgets it once it is cleaned up.
func (l *leftovers) hold(what string) (release func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.next++
	id := l.next
	l.items[id] = what
	return func() {
		l.mu.Lock()
		delete(l.items, id)
		l.mu.Unlock()
	}
}

func (l *leftovers) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	ids := make([]int, 0, len(l.items))
	for id := range l.items {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = l.items[id]
	}
	return out
}

// beforeCleanup runs as a command's cleanup starts; tests slow it down to interrupt it.
var beforeCleanup = func() {}

// recoverHarness, deferred, turns a panic of the command's own goroutine into a harness
// error (the deferred cleanups above it have run by then).
func recoverHarness(cmd string, stderr io.Writer, code *int) {
	if p := recover(); p != nil {
		fmt.Fprintf(stderr, "fencebench %s: harness panic: %v\n%s", cmd, p, debug.Stack())
		*code = outcome.ExitHarness
	}
}

// endCode is the command's exit code: a panic in any of its goroutines or an interruption
// is a harness error, whatever the verdicts.
func endCode(ctx context.Context, cmd string, sink *guard.Sink, stderr io.Writer, code int) int {
	if err := errors.Join(sink.Err(), guard.Default.Err()); err != nil {
		fmt.Fprintf(stderr, "fencebench %s: harness %v\n", cmd, err)
		return outcome.ExitHarness
	}
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "fencebench %s: interrupted; everything was stopped\n", cmd)
		return outcome.ExitHarness
	}
	return code
}
