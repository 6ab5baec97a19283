package fence

import (
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/store"
)

// loseOneIfMatch forwards requests but drops the response of the first If-Match PUT once
// armed: the write lands, the client sees a connection reset.
type loseOneIfMatch struct {
	next  http.RoundTripper
	armed atomic.Bool
}

func (l *loseOneIfMatch) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := l.next.RoundTrip(r)
	if err == nil && r.Method == http.MethodPut && r.Header.Get("If-Match") != "" && l.armed.CompareAndSwap(true, false) {
		resp.Body.Close()
		return nil, &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	}
	return resp, err
}

// The sdk-retries variant lives where the store is built (MaxAttempts > 1); the fence cannot
// see it. This shows what it does to the fence on a real server: the SDK's retry of a landed
// If-Match PUT gets 412, and a healthy writer is fenced. With retries off, the lost response
// is resolved by identity and adopted.
func TestSDKRetriesTurnALostResponseIntoAFence(t *testing.T) {
	for _, c := range store.Clients {
		for _, attempts := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/attempts=%d", c, attempts), func(t *testing.T) {
				t.Parallel()
				lt := &loseOneIfMatch{next: store.NewTransport(nil)}
				s := testenv.Store(t, c, func(cfg *store.Config) {
					cfg.MaxAttempts = attempts
					cfg.Transport = lt
				})
				w := &world{t: t, ctx: t.Context(), raw: s, prefix: testenv.Prefix(t)}
				a, _ := w.owner("a", 5, true, Correct)
				lt.armed.Store(true)
				err := a.Advance(w.ctx)
				if lt.armed.Load() {
					t.Fatal("the fault never fired")
				}
				if attempts == 1 {
					mustOK(t, "lost response with retries off", err)
					if c := w.content(5); c.Seq != 1 || a.Seq() != 1 {
						t.Fatalf("stored seq %d, instance seq %d; want 1", c.Seq, a.Seq())
					}
					return
				}
				wantErr(t, "lost response with SDK retries", err, ErrFenced, "lost the CAS")
				if c := w.content(5); c.AllocationID != "a" || c.Seq != 1 {
					t.Fatalf("the healthy writer's own write is at the key (%+v) and it is fenced anyway", c)
				}
			})
		}
	}
}
