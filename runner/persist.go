package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/fencebench/fencebench/history"
)

// persist writes a cell's artefacts: scenario.yaml, seed, history.jsonl, ledger.jsonl,
// result.json and the slice of the store's log written during the cell.
func (r *runner) persist(c Cell, res *CellResult, logStart int64) error {
	if err := os.MkdirAll(res.Dir, 0o755); err != nil {
		return fmt.Errorf("persist %s: %w", res.Dir, err)
	}
	files := map[string][]byte{
		"scenario.yaml": c.Scenario.Raw,
		"seed":          []byte(strconv.FormatUint(c.Seed, 10) + "\n"),
	}
	var hb, lb bytes.Buffer
	if err := history.Encode(&hb, res.Events); err != nil {
		return err
	}
	if err := history.EncodeLedger(&lb, res.Ledger); err != nil {
		return err
	}
	files["history.jsonl"] = hb.Bytes()
	files["ledger.jsonl"] = lb.Bytes()
	if lp := r.env.LogPath(); lp != "" {
		if b, err := readFrom(lp, logStart); err == nil {
			files["store.log"] = b
		}
	}
	res.Files = nil
	for _, name := range []string{"scenario.yaml", "seed", "history.jsonl", "ledger.jsonl", "store.log"} {
		b, ok := files[name]
		if !ok {
			continue
		}
		if err := os.WriteFile(filepath.Join(res.Dir, name), b, 0o644); err != nil {
			return fmt.Errorf("persist %s: %w", name, err)
		}
		res.Files = append(res.Files, name)
	}
	res.Files = append(res.Files, "result.json")
	return writeJSON(filepath.Join(res.Dir, "result.json"), res)
}

func readFrom(path string, off int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(f, 16<<20))
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
