package reports

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/fencebench/fencebench/outcome"
)

// Files of an exploration's folder written by [WriteExploration].
const (
	ExplorePage = "explore.html"
	ExploreJSON = "explore.json"
)

// WriteExploration writes the record of an exploration into dir: dir/explore.html, the page
// people read, and dir/explore.json, the record itself (indented JSON), which
// [ReadExploration] reads back. Both are replaced atomically. The page links only files
// inside dir: a scenario or cell path that is absolute, climbs out with "..", or carries a
// URL scheme is shown as text and not linked.
func WriteExploration(dir string, x *outcome.Exploration) error {
	if x == nil {
		return errors.New("reports: no exploration to write")
	}
	var page bytes.Buffer
	if err := pages.ExecuteTemplate(&page, "explore.html.tmpl", buildExploreView(x)); err != nil {
		return fmt.Errorf("reports: %s: %w", ExplorePage, err)
	}
	js, err := json.MarshalIndent(x, "", "  ")
	if err != nil {
		return fmt.Errorf("reports: %s: %w", ExploreJSON, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("reports: %w", err)
	}
	if err := writeFile(filepath.Join(dir, ExploreJSON), append(js, '\n')); err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, ExplorePage), page.Bytes())
}

// ReadExploration reads dir/explore.json back into the exploration [WriteExploration]
// wrote. A folder without one, or with one that does not decode, is bad input
// (outcome.ErrBadInput).
func ReadExploration(dir string) (*outcome.Exploration, error) {
	p := filepath.Join(dir, ExploreJSON)
	b, err := os.ReadFile(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, outcome.BadInput(fmt.Errorf("reports: %s is not an exploration folder: no %s", dir, ExploreJSON))
		}
		return nil, fmt.Errorf("reports: %w", err)
	}
	var x outcome.Exploration
	if err := json.Unmarshal(b, &x); err != nil {
		return nil, outcome.BadInput(fmt.Errorf("reports: %s: %w", p, err))
	}
	return &x, nil
}

// schemeRE matches the start of a URL with a scheme ("https:", "javascript:", "c:").
var schemeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)

// localHref turns p, a path relative to the page's folder, into a relative URL, or "" when p
// could point outside that folder: empty, absolute, with a ".." element, a backslash, a NUL,
// or a URL scheme. Every element is percent-escaped, colons included, so the result can
// never be read as a scheme, a query or a fragment.
func localHref(p string) string {
	if p == "" || strings.ContainsAny(p, "\\\x00") || schemeRE.MatchString(p) ||
		strings.HasPrefix(p, "/") || filepath.IsAbs(p) {
		return ""
	}
	var parts []string
	for _, el := range strings.Split(p, "/") {
		switch el {
		case "..":
			return ""
		case "", ".":
			continue
		}
		parts = append(parts, strings.ReplaceAll(url.PathEscape(el), ":", "%3A"))
	}
	if len(parts) == 0 {
		return ""
	}
	return path.Join(parts...)
}

// localPageHref is the link to page inside the folder dir (relative), or "" when dir is not
// a local path.
func localPageHref(dir, page string) string {
	if localHref(dir) == "" {
		return ""
	}
	return localHref(dir + "/" + page)
}

// urlUserRE matches a URL's scheme and user information ("https://key:secret@").
var urlUserRE = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)[^/@\s'"]+@`)

// redactText replaces the user information of every URL in s with REDACTED, so a command
// line or an error message that quotes an endpoint with credentials shows none of them.
func redactText(s string) string {
	if !strings.Contains(s, "@") {
		return s
	}
	return urlUserRE.ReplaceAllString(s, "${1}REDACTED@")
}
