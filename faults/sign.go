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
	accessKey, region, err := parseCredential(r.Header.Get("Authorization"))
	if err != nil {
		return nil, fmt.Errorf("strip-conditions: %w", err)
	}
	if accessKey != b.o.AccessKey {
		return nil, errors.New("strip-conditions: the request is signed with another access key than Options.AccessKey")
	}
	var body []byte
	if r.Body != nil {
		body, err = io.ReadAll(io.LimitReader(r.Body, maxDuplicateBody+1))
		if err != nil {
			return nil, fmt.Errorf("strip-conditions: read body: %w", err)
		}
		if len(body) > maxDuplicateBody {
			return nil, fmt.Errorf("strip-conditions: body larger than %d bytes", maxDuplicateBody)
		}
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
	h.Del("If-Match")
	h.Del("If-None-Match")
	h.Del("Authorization")
	if strings.HasPrefix(h.Get("X-Amz-Content-Sha256"), "STREAMING-") {
		if body, err = decodeAWSChunked(body); err != nil {
			return nil, fmt.Errorf("strip-conditions: %w", err)
		}
		sum := sha256.Sum256(body)
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
	}
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	out.ContentLength = int64(len(body))
	if h.Get("Content-Length") != "" {
		// The server keeps the inbound Content-Length in the header map; the transport sends
		// ContentLength instead. Sign what will be sent.
		h.Set("Content-Length", strconv.Itoa(len(body)))
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
