package netpath_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7/pkg/signer"

	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/faults/netpath"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/store"
	"github.com/fencebench/fencebench/store/s3store"
)

// signed signs req (SigV4, payload hash of body) with the path's credential.
func signed(p *netpath.Path, req *http.Request, body []byte) *http.Request {
	ak, sk := p.Credentials()
	return signedWith(req, body, ak, sk)
}

func signedWith(req *http.Request, body []byte, ak, sk string) *http.Request {
	sum := sha256.Sum256(body)
	req.Header.Set("X-Amz-Content-Sha256", hex.EncodeToString(sum[:]))
	return signer.SignV4(*req, ak, sk, "", "us-east-1")
}

// raw sends one hand-made request into the path and returns the status and S3 error code.
func raw(t *testing.T, p *netpath.Path, req *http.Request) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: p.DialContext}}
	defer c.CloseIdleConnections()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	code := ""
	if i, j := bytes.Index(b, []byte("<Code>")), bytes.Index(b, []byte("</Code>")); i >= 0 && j > i {
		code = string(b[i+6 : j])
	}
	return resp.StatusCode, code
}

func objectURL(t *testing.T, key string) string {
	srv := testenv.MinIO(t)
	return srv.Endpoint + "/" + srv.Bucket + "/" + key
}

// mustBeAbsent fails when key exists in the store (read directly, not through a path).
func mustBeAbsent(t *testing.T, key string) {
	t.Helper()
	if _, err := direct(t, store.ClientMinio).Get(context.Background(), key); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("%s: want absent, got %v", key, err)
	}
}

func refusedIn(t *testing.T, l []history.LedgerEntry, key string) {
	t.Helper()
	for _, e := range l {
		if e.Key == key && e.Refused != "" && !e.Forwarded && e.Status == 0 {
			return
		}
	}
	t.Fatalf("no refused, unforwarded ledger entry for %s in %+v", key, l)
}

// A request whose signature does not verify against the path's credential is answered 403 and
// never reaches the store, even while a rule that re-signs requests is in place.
func TestForgedRequestsAreRefused(t *testing.T) {
	b := newBench(t)
	p, err := b.Path("w")
	if err != nil {
		t.Fatal(err)
	}
	mustAdd(t, p, faults.Rule{Name: "strip", Method: "PUT", Action: faults.StripConditions})
	srv := testenv.MinIO(t)
	pathKey, _ := p.Credentials()
	stamp := time.Now().UTC().Format("20060102T150405Z")
	forge := func(key, ak string) *http.Request {
		req, _ := http.NewRequest(http.MethodPut, objectURL(t, key), strings.NewReader("forged"))
		req.Header.Set("X-Amz-Date", stamp)
		req.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
		req.Header.Set("Authorization", fmt.Sprintf("AWS4-HMAC-SHA256 Credential=%s/%s/us-east-1/s3/aws4_request, "+
			"SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=%s", ak, stamp[:8], strings.Repeat("0", 64)))
		return req
	}
	outside := fmt.Sprintf("forged-%d", time.Now().UnixNano())
	inside := testenv.Prefix(t) + "forged"
	cases := map[string]*http.Request{
		"bogus signature, store's key, outside": forge(outside, srv.AccessKey),
		"bogus signature, store's key, inside":  forge(inside, srv.AccessKey),
		"bogus signature, path's key, inside":   forge(inside, pathKey),
	}
	anon, _ := http.NewRequest(http.MethodPut, objectURL(t, inside), strings.NewReader("anonymous"))
	cases["anonymous"] = anon
	for name, req := range cases {
		if st, code := raw(t, p, req); st != http.StatusForbidden {
			t.Errorf("%s: answered %d %s, want 403", name, st, code)
		}
	}
	mustBeAbsent(t, outside)
	mustBeAbsent(t, inside)
	refusedIn(t, b.Ledger(), outside)
	if p.Fired("strip") != 0 {
		t.Fatalf("a refused request fired a rule %d times", p.Fired("strip"))
	}
}

// Query-string (presigned) authentication is refused, even with the path's credential.
func TestPresignedRequestsAreRefused(t *testing.T) {
	b := newBench(t)
	p, err := b.Path("w")
	if err != nil {
		t.Fatal(err)
	}
	ak, sk := p.Credentials()
	key := testenv.Prefix(t) + "presigned"
	req, _ := http.NewRequest(http.MethodPut, objectURL(t, key), nil)
	req = signer.PreSignV4(*req, ak, sk, "", "us-east-1", 600)
	req.Body = io.NopCloser(strings.NewReader("presigned"))
	req.ContentLength = 9
	if st, code := raw(t, p, req); st != http.StatusForbidden {
		t.Fatalf("presigned PUT answered %d %s, want 403", st, code)
	}
	mustBeAbsent(t, key)
}

// Correctly signed requests that reach outside the run's bucket and prefix are refused: a key,
// a listing, a DeleteObjects batch naming one such key, a copy source, another bucket.
func TestSignedRequestsOutsideThePrefixAreRefused(t *testing.T) {
	ctx := context.Background()
	b := newBench(t)
	p, err := b.Path("w")
	if err != nil {
		t.Fatal(err)
	}
	outside := fmt.Sprintf("outside-%d", time.Now().UnixNano())
	inside := testenv.Prefix(t) + "kept"
	if _, err := direct(t, store.ClientMinio).Put(ctx, inside, []byte("kept")); err != nil {
		t.Fatal(err)
	}
	put := func(key string) *http.Request {
		req, _ := http.NewRequest(http.MethodPut, objectURL(t, key), strings.NewReader("x"))
		return signed(p, req, []byte("x"))
	}
	srv := testenv.MinIO(t)
	list, _ := http.NewRequest(http.MethodGet, srv.Endpoint+"/"+srv.Bucket+"?list-type=2&prefix=", nil)
	unnamed, _ := http.NewRequest(http.MethodGet, srv.Endpoint+"/"+srv.Bucket+"?list-type=2", nil)
	batch := []byte(`<Delete><Object><Key>` + inside + `</Key></Object><Object><Key>` + outside + `</Key></Object></Delete>`)
	del, _ := http.NewRequest(http.MethodPost, srv.Endpoint+"/"+srv.Bucket+"?delete=", bytes.NewReader(batch))
	copyReq, _ := http.NewRequest(http.MethodPut, objectURL(t, testenv.Prefix(t)+"copy"), nil)
	copyReq.Header.Set("X-Amz-Copy-Source", "/"+srv.Bucket+"/"+outside)
	copyReq = signed(p, copyReq, nil)
	other, _ := http.NewRequest(http.MethodPut, srv.Endpoint+"/another-bucket/"+inside, strings.NewReader("x"))
	cases := map[string]*http.Request{
		"put outside":         put(outside),
		"dot segments":        put(strings.TrimSuffix(testenv.Prefix(t), "/") + "/../../" + outside),
		"list everything":     signed(p, list, nil),
		"list without prefix": signed(p, unnamed, nil),
		"batch":               signed(p, del, batch),
		"copy source":         copyReq,
		"another bucket":      signed(p, other, []byte("x")),
	}
	for name, req := range cases {
		if st, code := raw(t, p, req); st != http.StatusForbidden || code != "AccessDenied" {
			t.Errorf("%s: answered %d %s, want 403 AccessDenied", name, st, code)
		}
	}
	mustBeAbsent(t, outside)
	if o, err := direct(t, store.ClientMinio).Get(ctx, inside); err != nil || string(o.Body) != "kept" {
		t.Fatalf("a refused batch deleted %s: %v", inside, err)
	}
	refusedIn(t, b.Ledger(), outside)
}

// The store's own credentials are refused by the path, through both SDKs: only the path's
// credential is accepted. A listing outside the prefix is refused; inside it works.
func TestOnlyThePathCredentialIsAccepted(t *testing.T) {
	ctx := context.Background()
	for _, c := range store.Clients {
		t.Run(string(c), func(t *testing.T) {
			b := newBench(t)
			p, err := b.Path("w")
			if err != nil {
				t.Fatal(err)
			}
			key := testenv.Prefix(t) + "k"
			realCfg := testenv.MinIO(t).Config()
			realCfg.DialContext = p.DialContext
			withReal, err := s3store.New(c, realCfg)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := withReal.Put(ctx, key, []byte("real")); !errors.Is(err, store.ErrConfig) {
				t.Fatalf("the store's credentials through the path: %v, want a 403 (configuration error)", err)
			}
			mustBeAbsent(t, key)
			s, _ := client(t, b, "w", c, 5*time.Second)
			if _, err := s.Put(ctx, key, []byte("path")); err != nil {
				t.Fatalf("the path's credential: %v", err)
			}
			if _, err := s.List(ctx, "elsewhere/"); !errors.Is(err, store.ErrConfig) {
				t.Fatalf("a listing outside the prefix: %v, want refused", err)
			}
			if l, err := s.List(ctx, key); err != nil || len(l) != 1 {
				t.Fatalf("a listing inside the prefix: %v %v", l, err)
			}
		})
	}
}
