package certify

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/internal/unsafestore"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/store"
)

// every checks what every errored result of rep must carry: a one-line cause and a class.
func everyErrorHasACause(t *testing.T, rep *Report) {
	t.Helper()
	for _, r := range rep.Results {
		if r.Verdict != Error {
			continue
		}
		if r.Cause == "" || strings.Contains(r.Cause, "\n") || r.ErrorClass == "" {
			t.Errorf("%s/%s: error without a one-line cause and class: cause %q, class %q, observed %q", r.ID, r.Client, r.Cause,
				r.ErrorClass, r.Observed)
		}
	}
}

// reportTexts renders rep as text and HTML.
func reportTexts(t *testing.T, rep *Report) (string, string) {
	t.Helper()
	var text, page bytes.Buffer
	if err := rep.WriteText(&text, false); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	return text.String(), page.String()
}

// TestStalledStoreBounded: against a store that never answers a conditional write, the run
// ends at its deadlines: each probe that started errors with its deadline and the request it
// waited for, the probes the whole run's deadline left no time for are not started and say
// so, and the verdict is inconclusive, never certified.
func TestStalledStoreBounded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a safety net, not the assertion
	defer cancel()
	prefix := testenv.Prefix(t)
	cfg, name := unsafestore.Serve(t, testenv.MinIO(t).Config(), &unsafestore.Options{Mode: unsafestore.Stall})
	e := testenv.External(t, cfg, name, prefix)
	probe, whole := time.Second, 5*time.Second
	rep, err := Run(ctx, e, Options{Keys: 2, Racers: []int{2}, Probes: []string{"A4", "B9", "B10", "B11", "D17"},
		Prefix: prefix, Cleanup: true, ProbeTimeout: probe, Timeout: whole})
	if err != nil {
		t.Fatal(err)
	}
	text, page := reportTexts(t, rep)
	t.Logf("\n%s", text)
	if ctx.Err() != nil {
		t.Fatalf("the run ended only at the test's own deadline")
	}
	if rep.Verdict != Inconclusive || rep.ExitCode() != outcome.ExitHarness {
		t.Errorf("verdict %s, exit %d; want inconclusive, exit %d", rep.Verdict, rep.ExitCode(), outcome.ExitHarness)
	}
	everyErrorHasACause(t, rep)
	var timedOut, notRun int
	for _, r := range rep.Results {
		if r.Verdict != Error {
			t.Errorf("%s/%s: %s %q; want error", r.ID, r.Client, r.Verdict, r.Observed)
			continue
		}
		switch {
		case strings.Contains(r.Cause, "deadline 1s exceeded after PUT If-"):
			timedOut++
			if r.ErrorClass != Overloaded || !strings.Contains(r.Cause, "without an answer") || !strings.Contains(r.Cause, "attempt 1 of 1") {
				t.Errorf("%s/%s: class %s, cause %q; want overloaded, naming the request in flight and its attempt", r.ID, r.Client,
					r.ErrorClass, r.Cause)
			}
		case strings.Contains(r.Cause, "not run: the whole-run deadline 5s"):
			notRun++
			if r.ErrorClass != NotRun {
				t.Errorf("%s/%s: class %s, want not-run", r.ID, r.Client, r.ErrorClass)
			}
		case strings.Contains(r.Cause, "whole-run deadline 5s exceeded after"):
			// the probe running when the whole run's deadline passed
		default:
			t.Errorf("%s/%s: cause %q names neither deadline", r.ID, r.Client, r.Cause)
		}
	}
	if timedOut == 0 || notRun == 0 {
		t.Errorf("%d probes ended at their deadline, %d were not started; want some of each", timedOut, notRun)
	}
	for _, want := range []string{"[overloaded] deadline 1s exceeded after PUT If-", "not-run", "INCONCLUSIVE"} {
		if !strings.Contains(text, want) {
			t.Errorf("text report lacks %q", want)
		}
	}
	for _, want := range []string{"overloaded", "not-run", "deadline 1s exceeded after PUT If-"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// TestNotImplementedIfNoneMatch: a store that answers 501 NotImplemented to If-None-Match
// leaves the probes that need it errored with the unsupported-header class and the request
// that met it, not failed; If-Match (B10) still passes; the verdict is inconclusive.
func TestNotImplementedIfNoneMatch(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	prefix := testenv.Prefix(t)
	cfg, name := unsafestore.Serve(t, testenv.MinIO(t).Config(), &unsafestore.Options{Mode: unsafestore.NoConditionalCreate})
	e := testenv.External(t, cfg, name, prefix)
	rep, err := Run(ctx, e, Options{Keys: 2, Racers: []int{2}, Probes: []string{"A1", "A4", "B9", "B10"}, Prefix: prefix, Cleanup: true})
	if err != nil {
		t.Fatal(err)
	}
	text, page := reportTexts(t, rep)
	t.Logf("\n%s", text)
	if rep.Verdict != Inconclusive || rep.ExitCode() != outcome.ExitHarness {
		t.Errorf("verdict %s, exit %d; want inconclusive, exit %d", rep.Verdict, rep.ExitCode(), outcome.ExitHarness)
	}
	everyErrorHasACause(t, rep)
	for _, c := range store.Clients {
		for _, id := range []string{"A1", "A4", "B9"} {
			r := find(t, rep, id, c)
			if r.Verdict != Error || r.ErrorClass != UnsupportedHeader || !strings.Contains(r.Cause, "PUT If-None-Match: *") ||
				!strings.Contains(r.Cause, "HTTP 501 NotImplemented") {
				t.Errorf("%s/%s: %s [%s] %q; want error [unsupported-header] naming PUT If-None-Match and 501 NotImplemented", id, c,
					r.Verdict, r.ErrorClass, r.Cause)
			}
		}
		if r := find(t, rep, "B10", c); r.Verdict != Pass {
			t.Errorf("B10/%s: %s %q; want pass (If-Match is supported)", c, r.Verdict, r.Observed)
		}
	}
	for _, s := range []string{text, page} {
		if !strings.Contains(s, "unsupported-header") {
			t.Errorf("report lacks the class unsupported-header")
		}
	}
}

// stallOn blocks conditional writes of one probe's keys until their context ends.
type stallOn struct {
	store.Store
	probe string
}

func (s stallOn) PutIfAbsent(ctx context.Context, key string, body []byte) (string, error) {
	if strings.Contains(key, "/"+s.probe+"/") {
		<-ctx.Done()
		return "", &store.Error{Op: "put-if-absent", Key: key, Kind: store.ErrAmbiguous, Err: ctx.Err()}
	}
	return s.Store.PutIfAbsent(ctx, key, body)
}

// TestSlowProbeDoesNotPoisonTheNext: one probe that hangs ends at its own deadline, and the
// probes after it run and pass as if it had not been there.
func TestSlowProbeDoesNotPoisonTheNext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := Run(ctx, minioEnv(t), Options{Clients: []store.Client{store.ClientMinio}, Keys: 2, Racers: []int{2, 8},
		Probes: []string{"B9", "B10", "B11", "D17"}, Prefix: testenv.Prefix(t), ProbeTimeout: 2 * time.Second, Timeout: time.Minute,
		Wrap: func(_ store.Client, s store.Store) store.Store { return stallOn{s, "B9"} }})
	if err != nil {
		t.Fatal(err)
	}
	everyErrorHasACause(t, rep)
	if r := find(t, rep, "B9", store.ClientMinio); r.Verdict != Error || r.ErrorClass != Overloaded ||
		!strings.Contains(r.Cause, "deadline 2s exceeded after PUT If-None-Match: *") {
		t.Errorf("B9: %s [%s] %q; want error [overloaded] at its deadline", r.Verdict, r.ErrorClass, r.Cause)
	}
	for _, id := range []string{"B10", "B11", "D17"} {
		if r := find(t, rep, id, store.ClientMinio); r.Verdict != Pass && r.Verdict != Info {
			t.Errorf("%s after the slow B9: %s %q", id, r.Verdict, r.Cause)
		}
	}
}

// hiccupEnv is a remote store that misses the liveness probe once, right after the first
// probe, and answers again a moment later.
type hiccupEnv struct {
	*env.External
	calls, probes atomic.Int32
}

func (h *hiccupEnv) Alive() bool { return h.calls.Add(1) != 2 && h.External.Alive() }

func (h *hiccupEnv) Probe(ctx context.Context) error {
	if h.probes.Add(1) == 1 {
		return errors.New("no answer from the store in 3 tries")
	}
	return h.External.Probe(ctx)
}

// TestStoreHiccupDoesNotSkipProbes: a store that misses one liveness probe between two
// probes is waited for, and the next probe runs (it used to end "not run: the store died"
// in 0s, and every probe after it too).
func TestStoreHiccupDoesNotSkipProbes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	prefix := testenv.Prefix(t)
	e := &hiccupEnv{External: testenv.External(t, testenv.MinIO(t).Config(), "pinned MinIO", prefix)}
	rep, err := Run(ctx, e, Options{Clients: []store.Client{store.ClientMinio}, Probes: []string{"A1", "A2", "A4"}, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results {
		if r.Verdict != Pass {
			t.Errorf("%s: %s %q", r.ID, r.Verdict, r.Observed)
		}
	}
	if rep.Verdict != Certified {
		t.Errorf("verdict %s, want certified", rep.Verdict)
	}
}
