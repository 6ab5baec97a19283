package guard

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestPanicCancelsTheSinksContext(t *testing.T) {
	ctx, s := New(context.Background())
	Go(ctx, "a worker", func() { panic("boom") })
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the panic did not cancel the sink's context")
	}
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), "panic in a worker: boom") {
		t.Fatalf("sink error %v", err)
	}
	if cause := context.Cause(ctx); cause == nil || !strings.Contains(cause.Error(), "boom") {
		t.Fatalf("cause %v", cause)
	}
}

func TestHandlerPanicIsReported(t *testing.T) {
	_, s := New(context.Background())
	srv := httptest.NewServer(s.Handler("a proxy", http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("bad request") })))
	defer srv.Close()
	if resp, err := http.Get(srv.URL); err == nil {
		resp.Body.Close()
		t.Fatal("a panicking handler answered")
	}
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), "panic in a proxy: bad request") {
		t.Fatalf("sink error %v", err)
	}
}

func TestNoSinkMeansDefault(t *testing.T) {
	before := Default.Err()
	done := make(chan struct{})
	var nilSink *Sink
	restore := SetTestHook(func(name string) {
		if name == "hooked" {
			panic("from the hook")
		}
	})
	defer restore()
	nilSink.Go("hooked", func() { close(done) })
	deadline := time.Now().Add(5 * time.Second)
	for Default.Err() == before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case <-done:
		t.Fatal("the goroutine ran past the hook's panic")
	default:
	}
	if err := Default.Err(); err == nil || !strings.Contains(err.Error(), "panic in hooked: from the hook") {
		t.Fatalf("default sink %v", err)
	}
}
