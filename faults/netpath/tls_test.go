package netpath_test

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/faults/netpath"
)

// TestTLSPathTerminatesAndReoriginates puts a path in front of an HTTPS store: the L7
// listener answers for the endpoint's (virtual-hosted) name with a run-local certificate,
// only a client trusting the run CA gets through, the proxy reaches the store over verified
// TLS with SNI = the endpoint host, the Host header arrives unchanged, and rules still fire.
func TestTLSPathTerminatesAndReoriginates(t *testing.T) {
	storeCA, err := netpath.NewCA() // stands in for the store operator's private CA
	if err != nil {
		t.Fatal(err)
	}
	storeCert, err := storeCA.Certificate("store.test")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var hosts, snis []string
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hosts, snis = append(hosts, r.Host), append(snis, r.TLS.ServerName)
		mu.Unlock()
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("ETag", `"e1"`)
		_, _ = io.WriteString(w, "stored")
	}))
	up.TLS = &tls.Config{Certificates: []tls.Certificate{*storeCert}}
	up.StartTLS()
	defer up.Close()
	_, port, _ := net.SplitHostPort(up.Listener.Addr().String())

	runCA, err := netpath.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	b, err := netpath.New(netpath.Options{Upstream: up.Listener.Addr().String(), Bucket: "bkt", CA: runCA, Prefix: "run/",
		AccessKey: "store-key", SecretKey: "store-secret",
		UpstreamTLS: &tls.Config{RootCAs: storeCA.Pool(), ServerName: "store.test"}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.RootCAs() != runCA.Pool() {
		t.Fatal("RootCAs must be the run CA's pool")
	}
	p, err := b.Path("w")
	if err != nil {
		t.Fatal(err)
	}
	client := func(trust *tls.Config) *http.Client {
		return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: p.DialContext, TLSClientConfig: trust}}
	}
	endpoint := "https://bkt.store.test:" + port // virtual-hosted; DialContext never resolves it
	put := func(c *http.Client) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPut, endpoint+"/run/key", strings.NewReader("body"))
		return c.Do(signed(p, req, []byte("body")))
	}

	// Not trusting the run CA (the system roots, or the store's own CA): refused.
	for _, trust := range []*tls.Config{nil, {RootCAs: storeCA.Pool()}} {
		_, err := put(client(trust))
		var verr *tls.CertificateVerificationError
		if !errors.As(err, &verr) {
			t.Fatalf("a client that does not trust the run CA: %v", err)
		}
	}
	good := client(&tls.Config{RootCAs: b.RootCAs()})
	resp, err := put(good)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "stored" || resp.TLS == nil {
		t.Fatalf("through the TLS path: %d %q", resp.StatusCode, body)
	}
	if got := resp.TLS.PeerCertificates[0].DNSNames; len(got) != 1 || got[0] != "bkt.store.test" {
		t.Fatalf("the L7 listener presented a certificate for %v, want bkt.store.test", got)
	}
	mu.Lock()
	if len(hosts) != 1 || hosts[0] != "bkt.store.test:"+port || snis[0] != "store.test" {
		t.Fatalf("the store saw Host %v SNI %v", hosts, snis)
	}
	mu.Unlock()

	if err := p.AddRule(faults.Rule{Name: "drop", Method: "PUT", Action: faults.DropResponse, Count: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := put(good); err == nil {
		t.Fatal("a dropped response must reach the client as a transport error")
	}
	l := b.Ledger()
	if len(l) != 2 || l[0].Key != "run/key" || l[1].Rule != "drop" || !l[1].Forwarded || l[1].Delivered || l[1].ETag != "e1" {
		t.Fatalf("ledger %+v", l)
	}
}
