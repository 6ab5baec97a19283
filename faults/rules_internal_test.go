package faults

import (
	"bytes"
	"net/http"
	"testing"
)

func TestGlob(t *testing.T) {
	cases := []struct {
		pat, key string
		want     bool
	}{
		{"locks/*", "locks/a/b", true},
		{"locks/*", "locks/", true},
		{"locks/*", "lock/a", false},
		{"*", "", true},
		{"a?c", "a/c", true},
		{"a?c", "abbc", false},
		{"[ab]x", "bx", true},
		{"[^ab]x", "bx", false},
		{"[a-c]x", "cx", true},
		{`a\*`, "a*", true},
		{`a\*`, "ab", false},
		{"a.b", "axb", false},
		{"epoch/(1)", "epoch/(1)", true},
		{"ü*", "übung/x", true},
	}
	for _, c := range cases {
		re, err := globRegexp(c.pat)
		if err != nil {
			t.Fatalf("%q: %v", c.pat, err)
		}
		if got := re.MatchString(c.key); got != c.want {
			t.Errorf("%q ~ %q = %v, want %v", c.pat, c.key, got, c.want)
		}
	}
}

func TestFireNthCountAndHeaders(t *testing.T) {
	b := &Bench{o: Options{}}
	p := &Path{b: b, fired: map[string]int{}}
	add := func(r Rule) {
		c, err := b.compile(r)
		if err != nil {
			t.Fatal(err)
		}
		p.rules = append(p.rules, c)
	}
	add(Rule{Name: "third", Method: "put", Key: "k*", Header: "if-match", Value: `"e1"`, Nth: 3, Count: 2, Action: DropResponse})
	add(Rule{Name: "rest", Method: "PUT", Action: Duplicate})
	h := http.Header{"If-Match": {"e1"}}
	var got []string
	for range 6 {
		r := p.fire("PUT", "k1", h)
		got = append(got, r.Name)
	}
	want := []string{"rest", "rest", "third", "third", "rest", "rest"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("firing order %v, want %v", got, want)
		}
	}
	if p.fire("PUT", "k1", http.Header{"If-Match": {`"e2"`}}).Name != "rest" {
		t.Fatal("a different If-Match value must not match")
	}
	if p.fire("GET", "k1", h) != nil {
		t.Fatal("GET must not match")
	}
	if p.fired["third"] != 2 || p.fired["rest"] != 5 {
		t.Fatalf("fired %v", p.fired)
	}
}

func TestDecodeAWSChunked(t *testing.T) {
	body := "5;chunk-signature=abc\r\nhello\r\n6;chunk-signature=def\r\n world\r\n0;chunk-signature=00\r\nx-amz-checksum-crc32c:AAAA\r\n\r\n"
	got, err := decodeAWSChunked([]byte(body))
	if err != nil || !bytes.Equal(got, []byte("hello world")) {
		t.Fatalf("%q %v", got, err)
	}
	if _, err := decodeAWSChunked([]byte("5\r\nhel")); err == nil {
		t.Fatal("truncated body accepted")
	}
}

func TestParseCredential(t *testing.T) {
	ak, region, err := parseCredential("AWS4-HMAC-SHA256 Credential=AK/20260101/eu-west-1/s3/aws4_request, SignedHeaders=host, Signature=x")
	if err != nil || ak != "AK" || region != "eu-west-1" {
		t.Fatalf("%q %q %v", ak, region, err)
	}
	if _, _, err := parseCredential("AWS AK:sig"); err == nil {
		t.Fatal("SigV2 accepted")
	}
}
