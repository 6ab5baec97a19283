package runner

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/outcome"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/compose"
	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/scenarios"
)

// TestContainersStack runs scenarios on the containers stack: MinIO in a container started
// with testcontainers-go from the FROM scratch image (built on first use, then cached),
// Toxiproxy and the L7 proxy embedded as usual. The correct protocol passes
// partitioned-primary, lost-cas-response and relocation-aborted there, and
// ambiguous-is-fenced is still killed.
func TestContainersStack(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a container and runs four cells; skipped with -short")
	}
	testenv.NeedDocker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := compose.StartContainer(ctx, compose.ContainerOptions{LogPath: t.TempDir() + "/minio.log"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	env := env.Container{Container: c}
	if info := env.Info(); info.Stack != "containers" || !strings.Contains(info.Server, compose.MinIOImage) {
		t.Fatalf("info %+v", info)
	}
	byName := map[string]*scenarios.Scenario{}
	for _, s := range catalogue(t) {
		byName[s.Name] = s
	}
	pick := func(names ...string) []*scenarios.Scenario {
		var out []*scenarios.Scenario
		for _, n := range names {
			if byName[n] == nil {
				t.Fatalf("no catalogue scenario %s", n)
			}
			out = append(out, byName[n])
		}
		return out
	}
	report := func(sum *outcome.Summary) string {
		var b strings.Builder
		for _, c := range sum.Cells {
			fmt.Fprintf(&b, "\n  %s: %s %s %v (%s)", c.ID, c.Verdict, c.Error, c.Result.Reasons, c.Rerun)
		}
		return b.String()
	}

	sum, err := Run(ctx, pick("partitioned-primary", "lost-cas-response", "relocation-aborted"),
		Options{Out: t.TempDir(), Env: env, Seed: 11, RunID: "correct"})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Cells) != 3 || sum.ExitCode() != outcome.ExitPass {
		t.Fatalf("the correct protocol on the containers stack:%s", report(sum))
	}
	sum, err = Run(ctx, pick("lost-cas-response"), Options{Out: t.TempDir(), Env: env, Seed: 11, RunID: "kill",
		Variant: "ambiguous-is-fenced"})
	if err != nil {
		t.Fatal(err)
	}
	if k := sum.Cells[0]; !k.Kill || k.Verdict != checker.Pass || k.Result.Raw != checker.Fail || !strings.Contains(strings.Join(k.Violates, " "), "NoSpuriousFencing") {
		t.Fatalf("ambiguous-is-fenced must be killed on the containers stack (NoSpuriousFencing):%s", report(sum))
	}
	if !c.Alive() {
		t.Fatal("the MinIO container died during the run")
	}
}
