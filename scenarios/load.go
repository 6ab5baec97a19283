package scenarios

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

//go:embed catalogue/*.yaml
var catalogueFS embed.FS

// CatalogueDir is where the shipped scenarios live in the source tree (and, embedded, in
// the binary).
const CatalogueDir = "scenarios/catalogue"

// Catalogue returns every shipped scenario, sorted by name.
func Catalogue(opts Options) ([]*Scenario, error) {
	entries, err := fs.ReadDir(catalogueFS, "catalogue")
	if err != nil {
		return nil, err
	}
	var out []*Scenario
	var errs Errors
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".yaml") {
			continue
		}
		data, err := catalogueFS.ReadFile("catalogue/" + e.Name())
		if err != nil {
			return nil, err
		}
		s, err := Parse(CatalogueDir+"/"+e.Name(), data, opts)
		if err != nil {
			errs = append(errs, asErrors(err)...)
			continue
		}
		out = append(out, s)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	sortByName(out)
	return out, checkUnique(out)
}

// LoadFile reads and validates one scenario file.
func LoadFile(path string, opts Options) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, Errors{{File: path, Msg: fmt.Sprintf("cannot read: %v", err)}}
	}
	return Parse(path, data, opts)
}

// Resolve turns command-line arguments into scenarios: each argument is a .yaml file, a
// directory (every .yaml in it), or the name of a shipped scenario. No arguments means the
// whole catalogue. Every problem in every argument is reported at once.
func Resolve(args []string, opts Options) ([]*Scenario, error) {
	if len(args) == 0 {
		return Catalogue(opts)
	}
	var cat []*Scenario
	var out []*Scenario
	var errs Errors
	for _, a := range args {
		st, statErr := os.Stat(a)
		switch {
		case statErr == nil && st.IsDir():
			files, _ := filepath.Glob(filepath.Join(a, "*.yaml"))
			if len(files) == 0 {
				errs = append(errs, &Error{File: a, Msg: "directory holds no .yaml scenario files"})
			}
			sort.Strings(files)
			for _, f := range files {
				s, err := LoadFile(f, opts)
				if err != nil {
					errs = append(errs, asErrors(err)...)
					continue
				}
				out = append(out, s)
			}
		case statErr == nil:
			s, err := LoadFile(a, opts)
			if err != nil {
				errs = append(errs, asErrors(err)...)
				continue
			}
			out = append(out, s)
		case strings.HasSuffix(a, ".yaml") || strings.ContainsRune(a, os.PathSeparator):
			errs = append(errs, &Error{File: a, Msg: fmt.Sprintf("cannot read: %v", statErr)})
		default:
			if cat == nil {
				var err error
				if cat, err = Catalogue(opts); err != nil {
					return nil, err
				}
			}
			found := false
			var names []string
			for _, s := range cat {
				names = append(names, s.Name)
				if s.Name == a {
					out = append(out, s)
					found = true
				}
			}
			if !found {
				errs = append(errs, &Error{File: a, Msg: fmt.Sprintf("no such file, directory or shipped scenario%s; shipped: %s",
					suggest(a, names), strings.Join(names, ", "))})
			}
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, checkUnique(out)
}

func asErrors(err error) Errors {
	var es Errors
	if errors.As(err, &es) {
		return es
	}
	return Errors{{Msg: err.Error()}}
}

func sortByName(s []*Scenario) {
	sort.Slice(s, func(i, j int) bool { return s[i].Name < s[j].Name })
}

func checkUnique(s []*Scenario) error {
	seen := map[string]string{}
	var errs Errors
	for _, x := range s {
		if prev, ok := seen[x.Name]; ok {
			errs = append(errs, &Error{File: x.Source, Field: "name",
				Msg: fmt.Sprintf("scenario name %q is also used by %s; names must be unique (they name report folders)", x.Name, prev)})
		}
		seen[x.Name] = x.Source
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}
