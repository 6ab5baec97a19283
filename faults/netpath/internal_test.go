package netpath

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

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
	body, removed, rest := d.without(func(k string) bool { return strings.Contains(k, "fence__") })
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
