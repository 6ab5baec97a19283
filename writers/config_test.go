package writers

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/store"
)

// A cluster refuses a shard its keys could not name: a prefix that is not a folder, an
// index UUID that is empty or holds a key or body separator, a negative shard id.
func TestClusterRefusesABadShard(t *testing.T) {
	good := Shard{Prefix: "run/", IndexUUID: "u", ID: 0}
	if _, err := NewCluster(Config{Shard: good, Recorder: history.NewRecorder()}); err != nil {
		t.Fatalf("a good shard: %v", err)
	}
	for _, sh := range []Shard{
		{Prefix: "run", IndexUUID: "u"},
		{Prefix: "run/", IndexUUID: ""},
		{Prefix: "run/", IndexUUID: "u/v"},
		{Prefix: "run/", IndexUUID: "u|v"},
		{Prefix: "run/", IndexUUID: "u", ID: -1},
	} {
		if _, err := NewCluster(Config{Shard: sh, Recorder: history.NewRecorder()}); err == nil {
			t.Errorf("shard %+v accepted", sh)
		}
	}
}

// A metadata file's name parses only when both its inverted term and generation do.
func TestMetadataNameNeedsBothNumbers(t *testing.T) {
	sh := Shard{Prefix: "run/", IndexUUID: "u", ID: 3}
	key := sh.MetadataKey(2, 7, "x")
	if _, _, ok := parseMetadataName(key); !ok {
		t.Fatalf("%s does not parse", key)
	}
	term, gen := invert(2), invert(7)
	for _, bad := range []string{
		strings.Replace(key, term, "notanumber", 1),
		strings.Replace(key, gen, "notanumber", 1),
	} {
		if _, _, ok := parseMetadataName(bad); ok {
			t.Errorf("%s parses", bad)
		}
	}
}

// A promotion refuses term 0, and one that fails for a reason other than a fence's verdict
// leaves the copy a standby, promotable again.
func TestPromotionThatFailsLeavesAStandby(t *testing.T) {
	r := memRig(t, nil)
	st := newFailStore(r.st, "list", func(prefix string) bool { return isFenceList("list", prefix) }, 1000, forbidden)
	b := r.add("b", st)
	err := b.Promote(ctx(t), 2)
	if err == nil || !errors.Is(err, store.ErrConfig) || b.State() != StateStandby {
		t.Fatalf("promotion whose store refuses: %v, b is %s; want the store's error and a standby", err, b.State())
	}
	st.n.Store(0)
	if err := b.Promote(ctx(t), 0); err == nil || b.State() != StateStandby {
		t.Fatalf("promotion at term 0: %v, b is %s; want refused", err, b.State())
	}
	r.promote(b, 2)
	r.submit(b, 2)
	r.waitAcked(b, 2)
}

// retryable is the writers' one answer to "try the step again?": unknown outcomes and
// transient answers yes, verdicts and configuration errors no.
func TestRetryableClassifies(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&store.Error{Kind: store.ErrAmbiguous, Status: 500}, true},
		{&store.Error{Kind: store.ErrConflict, Status: 409}, true},
		{context.DeadlineExceeded, true},
		{&fence.Error{Kind: fence.ErrRetryable, Reason: "unknown"}, true},
		{&store.Error{Kind: store.ErrConfig, Status: 403}, false},
		{&store.Error{Kind: store.ErrPreconditionFailed, Status: 412}, false},
		{&store.Error{Kind: store.ErrNotFound, Status: 404}, false},
		{&fence.Error{Kind: fence.ErrFenced, Reason: "superseded"}, false},
		{context.Canceled, false},
	} {
		if got := retryable(tc.err); got != tc.want {
			t.Errorf("retryable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// A pause and its resume are each recorded once; resuming a writer that is not paused
// records nothing.
func TestResumeRecordsOnce(t *testing.T) {
	r := memRig(t, nil)
	a := r.add("a", nil)
	r.promote(a, 1)
	a.Resume()
	a.Pause()
	a.Resume()
	a.Resume()
	if p, rs := len(r.events(history.Pause, "a")), len(r.events(history.Resume, "a")); p != 1 || rs != 1 {
		t.Fatalf("%d pauses and %d resumes recorded; want 1 and 1", p, rs)
	}
}

// A restart under an id another writer has is refused.
func TestRestartRefusesATakenID(t *testing.T) {
	r := memRig(t, nil)
	a, b := r.add("a", nil), r.add("b", nil)
	r.promote(a, 1)
	a.Crash()
	if nw, err := a.Restart(ctx(t), b.ID(), 2); err == nil || nw != nil {
		t.Fatalf("restart as b: %v, %v; want refused", nw, err)
	}
}
