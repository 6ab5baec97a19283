package netpath

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// listParams are the query parameters of a ListObjects (v1 or v2) call; a bucket-level GET
// carrying any other is a different call (a bucket subresource) and is refused.
var listParams = map[string]bool{"list-type": true, "prefix": true, "delimiter": true, "max-keys": true,
	"continuation-token": true, "start-after": true, "marker": true, "encoding-type": true,
	"fetch-owner": true, "metadata": true}

// split returns the bucket and object key a request addresses, virtual-hosted (Host
// "bucket.…", path "/key") or path-style ("/bucket/key").
func (b *Bench) split(r *http.Request) (bucket, key string) {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	pth := strings.TrimPrefix(r.URL.Path, "/")
	if b.o.Bucket != "" && strings.HasPrefix(host, b.o.Bucket+".") {
		return b.o.Bucket, pth
	}
	bucket, key, _ = strings.Cut(pth, "/")
	return bucket, key
}

// confine refuses a request that reaches outside the bench's bucket and prefix: another
// bucket, an object key (or a copy source) outside Options.Prefix, a listing of a prefix
// outside it, a DeleteObjects batch naming any key outside it, or any other bucket-level call.
func (b *Bench) confine(r *http.Request, batch *deleteBatch) *refusal {
	bucket, key := b.split(r)
	if bucket != b.o.Bucket {
		return denied("AccessDenied", "a fault path only reaches bucket %s", b.o.Bucket)
	}
	if src := r.Header.Get("X-Amz-Copy-Source"); src != "" {
		if f := b.confineCopySource(src); f != nil {
			return f
		}
	}
	if key != "" {
		return b.confineKey(key)
	}
	q := r.URL.Query()
	switch {
	case r.Method == http.MethodPost && len(q) == 1 && q.Has("delete"):
		if batch == nil || !batch.parsed {
			return denied("AccessDenied", "the keys of a DeleteObjects batch could not be read")
		}
		for _, k := range batch.keys() {
			if f := b.confineKey(k); f != nil {
				return f
			}
		}
		return nil
	case r.Method == http.MethodGet || r.Method == http.MethodHead:
		for k := range q {
			if !listParams[k] {
				return denied("AccessDenied", "a fault path refuses bucket-level calls other than listings")
			}
		}
		if !q.Has("prefix") {
			return denied("AccessDenied", "a listing on a fault path must name a prefix under %s", b.o.Prefix)
		}
		return b.confineKey(q.Get("prefix"))
	}
	return denied("AccessDenied", "a fault path refuses bucket-level calls other than listings and DeleteObjects")
}

// confineKey refuses a key (or listing prefix) outside Options.Prefix, or one with a "." or
// ".." segment that a store could resolve outside it.
func (b *Bench) confineKey(key string) *refusal {
	if !strings.HasPrefix(key, b.o.Prefix) {
		return denied("AccessDenied", "the key is outside the run's prefix %s", b.o.Prefix)
	}
	for _, seg := range strings.Split(key, "/") {
		if seg == "." || seg == ".." {
			return denied("AccessDenied", "keys with . or .. segments are refused")
		}
	}
	return nil
}

// confineCopySource checks an X-Amz-Copy-Source ("[/]bucket/key[?versionId=…]").
func (b *Bench) confineCopySource(src string) *refusal {
	src, _, _ = strings.Cut(src, "?")
	dec, err := url.PathUnescape(src)
	if err != nil {
		return denied("AccessDenied", "malformed X-Amz-Copy-Source")
	}
	bucket, key, _ := strings.Cut(strings.TrimPrefix(dec, "/"), "/")
	if bucket != b.o.Bucket {
		return denied("AccessDenied", "a fault path only reaches bucket %s", b.o.Bucket)
	}
	return b.confineKey(key)
}
