package store

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
	"unicode/utf8"
)

// MarkerName is the last segment of a claim marker's key: the run that owns prefix p holds
// the object p + MarkerName.
const MarkerName = ".fencebench-claim"

// maxPrefixLen keeps every key a run derives from its prefix within S3's 1,024-byte limit.
const maxPrefixLen = 512

// ErrPrefixInUse is returned by ClaimPrefix when the prefix, one of its ancestors or one of
// its sub-prefixes belongs to another run, or the prefix already holds objects.
var ErrPrefixInUse = errors.New("the prefix is in use")

// ErrBadPrefix is returned for a prefix that is not a plain relative key path ending in "/".
var ErrBadPrefix = errors.New("bad prefix")

// ValidatePrefix accepts a relative key path of non-empty segments ending in "/": no leading
// "/", no empty, "." or ".." segment, no backslash, no control character, valid UTF-8, at
// most 512 bytes, and no segment named like a claim marker.
func ValidatePrefix(p string) error {
	bad := func(why string) error { return fmt.Errorf("%w %q: %s", ErrBadPrefix, p, why) }
	switch {
	case p == "":
		return bad("empty")
	case len(p) > maxPrefixLen:
		return bad(fmt.Sprintf("longer than %d bytes", maxPrefixLen))
	case !utf8.ValidString(p):
		return bad("not valid UTF-8")
	case strings.HasPrefix(p, "/"):
		return bad("must not start with /")
	case !strings.HasSuffix(p, "/"):
		return bad("must end in /")
	case strings.ContainsRune(p, '\\'):
		return bad("must not hold a backslash")
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return bad("must not hold control characters")
		}
	}
	for _, seg := range strings.Split(strings.TrimSuffix(p, "/"), "/") {
		switch seg {
		case "":
			return bad("has an empty segment (//)")
		case ".", "..":
			return bad("has a " + seg + " segment")
		case MarkerName:
			return bad("has a segment named " + MarkerName + ", the name of a claim marker")
		}
	}
	return nil
}

// Owner identifies the run holding a claim. It is the marker's body: no credentials.
type Owner struct {
	RunID   string    `json:"run_id"`
	Started time.Time `json:"started"`
	Host    string    `json:"host"`
	// Nonce tells this claim apart from any other with the same run id.
	Nonce string `json:"nonce"`
}

// Claim is a prefix a run owns: its marker exists and no other run claims an ancestor or a
// sub-prefix of it.
type Claim struct {
	Prefix string
	Marker string // the marker's key
	Owner  Owner
	s      Store
	body   []byte
}

// ClaimPrefix makes prefix the caller's own. The marker is created first, with
// create-if-absent; only then does it check that no ancestor prefix holds another run's
// marker and that the prefix holds nothing but its own marker. So two racing claims on the
// same, a parent or a child prefix can at worst both be refused on a linearizable store,
// never both succeed. A refusal deletes the caller's own marker, nothing else, and wraps
// ErrPrefixInUse naming what was found.
func ClaimPrefix(ctx context.Context, s Store, prefix string, owner Owner) (*Claim, error) {
	if err := ValidatePrefix(prefix); err != nil {
		return nil, err
	}
	if owner.Nonce == "" {
		owner.Nonce = NewOwner(owner.RunID).Nonce
	}
	body, err := json.Marshal(owner)
	if err != nil {
		return nil, err
	}
	c := &Claim{Prefix: prefix, Marker: prefix + MarkerName, Owner: owner, s: s, body: body}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := c.create(cctx); err != nil {
		return nil, err
	}
	if err := c.check(cctx); err != nil {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if derr := s.Delete(dctx, c.Marker); derr != nil {
			return nil, fmt.Errorf("%w; and removing this run's marker %s failed: %v", err, c.Marker, derr)
		}
		return nil, err
	}
	return c, nil
}

// create writes the marker if absent. An ambiguous answer is settled by reading the marker
// back: the nonce tells whether the write that landed was this one.
func (c *Claim) create(ctx context.Context) error {
	_, err := c.s.PutIfAbsent(ctx, c.Marker, c.body)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrPreconditionFailed):
		return fmt.Errorf("%w: %q is claimed by another run (marker %s%s)", ErrPrefixInUse, c.Prefix, c.Marker, c.ownerOf(ctx, c.Marker))
	case errors.Is(err, ErrAmbiguous):
		if o, gerr := c.s.Get(ctx, c.Marker); gerr == nil && bytes.Equal(o.Body, c.body) {
			return nil
		}
	}
	return fmt.Errorf("cannot create the claim marker %s: %w", c.Marker, err)
}

// check refuses the claim when an ancestor is claimed or the prefix holds anything else.
func (c *Claim) check(ctx context.Context) error {
	segs := strings.Split(strings.TrimSuffix(c.Prefix, "/"), "/")
	for i := 1; i < len(segs); i++ {
		key := strings.Join(segs[:i], "/") + "/" + MarkerName
		_, err := c.s.Get(ctx, key)
		switch {
		case err == nil:
			return fmt.Errorf("%w: the parent prefix %q is claimed by another run (marker %s%s)", ErrPrefixInUse,
				strings.Join(segs[:i], "/")+"/", key, c.ownerOf(ctx, key))
		case !errors.Is(err, ErrNotFound):
			return fmt.Errorf("cannot check the parent prefix's marker %s: %w", key, err)
		}
	}
	es, err := c.s.List(ctx, c.Prefix)
	if err != nil {
		return fmt.Errorf("cannot list the prefix %q: %w", c.Prefix, err)
	}
	others := 0
	first := ""
	for _, e := range es {
		if e.Key == c.Marker {
			continue
		}
		if isMarker(e.Key) {
			return fmt.Errorf("%w: the sub-prefix %q is claimed by another run (marker %s%s)", ErrPrefixInUse,
				strings.TrimSuffix(e.Key, MarkerName), e.Key, c.ownerOf(ctx, e.Key))
		}
		if others == 0 {
			first = e.Key
		}
		others++
	}
	if others > 0 {
		return fmt.Errorf("%w: %q already holds %d objects (first: %s); only a fresh prefix is used", ErrPrefixInUse,
			c.Prefix, others, first)
	}
	return nil
}

// ownerOf describes the run that holds the marker at key, "" when it cannot be read.
func (c *Claim) ownerOf(ctx context.Context, key string) string {
	o, err := c.s.Get(ctx, key)
	if err != nil {
		return ""
	}
	var w Owner
	if json.Unmarshal(o.Body, &w) != nil || w.RunID == "" {
		return ""
	}
	return fmt.Sprintf(", run %q started %s on %q", w.RunID, w.Started.UTC().Format(time.RFC3339), w.Host)
}

func isMarker(key string) bool {
	return key == MarkerName || strings.HasSuffix(key, "/"+MarkerName)
}

// Release deletes every object under the claimed prefix except those under a sub-prefix that
// holds another run's marker, then the claim's own marker, last. It reports how many objects
// it deleted, the marker included. When some object could not be deleted the marker stays:
// the prefix still holds the run's objects.
func (c *Claim) Release(ctx context.Context) (int, error) {
	es, err := c.s.List(ctx, c.Prefix)
	if err != nil {
		return 0, fmt.Errorf("cannot list the prefix %q: %w", c.Prefix, err)
	}
	var foreign []string
	for _, e := range es {
		if isMarker(e.Key) && e.Key != c.Marker {
			foreign = append(foreign, strings.TrimSuffix(e.Key, MarkerName))
		}
	}
	keys := make([]string, 0, len(es))
	for _, e := range es {
		if e.Key != c.Marker && strings.HasPrefix(e.Key, c.Prefix) && !under(e.Key, foreign) {
			keys = append(keys, e.Key)
		}
	}
	if len(keys) > 0 {
		failed, err := c.s.DeleteMany(ctx, keys)
		if err != nil {
			return 0, err
		}
		if len(failed) > 0 {
			return len(keys) - len(failed), fmt.Errorf("%d objects not deleted, first: %v; the claim marker %s stays",
				len(failed), failed[0], c.Marker)
		}
	}
	if err := c.s.Delete(ctx, c.Marker); err != nil {
		return len(keys), fmt.Errorf("cannot delete the claim marker %s: %w", c.Marker, err)
	}
	return len(keys) + 1, nil
}

func under(key string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// NewOwner describes this process as the owner of a claim for runID: now, the host name and
// a fresh nonce.
func NewOwner(runID string) Owner {
	host, _ := os.Hostname()
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return Owner{RunID: runID, Started: time.Now().UTC(), Host: host, Nonce: hex.EncodeToString(b)}
}
