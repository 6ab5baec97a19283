package env_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/internal/testenv"
)

func TestExternalAliveProbesTheStore(t *testing.T) {
	srv, e := testenv.ExternalMinIO(t, testenv.Prefix(t))
	if !e.Alive() {
		t.Fatal("a running store must be alive")
	}
	srv.Stop()
	start := time.Now()
	if e.Alive() {
		t.Fatal("a killed store must not be alive")
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("Alive took %v on a dead store", d)
	}
}

// TestExternalProbeStaysInPrefix: the liveness probe of an external store reads only inside
// the run's prefix. A recording proxy in front of a real MinIO sees every request the probe
// sends; each one that names an object names one under the prefix.
func TestExternalProbeStaysInPrefix(t *testing.T) {
	srv := testenv.MinIO(t)
	target, err := url.Parse(srv.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string
	rp := httputil.NewSingleHostReverseProxy(target)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path)
		mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	cfg := srv.Config()
	cfg.Endpoint = proxy.URL
	prefix := testenv.Prefix(t)
	e, err := env.NewExternal(cfg, "MinIO", prefix)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Probe(context.Background()); err != nil {
		t.Fatalf("probe of a running store: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	bucket := "/" + cfg.Bucket
	objects := 0
	for _, req := range seen {
		_, path, _ := strings.Cut(req, " ")
		key, isObject := strings.CutPrefix(path, bucket+"/")
		if !isObject || key == "" {
			continue // the bucket itself (its location), no object
		}
		objects++
		if !strings.HasPrefix(key, prefix) {
			t.Errorf("the probe sent %s: outside the run's prefix %s", req, prefix)
		}
	}
	if objects == 0 {
		t.Fatalf("the probe read no object through the proxy (requests: %q)", seen)
	}
}
