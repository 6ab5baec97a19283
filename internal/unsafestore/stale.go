package unsafestore

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// staleEntry is the version of a key a PUT If-Match replaced, served until until.
type staleEntry struct {
	header http.Header
	body   []byte
	until  time.Time
}

// staleCache holds the replaced versions by request path.
type staleCache struct {
	mu sync.Mutex
	m  map[string]staleEntry
}

func (c *staleCache) get(path string) (staleEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[path]
	if ok && time.Now().After(e.until) {
		delete(c.m, path)
		ok = false
	}
	return e, ok
}

func (c *staleCache) put(path string, e staleEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[path] = e
}

// serveStale answers a GET or HEAD of a key whose replaced version is still cached with that
// version; it reports whether it answered.
func (f *Front) serveStale(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead || !objectRequest(r) || r.Header.Get("Range") != "" {
		return false
	}
	e, ok := f.stale.get(r.URL.Path)
	if !ok {
		return false
	}
	for k, vs := range e.header {
		w.Header()[k] = vs
	}
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(e.body)
	}
	return true
}

// statusWriter calls onStatus with the status a handler answers, before the client sees it.
type statusWriter struct {
	http.ResponseWriter
	onStatus func(int)
	done     bool
}

func (s *statusWriter) WriteHeader(code int) {
	if !s.done {
		s.done = true
		s.onStatus(code)
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if !s.done {
		s.WriteHeader(http.StatusOK)
	}
	return s.ResponseWriter.Write(b)
}

// casThenStale reads the key's current version, forwards the conditional PUT unchanged, and,
// when a PUT If-Match replaced the version it read, keeps serving that version for Stale.
func (f *Front) casThenStale(w http.ResponseWriter, r *http.Request) {
	im := strings.Trim(r.Header.Get("If-Match"), `"`)
	if im == "" {
		f.proxy.ServeHTTP(w, r)
		return
	}
	prev, err := f.send(r, http.MethodGet, nil)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	body, err := io.ReadAll(prev.Body)
	prev.Body.Close()
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	replaced := prev.StatusCode == http.StatusOK && strings.Trim(prev.Header.Get("ETag"), `"`) == im
	f.proxy.ServeHTTP(&statusWriter{ResponseWriter: w, onStatus: func(code int) {
		if code/100 == 2 && replaced { // cached before the writer learns of its success
			f.stale.put(r.URL.Path, staleEntry{header: prev.Header.Clone(), body: body, until: time.Now().Add(f.opts.Stale)})
		}
	}}, r)
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
