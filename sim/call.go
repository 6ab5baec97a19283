package sim

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/store"
)

// call is one store call on its way through a path.
type call struct {
	op     string // the store.Error op: get, put, put-if-absent, put-if-match, delete, delete-many, list
	method string
	key    string   // the ledger's key: the object key, "" for a listing or a batch
	query  string   // the ledger's query: a listing's or a batch's
	keys   []string // a batch's keys, as sent
	match  []string // what rules match on
	header http.Header
	body   int // body length, for bandwidth
	// apply runs the call against the store; strip drops its precondition, fail says which
	// keys of a batch fail.
	apply func(strip bool, fail func(string) bool) answer
}

// answer is what the store made of a call.
type answer struct {
	status int
	etag   string
	code   string
	err    error // the classified error the writer sees when the answer reaches it
	obj    store.Object
	list   []store.Entry
	failed []store.KeyError
	note   string // the ledger's Err
}

func fromErr(err error, okStatus int) answer {
	if err == nil {
		return answer{status: okStatus}
	}
	var se *store.Error
	if errors.As(err, &se) {
		return answer{status: se.Status, code: se.Code, err: err}
	}
	return answer{err: err, note: err.Error()}
}

// do carries c through the path: the network first, then confinement, then the rules.
func (p *Path) do(ctx context.Context, c call) answer {
	ctx, cancel := p.b.o.Clock.WithTimeout(ctx, p.b.o.Timeout)
	defer cancel()
	net := p.state(c.body)
	switch {
	case net.partition == faults.Refuse:
		return answer{err: unknown(c.op, c.key, "connection refused")}
	case net.reset:
		return answer{err: unknown(c.op, c.key, "connection reset by peer")}
	case net.partition == faults.Blackhole:
		return p.hold(ctx, c, net.cut, "no byte got through")
	}
	if net.delay > 0 && !p.b.o.Clock.For(ctx, net.delay) {
		return answer{err: unknown(c.op, c.key, "deadline passed on a slow path")}
	}
	// From here to the store's answer nothing waits: the clock may not move on meanwhile, even
	// if the Go scheduler's counts miss this goroutine for a moment (a GC assist parks it).
	release := p.b.o.Clock.Busy()
	e := history.LedgerEntry{ID: p.b.nextID.Add(1), Time: p.b.o.Now(), Writer: p.writer, Method: c.method,
		Key: c.key, Query: c.query, Keys: c.keys}
	e.IfMatch = strings.Trim(c.header.Get("If-Match"), `"`)
	e.IfNoneMatch = strings.Trim(c.header.Get("If-None-Match"), `"`)
	if out := p.confine(c); out != nil {
		e.Refused, e.Done, e.Delivered = out.note, p.b.o.Now(), true
		e.Status, e.Code = out.status, out.code
		p.b.record(e)
		release()
		return *out
	}
	r, keyOK, fired := p.rules.Fire(faults.Request{Method: c.method, Keys: c.match, Header: c.header, Batch: c.method == http.MethodPost})
	var rule *faults.Rule
	if fired {
		rule = &r
		e.Rule, e.Action = r.Name, string(r.Action)
	}
	if rule != nil && rule.Holds() {
		release()
		return p.late(ctx, c, e, rule, keyOK)
	}
	a, e := p.serve(c, e, rule, keyOK)
	release()
	return p.deliver(ctx, c, e, a, rule)
}

// hold keeps a call whose bytes go nowhere until its deadline or a cut.
func (p *Path) hold(ctx context.Context, c call, cut <-chan struct{}, why string) answer {
	select {
	case <-ctx.Done():
		return answer{err: unknown(c.op, c.key, why+"; deadline passed")}
	case <-cut:
		return answer{err: unknown(c.op, c.key, why+"; connection cut")}
	case <-p.b.ctx.Done():
		return answer{err: unknown(c.op, c.key, "bench closed")}
	}
}

// serve is what the store does with a call the rules let through (or not): it fills in the
// ledger entry's store side.
func (p *Path) serve(c call, e history.LedgerEntry, rule *faults.Rule, keyOK func(string) bool) (answer, history.LedgerEntry) {
	act := faults.Action("")
	if rule != nil {
		act = rule.Action
	}
	switch act {
	case faults.DropRequest:
		e.Err = "request dropped by fault rule " + rule.Name
		return answer{err: unknown(c.op, c.key, "request dropped")}, e
	case faults.SyntheticStatus:
		e.Injected = rule.Status
		kind := store.Classify(rule.Status, rule.Code)
		err := &store.Error{Op: c.op, Key: c.key, Kind: kind, Status: rule.Status, Code: rule.Code,
			Err: fmt.Errorf("injected by fault rule %s", rule.Name)}
		return answer{err: err}, e
	}
	if act == faults.Misdirect && c.op == "get" {
		a, other := p.misdirect(c.key, rule.Name)
		e.Forwarded, e.Copies = true, 1
		e.Status, e.ETag = a.status, store.NormalizeETag(a.etag)
		e.Err = "misdirected to " + other
		return a, e
	}
	var fail func(string) bool
	if act == faults.FailDeleteKeys {
		fail = keyOK
	}
	a := c.apply(act == faults.StripConditions, fail)
	e.Forwarded, e.Copies = true, 1
	if act == faults.Duplicate {
		second := c.apply(false, nil)
		e.Copies = 2
		e.Err = fmt.Sprintf("duplicate: second copy answered %d", second.status)
		if second.code != "" {
			e.Err += " " + second.code
		}
		if second.etag != "" {
			e.Err += " etag " + second.etag
		}
	} else if a.note != "" {
		e.Err = a.note
	}
	e.Status, e.ETag, e.Code = a.status, store.NormalizeETag(a.etag), a.code
	if act == faults.DropResponse {
		a = answer{err: unknown(c.op, c.key, "answer dropped")}
	}
	return a, e
}

// deliver hands the answer to the writer, unless the rule or a one-way path swallows it, and
// records the entry.
func (p *Path) deliver(ctx context.Context, c call, e history.LedgerEntry, a answer, rule *faults.Rule) answer {
	e.Done = p.b.o.Now()
	lost := rule != nil && (rule.Action == faults.DropResponse || rule.Action == faults.DropRequest)
	oneWay, cut := p.oneWayNow()
	e.Delivered = !lost && !oneWay
	p.b.record(e)
	if oneWay && !lost {
		return p.hold(ctx, c, cut, "the answer never came back")
	}
	return a
}

// held waits for the event a rule holds its requests for (Until); false when the bench
// closed first.
func (p *Path) held(rule *faults.Rule) bool {
	if rule.Until == nil {
		return true
	}
	select {
	case <-rule.Until:
		return true
	case <-p.b.ctx.Done():
		return false
	}
}

// late runs a call held by a rule's delay or event: the request lands after the delay whether or not
// the writer still waits, as a request held in a proxy does. Whether the answer reaches the
// writer is decided once, under mu: either the writer takes it, or it had given up.
func (p *Path) late(ctx context.Context, c call, e history.LedgerEntry, rule *faults.Rule, keyOK func(string) bool) answer {
	type served struct {
		a answer
		e history.LedgerEntry
	}
	var mu sync.Mutex
	abandoned := false
	done := make(chan served, 1)
	p.b.late.Add(1)
	p.b.busy.Add(1)
	go func() {
		defer p.b.late.Done()
		defer p.b.busy.Add(-1)
		var s served
		if p.held(rule) && p.b.o.Clock.For(p.b.ctx, rule.Delay) {
			s.a, s.e = p.serve(c, e, rule, keyOK)
		} else {
			s.a, s.e = answer{err: unknown(c.op, c.key, "bench closed")}, e
			s.e.Err = "bench closed during delay"
		}
		mu.Lock()
		defer mu.Unlock()
		if abandoned {
			s.e.Done, s.e.Delivered = p.b.o.Now(), false
			p.b.record(s.e)
			return
		}
		done <- s
	}()
	select {
	case s := <-done:
		return p.deliver(ctx, c, s.e, s.a, rule)
	case <-ctx.Done():
	}
	mu.Lock()
	defer mu.Unlock()
	select {
	case s := <-done: // it answered as the writer gave up: the answer still came
		return p.deliver(ctx, c, s.e, s.a, rule)
	default:
		abandoned = true
		return answer{err: unknown(c.op, c.key, "deadline passed while the request was held")}
	}
}

// confine refuses a call that reaches outside the path's prefix.
func (p *Path) confine(c call) *answer {
	keys := c.keys
	if c.key != "" {
		keys = append(keys, c.key)
	}
	if c.method == http.MethodGet && c.key == "" {
		keys = c.match
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, p.b.o.Prefix) || strings.Contains("/"+k+"/", "/../") || strings.Contains("/"+k+"/", "/./") {
			err := &store.Error{Op: c.op, Key: k, Kind: store.ErrConfig, Status: http.StatusForbidden, Code: "AccessDenied",
				Err: fmt.Errorf("key %q is outside the run's prefix", k)}
			return &answer{status: http.StatusForbidden, code: "AccessDenied", err: err,
				note: "outside the run's prefix: " + k}
		}
	}
	return nil
}

func listQuery(prefix string) string {
	return url.Values{"list-type": {"2"}, "prefix": {prefix}}.Encode()
}

// misdirect is the answer to a read of key that faults.Misdirect sends elsewhere: the object
// after key in its folder's listing order (the folder's first after its last), or an empty
// body when the folder holds no other object. It names the object answered.
func (p *Path) misdirect(key, rule string) (answer, string) {
	folder := key[:strings.LastIndex(key, "/")+1]
	if a, how, ok := p.altered(key, rule); ok {
		return a, how
	}
	entries, err := p.b.mem.List(bg, folder)
	if err != nil {
		return fromErr(err, http.StatusOK), "a failed listing of " + folder
	}
	other := ""
	for _, e := range entries {
		switch {
		case e.Key == key || strings.Contains(e.Key[len(folder):], "/"):
		case e.Key > key:
			if other == "" || other < key || e.Key < other {
				other = e.Key
			}
		case other == "" || other < key && e.Key < other:
			other = e.Key
		}
	}
	if other == "" {
		return p.empty(), "an empty body (no other object in " + folder + ")"
	}
	o, err := p.b.mem.Get(bg, other)
	if err != nil {
		// Deleted since the listing: the folder holds no other object to answer with.
		return p.empty(), "an empty body (" + other + " went since the listing)"
	}
	return answer{status: http.StatusOK, etag: o.ETag, obj: o}, other
}

// alterations are the ways a misdirected read may answer with the read object's own body
// changed instead of another object: each breaks the shape a reader of the bench's
// '|'-separated bodies must check (a version first, exactly seven fields, numbers where numbers
// go), and none yields a body that reads as another valid version of the key.
var alterations = []struct {
	name string
	fn   func([]byte) []byte
}{
	{"its first byte changed", func(b []byte) []byte { b[0] ^= 1; return b }},
	{"its last byte replaced by x", func(b []byte) []byte { b[len(b)-1] = 'x'; return b }},
	{"a minus sign before its last byte", func(b []byte) []byte {
		return append(b[:len(b)-1:len(b)-1], '-', b[len(b)-1])
	}},
	{"cut to its first half", func(b []byte) []byte { return b[:len(b)/2] }},
	{"written twice", func(b []byte) []byte { return append(b, b...) }},
}

// altered answers one misdirected read in two with the read object's own body altered (an
// alteration drawn from the rule, the key's last path element and how many times the rule
// fired on this path, so a replay alters the same reads the same way), and reports
// false for the others, which misdirect answers with another object. A key with no object,
// or whose body holds no '|' (not one of those bodies), is never altered.
func (p *Path) altered(key, rule string) (answer, string, bool) {
	n := p.Fired(rule)
	h := fnv.New32a()
	fmt.Fprintf(h, "%s|%s|%d", rule, key[strings.LastIndex(key, "/")+1:], n)
	pick := int(h.Sum32() % uint32(2*len(alterations)))
	if pick >= len(alterations) {
		return answer{}, "", false
	}
	o, err := p.b.mem.Get(bg, key)
	if err != nil || !bytes.Contains(o.Body, []byte("|")) {
		return answer{}, "", false
	}
	alt := alterations[pick]
	body := alt.fn(bytes.Clone(o.Body))
	sum := md5.Sum(body)
	a := store.Object{Body: body, ETag: hex.EncodeToString(sum[:])}
	return answer{status: http.StatusOK, etag: a.ETag, obj: a}, "its own body, " + alt.name, true
}

// empty is an answer of an empty object.
func (p *Path) empty() answer {
	sum := md5.Sum(nil)
	o := store.Object{Body: []byte{}, ETag: hex.EncodeToString(sum[:])}
	return answer{status: http.StatusOK, etag: o.ETag, obj: o}
}
