package checker

import "testing"

// TestTwoWinners: the condition a witness shows granted twice is named; a create, a delete
// and a create again, or two CASes on different ETags, grant nothing twice.
func TestTwoWinners(t *testing.T) {
	op := func(req, ans string) WitnessOp { return WitnessOp{Request: req, Answer: ans} }
	cases := []struct {
		name string
		ops  []WitnessOp
		want string
	}{
		{"two CASes on one ETag", []WitnessOp{op("PUT If-Match:e1", "ok"), op("PUT If-Match:e2", "ok"), op("PUT If-Match:e1", "ok")}, "PUT If-Match:e1"},
		{"CASes on different ETags", []WitnessOp{op("PUT If-Match:e1", "ok"), op("PUT If-Match:e2", "ok"), op("GET", "ok")}, ""},
		{"one CAS won, one refused", []WitnessOp{op("PUT If-Match:e1", "ok"), op("PUT If-Match:e1", "412")}, ""},
		{"three creates, one delete", []WitnessOp{op("PUT If-None-Match:*", "ok"), op("DeleteObjects", "ok"),
			op("PUT If-None-Match:*", "ok"), op("PUT If-None-Match:*", "ok")}, "PUT If-None-Match:*"},
		{"two creates", []WitnessOp{op("PUT If-None-Match:*", "ok"), op("PUT If-None-Match:*", "ok")}, "PUT If-None-Match:*"},
		{"create, delete, create", []WitnessOp{op("PUT If-None-Match:*", "ok"), op("DELETE", "ok"), op("PUT If-None-Match:*", "ok")}, ""},
	}
	for _, tc := range cases {
		if got := twoWinners(&Witness{Ops: tc.ops}); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := twoWinners(nil); got != "" {
		t.Errorf("no witness: %q", got)
	}
}
