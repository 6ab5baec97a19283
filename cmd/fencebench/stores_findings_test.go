package main

import (
	"strings"
	"testing"

	"github.com/fencebench/fencebench/certify"
)

// A store card never shows a red result without something to read beside it: the witness, the
// error's cause, or (a probe that found no history to explain, as A5) the failing round's own
// observations.
func TestStoreFindingsEveryRedResultHasItsEvidence(t *testing.T) {
	rep := &certify.Report{Results: []certify.Result{
		{ID: "A1", Title: "create on an existing key is refused", Class: certify.Hard, Client: "minio-go", Verdict: certify.Pass},
		{ID: "A5", Title: "If-Match on a missing key never creates it", Class: certify.Hard, Client: "minio-go", Verdict: certify.Fail,
			Observed: "PUT If-Match on a missing key answered 200: the object was created", Rounds: 3, Round: 1,
			Details: []string{"FAIL: the key exists after PUT If-Match on a missing key (answered 200)"}},
		{ID: "C15", Title: "ABA", Class: certify.Informational, Client: "aws-sdk", Verdict: certify.Error, ErrorClass: certify.Overloaded,
			Cause: "PUT k: no response: connection reset by peer; gave up after attempt 1 of 1"},
	}}
	enforces, wrong := storeFindings(rep)
	if len(enforces) != 1 || !strings.HasPrefix(enforces[0], "A1 ") {
		t.Errorf("enforces %q, want A1 alone (A5 failed)", enforces)
	}
	if len(wrong) != 2 {
		t.Fatalf("%d findings, want 2: %+v", len(wrong), wrong)
	}
	if w := wrong[0].Witness; !strings.Contains(w, "round 1 of 3") || !strings.Contains(w, "the key exists after PUT If-Match") {
		t.Errorf("A5's evidence %q, want the failing round's details", w)
	}
	if w := wrong[1].Witness; w != "[overloaded] PUT k: no response: connection reset by peer; gave up after attempt 1 of 1" {
		t.Errorf("C15's evidence %q, want the error's class and cause", w)
	}
}
