package writers

import (
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
// metadata yet): its seal would otherwise find that higher term and fail.
func TestAuditTakesATermAboveAFenceItsClusterNeverGranted(t *testing.T) {
	r := memRig(t, nil)
	r.acking("a", 1, 3)
	other := newRig(t, r.st, func(c *Config) { c.Shard = r.c.Config().Shard })
	z := other.add("z", nil)
	other.promote(z, 7)
	if err := r.c.Settle(ctx(t)); err != nil {
		t.Fatal(err)
	}
	res, err := r.c.Audit(ctx(t), r.st, 0)
	if err != nil || res.Term != 8 {
		t.Fatalf("audit: term %d, %v; want term 8, above the fence's 7", res.Term, err)
	}
}

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
