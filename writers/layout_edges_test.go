package writers

import (
	"strings"
	"testing"
)

// A metadata name's term and generation fields are 19-digit inverted numbers; a field of
// the right length that is not a non-negative number (letters, a sign) names no term, and
// the name is refused rather than read as some far-off term or generation.
func TestMetadataNamesWithNonNumericOrNegativeFieldsAreRefused(t *testing.T) {
	sh := Shard{Prefix: "run/", IndexUUID: "idx"}
	key := sh.MetadataKey(2, 7, "a-alloc1")
	if term, gen, ok := parseMetadataName(key); !ok || term != 2 || gen != 7 {
		t.Fatalf("%s parses as (%d, %d, %v); want (2, 7, true)", key, term, gen, ok)
	}
	term, gen := invert(2), invert(7)
	for _, field := range []string{
		"abcdefghijklmnopqrs",
		"-000000000000000001",
		"+00000000000000000x",
		"9999999999999999999", // past math.MaxInt64
	} {
		if len(field) != 19 {
			t.Fatalf("field %q is not 19 characters", field)
		}
		for _, bad := range []string{strings.Replace(key, term, field, 1), strings.Replace(key, gen, field, 1)} {
			if tm, g, ok := parseMetadataName(bad); ok {
				t.Errorf("%s parses as term %d, gen %d; want refused", bad, tm, g)
			}
		}
	}
}

// An unrecognized body is quoted in the error that refuses it: whole when it is at most 80
// bytes, cut at 80 bytes and marked "..." when longer.
func TestRefusedBodyIsQuotedWholeUpTo80Bytes(t *testing.T) {
	for _, n := range []int{79, 80} {
		body := strings.Repeat("x", n)
		_, err := decodeTlog([]byte(body))
		if err == nil || !strings.Contains(err.Error(), `"`+body+`"`) || strings.Contains(err.Error(), "...") {
			t.Fatalf("%d-byte body refused with %v; want it quoted whole", n, err)
		}
		_, err = decodeList(metadataMagic, []byte(body))
		if err == nil || !strings.Contains(err.Error(), `"`+body+`"`) || strings.Contains(err.Error(), "...") {
			t.Fatalf("%d-byte metadata body refused with %v; want it quoted whole", n, err)
		}
	}
	long := strings.Repeat("y", 80) + "tail"
	_, err := decodeTlog([]byte(long))
	if err == nil || !strings.Contains(err.Error(), `"`+long[:80]+`..."`) || strings.Contains(err.Error(), "tail") {
		t.Fatalf("84-byte body refused with %v; want its first 80 bytes quoted, then ...", err)
	}
}

// A .tlog body is three newline-terminated lines, the header, the origin and the ops, so a
// reader that takes the file line by line (a person with the store's console, a tool)
// finds each whole; it reads back as the ops written.
func TestTlogBodyIsThreeTerminatedLines(t *testing.T) {
	o := origin{Writer: "a", Alloc: "a-alloc1", Node: "n1", Term: 3, Gen: 7}
	body := encodeTlog(o, []int64{4, 5, 6})
	want := tlogMagic + "\n" + o.line() + "\nops=4,5,6\n"
	if string(body) != want {
		t.Fatalf(".tlog body %q; want %q", body, want)
	}
	ops, err := decodeTlog(body)
	if err != nil || len(ops) != 3 || ops[0] != 4 || ops[2] != 6 {
		t.Fatalf("decodeTlog: %v, %v; want the ops written", ops, err)
	}
}
