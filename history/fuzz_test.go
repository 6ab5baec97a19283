package history

import (
	"bytes"
	"os"
	"regexp"
	"testing"
)

// Seeds of the decoders' fuzz targets: histories and ledgers as real runs write them, one
// line per event kind and outcome, one per ledger shape.
const (
	historySeeds = "testdata/seed-history.jsonl"
	ledgerSeeds  = "testdata/seed-ledger.jsonl"
)

// seeds returns the file's bytes and each of its lines; a missing or empty file ends the
// test, so a fuzz target never runs on no seed at all.
func seeds(t testing.TB, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	if len(b) == 0 || len(lines) < 2 {
		t.Fatalf("%s: %d seed lines, want several", path, len(lines))
	}
	return append([][]byte{b}, lines...)
}

var lineErr = regexp.MustCompile(`^(history|ledger): line [0-9]+: `)

// roundTrip checks one decoder on data: it never panics, an error names the line, and what
// it accepts encodes back into a document it decodes to the same values.
func roundTrip[T any](t *testing.T, data []byte, decode func([]byte) ([]T, error), encode func(*bytes.Buffer, []T) error) {
	got, err := decode(data)
	if err != nil {
		if !lineErr.MatchString(err.Error()) {
			t.Fatalf("an error that names no line: %v", err)
		}
		return
	}
	var buf bytes.Buffer
	if err := encode(&buf, got); err != nil {
		t.Fatalf("decoded %d entries that do not encode: %v", len(got), err)
	}
	again, err := decode(buf.Bytes())
	if err != nil {
		t.Fatalf("the encoding of what was decoded does not decode: %v\n%s", err, buf.Bytes())
	}
	// The encoding is the stored form: encoding what was decoded again must give the same
	// bytes. (Values may differ only where the encoding cannot tell them apart, such as an
	// empty list and no list.)
	var buf2 bytes.Buffer
	if err := encode(&buf2, again); err != nil {
		t.Fatalf("decoded %d entries that do not encode: %v", len(again), err)
	}
	if !bytes.Equal(buf.Bytes(), buf2.Bytes()) {
		t.Fatalf("decode, encode, decode changed the entries:\n%+v\nvs\n%+v\n%s\nvs\n%s", got, again, buf.Bytes(), buf2.Bytes())
	}
}

func decodeEvents(b []byte) ([]Event, error)        { return Decode(bytes.NewReader(b)) }
func encodeEvents(w *bytes.Buffer, e []Event) error { return Encode(w, e) }
func decodeLedger(b []byte) ([]LedgerEntry, error)  { return DecodeLedger(bytes.NewReader(b)) }
func encodeLedger(w *bytes.Buffer, l []LedgerEntry) error {
	return EncodeLedger(w, l)
}

// TestSeedsDecode: every seed of the fuzz targets decodes, so fuzzing starts from inputs the
// decoders accept rather than from rejects only.
func TestSeedsDecode(t *testing.T) {
	for _, b := range seeds(t, historySeeds) {
		if ev, err := decodeEvents(b); err != nil || len(ev) == 0 {
			t.Errorf("history seed %q: %d events, %v", b, len(ev), err)
		}
	}
	for _, b := range seeds(t, ledgerSeeds) {
		if l, err := decodeLedger(b); err != nil || len(l) == 0 {
			t.Errorf("ledger seed %q: %d entries, %v", b, len(l), err)
		}
	}
}

// FuzzDecode feeds arbitrary bytes to the history decoder, which reads stored runs
// (`fencebench report` judges a folder it is given).
func FuzzDecode(f *testing.F) {
	for _, b := range seeds(f, historySeeds) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) { roundTrip(t, data, decodeEvents, encodeEvents) })
}

// FuzzDecodeLedger feeds arbitrary bytes to the ledger decoder.
func FuzzDecodeLedger(f *testing.F) {
	for _, b := range seeds(f, ledgerSeeds) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) { roundTrip(t, data, decodeLedger, encodeLedger) })
}
