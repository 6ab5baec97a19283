package writers

import (
	"slices"
	"strings"
	"testing"

	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/store"
)

// isTlog matches a translog data file.
func isTlog(key string) bool { return strings.HasSuffix(key, ".tlog") }

// A promotion's seal whose fence listing the store did not answer claims again, on the same
// promotion: the copy becomes primary, and the history shows the unknown attempt and the
// one that sealed.
func TestSealClaimsAgainAfterAnUnansweredListing(t *testing.T) {
	r := memRig(t, nil)
	st := newFailStore(r.st, "list", func(key string) bool { return key == r.c.cfg.Shard.FencePrefix() }, 1, unanswered)
	a := r.add("a", st)
	if err := a.Promote(ctx(t), 3); err != nil {
		t.Fatalf("promotion past one unanswered fence listing: %v", err)
	}
	if a.State() != StateActive || st.n.Load() >= 0 {
		t.Fatalf("a is %s (injected failures left %d); want active, past its failed listing", a.State(), st.n.Load()+1)
	}
	var outcomes []history.Outcome
	for _, e := range r.events(history.Claim, "a") {
		if e.Detail == "seal" {
			outcomes = append(outcomes, e.Outcome)
		}
	}
	if !slices.Equal(outcomes, []history.Outcome{history.Ambiguous, history.OK}) {
		t.Fatalf("seal claims %v; want one unknown, then one that sealed", outcomes)
	}
	r.submit(a, 5)
	r.waitAcked(a, 5)
}

// A restore read that found every named .tlog file records its success with no error text,
// on an empty shard and on one with a lineage.
func TestRestoreReadOfAnIntactLineageRecordsNoError(t *testing.T) {
	r := memRig(t, nil)
	a, b := r.add("a", nil), r.add("b", nil)
	r.promote(a, 3)
	r.submit(a, 10)
	r.waitAcked(a, 10)
	r.promote(b, 4)
	for _, w := range []string{"a", "b"} {
		reads := r.events(history.RestoreRead, w)
		if len(reads) != 1 || reads[0].Outcome != history.OK || reads[0].Err != "" {
			t.Fatalf("%s's restore reads %+v; want one, ok, with no error", w, reads)
		}
	}
	if got := r.events(history.RestoreRead, "b")[0]; !slices.Equal(got.Ops, r.acked("a")) {
		t.Fatalf("b's restore read found %v; want a's acknowledged ops %v", got.Ops, r.acked("a"))
	}
}

// A recovery whose snapshot names a .tlog file the store does not have finishes, reports the
// file missing, and its record says which; a recovery that read every file records no error.
func TestRecoveryRecordNamesMissingSnapshotFiles(t *testing.T) {
	r := memRig(t, nil)
	a := r.add("a", nil)
	notFound := &store.Error{Op: "get", Kind: store.ErrNotFound, Status: 404, Code: "NoSuchKey"}
	st := newFailStore(r.st, "get", isTlog, 0, notFound)
	c, d := r.add("c", st), r.add("d", nil)
	r.promote(a, 1)
	r.submit(a, 10)
	r.waitAcked(a, 10)

	rc, err := d.Recover(ctx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := r.events(history.RestoreRead, "d")
	if len(rc.Missing) != 0 || len(rec) != 1 || rec[0].Outcome != history.OK || rec[0].Err != "" {
		t.Fatalf("recovery %+v, records %+v; want nothing missing and one ok record with no error", rc, rec)
	}

	st.n.Store(1)
	rc, err = c.Recover(ctx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	rec = r.events(history.RestoreRead, "c")
	if len(rc.Missing) != 1 || len(rec) != 1 || rec[0].Outcome != history.OK {
		t.Fatalf("recovery %+v, records %+v; want one file missing and one ok record", rc, rec)
	}
	if !strings.Contains(rec[0].Err, "missing") || !strings.Contains(rec[0].Err, rc.Missing[0]) {
		t.Fatalf("the recovery's record says %q; want it to name the missing file %s", rec[0].Err, rc.Missing[0])
	}
}

// A recovery's snapshot read the store refuses outright (a 403) is not read again within the
// attempt: the attempt fails, recorded with the store's refusal, and the recovery starts
// over, succeeding at its second attempt.
func TestRecoveryAttemptFailsOnARefusedSnapshotRead(t *testing.T) {
	r := memRig(t, nil)
	a := r.add("a", nil)
	st := newFailStore(r.st, "get", isTlog, 1, forbidden)
	c := r.add("c", st)
	r.promote(a, 1)
	r.submit(a, 10)
	r.waitAcked(a, 10)
	rc, err := c.Recover(ctx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if rc.Attempts != 2 || !slices.Equal(rc.Ops, r.acked("a")) {
		t.Fatalf("recovery %+v; want every op at the second attempt", rc)
	}
	rec := r.events(history.RestoreRead, "c")
	if len(rec) != 2 || rec[0].Outcome != history.Fail || !strings.Contains(rec[0].Err, "AccessDenied") || rec[1].Outcome != history.OK {
		t.Fatalf("recovery records %+v; want a failed attempt naming the 403, then an ok one", rec)
	}
}
