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

// LoadRun reads a run folder written by Run back into a Summary, with every cell's events and
// ledger, so it can be judged and reported again.
func LoadRun(dir string) (*Summary, error) {
	var sum Summary
	if err := readJSON(filepath.Join(dir, "run.json"), &sum); err != nil {
		return nil, fmt.Errorf("%s is not a fencebench run folder: %w", dir, err)
	}
	sum.Dir = dir
	for i, c := range sum.Cells {
		cdir := filepath.Join(dir, c.ID)
		var res CellResult
		if err := readJSON(filepath.Join(cdir, "result.json"), &res); err != nil {
			// A cell that never ran (interrupted) has no folder; keep what run.json says.
			continue
		}
		res.Dir = cdir
		if f, err := os.Open(filepath.Join(cdir, "history.jsonl")); err == nil {
			res.Events, err = history.Decode(f)
			f.Close()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", c.ID, err)
			}
		}
		if f, err := os.Open(filepath.Join(cdir, "ledger.jsonl")); err == nil {
			res.Ledger, err = history.DecodeLedger(f)
			f.Close()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", c.ID, err)
			}
		}
		sum.Cells[i] = &res
	}
	return &sum, nil
}

// SaveRun rewrites run.json and every cell's result.json after a new judgement.
func SaveRun(sum *Summary) error {
	for _, c := range sum.Cells {
		if c.Dir == "" {
			continue
		}
		if err := writeJSON(filepath.Join(c.Dir, "result.json"), c); err != nil {
			return err
		}
	}
	return writeJSON(filepath.Join(sum.Dir, "run.json"), sum)
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
