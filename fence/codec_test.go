package fence

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/fencebench/fencebench/store"
)

func TestInvert(t *testing.T) {
	for _, tc := range []struct {
		term int64
		want string
	}{
		{0, "9223372036854775807"},
		{1, "9223372036854775806"},
		{5, "9223372036854775802"},
		{6, "9223372036854775801"},
		{7, "9223372036854775800"},
		{math.MaxInt64, "0000000000000000000"},
		{math.MaxInt64 - 42, "0000000000000000042"},
	} {
		if got := Invert(tc.term); got != tc.want {
			t.Errorf("Invert(%d): got %s want %s", tc.term, got, tc.want)
		}
		key := Key("p/", tc.term)
		if want := "p/fence__" + tc.want; key != want {
			t.Errorf("Key(p/, %d): got %s want %s", tc.term, key, want)
		}
		if got, ok := ParseKey(key); !ok || got != tc.term {
			t.Errorf("ParseKey(%s): got %d %v want %d true", key, got, ok, tc.term)
		}
	}
	// Key order is descending term order.
	if !(Key("", 7) < Key("", 6) && Key("", 6) < Key("", 5) && Key("", 10) < Key("", 9)) {
		t.Error("keys do not sort highest term first")
	}
	defer func() {
		if recover() == nil {
			t.Error("Invert(-1) did not panic")
		}
	}()
	Invert(-1)
}

func TestParseKeyRejects(t *testing.T) {
	for _, k := range []string{
		"", "fence__", "fence__922337203685477580", "fence__92233720368547758070",
		"fence__922337203685477580x", "fence__-223372036854775807", "p/metadata__9223372036854775807",
		"p/fence__9999999999999999999", "fence__+223372036854775807", // a sign ParseInt would take
	} {
		if term, ok := ParseKey(k); ok {
			t.Errorf("ParseKey(%q): got %d true, want rejection", k, term)
		}
	}
}

func TestCodecRoundTrip(t *testing.T) {
	c := Content{IndexUUID: "Zq3rX9l2TgqK0Zf8mVv1Bw", ShardID: 12, Term: 7, AllocationID: "a1b2c3", NodeID: "n-4", Seq: 41}
	b, err := Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	if want := "v1|Zq3rX9l2TgqK0Zf8mVv1Bw|12|7|a1b2c3|n-4|41"; string(b) != want {
		t.Fatalf("Encode: got %s want %s", b, want)
	}
	got, err := Decode(b)
	if err != nil || got != c {
		t.Fatalf("Decode: got %+v, %v want %+v", got, err, c)
	}
	// Zero is a valid shard, term and seq: the first term's key, at its creation.
	zero := Content{IndexUUID: "i", AllocationID: "a", NodeID: "n"}
	if b, err := Encode(zero); err != nil {
		t.Fatal(err)
	} else if got, err := Decode(b); err != nil || got != zero {
		t.Fatalf("Decode(%s): got %+v, %v want %+v", b, got, err, zero)
	}
}

func TestEncodeRefusesPipe(t *testing.T) {
	for _, c := range []Content{
		{IndexUUID: "a|b"}, {AllocationID: "x|"}, {NodeID: "|n"},
	} {
		if _, err := Encode(c); err == nil {
			t.Errorf("Encode(%+v) accepted a '|'", c)
		}
	}
}

func TestDecodeRejectsIsIdentityNotFenced(t *testing.T) {
	for _, b := range []string{
		"", "v1", "v2|i|0|1|a|n|0", "v1|i|0|1|a|n", "v1|i|0|1|a|n|0|x", "v1|i|x|1|a|n|0",
		"v1|i|0|-1|a|n|0", "v1|i|-1|1|a|n|0", "v1|i|0|1|a|n|-1", "v1|i|0|1|a|n|seq", "garbage",
	} {
		_, err := Decode([]byte(b))
		if !errors.Is(err, ErrIdentity) || errors.Is(err, ErrFenced) {
			t.Errorf("Decode(%q): got %v, want ErrIdentity", b, err)
		}
	}
}

// TestNewRefuses: New refuses each bad option with an error that names it, from its own
// checks (a negative shard id is New's to refuse, not left to the encoder).
func TestNewRefuses(t *testing.T) {
	ok := Options{Store: store.NewMem(), Prefix: "p/", IndexUUID: "i", AllocationID: "a", NodeID: "n", Term: 1}
	for _, tc := range []struct {
		name, want string
		edit       func(*Options)
	}{
		{"nil store", "nil store", func(o *Options) { o.Store = nil }},
		{"negative term", "negative term -1", func(o *Options) { o.Term = -1 }},
		{"negative shard", "shard id -1", func(o *Options) { o.ShardID = -1 }},
		{"pipe in index", "contains '|'", func(o *Options) { o.IndexUUID = "i|j" }},
		{"pipe in allocation", "contains '|'", func(o *Options) { o.AllocationID = "a|" }},
		{"pipe in node", "contains '|'", func(o *Options) { o.NodeID = "|n" }},
		{"prefix without slash", "does not end in /", func(o *Options) { o.Prefix = "p" }},
		{"unknown variant", "no-such-variant", func(o *Options) { o.Variant = "no-such-variant" }},
	} {
		o := ok
		tc.edit(&o)
		if _, err := New(o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: New(%+v) = %v; want an error naming %q", tc.name, o, err, tc.want)
		}
	}
	f, err := New(ok)
	if err != nil {
		t.Fatal(err)
	}
	if f.Variant() != Correct || f.Key() != "p/fence__9223372036854775806" || f.Term() != 1 || f.Token() != "" || f.Fenced() {
		t.Fatalf("fresh instance: variant %s key %s term %d token %q fenced %v", f.Variant(), f.Key(), f.Term(), f.Token(), f.Fenced())
	}
}

func TestVariantRegistry(t *testing.T) {
	vs := Variants()
	if vs[0].Name != Correct {
		t.Fatalf("first variant %s, want correct", vs[0].Name)
	}
	seen := map[Variant]bool{}
	for _, v := range vs {
		if seen[v.Name] {
			t.Errorf("duplicate variant %s", v.Name)
		}
		seen[v.Name] = true
		if v.Description == "" {
			t.Errorf("%s has no description", v.Name)
		}
		if v.Reader != ReadByProtocol && v.Reader != ReadByCaller && v.Reader != ReadByClient {
			t.Errorf("%s: reader %q", v.Name, v.Reader)
		}
		if got, err := LookupVariant(string(v.Name)); err != nil || got != v.Name {
			t.Errorf("LookupVariant(%s): %s %v", v.Name, got, err)
		}
	}
	for _, name := range []string{"no-readoption-guard", "cas-concurrent-with-metadata", "restore-before-claim",
		"no-sweep", "no-reverify", "no-term-floor", "conflict-is-fenced", "conflict-is-success",
		"ambiguous-is-fenced", "ambiguous-is-success", "adopt-without-identity", "sdk-retries",
		"target-claims-blindly", "revert-with-fresh-token", "no-adoption-on-transfer", "no-segment-gates",
		"collection-fails-open", "accept-unenforced-store", "no-seq", "404-is-retryable"} {
		if !seen[Variant(name)] {
			t.Errorf("required variant %s is not registered", name)
		}
	}
	if v, err := LookupVariant(""); err != nil || v != Correct {
		t.Errorf(`LookupVariant(""): %s %v`, v, err)
	}
	_, err := LookupVariant("bogus")
	if err == nil || !strings.Contains(err.Error(), "no-sweep") {
		t.Errorf("LookupVariant(bogus): %v, want an error listing the valid names", err)
	}
}

func TestHighestTerm(t *testing.T) {
	ctx := context.Background()
	m := store.NewMem()
	if _, found, err := HighestTerm(ctx, m, "p/"); found || err != nil {
		t.Fatalf("empty: found %v err %v", found, err)
	}
	for _, k := range []string{Key("p/", 3), Key("p/", 12), Key("p/", 9), "p/fence__junk", "p/metadata__1", Key("q/", 40)} {
		if _, err := m.Put(ctx, k, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	// The terms come from a map: ask often enough that any fixed order of visiting them
	// would have been met.
	for range 20 {
		if h, found, err := HighestTerm(ctx, m, "p/"); h != 12 || !found || err != nil {
			t.Fatalf("got %d %v %v want 12 true nil", h, found, err)
		}
	}
}
