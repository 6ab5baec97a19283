package fence

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// KeyPrefix is the name every fence object starts with inside a shard's translog metadata
// prefix. It is neither a prefix of nor prefixed by the metadata file names, so metadata
// listings never see fence objects and the fence never sees metadata files.
const KeyPrefix = "fence__"

// codecVersion is the first field of every fence body.
const codecVersion = "v1"

// invWidth is the decimal length of math.MaxInt64; every inverted term is padded to it so
// byte order of keys equals descending term order.
const invWidth = 19

// Content is the decoded body of a fence object.
type Content struct {
	IndexUUID string // shard identity; validated on every read
	ShardID   int    // shard identity; validated on every read
	Term      int64  // the primary term of the object, equal to the term in its key
	// AllocationID is the recorded owner: normally the writer's own allocation, during a
	// relocation transfer the target's. It authorizes re-adoption within a term.
	AllocationID string
	NodeID       string // the node that physically wrote this version (audit aid)
	Seq          int64  // position in the term's CAS chain: 0 on creation, +1 per write
}

// Encode renders c as "v1|indexUUID|shardId|term|allocationId|nodeId|seq". It refuses a '|'
// in any string field: otherwise a healthy writer could store a body its own parser rejects.
func Encode(c Content) ([]byte, error) {
	for _, f := range []struct{ name, v string }{
		{"index uuid", c.IndexUUID}, {"allocation id", c.AllocationID}, {"node id", c.NodeID},
	} {
		if strings.Contains(f.v, "|") {
			return nil, fmt.Errorf("fence: %s %q contains '|'", f.name, f.v)
		}
	}
	if c.Term < 0 || c.Seq < 0 || c.ShardID < 0 {
		return nil, fmt.Errorf("fence: negative field in %+v", c)
	}
	s := strings.Join([]string{
		codecVersion, c.IndexUUID, strconv.Itoa(c.ShardID), strconv.FormatInt(c.Term, 10),
		c.AllocationID, c.NodeID, strconv.FormatInt(c.Seq, 10),
	}, "|")
	return []byte(s), nil
}

// Decode parses a fence body. Anything but exactly seven fields with "v1" first and numeric
// shard id, term and seq is an error wrapping ErrIdentity: unrecognized content is an I/O
// problem, never a fencing verdict.
func Decode(b []byte) (Content, error) {
	parts := strings.Split(string(b), "|")
	if len(parts) != 7 || parts[0] != codecVersion {
		return Content{}, fmt.Errorf("%w: unrecognized fence content %q", ErrIdentity, truncate(b))
	}
	shard, err1 := strconv.Atoi(parts[2])
	term, err2 := strconv.ParseInt(parts[3], 10, 64)
	seq, err3 := strconv.ParseInt(parts[6], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || shard < 0 || term < 0 || seq < 0 {
		return Content{}, fmt.Errorf("%w: unrecognized fence content %q", ErrIdentity, truncate(b))
	}
	return Content{
		IndexUUID: parts[1], ShardID: shard, Term: term,
		AllocationID: parts[4], NodeID: parts[5], Seq: seq,
	}, nil
}

func truncate(b []byte) string {
	if len(b) > 120 {
		return string(b[:120]) + "..."
	}
	return string(b)
}

// Invert renders math.MaxInt64-term as 19 zero-padded decimal digits, so that ascending key
// order is descending term order and a listing returns the highest term first. It panics on
// a negative term: terms are validated before they reach it (New refuses negative terms).
func Invert(term int64) string {
	if term < 0 {
		panic(fmt.Sprintf("fence: Invert of negative term %d", term))
	}
	s := strconv.FormatInt(math.MaxInt64-term, 10)
	return strings.Repeat("0", invWidth-len(s)) + s
}

// Key returns the fence key of term under prefix: prefix + "fence__" + Invert(term).
func Key(prefix string, term int64) string {
	return prefix + KeyPrefix + Invert(term)
}

// ParseKey returns the term encoded in a fence key (with or without its prefix). ok is false
// when the key's last path element is not "fence__" followed by exactly 19 digits encoding a
// non-negative term.
func ParseKey(key string) (term int64, ok bool) {
	base := key[strings.LastIndex(key, "/")+1:]
	suffix, found := strings.CutPrefix(base, KeyPrefix)
	if !found || len(suffix) != invWidth {
		return 0, false
	}
	for _, r := range suffix {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(suffix, 10, 64)
	if err != nil || v < 0 {
		return 0, false
	}
	return math.MaxInt64 - v, true
}

// HighestTerm lists the fence keys under prefix and returns the highest term present. found
// is false when there is none. Keys that do not parse as fence keys are ignored.
func HighestTerm(ctx context.Context, s Store, prefix string) (term int64, found bool, err error) {
	terms, err := listTerms(ctx, s, prefix)
	if err != nil {
		return 0, false, err
	}
	for t := range terms {
		if !found || t > term {
			term, found = t, true
		}
	}
	return term, found, nil
}

// listTerms maps every fence term present under prefix to its key.
func listTerms(ctx context.Context, s Store, prefix string) (map[int64]string, error) {
	entries, err := s.List(ctx, prefix+KeyPrefix)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]string, len(entries))
	for _, e := range entries {
		if !strings.HasPrefix(e.Key, prefix) {
			continue
		}
		if t, ok := ParseKey(e.Key[len(prefix):]); ok {
			out[t] = e.Key
		}
	}
	return out, nil
}
