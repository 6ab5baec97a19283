package netpath

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/minio/minio-go/v7/pkg/signer"
)

// received sends req through the wire format and reads it back as a server does.
func received(t *testing.T, req *http.Request) *http.Request {
	t.Helper()
	var buf bytes.Buffer
	if err := req.Write(&buf); err != nil {
		t.Fatal(err)
	}
	r, err := http.ReadRequest(bufio.NewReader(&buf))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func newSigned(t *testing.T, by string, c credential, url string, at time.Time) *http.Request {
	t.Helper()
	body := []byte("payload")
	req, err := http.NewRequest(http.MethodPut, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	req.Header.Set("X-Amz-Content-Sha256", hex.EncodeToString(sum[:]))
	req.Header.Set("If-None-Match", "*")
	switch by {
	case "minio-go":
		return signer.SignV4(*req, c.accessKey, c.secretKey, "", "us-east-1")
	case "aws-sdk-go-v2":
		err = v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: c.accessKey, SecretAccessKey: c.secretKey},
			req, hex.EncodeToString(sum[:]), "s3", "us-east-1", at, func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
		if err != nil {
			t.Fatal(err)
		}
	}
	return req
}

// Both SDKs' signatures verify against the path's credential; any change to what they signed,
// another credential, or a stale date does not.
func TestVerifySigV4(t *testing.T) {
	c, err := newCredential()
	if err != nil {
		t.Fatal(err)
	}
	other, _ := newCredential()
	const url = "http://127.0.0.1:9000/bkt/run/a%20b+c=d?partNumber=1&uploadId=x%2By"
	now := time.Now()
	for _, by := range []string{"minio-go", "aws-sdk-go-v2"} {
		t.Run(by, func(t *testing.T) {
			if _, f := verifySigV4(received(t, newSigned(t, by, c, url, now)), c, now); f != nil {
				t.Fatalf("a correct signature was refused: %v", f)
			}
			tamper := map[string]func(r *http.Request){
				"method": func(r *http.Request) { r.Method = http.MethodDelete },
				"path": func(r *http.Request) {
					r.RequestURI, r.URL.Path, r.URL.RawPath = "/bkt/other?partNumber=1&uploadId=x%2By", "/bkt/other", ""
				},
				"query":   func(r *http.Request) { r.URL.RawQuery = "partNumber=2&uploadId=x%2By" },
				"header":  func(r *http.Request) { r.Header.Del("If-None-Match") },
				"host":    func(r *http.Request) { r.Host = "bkt.example.com" },
				"payload": func(r *http.Request) { r.Header.Set("X-Amz-Content-Sha256", emptySHA256) },
			}
			for name, f := range tamper {
				r := received(t, newSigned(t, by, c, url, now))
				f(r)
				if _, ref := verifySigV4(r, c, now); ref == nil || ref.status != http.StatusForbidden {
					t.Errorf("%s changed after signing: accepted (%v)", name, ref)
				}
			}
			if _, f := verifySigV4(received(t, newSigned(t, by, other, url, now)), c, now); f == nil || f.code != "InvalidAccessKeyId" {
				t.Errorf("another credential: %v", f)
			}
			if _, f := verifySigV4(received(t, newSigned(t, by, c, url, now)), c, now.Add(time.Hour)); f == nil || f.code != "RequestTimeTooSkewed" {
				t.Errorf("an hour-old signature: %v", f)
			}
		})
	}
}

// Both listeners of a path accept loopback connections only.
func TestPathListensOnLoopback(t *testing.T) {
	b, err := New(Options{Upstream: "127.0.0.1:1", Bucket: "b", Prefix: "p/", AccessKey: "a", SecretKey: "s"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	p, err := b.Path("w")
	if err != nil {
		t.Fatal(err)
	}
	for _, addr := range []string{p.Addr(), p.l7} {
		host, _, err := net.SplitHostPort(addr)
		if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
			t.Errorf("listener %s is not bound to a loopback address", addr)
		}
	}
}
