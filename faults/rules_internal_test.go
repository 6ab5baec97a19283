package faults

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strings"
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
	p := NewRules("a")
	add := func(r Rule) {
		if err := p.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	add(Rule{Name: "third", Method: "put", Key: "k*", Header: "if-match", Value: `"e1"`, Nth: 3, Count: 2, Action: DropResponse})
	add(Rule{Name: "rest", Method: "PUT", Action: Duplicate})
	h := http.Header{"If-Match": {"e1"}}
	var got []string
	for range 6 {
		r, _ := p.fire(request{method: "PUT", keys: []string{"k1"}, header: h})
		got = append(got, r.Name)
	}
	want := []string{"rest", "rest", "third", "third", "rest", "rest"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("firing order %v, want %v", got, want)
		}
	}
	if r, _ := p.fire(request{method: "PUT", keys: []string{"k1"}, header: http.Header{"If-Match": {`"e2"`}}}); r.Name != "rest" {
		t.Fatal("a different If-Match value must not match")
	}
	if r, _ := p.fire(request{method: "GET", keys: []string{"k1"}, header: h}); r != nil {
		t.Fatal("GET must not match")
	}
	if p.Fired("third") != 2 || p.Fired("rest") != 5 {
		t.Fatalf("fired %d, %d", p.Fired("third"), p.Fired("rest"))
	}
}

func TestDecodeAWSChunked(t *testing.T) {
	body := "5;chunk-signature=abc\r\nhello\r\n6;chunk-signature=def\r\n world\r\n0;chunk-signature=00\r\nx-amz-checksum-crc32c:AAAA\r\n\r\n"
	got, err := decodeAWSChunked([]byte(body), nil)
	if err != nil || !bytes.Equal(got, []byte("hello world")) {
		t.Fatalf("%q %v", got, err)
	}
	if _, err := decodeAWSChunked([]byte("5\r\nhel"), nil); err == nil {
		t.Fatal("truncated body accepted")
	}
}

func TestParseAuthorization(t *testing.T) {
	sig := strings.Repeat("ab", 32)
	s, err := parseAuthorization("AWS4-HMAC-SHA256 Credential=AK/20260101/eu-west-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=" + sig)
	if err != nil || s.accessKey != "AK" || s.region != "eu-west-1" || s.scope != "20260101/eu-west-1/s3/aws4_request" ||
		!slices.Equal(s.signed, []string{"host", "x-amz-date"}) || s.signature != sig {
		t.Fatalf("%+v %v", s, err)
	}
	for _, bad := range []string{
		"AWS AK:sig",
		"AWS4-HMAC-SHA256 Credential=AK/20260101/eu-west-1/s3/aws4_request, SignedHeaders=host, Signature=x",
		"AWS4-HMAC-SHA256 Credential=AK/20260101/eu-west-1/sts/aws4_request, SignedHeaders=host, Signature=" + sig,
		"AWS4-HMAC-SHA256 Credential=AK/20260101/eu-west-1/s3/aws4_request, SignedHeaders=x-amz-date;host, Signature=" + sig,
		"AWS4-HMAC-SHA256 Credential=AK/20260101/eu-west-1/s3/aws4_request, Signature=" + sig,
	} {
		if _, err := parseAuthorization(bad); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

func TestBatchMatchesAnyKeyItNames(t *testing.T) {
	p := NewRules("a")
	for _, r := range []Rule{
		{Name: "fail", Method: "post", Key: "*fence__*", Action: FailDeleteKeys},
		{Name: "any", Key: "*fence__*", Action: DropResponse},
	} {
		if err := p.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	batch := request{method: "POST", keys: []string{"p/data", "p/fence__x"}, batch: true}
	if r, re := p.fire(batch); r == nil || r.Name != "fail" || re == nil || re.MatchString("p/data") {
		t.Fatalf("a batch naming a matching key must fire the rule: %v", r)
	}
	if r, _ := p.fire(request{method: "POST", keys: []string{"p/data", "p/other"}, batch: true}); r != nil {
		t.Fatalf("a batch naming no matching key fired %s", r.Name)
	}
	// A request that is not a readable DeleteObjects batch never matches fail-delete-keys.
	if r, _ := p.fire(request{method: "POST", keys: []string{"p/fence__x"}}); r == nil || r.Name != "any" {
		t.Fatalf("non-batch request: %v", r)
	}
	if _, err := compile(Rule{Name: "x", Method: "PUT", Action: FailDeleteKeys}); err == nil {
		t.Fatal("fail-delete-keys on PUT accepted")
	}
}

func TestDeleteBatchSurgery(t *testing.T) {
	doc := `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Quiet>true</Quiet>` +
		`<Object><Key>p/a</Key></Object>` + "\n  " +
		`<Object><Key>p/fence__&amp;1</Key><VersionId>v</VersionId></Object>` +
		`<Object><Key>p/c</Key></Object></Delete>`
	objs, ok := parseDeleteObjects([]byte(doc))
	if !ok || len(objs) != 3 || objs[1].key != "p/fence__&1" {
		t.Fatalf("parse: %v %+v", ok, objs)
	}
	d := &deleteBatch{payload: []byte(doc), objects: objs, parsed: true}
	re, _ := globRegexp("*fence__*")
	body, removed, rest := d.without(re)
	if !rest || len(removed) != 1 || removed[0] != "p/fence__&1" {
		t.Fatalf("removed %v, rest %v", removed, rest)
	}
	left, ok := parseDeleteObjects(body)
	if !ok || len(left) != 2 || left[0].key != "p/a" || left[1].key != "p/c" || !bytes.Contains(body, []byte("<Quiet>true</Quiet>")) {
		t.Fatalf("left %v %+v in %s", ok, left, body)
	}
	if _, _, rest := d.without(nil); rest {
		t.Fatal("a nil pattern removes every entry")
	}
	for _, bad := range []string{"", "<Delete><Object><Key>a</Key></Object>", "<Other/>", "not xml"} {
		if _, ok := parseDeleteObjects([]byte(bad)); ok {
			t.Errorf("%q parsed as a Delete document", bad)
		}
	}
}

func TestInjectDeleteErrors(t *testing.T) {
	entries := deleteErrors([]string{"k<1>"}, "m")
	if string(entries) != "<Error><Key>k&lt;1&gt;</Key><Code>InternalError</Code><Message>m</Message></Error>" {
		t.Fatalf("entries %s", entries)
	}
	for in, want := range map[string]string{
		`<DeleteResult xmlns="x"><Deleted><Key>a</Key></Deleted></DeleteResult>` + "\n": `<DeleteResult xmlns="x"><Deleted><Key>a</Key></Deleted>` + string(entries) + "</DeleteResult>\n",
		`<DeleteResult xmlns="x"></DeleteResult>`:                                       `<DeleteResult xmlns="x">` + string(entries) + "</DeleteResult>",
		`<DeleteResult xmlns="x"/>`:                                                     `<DeleteResult xmlns="x">` + string(entries) + "</DeleteResult>",
	} {
		got, ok := injectDeleteErrors([]byte(in), entries)
		if !ok || string(got) != want {
			t.Errorf("inject into %q: %q %v", in, got, ok)
		}
	}
	if _, ok := injectDeleteErrors([]byte("<Error><Code>x</Code></Error>"), entries); ok {
		t.Error("injected into an error document")
	}
}

func TestRefreshChecksums(t *testing.T) {
	// Check values of the CRC catalogue for "123456789".
	for hdr, want := range map[string]string{
		"x-amz-checksum-crc32":     "cbf43926",
		"x-amz-checksum-crc32c":    "e3069283",
		"x-amz-checksum-crc64nvme": "ae8b14860a799888",
	} {
		h := checksumHash(hdr)
		h.Write([]byte("123456789"))
		if got := fmt.Sprintf("%x", h.Sum(nil)); got != want {
			t.Errorf("%s: %s, want %s", hdr, got, want)
		}
	}
	h := http.Header{"Content-Md5": {"old"}, "X-Amz-Checksum-Crc32": {"old"}, "X-Amz-Checksum-Weird": {"old"},
		"X-Amz-Checksum-Type": {"FULL_OBJECT"}, "X-Amz-Sdk-Checksum-Algorithm": {"CRC32"}}
	refreshChecksums(h, []byte("hello"), []string{"x-amz-checksum-sha256"})
	want := http.Header{"Content-Md5": {"XUFAKrxLKna5cZ2REBfFkg=="}, "X-Amz-Checksum-Crc32": {"NhCmhg=="},
		"X-Amz-Checksum-Sha256": {"LPJNul+wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ="},
		"X-Amz-Checksum-Type":   {"FULL_OBJECT"}, "X-Amz-Sdk-Checksum-Algorithm": {"CRC32"}}
	if fmt.Sprint(h) != fmt.Sprint(want) {
		t.Fatalf("got %v\nwant %v", h, want)
	}
}
