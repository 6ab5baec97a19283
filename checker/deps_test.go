package checker

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies keeps the checker a pure function of recorded data: besides the standard
// library it may import history and porcupine, never the packages that touch the network,
// the store or the protocol.
func TestDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	const module = "github.com/fencebench/fencebench"
	for _, dep := range strings.Fields(string(out)) {
		switch {
		case dep == module+"/checker", dep == module+"/history", strings.HasPrefix(dep, "vendor/"):
		case strings.HasPrefix(dep, module):
			t.Errorf("checker depends on %s; it may import only history", dep)
		case strings.Contains(dep, "minio-go"), strings.Contains(dep, "aws-sdk"), strings.Contains(dep, "toxiproxy"):
			t.Errorf("checker depends on %s", dep)
		case strings.Contains(dep, "."): // a non-standard-library package
			if !strings.HasPrefix(dep, "github.com/anishathalye/porcupine") {
				t.Errorf("checker depends on %s; it may import only the standard library, history and porcupine", dep)
			}
		}
	}
}
