package writers

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/fencebench/fencebench/fence"
)

// Shard identifies the one simulated shard of a run and fixes its layout in the bucket:
//
//	<Prefix><IndexUUID>/<ID>/translog/data/<term>/<gen>.tlog
//	<Prefix><IndexUUID>/<ID>/translog/metadata/metadata__<inv(term)>__<inv(gen)>__<alloc>
//	<Prefix><IndexUUID>/<ID>/translog/metadata/fence__<inv(term)>
//	<Prefix><IndexUUID>/<ID>/segments/data/<term>/<name>
//	<Prefix><IndexUUID>/<ID>/segments/metadata/metadata__<inv(term)>__<inv(gen)>
//
// inv(x) is the 19-digit zero-padded math.MaxInt64-x, so a listing returns the highest term,
// and within it the highest generation, first.
type Shard struct {
	// Prefix is the run prefix: "" or ending in "/".
	Prefix    string
	IndexUUID string
	ID        int
}

// Base is the shard's root: Prefix + IndexUUID + "/" + ID + "/".
func (s Shard) Base() string { return fmt.Sprintf("%s%s/%d/", s.Prefix, s.IndexUUID, s.ID) }

// TranslogMetadataPrefix is the directory holding translog metadata files and fence objects;
// it is the prefix fence instances are built with.
func (s Shard) TranslogMetadataPrefix() string { return s.Base() + "translog/metadata/" }

// MetadataListPrefix is the prefix a restore-point listing uses. It never matches a fence
// object.
func (s Shard) MetadataListPrefix() string { return s.TranslogMetadataPrefix() + "metadata__" }

// FencePrefix is the prefix of every fence object of the shard.
func (s Shard) FencePrefix() string { return s.TranslogMetadataPrefix() + fence.KeyPrefix }

// TlogKey is the data file of one translog generation written by allocation alloc. Data
// files are immutable and never shared: two copies at one term (an equal-term twin, a
// relocation source and target) can reach the same generation number, and a shared name
// would let the one that is about to be fenced overwrite the owner's acknowledged data
// before its fence step refuses it.
func (s Shard) TlogKey(term, gen int64, alloc string) string {
	return fmt.Sprintf("%stranslog/data/%d/%d__%s.tlog", s.Base(), term, gen, alloc)
}

// MetadataKey is the translog metadata file a writer with allocation alloc uploads for gen.
func (s Shard) MetadataKey(term, gen int64, alloc string) string {
	return fmt.Sprintf("%s%s__%s__%s", s.MetadataListPrefix(), invert(term), invert(gen), alloc)
}

// SegmentDataPrefix is the directory of every segment file.
func (s Shard) SegmentDataPrefix() string { return s.Base() + "segments/data/" }

// SegmentKey is one segment file.
func (s Shard) SegmentKey(term int64, name string) string {
	return fmt.Sprintf("%s%d/%s", s.SegmentDataPrefix(), term, name)
}

// SegmentMetadataPrefix is the prefix a reference-set listing uses.
func (s Shard) SegmentMetadataPrefix() string { return s.Base() + "segments/metadata/metadata__" }

// SegmentMetadataKey is the reference set published at (term, gen).
func (s Shard) SegmentMetadataKey(term, gen int64) string {
	return fmt.Sprintf("%s%s__%s", s.SegmentMetadataPrefix(), invert(term), invert(gen))
}

// FenceKey is the fence object of term.
func (s Shard) FenceKey(term int64) string { return fence.Key(s.TranslogMetadataPrefix(), term) }

func invert(x int64) string {
	v := strconv.FormatInt(math.MaxInt64-x, 10)
	return strings.Repeat("0", 19-len(v)) + v
}

func uninvert(s string) (int64, bool) {
	if len(s) != 19 {
		return 0, false
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0, false
	}
	return math.MaxInt64 - v, true
}

// parseMetadataName returns the term and generation in a translog or segment metadata key.
func parseMetadataName(key string) (term, gen int64, ok bool) {
	base := key[strings.LastIndex(key, "/")+1:]
	parts := strings.Split(base, "__")
	if len(parts) < 3 || parts[0] != "metadata" {
		return 0, 0, false
	}
	term, ok1 := uninvert(parts[1])
	gen, ok2 := uninvert(parts[2])
	return term, gen, ok1 && ok2
}

// Bodies. Every object a writer writes is unique and attributable: a header line names the
// writer, allocation, term, generation and the sync attempt that wrote it, so an object found
// in the bucket maps to exactly one recorded call, and a retried sync writes new bytes.

const (
	tlogMagic     = "fencebench-tlog v1"
	metadataMagic = "fencebench-translog-metadata v1"
	segMetaMagic  = "fencebench-segment-metadata v1"
	segFileMagic  = "fencebench-segment v1"
)

type origin struct {
	Writer, Alloc, Node string
	Term, Gen           int64
	Attempt             int
}

func (o origin) line() string {
	return fmt.Sprintf("writer=%s alloc=%s node=%s term=%d gen=%d attempt=%d", o.Writer, o.Alloc, o.Node, o.Term, o.Gen, o.Attempt)
}

func encodeTlog(o origin, ops []int64) []byte {
	var b strings.Builder
	b.WriteString(tlogMagic + "\n" + o.line() + "\nops=")
	for i, op := range ops {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(op, 10))
	}
	b.WriteByte('\n')
	return []byte(b.String())
}

func decodeTlog(body []byte) ([]int64, error) {
	lines := strings.Split(strings.TrimRight(string(body), "\n"), "\n")
	if len(lines) != 3 || lines[0] != tlogMagic || !strings.HasPrefix(lines[2], "ops=") {
		return nil, fmt.Errorf("unrecognized tlog content %q", truncate(body))
	}
	list := strings.TrimPrefix(lines[2], "ops=")
	if list == "" {
		return nil, nil
	}
	fields := strings.Split(list, ",")
	ops := make([]int64, 0, len(fields))
	for _, f := range fields {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("unrecognized op id %q in tlog", f)
		}
		ops = append(ops, v)
	}
	return ops, nil
}

// encodeList is the shared shape of translog and segment metadata: a magic line, the origin,
// then one referenced key per line.
func encodeList(magic string, o origin, keys []string) []byte {
	head := o.line()
	n := len(magic) + len(head) + 2 + len(keys)*len("ref=\n")
	for _, k := range keys {
		n += len(k)
	}
	b := make([]byte, 0, n) // a long lineage is encoded at every sync: one allocation
	b = append(append(append(append(b, magic...), '\n'), head...), '\n')
	for _, k := range keys {
		b = append(append(append(b, "ref="...), k...), '\n')
	}
	return b
}

func decodeList(magic string, body []byte) ([]string, error) {
	lines := strings.Split(strings.TrimRight(string(body), "\n"), "\n")
	if len(lines) < 2 || lines[0] != magic {
		return nil, fmt.Errorf("unrecognized metadata content %q", truncate(body))
	}
	var keys []string
	for _, l := range lines[2:] {
		k, ok := strings.CutPrefix(l, "ref=")
		if !ok {
			return nil, fmt.Errorf("unrecognized metadata line %q", l)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

func encodeSegment(o origin, name string) []byte {
	return []byte(segFileMagic + "\n" + o.line() + "\nname=" + name + "\n")
}

func truncate(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "..."
	}
	return string(b)
}

// sortedUnique returns the distinct values of ops in ascending order.
func sortedUnique(ops []int64) []int64 {
	out := slices.Clone(ops)
	slices.Sort(out)
	return slices.Compact(out)
}
