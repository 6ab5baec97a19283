package writers

import (
	"math"
	"strings"
	"testing"
)

// A list body that names no file (the reference set of a shard that holds none) is the
// magic line and the origin line alone, and decodes to no keys, not to an error.
func TestAListBodyNamingNoFileDecodesToNoKeys(t *testing.T) {
	o := origin{Writer: "a", Alloc: "a-alloc1", Node: "a", Term: 3, Gen: 1, Attempt: 1}
	for _, magic := range []string{metadataMagic, segMetaMagic} {
		keys, err := decodeList(magic, encodeList(magic, o, nil))
		if err != nil || len(keys) != 0 {
			t.Errorf("%s with no refs decodes to %v, %v; want no keys and no error", magic, keys, err)
		}
	}
}

// A metadata name needs its three fields (metadata, term, generation): a name with fewer,
// or whose first field is not "metadata", names no term and is refused, never read past its
// end.
func TestMetadataNamesWithMissingFieldsAreRefused(t *testing.T) {
	sh := Shard{Prefix: "run/", IndexUUID: "idx"}
	key := sh.MetadataKey(2, 7, "a-alloc1")
	term := invert(2)
	for _, bad := range []string{
		"run/idx/0/translog/metadata/metadata",
		"run/idx/0/translog/metadata/metadata__" + term,
		"run/idx/0/translog/metadata/segment__" + term + "__" + invert(7) + "__x",
		"run/idx/0/translog/metadata/" + term + "__" + term + "__" + term,
	} {
		if tm, g, ok := parseMetadataName(bad); ok {
			t.Errorf("%s parses as term %d, gen %d; want refused", bad, tm, g)
		}
	}
	if _, _, ok := parseMetadataName(key); !ok {
		t.Fatalf("%s refused; want it parsed", key)
	}
}

// The auditor takes a term above every fence object it finds, even one no writer of its
// cluster was granted (a copy of another cluster over the same shard, holding no
// A restore read whose newest translog metadata is not a metadata body fails: it must never
// be read as an empty lineage, which would restore none of the acknowledged ops.
func TestARestoreReadRefusesAnUnrecognizedMetadataBody(t *testing.T) {
	r := memRig(t, nil)
	r.acking("a", 3, 4)
	r.settle()
	es, err := r.st.List(ctx(t), r.c.Config().Shard.MetadataListPrefix())
	if err != nil || len(es) == 0 {
		t.Fatalf("metadata listing: %v, %v", es, err)
	}
	if _, err := r.st.Put(ctx(t), es[0].Key, []byte("not a metadata body\n")); err != nil {
		t.Fatal(err)
	}
	res, err := r.c.Audit(ctx(t), r.st, 0)
	if err == nil || !strings.Contains(err.Error(), "unrecognized metadata content") {
		t.Fatalf("audit over an unrecognized metadata body: %d ops, %v; want it refused", len(res.Ops), err)
	}
}

// The auditor takes a term above the newest translog metadata too, even one above every
// fence object (metadata a copy wrote before its fence was swept, or another cluster's): its
// A list body must start with its own magic line and carry the origin line after it: a body
// of another kind (whatever its length) and a magic line alone are refused, never decoded.
func TestListBodiesOfAnotherKindOrCutShortAreRefused(t *testing.T) {
	o := origin{Writer: "a", Alloc: "a-alloc1", Node: "a", Term: 3, Gen: 1, Attempt: 1}
	for _, tc := range []struct {
		name string
		body []byte
	}{
		{"segment reference set read as metadata", encodeList(segMetaMagic, o, []string{"k1"})},
		{"another kind, two lines", []byte("something else\norigin\n")},
		{"the magic line alone", []byte(metadataMagic + "\n")},
	} {
		if keys, err := decodeList(metadataMagic, tc.body); err == nil {
			t.Errorf("%s: decoded to %v; want it refused", tc.name, keys)
		}
	}
}

// Inverted numbers (which make names sort newest first) round-trip at the edges of their
// range, the largest included, whose inverted form is all zeros.
func TestInvertedNumbersRoundTripAtTheEdges(t *testing.T) {
	for _, v := range []int64{0, 1, 1 << 32, math.MaxInt64 - 1, math.MaxInt64} {
		s := invert(v)
		if got, ok := uninvert(s); !ok || got != v || len(s) != 19 {
			t.Errorf("invert(%d) = %q, uninverted %d, %v; want %d back", v, s, got, ok, v)
		}
	}
	for _, bad := range []string{"-000000000000000001", "00000000000000000x", "000000000000000001"} {
		if got, ok := uninvert(bad); ok {
			t.Errorf("uninvert(%q) = %d; want it refused", bad, got)
		}
	}
}

// The auditor takes a term above every term its cluster granted, even one whose promotion
// never created its fence object: a copy granted that term may still claim it, and an audit
