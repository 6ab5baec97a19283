package s3store_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/store"
	"github.com/fencebench/fencebench/store/storetest"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestContractMinIO(t *testing.T) {
	for _, c := range store.Clients {
		t.Run(string(c), func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) (store.Store, string) {
				return testenv.Store(t, c, nil), testenv.Prefix(t)
			})
		})
	}
}

func TestContractMem(t *testing.T) {
	storetest.Run(t, func(t *testing.T) (store.Store, string) {
		return store.NewMem(), "p/"
	})
}

// dropResponse forwards the request, lets the store apply it, then throws the response away
// and returns a transport error, the way a connection cut after the server answered looks.
type dropResponse struct {
	base    http.RoundTripper
	armed   atomic.Bool
	dropped atomic.Int32
}

func (d *dropResponse) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := d.base.RoundTrip(r)
	if err != nil || r.Method != http.MethodPut || !d.armed.CompareAndSwap(true, false) {
		return resp, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	d.dropped.Add(1)
	return nil, io.ErrUnexpectedEOF
}

func TestDroppedResponseIsAmbiguous(t *testing.T) {
	for _, c := range store.Clients {
		t.Run(string(c), func(t *testing.T) {
			d := &dropResponse{base: store.NewTransport(nil)}
			s := testenv.Store(t, c, func(cfg *store.Config) { cfg.Transport = d })
			p := testenv.Prefix(t)
			ctx := context.Background()
			d.armed.Store(true)
			_, err := s.PutIfAbsent(ctx, p+"k", []byte("landed"))
			if !errors.Is(err, store.ErrAmbiguous) {
				t.Fatalf("dropped response: got %v, want ambiguous", err)
			}
			if d.dropped.Load() != 1 {
				t.Fatalf("the transport saw %d dropped responses, want exactly 1 (no SDK retry)", d.dropped.Load())
			}
			o, err := s.Get(ctx, p+"k")
			if err != nil || string(o.Body) != "landed" {
				t.Fatalf("the write must have landed: got %q, %v", o.Body, err)
			}
			// Were the SDK to retry, this is what it would have seen: 412 for its own write.
			_, err = s.PutIfAbsent(ctx, p+"k", []byte("landed"))
			if !errors.Is(err, store.ErrPreconditionFailed) {
				t.Fatalf("second create: got %v, want precondition failed", err)
			}
		})
	}
}

func TestTimeoutIsAmbiguous(t *testing.T) {
	for _, c := range store.Clients {
		t.Run(string(c), func(t *testing.T) {
			slow := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				<-r.Context().Done()
				return nil, r.Context().Err()
			})
			s := testenv.Store(t, c, func(cfg *store.Config) { cfg.Transport = slow; cfg.Timeout = 200 * time.Millisecond })
			start := time.Now()
			_, err := s.Put(context.Background(), testenv.Prefix(t)+"k", []byte("x"))
			if !errors.Is(err, store.ErrAmbiguous) {
				t.Fatalf("got %v, want ambiguous", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("the per-call timeout did not bound the call: %v", d)
			}
		})
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestNoSuchBucketIsConfig(t *testing.T) {
	for _, c := range store.Clients {
		t.Run(string(c), func(t *testing.T) {
			s := testenv.Store(t, c, func(cfg *store.Config) { cfg.Bucket = "no-such-bucket-here" })
			_, err := s.Get(context.Background(), "k")
			if !errors.Is(err, store.ErrConfig) {
				t.Fatalf("got %v, want a configuration error", err)
			}
		})
	}
}

func TestBadCredentialsAreConfigAndNotPrinted(t *testing.T) {
	for _, c := range store.Clients {
		t.Run(string(c), func(t *testing.T) {
			const secret = "s3cr3t-never-printed-0123456789"
			s := testenv.Store(t, c, func(cfg *store.Config) { cfg.SecretKey = secret })
			_, err := s.Put(context.Background(), testenv.Prefix(t)+"k", []byte("x"))
			if !errors.Is(err, store.ErrConfig) {
				t.Fatalf("got %v, want a configuration error", err)
			}
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("error message contains the secret key: %v", err)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		status int
		code   string
		want   error
	}{
		{412, "PreconditionFailed", store.ErrPreconditionFailed},
		{412, "", store.ErrPreconditionFailed},
		{409, "PreconditionFailed", store.ErrPreconditionFailed},
		{404, "NoSuchKey", store.ErrNotFound},
		{404, "", store.ErrNotFound},
		{404, "NoSuchBucket", store.ErrConfig},
		{403, "AccessDenied", store.ErrConfig},
		{409, "ConditionalRequestConflict", store.ErrConflict},
		{503, "SlowDown", store.ErrAmbiguous},
		{500, "InternalError", store.ErrAmbiguous},
		{0, "", store.ErrAmbiguous},
		{400, "BadDigest", store.ErrAmbiguous},
	} {
		if got := store.Classify(tc.status, tc.code); got != tc.want {
			t.Errorf("Classify(%d, %q) = %v, want %v", tc.status, tc.code, got, tc.want)
		}
	}
}

func TestConfigStringHidesSecrets(t *testing.T) {
	cfg := store.Config{Endpoint: "http://x", Bucket: "b", AccessKey: "AKIAEXAMPLE", SecretKey: "topsecret"}
	if s := cfg.String(); strings.Contains(s, "topsecret") || strings.Contains(s, "AKIAEXAMPLE") {
		t.Fatalf("Config.String leaks credentials: %s", s)
	}
}
