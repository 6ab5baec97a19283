package faults

import (
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
