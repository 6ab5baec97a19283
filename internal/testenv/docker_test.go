package testenv

import (
	"fmt"
	"strings"
	"testing"
)

// recorder is a testing.TB that records how a test was ended instead of ending it.
type recorder struct {
	testing.TB
	fatal, skip string
}

func (r *recorder) Helper()                   {}
func (r *recorder) Fatalf(f string, a ...any) { r.fatal = fmt.Sprintf(f, a...) }
func (r *recorder) Skip(a ...any)             { r.skip = fmt.Sprint(a...) }

// TestNoDockerFailsWhenRequired: without Docker a container test skips, and fails when
// FENCEBENCH_REQUIRE_DOCKER=1, as CI sets it.
func TestNoDockerFailsWhenRequired(t *testing.T) {
	for _, required := range []string{"", "1"} {
		t.Setenv(RequireDocker, required)
		r := &recorder{TB: t}
		NoDocker(r, "no engine at %s", "unix:///nowhere")
		ended := r.skip
		if required == "1" {
			ended = r.fatal
		}
		if (r.fatal != "") != (required == "1") || (r.skip != "") != (required == "") ||
			!strings.Contains(ended, "no engine at unix:///nowhere") || !strings.Contains(ended, RequireDocker) {
			t.Errorf("%s=%q: fatal %q, skip %q", RequireDocker, required, r.fatal, r.skip)
		}
	}
}
