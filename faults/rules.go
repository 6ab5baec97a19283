package faults

import (
	"errors"
	"fmt"
	"net/http"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Action is what a [Rule] does to the requests it fires on. Its value is what the ledger's
// Action field records.
type Action string

const (
	// DropResponse forwards the request, lets the store apply it, then closes the client's
	// connection without a response: the client sees a transport error, never an HTTP status.
	// The ledger records the store's answer with Delivered false. Go's http.Transport silently
	// replays GET and HEAD requests cut on a reused connection, so a dropped read is often
	// retried by the client's transport (the ledger then shows both requests); writes are not
	// replayed.
	DropResponse Action = "drop-response"
	// SyntheticStatus answers Rule.Status with a well-formed S3 XML error (Rule.Code) without
	// forwarding: the store never sees the request.
	SyntheticStatus Action = "status"
	// Delay holds the request for Rule.Delay, then forwards it. The delay runs even if the
	// client gives up meanwhile: a late request still lands at the store.
	Delay Action = "delay"
	// Duplicate forwards the request twice, the second copy after the first has been answered,
	// and gives the client the first answer once both copies were sent. The ledger records
	// Copies 2, the first copy's answer, and the second copy's answer in Err.
	Duplicate Action = "duplicate"
	// StripConditions forwards the request without If-Match and If-None-Match, emulating a store
	// that ignores preconditions. Like every forwarded request it is re-signed (SigV4) with the
	// store's credentials; an aws-chunked (streaming-signed) body is decoded and sent as a plain
	// signed payload.
	StripConditions Action = "strip-conditions"
	// FailDeleteKeys makes a DeleteObjects batch fail for the keys the rule's Key matches
	// (every key when Key is ""), the way S3 reports per-key failures: HTTP 200 with an
	// <Error> entry (Code InternalError) per failed key in the DeleteResult. The matching
	// <Object> entries are cut from the request, the rest is forwarded (re-signed, with the
	// payload hash and body checksums recomputed) and the store's DeleteResult gets the Error
	// entries added. When every key fails the store never sees the request and the proxy
	// answers the DeleteResult itself. A store answer other than 200 reaches the client as it
	// is; a 200 that is not a DeleteResult the proxy can extend cuts the client's connection
	// (the ledger's Err says why). The rule only matches DeleteObjects requests whose body the
	// proxy could read; Method, if set, must be POST.
	FailDeleteKeys Action = "fail-delete-keys"
	// DropRequest never forwards the request and cuts the client's connection without an
	// answer: the client sees a transport error (an unknown outcome), while the store never
	// received the write. The ledger records Forwarded false.
	DropRequest Action = "drop-request"
	// Misdirect answers an object read (GET) with another object of the same folder, its body
	// and ETag, as a gateway, cache or store that mixes keys up would: the object whose key
	// follows the read one in listing order (the first of the folder after the last), or an
	// empty body when the folder holds no other object; or, one read in two of a '|'-separated
	// body, with that body altered so that it is no valid version of the key (a byte changed,
	// cut, doubled). The ledger records the answer's status and ETag, and Err names it. Method must be GET; a listing the rule matches is
	// served as asked. The simulated stack carries it; a network stack refuses the rule.
	Misdirect Action = "misdirect"
)

// Rule selects requests of one path and says what to do with them. A request matches when
// every non-empty criterion holds. Rules are evaluated in the order they were added; every
// matching rule counts the match, and the first one whose window (Nth, Count) is open fires:
// at most one rule fires per request.
type Rule struct {
	// Name identifies the rule in the ledger and in Fired/RemoveRule; unique per path.
	Name string
	// Method is the HTTP method to match (case-insensitive); "" matches any.
	Method string
	// Key is a glob on the object key, with path.Match syntax except that '*' and '?' also
	// match '/': "locks/*" matches "locks/a/b". "" matches any request. A listing
	// (ListObjectsV2) is matched on the prefix it lists. A DeleteObjects batch is matched on
	// the keys it names: it matches when any of them does (a batch whose body could not be
	// read has the key ""). Other bucket-level calls have the key "" and only match patterns
	// that match "".
	Key string
	// Header, "If-Match" or "If-None-Match", requires the request to carry that header; ""
	// puts no condition on headers.
	Header string
	// Value, with Header, requires the header to equal it, double quotes stripped on both sides
	// (`"abc"` and `abc` are the same ETag).
	Value string
	// Nth makes the rule fire starting at the nth matching request (1-based; 0 means 1).
	Nth int
	// Count is how many times the rule fires at most; 0 means unlimited.
	Count int
	// Action is what the rule does when it fires.
	Action Action
	// Status and Code are the answer of a SyntheticStatus rule, e.g. 409
	// ConditionalRequestConflict, 500 InternalError, 503 SlowDown. Code "" picks the usual code
	// for the status (409 ConditionalRequestConflict, 412 PreconditionFailed, 500 InternalError,
	// 503 SlowDown).
	Status int
	Code   string
	// Delay is the hold of a Delay rule. With any other action it is an extra hold before the
	// action runs.
	Delay time.Duration
	// Until, when non-nil, holds every request the rule fires on until it is closed (a
	// protocol event of the run, not a time), then Delay more. A request that arrives once it
	// is closed is held by Delay alone. A Delay rule needs Delay or Until.
	Until <-chan struct{} `json:"-"`
}

// Holds reports whether the rule keeps the requests it fires on for a while before acting.
func (r Rule) Holds() bool { return r.Delay > 0 || r.Until != nil }

type rule struct {
	Rule
	key     *regexp.Regexp // nil: any key
	matches int
	fired   int
}

func defaultCode(status int) string {
	switch status {
	case http.StatusConflict:
		return "ConditionalRequestConflict"
	case http.StatusPreconditionFailed:
		return "PreconditionFailed"
	case http.StatusNotFound:
		return "NoSuchKey"
	case http.StatusServiceUnavailable:
		return "SlowDown"
	case http.StatusInternalServerError:
		return "InternalError"
	}
	return strings.ReplaceAll(http.StatusText(status), " ", "")
}

func compile(r Rule) (*rule, error) {
	if r.Name == "" {
		return nil, errors.New("faults: rule without a name")
	}
	if r.Nth < 0 || r.Count < 0 || r.Delay < 0 {
		return nil, fmt.Errorf("faults: rule %s: negative Nth, Count or Delay", r.Name)
	}
	switch http.CanonicalHeaderKey(r.Header) {
	case "":
		if r.Value != "" {
			return nil, fmt.Errorf("faults: rule %s: Value without Header", r.Name)
		}
	case "If-Match", "If-None-Match":
		r.Header = http.CanonicalHeaderKey(r.Header)
	default:
		return nil, fmt.Errorf("faults: rule %s: Header must be If-Match or If-None-Match, got %q", r.Name, r.Header)
	}
	switch r.Action {
	case DropResponse, Duplicate, DropRequest:
	case SyntheticStatus:
		if r.Status < 300 || r.Status > 599 {
			return nil, fmt.Errorf("faults: rule %s: status action needs a 3xx-5xx Status, got %d", r.Name, r.Status)
		}
		if r.Code == "" {
			r.Code = defaultCode(r.Status)
		}
	case Delay:
		if r.Delay <= 0 && r.Until == nil {
			return nil, fmt.Errorf("faults: rule %s: delay action needs a positive Delay or an Until", r.Name)
		}
	case Misdirect:
		if !strings.EqualFold(r.Method, http.MethodGet) {
			return nil, fmt.Errorf("faults: rule %s: misdirect answers object reads: Method must be GET, got %q", r.Name, r.Method)
		}
	case StripConditions, FailDeleteKeys:
		if r.Action == FailDeleteKeys && r.Method != "" && !strings.EqualFold(r.Method, http.MethodPost) {
			return nil, fmt.Errorf("faults: rule %s: fail-delete-keys matches DeleteObjects (POST) only, got method %s", r.Name, r.Method)
		}
	default:
		return nil, fmt.Errorf("faults: rule %s: unknown action %q", r.Name, r.Action)
	}
	c := &rule{Rule: r}
	if r.Key != "" {
		re, err := globRegexp(r.Key)
		if err != nil {
			return nil, fmt.Errorf("faults: rule %s: key pattern %q: %w", r.Name, r.Key, err)
		}
		c.key = re
	}
	return c, nil
}

// globRegexp translates a path.Match pattern into a regexp in which '*' and '?' also match
// '/'.
func globRegexp(pat string) (*regexp.Regexp, error) {
	if _, err := path.Match(pat, ""); err != nil {
		return nil, err
	}
	lit := func(r rune) string { return fmt.Sprintf(`\x{%x}`, r) }
	var sb strings.Builder
	sb.WriteString(`(?s)^`)
	for i := 0; i < len(pat); {
		r, n := utf8.DecodeRuneInString(pat[i:])
		i += n
		switch r {
		case '*':
			sb.WriteString(`.*`)
		case '?':
			sb.WriteString(`.`)
		case '\\':
			e, m := utf8.DecodeRuneInString(pat[i:])
			i += m
			sb.WriteString(lit(e))
		case '[':
			sb.WriteByte('[')
			if i < len(pat) && pat[i] == '^' {
				sb.WriteByte('^')
				i++
			}
			for i < len(pat) && pat[i] != ']' {
				c, m := utf8.DecodeRuneInString(pat[i:])
				i += m
				switch c {
				case '-':
					sb.WriteByte('-')
				case '\\':
					e, k := utf8.DecodeRuneInString(pat[i:])
					i += k
					sb.WriteString(lit(e))
				default:
					sb.WriteString(lit(c))
				}
			}
			i++ // ']'
			sb.WriteByte(']')
		default:
			sb.WriteString(lit(r))
		}
	}
	sb.WriteByte('$')
	return regexp.Compile(sb.String())
}

// request is what rules match a request on.
type request struct {
	method string
	// keys are the keys the request is matched on (see Rule.Key): the object key, a listing's
	// prefix, or the keys a DeleteObjects batch names. It matches a pattern when any does.
	keys   []string
	header http.Header
	// batch marks a DeleteObjects request whose keys were read.
	batch bool
}

func (r *rule) match(q request) bool {
	if r.Action == FailDeleteKeys && !q.batch {
		return false
	}
	if r.Method != "" && !strings.EqualFold(r.Method, q.method) {
		return false
	}
	if r.key != nil && !slices.ContainsFunc(q.keys, r.key.MatchString) {
		return false
	}
	h := q.header
	if r.Header != "" {
		vs, ok := h[r.Header]
		if !ok || len(vs) == 0 {
			return false
		}
		if r.Value != "" && strings.Trim(vs[0], `"`) != strings.Trim(r.Value, `"`) {
			return false
		}
	}
	return true
}

// Rules is a table of request rules: the matching, counting and firing every request-level
// fault of the bench goes through, whether the requests arrive at the HTTP fault proxy of a
// [github.com/fencebench/fencebench/faults/netpath.Path] or at an in-process store. Its methods are safe for concurrent use.
type Rules struct {
	owner string // named in errors
	mu    sync.Mutex
	rules []*rule
	fired map[string]int
}

// NewRules returns an empty table; owner names it in errors (a writer id).
func NewRules(owner string) *Rules { return &Rules{owner: owner, fired: map[string]int{}} }

// Add installs r after validating it. It takes effect for requests matched after it returns.
func (t *Rules) Add(r Rule) error {
	c, err := compile(r)
	if err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, x := range t.rules {
		if x.Name == r.Name {
			return fmt.Errorf("faults: rule %s already installed on %s", r.Name, t.owner)
		}
	}
	t.rules = append(t.rules, c)
	return nil
}

// Remove uninstalls the named rule; requests already past matching are not affected. Its
// Fired count remains readable.
func (t *Rules) Remove(name string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, x := range t.rules {
		if x.Name == name {
			t.rules = append(t.rules[:i:i], t.rules[i+1:]...)
			return nil
		}
	}
	return fmt.Errorf("faults: no rule %s on %s", name, t.owner)
}

// Fired reports how many times rules of that name fired, removed rules included.
func (t *Rules) Fired(name string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.fired[name]
}

// Request is what a rule matches a request on.
type Request struct {
	Method string // HTTP method: GET, PUT, POST (a DeleteObjects batch), DELETE, HEAD
	// Keys are the keys the request is matched on: the object key, a listing's prefix, or the
	// keys a DeleteObjects batch names (Batch true). It matches a pattern when any does.
	Keys   []string
	Header http.Header // If-Match / If-None-Match, as sent
	Batch  bool
}

// Fire evaluates the rules for one request, counts every match, and returns a copy of the
// rule that fired with a predicate telling which keys its pattern matches (every key when it
// has none); ok is false when no rule fired.
func (t *Rules) Fire(q Request) (r Rule, keyMatches func(string) bool, ok bool) {
	fr, re := t.fire(request{method: q.Method, keys: q.Keys, header: q.Header, batch: q.Batch})
	if fr == nil {
		return Rule{}, nil, false
	}
	if re == nil {
		return *fr, func(string) bool { return true }, true
	}
	return *fr, re.MatchString, true
}

// fire evaluates the rules for one request and returns a copy of the rule that fired with its
// compiled key pattern (nil: any key), or nil.
func (t *Rules) fire(q request) (*Rule, *regexp.Regexp) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, r := range t.rules {
		if !r.match(q) {
			continue
		}
		r.matches++
		if r.matches < max(r.Nth, 1) || (r.Count > 0 && r.fired >= r.Count) {
			continue
		}
		r.fired++
		t.fired[r.Name]++
		cp := r.Rule
		return &cp, r.key
	}
	return nil, nil
}
