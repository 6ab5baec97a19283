package netpath

import (
	"bytes"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"hash"
	"hash/crc32"
	"hash/crc64"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// maxDeleteBody bounds the DeleteObjects request body the proxy buffers to read the keys it
// names: 1000 keys of 1024 bytes, XML-escaped, fit comfortably.
const maxDeleteBody = 8 << 20

// s3Namespace is the XML namespace of S3 documents.
const s3Namespace = "http://s3.amazonaws.com/doc/2006-03-01/"

// deleteBatch is the buffered body of a DeleteObjects request and the keys it names.
type deleteBatch struct {
	streamed bool     // the body arrived aws-chunked (streaming-signed or with trailers)
	payload  []byte   // the XML document (aws-chunked framing removed)
	objects  []object // the <Object> entries, in order
	parsed   bool     // payload is a complete, well-formed Delete document
}

// object is one <Object> entry of a Delete document: its key and where the element sits in
// the payload.
type object struct {
	key        string
	start, end int64
}

// isDeleteObjects reports whether r is a DeleteObjects call: POST on the bucket with the
// "delete" query parameter.
func isDeleteObjects(r *http.Request, key string) bool {
	return r.Method == http.MethodPost && key == "" && r.URL.Query().Has("delete")
}

// keys returns the keys the batch names, in order (nil when it could not be parsed).
func (d *deleteBatch) keys() []string {
	if !d.parsed {
		return nil
	}
	out := make([]string, len(d.objects))
	for i, o := range d.objects {
		out[i] = o.key
	}
	return out
}

// without returns the payload with the <Object> entries whose key matches (every entry when
// match is nil) cut out, the keys cut, and whether any entry remains.
func (d *deleteBatch) without(match func(string) bool) (body []byte, removed []string, rest bool) {
	var out bytes.Buffer
	var last int64
	for _, o := range d.objects {
		if match != nil && !match(o.key) {
			rest = true
			continue
		}
		removed = append(removed, o.key)
		out.Write(d.payload[last:o.start])
		last = o.end
	}
	out.Write(d.payload[last:])
	return out.Bytes(), removed, rest
}

// parseDeleteObjects finds the <Object> entries of a Delete document. Entries are located by
// their byte offsets so they can be cut out without re-encoding the rest of the document.
func parseDeleteObjects(doc []byte) ([]object, bool) {
	dec := xml.NewDecoder(bytes.NewReader(doc))
	var objs []object
	depth, root := 0, false
	for {
		off := dec.InputOffset()
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return objs, root && depth == 0
		}
		if err != nil {
			return nil, false
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				if root || t.Name.Local != "Delete" {
					return nil, false
				}
				root = true
			}
			if depth == 1 && t.Name.Local == "Object" {
				var o struct {
					Key string `xml:"Key"`
				}
				if err := dec.DecodeElement(&o, &t); err != nil {
					return nil, false
				}
				objs = append(objs, object{key: o.Key, start: off, end: dec.InputOffset()})
				continue
			}
			depth++
		case xml.EndElement:
			depth--
		}
	}
}

// deleteError is one per-key failure of a DeleteResult.
type deleteError struct {
	XMLName xml.Name `xml:"Error"`
	Key     string   `xml:"Key"`
	Code    string   `xml:"Code"`
	Message string   `xml:"Message"`
}

// deleteErrors encodes an <Error> entry with Code InternalError for each key.
func deleteErrors(keys []string, msg string) []byte {
	var out bytes.Buffer
	enc := xml.NewEncoder(&out)
	for _, k := range keys {
		_ = enc.Encode(deleteError{Key: k, Code: "InternalError", Message: msg})
	}
	_ = enc.Flush()
	return out.Bytes()
}

// deleteResult is a complete DeleteResult document reporting every key as failed.
func deleteResult(keys []string, msg string) []byte {
	var out bytes.Buffer
	out.WriteString(xml.Header)
	out.WriteString(`<DeleteResult xmlns="` + s3Namespace + `">`)
	out.Write(deleteErrors(keys, msg))
	out.WriteString(`</DeleteResult>`)
	return out.Bytes()
}

// injectDeleteErrors adds the entries to a DeleteResult document, just before its end tag
// (or by opening a self-closed root). It reports false when doc is not a DeleteResult.
func injectDeleteErrors(doc, entries []byte) ([]byte, bool) {
	trimmed := bytes.TrimRight(doc, " \t\r\n")
	if i := bytes.LastIndex(trimmed, []byte("</")); i >= 0 {
		name := strings.TrimSpace(strings.TrimSuffix(string(trimmed[i+2:]), ">"))
		if _, local, _ := strings.Cut(name, ":"); local == "DeleteResult" || name == "DeleteResult" {
			return concat(doc[:i], entries, doc[i:]), true
		}
		return nil, false
	}
	// <DeleteResult xmlns="…"/>: nothing was reported.
	if bytes.HasSuffix(trimmed, []byte("/>")) && bytes.Contains(trimmed, []byte("<DeleteResult")) {
		i := len(trimmed) - 2
		return concat(trimmed[:i], []byte(">"), entries, []byte("</DeleteResult>")), true
	}
	return nil, false
}

func concat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// writeDeleteResult answers a DeleteObjects request with HTTP 200 and a DeleteResult that
// reports every key as failed, as S3 does for per-key failures.
func writeDeleteResult(w http.ResponseWriter, r *http.Request, keys []string, msg, reqID string) {
	body := deleteResult(keys, msg)
	h := w.Header()
	h.Set("Content-Type", "application/xml")
	h.Set("X-Amz-faults.Request-Id", reqID)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// isAWSChunked reports whether a request body is aws-chunked encoded: streaming-signed, or
// unsigned with trailers.
func isAWSChunked(h http.Header) bool {
	if strings.HasPrefix(h.Get("X-Amz-Content-Sha256"), "STREAMING-") {
		return true
	}
	for _, v := range strings.Split(h.Get("Content-Encoding"), ",") {
		if strings.EqualFold(strings.TrimSpace(v), "aws-chunked") {
			return true
		}
	}
	return false
}

// crc64NVME is the CRC-64/NVME table (the reflected polynomial 0xad93d23594c93659).
var crc64NVME = crc64.MakeTable(0x9a6c9329ac4bc9b5)

// checksumHash returns a new hash for an x-amz-checksum-<algorithm> header, or nil.
func checksumHash(header string) hash.Hash {
	switch strings.ToLower(header) {
	case "x-amz-checksum-crc32":
		return crc32.NewIEEE()
	case "x-amz-checksum-crc32c":
		return crc32.New(crc32.MakeTable(crc32.Castagnoli))
	case "x-amz-checksum-crc64nvme":
		return crc64.New(crc64NVME)
	case "x-amz-checksum-sha1":
		return sha1.New()
	case "x-amz-checksum-sha256":
		return sha256.New()
	}
	return nil
}

// checksum is the base64 value of an x-amz-checksum-<algorithm> header for body ("" for an
// unknown algorithm).
func checksum(header string, body []byte) string {
	h := checksumHash(header)
	if h == nil {
		return ""
	}
	h.Write(body)
	// The CRC hashes write their sum big-endian, as S3 encodes it.
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// refreshChecksums makes the body checksums a request carries match body: Content-MD5 and
// every x-amz-checksum-<algorithm> header are recomputed; one of an algorithm the proxy does
// not know is dropped. trailer names checksum headers the client announced as aws-chunked
// trailers; they are sent as headers instead.
func refreshChecksums(h http.Header, body []byte, trailer []string) {
	if h.Get("Content-Md5") != "" {
		sum := md5.Sum(body)
		h.Set("Content-Md5", base64.StdEncoding.EncodeToString(sum[:]))
	}
	names := slices.Collect(maps.Keys(h))
	for _, t := range trailer {
		names = append(names, http.CanonicalHeaderKey(strings.TrimSpace(t)))
	}
	for _, k := range names {
		lk := strings.ToLower(k)
		if !strings.HasPrefix(lk, "x-amz-checksum-") || lk == "x-amz-checksum-type" || lk == "x-amz-checksum-algorithm" {
			continue
		}
		if v := checksum(lk, body); v != "" {
			h.Set(k, v)
		} else {
			h.Del(k)
		}
	}
}
