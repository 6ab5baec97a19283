package faults

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/minio/minio-go/v7/pkg/signer"
)

// hopHeaders are not forwarded by the reverse proxy, so they must not be signed either.
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// stripAndResign returns a copy of r without If-Match / If-None-Match, signed again with SigV4.
// Both SDKs sign those headers, so merely removing them would earn 403 SignatureDoesNotMatch.
// A streaming-signed body (aws-chunked, whose chunk signatures chain from the header
// signature) is decoded and sent as a plain payload with its SHA-256.
func (b *Bench) stripAndResign(r *http.Request) (*http.Request, error) {
	const what = "strip-conditions"
	var body []byte
	if r.Body != nil {
		var err error
		body, err = io.ReadAll(io.LimitReader(r.Body, maxDuplicateBody+1))
		if err != nil {
			return nil, fmt.Errorf("%s: read body: %w", what, err)
		}
		if len(body) > maxDuplicateBody {
			return nil, fmt.Errorf("%s: body larger than %d bytes", what, maxDuplicateBody)
		}
	}
	chunked := isAWSChunked(r.Header)
	if chunked {
		var err error
		if body, err = decodeAWSChunked(body); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
	}
	return b.resign(r, what, body, chunked, func(h http.Header) {
		h.Del("If-Match")
		h.Del("If-None-Match")
	})
}

// resign returns a copy of r whose headers edit altered, carrying payload as a plain body
// (chunked: r's body was aws-chunked and payload is what it decoded to), signed again with
// SigV4 with Options.AccessKey and Options.SecretKey. The payload hash (X-Amz-Content-Sha256,
// unless the client sent UNSIGNED-PAYLOAD), Content-MD5 and x-amz-checksum-* headers are made
// to match payload; checksums the client announced as aws-chunked trailers become headers.
func (b *Bench) resign(r *http.Request, what string, payload []byte, chunked bool, edit func(http.Header)) (*http.Request, error) {
	accessKey, region, err := parseCredential(r.Header.Get("Authorization"))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if accessKey != b.o.AccessKey {
		return nil, fmt.Errorf("%s: the request is signed with another access key than Options.AccessKey", what)
	}
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
	if edit != nil {
		edit(h)
	}
	h.Del("Authorization")
	var trailer []string
	sum := sha256.Sum256(payload)
	if chunked {
		for _, t := range strings.Split(h.Get("X-Amz-Trailer"), ",") {
			if t = strings.TrimSpace(t); t != "" {
				trailer = append(trailer, t)
			}
		}
		h.Set("X-Amz-Content-Sha256", hex.EncodeToString(sum[:]))
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
	} else if v := h.Get("X-Amz-Content-Sha256"); v != "" && v != "UNSIGNED-PAYLOAD" {
		h.Set("X-Amz-Content-Sha256", hex.EncodeToString(sum[:]))
	}
	refreshChecksums(h, payload, trailer)
	out.Body = io.NopCloser(bytes.NewReader(payload))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(payload)), nil }
	out.ContentLength = int64(len(payload))
	if h.Get("Content-Length") != "" {
		// The server keeps the inbound Content-Length in the header map; the transport sends
		// ContentLength instead. Sign what will be sent.
		h.Set("Content-Length", strconv.Itoa(len(payload)))
	}
	out.TransferEncoding = nil
	out.Trailer = nil
	return signer.SignV4(*out, accessKey, b.o.SecretKey, "", region), nil
}

// parseCredential extracts the access key and region from a SigV4 Authorization header.
func parseCredential(auth string) (accessKey, region string, err error) {
	const algo = "AWS4-HMAC-SHA256 "
	if !strings.HasPrefix(auth, algo) {
		return "", "", errors.New("request is not signed with SigV4")
	}
	for _, part := range strings.Split(strings.TrimPrefix(auth, algo), ",") {
		part = strings.TrimSpace(part)
		if cred, ok := strings.CutPrefix(part, "Credential="); ok {
			f := strings.Split(cred, "/")
			if len(f) != 5 {
				return "", "", errors.New("malformed SigV4 credential scope")
			}
			return f[0], f[2], nil
		}
	}
	return "", "", errors.New("SigV4 Authorization without Credential")
}

// decodeAWSChunked returns the payload of an aws-chunked body:
// "<hex size>[;chunk-signature=…]\r\n<data>\r\n" repeated, ended by a zero-size chunk and
// optional trailers, which are dropped.
func decodeAWSChunked(body []byte) ([]byte, error) {
	br := bufio.NewReader(bytes.NewReader(body))
	var out bytes.Buffer
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("aws-chunked body: chunk header: %w", err)
		}
		sizeHex, _, _ := strings.Cut(strings.TrimRight(line, "\r\n"), ";")
		size, err := strconv.ParseInt(strings.TrimSpace(sizeHex), 16, 64)
		if err != nil || size < 0 {
			return nil, fmt.Errorf("aws-chunked body: bad chunk size %q", sizeHex)
		}
		if size == 0 {
			return out.Bytes(), nil // trailers, if any, follow: not needed
		}
		if _, err := io.CopyN(&out, br, size); err != nil {
			return nil, fmt.Errorf("aws-chunked body: chunk data: %w", err)
		}
		if crlf, err := br.ReadString('\n'); err != nil || strings.TrimRight(crlf, "\r\n") != "" {
			return nil, errors.New("aws-chunked body: missing CRLF after chunk")
		}
	}
}
