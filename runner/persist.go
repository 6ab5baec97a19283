package runner

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/outcome"
)

// persist writes a cell's artefacts: scenario.yaml, seed, history.jsonl, ledger.jsonl,
// result.json and the slice of the store's log written during the cell.
func (r *runner) persist(c Cell, res *outcome.CellResult, logStart int64) error {
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

// writeJSON writes v to path through a temporary file renamed over it: a symbolic link at
// path is replaced, never followed.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, werr := f.Write(append(b, '\n'))
	cerr := f.Close()
	if err := errors.Join(werr, cerr, os.Chmod(f.Name(), 0o644)); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}

// LoadRun reads a run folder written by Run back into a Summary, with every cell's events and
// ledger, so it can be judged and reported again. Every cell id must be one safe path
// component naming a real folder (not a symbolic link) directly inside dir, or no folder at
// all; anything else is refused with outcome.ErrBadInput before anything is read from the cells.
func LoadRun(dir string) (*outcome.Summary, error) {
	var sum outcome.Summary
	if err := readJSON(filepath.Join(dir, "run.json"), &sum); err != nil {
		return nil, fmt.Errorf("%s is not a fencebench run folder: %w", dir, err)
	}
	sum.Dir = dir
	present := make([]bool, len(sum.Cells))
	for i, c := range sum.Cells {
		if c == nil {
			return nil, fmt.Errorf("%w: %s: run.json: cell %d is empty", outcome.ErrBadInput, dir, i)
		}
		ok, err := cellFolder(dir, c.ID)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: run.json: cell %d: %v", outcome.ErrBadInput, dir, i, err)
		}
		present[i] = ok
		// Where a cell lives follows from its id alone; a stored path is never trusted.
		c.Dir = ""
	}
	for i, c := range sum.Cells {
		if !present[i] {
			// A cell that never ran (interrupted) has no folder; keep what run.json says.
			continue
		}
		res, err := loadCell(filepath.Join(dir, c.ID))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.ID, err)
		}
		if res == nil {
			continue
		}
		if res.ID != c.ID {
			return nil, fmt.Errorf("%w: %s: result.json names cell %q", outcome.ErrBadInput, c.ID, res.ID)
		}
		sum.Cells[i] = res
	}
	return &sum, nil
}

// cellFolder checks that id names at most one entry directly inside dir and that the entry,
// when there is one, is a real folder. It reports whether the folder exists.
func cellFolder(dir, id string) (bool, error) {
	if err := safeComponent(id); err != nil {
		return false, fmt.Errorf("cell id %q: %v", id, err)
	}
	st, err := os.Lstat(filepath.Join(dir, id))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, err
	case st.Mode()&fs.ModeSymlink != 0:
		return false, fmt.Errorf("cell folder %s is a symbolic link", id)
	case !st.IsDir():
		return false, fmt.Errorf("cell folder %s is not a folder", id)
	}
	return true, nil
}

// loadCell reads a cell folder's result.json, history and ledger; nil when it has no
// result.json.
func loadCell(cdir string) (*outcome.CellResult, error) {
	var res outcome.CellResult
	if err := readJSON(filepath.Join(cdir, "result.json"), &res); err != nil {
		return nil, nil
	}
	res.Dir = cdir
	if f, err := os.Open(filepath.Join(cdir, "history.jsonl")); err == nil {
		res.Events, err = history.Decode(f)
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	if f, err := os.Open(filepath.Join(cdir, "ledger.jsonl")); err == nil {
		res.Ledger, err = history.DecodeLedger(f)
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	return &res, nil
}

// SaveRun rewrites run.json and every cell's result.json after a new judgement. Every cell's
// folder is checked first: it must be sum.Dir/<cell id> with a safe id and not a symbolic
// link; otherwise nothing is written and the error wraps outcome.ErrBadInput.
func SaveRun(sum *outcome.Summary) error {
	for i, c := range sum.Cells {
		if c == nil || c.Dir == "" {
			continue
		}
		if filepath.Clean(c.Dir) != filepath.Join(sum.Dir, c.ID) {
			return fmt.Errorf("%w: cell %d: folder %q is not %s", outcome.ErrBadInput, i, c.Dir, filepath.Join(sum.Dir, c.ID))
		}
		if ok, err := cellFolder(sum.Dir, c.ID); err != nil || !ok {
			return fmt.Errorf("%w: cell %d: %v", outcome.ErrBadInput, i, cmp.Or(err, fs.ErrNotExist))
		}
	}
	for _, c := range sum.Cells {
		if c == nil || c.Dir == "" {
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
