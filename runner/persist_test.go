package runner

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fencebench/fencebench/outcome"
)

// tree lists every path under root with its size, to tell whether anything was written.
func tree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, p+" "+info.Mode().String()+" "+info.ModTime().String())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// hostileRun writes a run folder root/run whose run.json holds the given cells, and a
// victim folder beside it.
func hostileRun(t *testing.T, cells string) (root, run string) {
	t.Helper()
	root = t.TempDir()
	run = filepath.Join(root, "run")
	for _, d := range []string{run, filepath.Join(root, "victim"), filepath.Join(run, "real")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "victim", "keep"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(run, "run.json"), []byte(`{"run_id":"run","cells":`+cells+`}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, run
}

// TestHostileRunJSON: a stored run.json whose cells point outside the run folder is refused
// as bad input, and nothing is written anywhere.
func TestHostileRunJSON(t *testing.T) {
	for name, cells := range map[string]string{
		"dir outside":      `[{"id":"gone","dir":"../victim"}]`,
		"absolute dir":     `[{"id":"gone","dir":"VICTIM"}]`,
		"id escapes":       `[{"id":"../victim","dir":"x"}]`,
		"id with a slash":  `[{"id":"real/../../victim"}]`,
		"dot id":           `[{"id":".."}]`,
		"empty id":         `[{"id":""}]`,
		"symlinked folder": `[{"id":"link"}]`,
	} {
		t.Run(name, func(t *testing.T) {
			root, run := hostileRun(t, cells)
			victim := filepath.Join(root, "victim")
			if err := os.Symlink(victim, filepath.Join(run, "link")); err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(filepath.Join(run, "run.json"))
			b = []byte(strings.ReplaceAll(string(b), "VICTIM", victim))
			if err := os.WriteFile(filepath.Join(run, "run.json"), b, 0o644); err != nil {
				t.Fatal(err)
			}
			before := tree(t, root)
			sum, err := LoadRun(run)
			if err == nil {
				// Loading may keep a cell that has no folder, but saving must stay inside.
				err = SaveRun(sum)
				if _, serr := os.Stat(filepath.Join(victim, "result.json")); serr == nil {
					t.Fatalf("SaveRun wrote %s", filepath.Join(victim, "result.json"))
				}
				if err == nil {
					// Only run.json was rewritten, inside the run folder.
					for _, line := range tree(t, root) {
						if !slices.Contains(before, line) && !strings.HasPrefix(line, run+" ") &&
							!strings.HasPrefix(line, filepath.Join(run, "run.json")+" ") {
							t.Fatalf("SaveRun changed %s", line)
						}
					}
					return
				}
			}
			if !errors.Is(err, outcome.ErrBadInput) {
				t.Fatalf("got %v, want bad input", err)
			}
			if after := tree(t, root); !slices.Equal(before, after) {
				t.Fatalf("a refused run folder was written to:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

// TestSaveRunChecksEveryFolderFirst: a summary naming a folder outside its run folder is
// refused before any file is written, the legitimate cells' included.
func TestSaveRunChecksEveryFolderFirst(t *testing.T) {
	root, run := hostileRun(t, `[]`)
	sum := &outcome.Summary{RunID: "run", Dir: run, Cells: []*outcome.CellResult{
		{ID: "real", Dir: filepath.Join(run, "real")},
		{ID: "victim", Dir: filepath.Join(root, "victim")},
	}}
	before := tree(t, root)
	if err := SaveRun(sum); !errors.Is(err, outcome.ErrBadInput) {
		t.Fatalf("got %v, want bad input", err)
	}
	if after := tree(t, root); !slices.Equal(before, after) {
		t.Fatalf("SaveRun wrote before refusing:\nbefore %v\nafter  %v", before, after)
	}
	sum.Cells = sum.Cells[:1]
	if err := SaveRun(sum); err != nil {
		t.Fatal(err)
	}
	var back outcome.CellResult
	if b, err := os.ReadFile(filepath.Join(run, "real", "result.json")); err != nil || json.Unmarshal(b, &back) != nil || back.ID != "real" {
		t.Fatalf("the legitimate cell's result.json: %s, %v", b, err)
	}
}
