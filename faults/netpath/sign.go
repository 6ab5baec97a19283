package netpath

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/minio/minio-go/v7/pkg/signer"
)

// hopHeaders are not forwarded by the reverse proxy, so they must not be signed either.
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// unsignedKept are the headers forwarded although the client did not sign them: they describe
// the transfer, not the call. Every other unsigned header is dropped, so re-signing never
// vouches for a header the path's credential did not cover.
var unsignedKept = map[string]bool{"content-length": true, "user-agent": true, "accept-encoding": true,
	"content-encoding": true, "x-amz-trailer": true, "x-amz-decoded-content-length": true}

// resign returns the request to send to the store for r, whose signature s verified: r's
// signed headers (less those edit removes) and payload as a plain body (chunked: r's body was
// aws-chunked and payload is what it decoded to), signed again with SigV4 with the store's
// credentials (Options.AccessKey, SecretKey, SessionToken) in s's region. The payload hash
// (X-Amz-Content-Sha256, unless the client sent UNSIGNED-PAYLOAD), Content-MD5 and
// x-amz-checksum-* headers are made to match payload; checksums the client announced as
// aws-chunked trailers become headers.
func (b *Bench) resign(r *http.Request, s *sigV4, payload []byte, chunked bool, edit func(http.Header)) *http.Request {
	out := r.Clone(r.Context())
	h := out.Header
	for _, f := range strings.Split(h.Get("Connection"), ",") {
		if f = strings.TrimSpace(f); f != "" {
			h.Del(f)
		}
	}
	for _, k := range hopHeaders {
		h.Del(k)
	}
	for k := range h {
		if lk := strings.ToLower(k); !unsignedKept[lk] && !slices.Contains(s.signed, lk) {
			delete(h, k)
		}
	}
	if edit != nil {
		edit(h)
	}
	h.Del("Authorization")
	h.Del("X-Amz-Security-Token")
	var trailer []string
	sum := sha256.Sum256(payload)
	if chunked {
		trailer = dechunkHeaders(h)
		h.Set("X-Amz-Content-Sha256", hex.EncodeToString(sum[:]))
	} else if v := h.Get("X-Amz-Content-Sha256"); v != "" && v != "UNSIGNED-PAYLOAD" {
		h.Set("X-Amz-Content-Sha256", hex.EncodeToString(sum[:]))
	}
	refreshChecksums(h, payload, trailer)
	out.Body, out.GetBody = http.NoBody, func() (io.ReadCloser, error) { return http.NoBody, nil }
	if len(payload) > 0 {
		out.Body = io.NopCloser(bytes.NewReader(payload))
		out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(payload)), nil }
	}
	out.ContentLength = int64(len(payload))
	if h.Get("Content-Length") != "" {
		// The server keeps the inbound Content-Length in the header map; the transport sends
		// ContentLength instead. Sign what will be sent.
		h.Set("Content-Length", strconv.Itoa(len(payload)))
	}
	out.TransferEncoding = nil
	out.Trailer = nil
	return signer.SignV4(*out, b.o.AccessKey, b.o.SecretKey, b.o.SessionToken, s.region)
}

// dechunkHeaders removes the aws-chunked framing headers of a request whose body is sent
// decoded, and returns the trailers the client announced.
func dechunkHeaders(h http.Header) (trailer []string) {
	for _, t := range strings.Split(h.Get("X-Amz-Trailer"), ",") {
		if t = strings.TrimSpace(t); t != "" {
			trailer = append(trailer, t)
		}
	}
	h.Del("X-Amz-Decoded-Content-Length")
	h.Del("X-Amz-Trailer")
	var enc []string
	for _, v := range strings.Split(h.Get("Content-Encoding"), ",") {
		if v = strings.TrimSpace(v); v != "" && !strings.EqualFold(v, "aws-chunked") {
			enc = append(enc, v)
		}
	}
	if len(enc) == 0 {
		h.Del("Content-Encoding")
	} else {
		h.Set("Content-Encoding", strings.Join(enc, ","))
	}
	return trailer
}
