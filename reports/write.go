package reports

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"github.com/fencebench/fencebench/outcome"
	"html/template"
	"os"
	"path/filepath"
	"strings"
)

//go:embed templates
var templateFS embed.FS

var pages = template.Must(template.New("reports").Funcs(template.FuncMap{
	"add": func(a, b int) int { return a + b },
	"pct": func(r float64) float64 { return 100 * r },
}).ParseFS(templateFS, "templates/*.tmpl"))

// Write writes the report of run into dir: dir/index.html, dir/<cell.ID>/report.html for
// every cell, dir/junit.xml and dir/summary.json. Cell IDs must be unique single path
// elements. Files are replaced atomically, so a reader never sees a half-written page.
func Write(dir string, run *outcome.Summary) error {
	seen := map[string]bool{}
	for i := range run.Cells {
		id := run.Cells[i].ID
		if !safeName(id) {
			return fmt.Errorf("reports: cell %d: id %q is not a plain folder name", i, id)
		}
		if seen[id] {
			return fmt.Errorf("reports: duplicate cell id %q", id)
		}
		seen[id] = true
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("reports: %w", err)
	}
	for i := range run.Cells {
		c := run.Cells[i]
		cd := filepath.Join(dir, c.ID)
		if err := os.MkdirAll(cd, 0o755); err != nil {
			return fmt.Errorf("reports: %w", err)
		}
		page, err := renderCell(run.RunID, c)
		if err != nil {
			return fmt.Errorf("reports: cell %s: %w", c.ID, err)
		}
		if err := writeFile(filepath.Join(cd, "report.html"), page); err != nil {
			return err
		}
	}
	page, err := renderIndex(run)
	if err != nil {
		return fmt.Errorf("reports: index: %w", err)
	}
	if err := writeFile(filepath.Join(dir, "index.html"), page); err != nil {
		return err
	}
	junit, err := buildJUnit(run)
	if err != nil {
		return fmt.Errorf("reports: junit: %w", err)
	}
	if err := writeFile(filepath.Join(dir, "junit.xml"), junit); err != nil {
		return err
	}
	s := summarize(run)
	markFlaky(dir, &s)
	sum, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("reports: summary: %w", err)
	}
	return writeFile(filepath.Join(dir, "summary.json"), append(sum, '\n'))
}

func renderIndex(run *outcome.Summary) ([]byte, error) {
	var buf bytes.Buffer
	err := pages.ExecuteTemplate(&buf, "index.html.tmpl", buildView(run))
	return buf.Bytes(), err
}

func renderCell(runID string, c *outcome.CellResult) ([]byte, error) {
	var buf bytes.Buffer
	err := pages.ExecuteTemplate(&buf, "cell.html.tmpl", buildCellView(runID, c))
	return buf.Bytes(), err
}

// safeName reports whether id can name a folder inside the run folder and nothing else.
func safeName(id string) bool {
	return id != "" && id != "." && id != ".." && !strings.ContainsAny(id, `/\`+"\x00") && filepath.IsLocal(id)
}

// writeFile replaces path with data through a temporary file and a rename.
func writeFile(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("reports: %w", err)
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp, 0o644)
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		os.Remove(tmp)
		return fmt.Errorf("reports: %w", werr)
	}
	return nil
}
