package faults_test

import (
	"sync"
	"testing"
	"time"

	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/history"
)

// A crash waits for the writer's goroutines to stop, and one of them may be opening a fault
// of the same set at that moment (a pause placed inline at one of its events). The one-off
// fault must not hold the set while it waits, or both wait for ever: here the crash's
// injection returns only once another fault of the set has opened. Both starts are recorded,
// the crash is not kept open, the pause is.
func TestOneOffDoesNotHoldTheSet(t *testing.T) {
	var mu sync.Mutex
	var got []history.Event
	set := faults.NewSet("a", nil, func(e history.Event) { mu.Lock(); got = append(got, e); mu.Unlock() })
	paused := make(chan struct{})
	pause := faults.FuncFault("pause:a@step1", faults.Protocol, func() error { return nil }, func() error { return nil })
	crash := faults.FuncFault("crash:a@step2", faults.Protocol, func() error {
		go func() {
			if err := set.Open(pause); err != nil {
				t.Error(err)
			}
			close(paused)
		}()
		<-paused // the writer's goroutine has to get through before the crash returns
		return nil
	}, nil)
	done := make(chan error, 1)
	go func() { done <- set.Open(crash) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the crash and the pause wait for each other: the one-off held the set")
	}
	if names := set.Names(); len(names) != 1 || names[0] != "pause:a@step1" {
		t.Fatalf("open faults %v, want the pause alone", names)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[0].Detail != "crash:a@step2" || got[1].Detail != "pause:a@step1" {
		t.Fatalf("recorded %+v, want the crash's start, then the pause's", got)
	}
}
