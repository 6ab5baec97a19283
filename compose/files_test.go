package compose_test

import (
	"os"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/fencebench/fencebench/compose"
)

// TestComposeFileShape checks docker-compose.yml without Docker: both services, images as
// variables defaulting to the official images, ports on loopback only.
func TestComposeFileShape(t *testing.T) {
	b, err := os.ReadFile("docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Services map[string]struct {
			Image string   `yaml:"image"`
			Ports []string `yaml:"ports"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for name, image := range map[string]string{
		"minio":     "${MINIO_IMAGE:-" + compose.OfficialMinIOImage + "}",
		"toxiproxy": "${TOXIPROXY_IMAGE:-" + compose.OfficialToxiproxyImage + "}",
	} {
		s, ok := doc.Services[name]
		if !ok || s.Image != image {
			t.Fatalf("service %s: image %q, want %q", name, s.Image, image)
		}
		for _, p := range s.Ports {
			if !strings.HasPrefix(p, "127.0.0.1:") {
				t.Errorf("service %s publishes %s beyond the loopback interface", name, p)
			}
		}
	}
}

// TestNightlyWorkflowShape checks the example workflow: scheduled, a matrix of shards x
// clients that starts the compose stack, runs its shard of the catalogue with the kill matrix
// on the external stack, uploads its run folder and always tears the stack down, and a final
// job that merges the shards, uploads the report and publishes the JUnit results.
func TestNightlyWorkflowShape(t *testing.T) {
	b, err := os.ReadFile("nightly-workflow.yml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		On struct {
			Schedule []map[string]string `yaml:"schedule"`
		} `yaml:"on"`
		Jobs map[string]struct {
			Env      map[string]string `yaml:"env"`
			Needs    string            `yaml:"needs"`
			Strategy struct {
				Matrix map[string][]any `yaml:"matrix"`
			} `yaml:"strategy"`
			Steps []struct {
				Uses string `yaml:"uses"`
				Run  string `yaml:"run"`
				If   string `yaml:"if"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.On.Schedule) == 0 || doc.On.Schedule[0]["cron"] == "" {
		t.Fatal("the workflow has no schedule")
	}
	job, ok := doc.Jobs["catalogue"]
	if !ok || job.Env["COMPOSE_FILE"] != "compose/docker-compose.yml" {
		t.Fatalf("job catalogue with COMPOSE_FILE=compose/docker-compose.yml: %+v", job.Env)
	}
	if len(job.Strategy.Matrix["shard"]) < 2 || len(job.Strategy.Matrix["client"]) != 2 {
		t.Fatalf("job catalogue: matrix %v, want shards x both clients", job.Strategy.Matrix)
	}
	if doc.Jobs["merge"].Needs != "catalogue" {
		t.Fatal("no merge job after the catalogue's shards")
	}
	nightly := false
	for _, s := range doc.Jobs["matrix-tests"].Steps {
		nightly = nightly || strings.TrimSpace(s.Run) == ".ci/nightly"
	}
	if !nightly {
		t.Fatal("no job runs .ci/nightly (make nightly, the full MinIO matrix of the tests)")
	}
	var all []string
	down := false
	for _, s := range append(job.Steps, doc.Jobs["merge"].Steps...) {
		all = append(all, s.Uses+" "+s.Run)
		if strings.Contains(s.Run, "docker compose down -v") && s.If == "always()" {
			down = true
		}
	}
	text := strings.Join(all, "\n")
	for _, want := range []string{"docker compose up -d", "--matrix", "--stack external", "--shard", "actions/upload-artifact",
		"actions/download-artifact", "fencebench merge", "action-junit-report"} {
		if !strings.Contains(text, want) {
			t.Errorf("the workflow lacks %q", want)
		}
	}
	if !down {
		t.Error("the workflow must always tear the stack down")
	}
}
