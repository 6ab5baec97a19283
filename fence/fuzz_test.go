package fence

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// bodySeeds are fence bodies as healthy writers store them, and near misses of each field.
var bodySeeds = []string{
	"v1|idx78c3bb16e1087d02|0|3|a-alloc1|node-a|0",
	"v1|idx78c3bb16e1087d02|7|9223372036854775807|t-alloc2|node-t|41",
	"v1||0|0|||0",
	"v2|idx|0|3|a|n|0",
	"v1|idx|0|3|a|n",
	"v1|idx|0|3|a|n|0|extra",
	"v1|idx|-1|3|a|n|0",
	"v1|idx|0|+3|a|n|007",
	"v1|idx|0|9223372036854775808|a|n|0",
	"",
}

// FuzzDecode feeds arbitrary bytes to the fence body decoder, which reads whatever a store
// holds at a fence key: it never panics, refuses with ErrIdentity, and what it accepts
// encodes into a body that decodes to the same content.
func FuzzDecode(f *testing.F) {
	for _, s := range bodySeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		c, err := Decode(body)
		if err != nil {
			if !errors.Is(err, ErrIdentity) {
				t.Fatalf("Decode(%q): %v does not wrap ErrIdentity", body, err)
			}
			return
		}
		again, err := Encode(c)
		if err != nil {
			t.Fatalf("Decode(%q) accepted %+v, which Encode refuses: %v", body, c, err)
		}
		if back, err := Decode(again); err != nil || back != c {
			t.Fatalf("Decode(%q) = %+v, re-encoded %q decodes to %+v, %v", body, c, again, back, err)
		}
	})
}

// FuzzParseKey feeds arbitrary keys to ParseKey, which reads every key a fence listing
// returns: a key it accepts ends in the fence key of the term it returns, and never in a
// negative term.
func FuzzParseKey(f *testing.F) {
	for _, k := range []string{Key("p/idx/0/translog/metadata/", 3), Key("", 0), Key("a/", math.MaxInt64),
		"p/fence__922337203685477580", "p/fence__92233720368547758070", "p/fence__9223372036854775808",
		"p/fence__922337203685477580x", "fence__/", "metadata__9223372036854775804"} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		term, ok := ParseKey(key)
		if !ok {
			return
		}
		if term < 0 || !strings.HasSuffix(key, "/"+KeyPrefix+Invert(term)) && key != Key("", term) {
			t.Fatalf("ParseKey(%q) = %d, but the key does not end in %s", key, term, Key("/", term))
		}
	})
}

// TestFuzzSeeds: the body seeds hold accepted bodies and rejected ones, so fuzzing starts on
// both sides of the decoder.
func TestFuzzSeeds(t *testing.T) {
	accepted := 0
	for _, s := range bodySeeds {
		if _, err := Decode([]byte(s)); err == nil {
			accepted++
		} else if !errors.Is(err, ErrIdentity) {
			t.Errorf("seed %q: %v", s, err)
		}
	}
	if accepted == 0 || accepted == len(bodySeeds) {
		t.Fatalf("%d of %d body seeds decode; want some of each kind", accepted, len(bodySeeds))
	}
}
