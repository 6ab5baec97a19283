package certify

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/store"
)

// dropConditionalDeletes serves the store at upstream and closes the connection, without an
// answer, on every conditional delete (DELETE with If-Match, and the DeleteObjects POST).
func dropConditionalDeletes(t *testing.T, upstream string) string {
	t.Helper()
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, batch := r.URL.Query()["delete"]
		if r.Method == http.MethodDelete && r.Header.Get("If-Match") != "" || r.Method == http.MethodPost && batch {
			if c, _, err := http.NewResponseController(w).Hijack(); err == nil {
				c.Close()
			}
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestConditionalDeleteErrorsNameTheirCause: when the store gives no answer to the raw
// conditional deletes of E19 and E20 (sent beside the Store interface), each errored result
// names that request, that it got no response, and the attempt it gave up after, and is
// classed overloaded; it used to read only "DELETE If-Match: <stale>: no response", class
// harness. Real MinIO behind a proxy that drops exactly those requests.
func TestConditionalDeleteErrorsNameTheirCause(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	prefix := testenv.Prefix(t)
	cfg := testenv.MinIO(t).Config()
	cfg.Endpoint = dropConditionalDeletes(t, cfg.Endpoint)
	e := testenv.External(t, cfg, "MinIO behind a proxy dropping conditional deletes", prefix)
	rep, err := Run(ctx, e, Options{Clients: []store.Client{store.ClientMinio}, Probes: []string{"E19", "E20"}, Prefix: prefix,
		ProbeTimeout: 30 * time.Second, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	text, page := reportTexts(t, rep)
	t.Logf("\n%s", text)
	everyErrorHasACause(t, rep)
	for _, id := range []string{"E19", "E20"} {
		r := find(t, rep, id, store.ClientMinio)
		if r.Verdict != Error || r.ErrorClass != Overloaded {
			t.Errorf("%s: %s [%s] %q; want error [overloaded]", id, r.Verdict, r.ErrorClass, r.Cause)
			continue
		}
		for _, want := range []string{"DELETE If-Match ", "no response", "gave up after attempt 1 of 1, retries off", "request 3 of the probe"} {
			if id == "E20" && want == "request 3 of the probe" {
				want = "request 1 of the probe" // the missing key's conditional delete comes first
			}
			if !strings.Contains(r.Cause, want) {
				t.Errorf("%s: cause %q lacks %q", id, r.Cause, want)
			}
		}
		if !strings.Contains(text, r.Cause) || !strings.Contains(page, "gave up after attempt 1 of 1") {
			t.Errorf("%s: the cause is not on the terminal and the page", id)
		}
	}
}
