package netpath

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

const (
	sigAlgorithm = "AWS4-HMAC-SHA256"
	amzDateForm  = "20060102T150405Z"
	// maxClockSkew is how far a request's X-Amz-Date may be from the proxy's clock, as S3
	// allows.
	maxClockSkew = 15 * time.Minute
	// emptySHA256 is the hex SHA-256 of nothing.
	emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
)

// credential is a path's SigV4 key pair: generated for the path, held by the writer's client
// and by the proxy, and accepted nowhere else.
type credential struct{ accessKey, secretKey string }

// newCredential draws a fresh key pair from crypto/rand.
func newCredential() (credential, error) {
	var buf [36]byte
	if _, err := rand.Read(buf[:]); err != nil {
		return credential{}, fmt.Errorf("faults: path credential: %w", err)
	}
	return credential{accessKey: "FBPATH" + strings.ToUpper(hex.EncodeToString(buf[:6])),
		secretKey: hex.EncodeToString(buf[6:])}, nil
}

// sigV4 is a parsed and verified SigV4 Authorization header.
type sigV4 struct {
	accessKey string
	amzDate   string // X-Amz-Date, as signed
	scope     string // <date>/<region>/s3/aws4_request
	region    string
	signed    []string // SignedHeaders, lowercase
	signature string
	key       []byte // the signing key derived from the path's secret
}

// refusal is why the proxy answers a request itself with an S3 error instead of forwarding it.
type refusal struct {
	status int
	code   string
	msg    string
}

func (f *refusal) Error() string { return f.code + ": " + f.msg }

func denied(code, format string, args ...any) *refusal {
	return &refusal{status: http.StatusForbidden, code: code, msg: fmt.Sprintf(format, args...)}
}

// verifySigV4 checks r's Authorization header against the path's credential: algorithm,
// access key, credential scope, X-Amz-Date within maxClockSkew of now, and the signature over
// the canonical request (method, path, query, the signed headers, the declared payload hash).
// The payload itself is checked by verifyPayload.
func verifySigV4(r *http.Request, c credential, now time.Time) (*sigV4, *refusal) {
	if q := r.URL.Query(); q.Has("X-Amz-Signature") || q.Has("X-Amz-Credential") || q.Has("Signature") || q.Has("AWSAccessKeyId") {
		return nil, denied("AccessDenied", "query-string authentication is not accepted on a fault path")
	}
	auth := r.Header.Get("Authorization")
	if auth == "" {
		return nil, denied("AccessDenied", "anonymous requests are not accepted on a fault path")
	}
	s, err := parseAuthorization(auth)
	if err != nil {
		return nil, denied("AccessDenied", "%v", err)
	}
	if !hmac.Equal([]byte(s.accessKey), []byte(c.accessKey)) {
		return nil, denied("InvalidAccessKeyId", "the access key is not this fault path's")
	}
	s.amzDate = r.Header.Get("X-Amz-Date")
	t, err := time.Parse(amzDateForm, s.amzDate)
	if err != nil {
		return nil, denied("AccessDenied", "missing or malformed X-Amz-Date")
	}
	if d := now.Sub(t); d > maxClockSkew || d < -maxClockSkew {
		return nil, denied("RequestTimeTooSkewed", "X-Amz-Date is more than %v from the proxy's clock", maxClockSkew)
	}
	if !strings.HasPrefix(s.scope, s.amzDate[:8]+"/") {
		return nil, denied("AccessDenied", "the credential scope's date is not X-Amz-Date's")
	}
	for _, h := range []string{"host", "x-amz-date", "x-amz-content-sha256"} {
		if !slices.Contains(s.signed, h) {
			return nil, denied("AccessDenied", "SignedHeaders must include %s", h)
		}
	}
	if payloadMode(r.Header.Get("X-Amz-Content-Sha256")) == payloadUnknown {
		return nil, denied("AccessDenied", "unsupported X-Amz-Content-Sha256")
	}
	s.key = signingKey(c.secretKey, s.scope)
	// The canonical path is the one on the wire (aws-sdk-go-v2) or the decoded path encoded
	// again (minio-go, MinIO); they differ only when the client chose another encoding.
	wire, _, _ := strings.Cut(r.RequestURI, "?")
	if !strings.HasPrefix(wire, "/") {
		wire = r.URL.EscapedPath()
	}
	for _, uri := range slices.Compact([]string{wire, encodePath(r.URL.Path)}) {
		canonical, err := canonicalRequest(r, uri, s.signed)
		if err != nil {
			return nil, denied("AccessDenied", "%v", err)
		}
		sum := sha256.Sum256([]byte(canonical))
		want := hmacHex(s.key, sigAlgorithm+"\n"+s.amzDate+"\n"+s.scope+"\n"+hex.EncodeToString(sum[:]))
		if hmac.Equal([]byte(want), []byte(s.signature)) {
			return s, nil
		}
	}
	return nil, denied("SignatureDoesNotMatch", "the request signature does not verify")
}

// parseAuthorization reads "AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…".
func parseAuthorization(auth string) (*sigV4, error) {
	rest, ok := strings.CutPrefix(auth, sigAlgorithm+" ")
	if !ok {
		return nil, errors.New("the request is not signed with SigV4 (AWS4-HMAC-SHA256)")
	}
	s := &sigV4{}
	var signed string
	for _, part := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "Credential":
			ak, scope, _ := strings.Cut(v, "/")
			f := strings.Split(scope, "/")
			if len(f) != 4 || len(f[0]) != 8 || f[1] == "" || f[2] != "s3" || f[3] != "aws4_request" {
				return nil, errors.New("malformed SigV4 credential scope")
			}
			s.accessKey, s.scope, s.region = ak, scope, f[1]
		case "SignedHeaders":
			signed = v
		case "Signature":
			s.signature = v
		}
	}
	if s.scope == "" || signed == "" || len(s.signature) != 64 {
		return nil, errors.New("SigV4 Authorization without Credential, SignedHeaders or Signature")
	}
	s.signed = strings.Split(signed, ";")
	if !slices.IsSorted(s.signed) || len(slices.Compact(slices.Clone(s.signed))) != len(s.signed) {
		return nil, errors.New("SignedHeaders must be sorted and unique")
	}
	for _, h := range s.signed {
		if h == "" || h != strings.ToLower(h) {
			return nil, errors.New("SignedHeaders must be lowercase names")
		}
	}
	return s, nil
}

// canonicalRequest is the SigV4 canonical request of r over the signed headers, with uri as
// the canonical path (S3 does not encode it twice).
func canonicalRequest(r *http.Request, uri string, signed []string) (string, error) {
	query, err := canonicalQuery(r.URL.RawQuery)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(r.Method + "\n" + uri + "\n" + query + "\n")
	for _, h := range signed {
		var vals []string
		switch h {
		case "host":
			vals = []string{r.Host}
		case "transfer-encoding":
			vals = r.TransferEncoding
		default:
			vals = r.Header.Values(h)
		}
		for i, v := range vals {
			vals[i] = strings.Join(strings.Fields(v), " ")
		}
		b.WriteString(h + ":" + strings.Join(vals, ",") + "\n")
	}
	b.WriteString("\n" + strings.Join(signed, ";") + "\n" + r.Header.Get("X-Amz-Content-Sha256"))
	return b.String(), nil
}

// canonicalQuery sorts the query's parameters by name, then value, each URI-encoded.
func canonicalQuery(raw string) (string, error) {
	if raw == "" {
		return "", nil
	}
	var pairs []string
	for _, p := range strings.Split(raw, "&") {
		if p == "" {
			continue
		}
		k, v, _ := strings.Cut(p, "=")
		dk, err1 := url.QueryUnescape(k)
		dv, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil {
			return "", errors.New("malformed query string")
		}
		pairs = append(pairs, uriEncode(dk)+"="+uriEncode(dv))
	}
	slices.SortFunc(pairs, func(a, b string) int {
		ak, av, _ := strings.Cut(a, "=")
		bk, bv, _ := strings.Cut(b, "=")
		if c := strings.Compare(ak, bk); c != 0 {
			return c
		}
		return strings.Compare(av, bv)
	})
	return strings.Join(pairs, "&"), nil
}

// uriEncode percent-encodes every byte but the unreserved ones (A-Z a-z 0-9 - _ . ~).
func uriEncode(s string) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || strings.IndexByte("-_.~", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}

// encodePath URI-encodes every segment of a decoded path.
func encodePath(p string) string {
	segs := strings.Split(p, "/")
	for i, seg := range segs {
		segs[i] = uriEncode(seg)
	}
	return strings.Join(segs, "/")
}

// signingKey derives the SigV4 key of scope (<date>/<region>/<service>/aws4_request).
func signingKey(secret, scope string) []byte {
	k := []byte("AWS4" + secret)
	for _, part := range strings.Split(scope, "/") {
		k = hmacSum(k, part)
	}
	return k
}

func hmacSum(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

func hmacHex(key []byte, data string) string { return hex.EncodeToString(hmacSum(key, data)) }
