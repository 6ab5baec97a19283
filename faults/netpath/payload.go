package netpath

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// payloadKind is how a request declares its body in X-Amz-Content-Sha256.
type payloadKind int

const (
	payloadUnknown   payloadKind = iota
	payloadHash                  // the hex SHA-256 of the body
	payloadUnsigned              // UNSIGNED-PAYLOAD, or aws-chunked with unsigned chunks
	payloadStreaming             // aws-chunked, every chunk signed in a chain from the header
)

func payloadMode(v string) payloadKind {
	switch v {
	case "UNSIGNED-PAYLOAD", "STREAMING-UNSIGNED-PAYLOAD-TRAILER":
		return payloadUnsigned
	case "STREAMING-AWS4-HMAC-SHA256-PAYLOAD", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER":
		return payloadStreaming
	}
	if _, err := hex.DecodeString(v); err == nil && len(v) == 64 {
		return payloadHash
	}
	return payloadUnknown
}

// verifyPayload reads r's body and checks it against what the signature declared: its SHA-256,
// or the chain of chunk signatures of a streaming-signed body. It returns the payload (an
// aws-chunked body decoded; chunked tells) for the proxy to re-sign.
func verifyPayload(r *http.Request, s *sigV4) (payload []byte, chunked bool, ref *refusal) {
	var raw []byte
	if r.Body != nil {
		var err error
		raw, err = io.ReadAll(io.LimitReader(r.Body, maxDuplicateBody+1))
		if err != nil {
			return nil, false, &refusal{status: http.StatusBadRequest, code: "IncompleteBody", msg: "read body: " + err.Error()}
		}
		if len(raw) > maxDuplicateBody {
			return nil, false, &refusal{status: http.StatusBadRequest, code: "EntityTooLarge",
				msg: fmt.Sprintf("a fault path forwards bodies of at most %d bytes", maxDuplicateBody)}
		}
	}
	declared := r.Header.Get("X-Amz-Content-Sha256")
	mode := payloadMode(declared)
	if mode == payloadHash {
		sum := sha256.Sum256(raw)
		if !hmac.Equal([]byte(hex.EncodeToString(sum[:])), []byte(strings.ToLower(declared))) {
			return nil, false, denied("XAmzContentSHA256Mismatch", "the body does not match X-Amz-Content-Sha256")
		}
	}
	if !isAWSChunked(r.Header) {
		if mode == payloadStreaming {
			return nil, false, denied("AccessDenied", "a streaming signature needs an aws-chunked body")
		}
		return raw, false, nil
	}
	var verify func(data []byte, sig string) error
	if mode == payloadStreaming {
		prev := s.signature
		verify = func(data []byte, sig string) error {
			sum := sha256.Sum256(data)
			want := hmacHex(s.key, "AWS4-HMAC-SHA256-PAYLOAD\n"+s.amzDate+"\n"+s.scope+"\n"+prev+"\n"+
				emptySHA256+"\n"+hex.EncodeToString(sum[:]))
			if !hmac.Equal([]byte(want), []byte(sig)) {
				return errors.New("a chunk signature does not verify")
			}
			prev = sig
			return nil
		}
	}
	payload, err := decodeAWSChunked(raw, verify)
	if err != nil {
		return nil, true, denied("SignatureDoesNotMatch", "%v", err)
	}
	if n := r.Header.Get("X-Amz-Decoded-Content-Length"); n != "" && n != strconv.Itoa(len(payload)) {
		return nil, true, denied("IncompleteBody", "X-Amz-Decoded-Content-Length does not match the body")
	}
	return payload, true, nil
}

// decodeAWSChunked returns the payload of an aws-chunked body:
// "<hex size>[;chunk-signature=…]\r\n<data>\r\n" repeated, ended by a zero-size chunk and
// optional trailers, which are dropped. verify, when not nil, checks every chunk (the final
// empty one included) against its chunk-signature.
func decodeAWSChunked(body []byte, verify func(data []byte, sig string) error) ([]byte, error) {
	br := bufio.NewReader(bytes.NewReader(body))
	var out bytes.Buffer
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("aws-chunked body: chunk header: %w", err)
		}
		sizeHex, ext, _ := strings.Cut(strings.TrimRight(line, "\r\n"), ";")
		size, err := strconv.ParseInt(strings.TrimSpace(sizeHex), 16, 64)
		if err != nil || size < 0 || size > int64(len(body)) {
			return nil, fmt.Errorf("aws-chunked body: bad chunk size %q", sizeHex)
		}
		data := make([]byte, size)
		if _, err := io.ReadFull(br, data); err != nil {
			return nil, fmt.Errorf("aws-chunked body: chunk data: %w", err)
		}
		if verify != nil {
			sig, ok := strings.CutPrefix(strings.TrimSpace(ext), "chunk-signature=")
			if !ok {
				return nil, errors.New("aws-chunked body: a chunk without chunk-signature")
			}
			if err := verify(data, sig); err != nil {
				return nil, err
			}
		}
		if size == 0 {
			return out.Bytes(), nil // trailers, if any, follow: the proxy recomputes them
		}
		out.Write(data)
		if crlf, err := br.ReadString('\n'); err != nil || strings.TrimRight(crlf, "\r\n") != "" {
			return nil, errors.New("aws-chunked body: missing CRLF after chunk")
		}
	}
}
