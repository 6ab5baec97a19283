package reports

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/fencebench/fencebench/store"
)

// trendCert is one certification of a store found beside the runs: `fencebench certify`
// writes its certify.json into a folder of the results folder.
type trendCert struct {
	ID      string `json:"id"`
	Href    string `json:"href"`
	Store   string `json:"store"`
	Started string `json:"started"`
	Verdict badge  `json:"verdict"`
	// Changed marks a verdict that differs from the same store's previous certification.
	Changed bool   `json:"changed,omitempty"`
	Was     string `json:"was,omitempty"`
}

// certFile is the part of a certification report the trend page reads.
type certFile struct {
	Store   store.Info `json:"store"`
	Started time.Time  `json:"started"`
	Verdict string     `json:"verdict"`
}

// readCerts lists the certifications in resultsDir, newest first, each marked when its
// verdict changed from the same store's previous one. An unreadable report is a note.
func readCerts(resultsDir string, entries []os.DirEntry) ([]trendCert, []string) {
	type found struct {
		id string
		f  certFile
	}
	var all []found
	var notes []string
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(resultsDir, e.Name(), "certify.json"))
		if !e.IsDir() || err != nil {
			continue
		}
		var f certFile
		if err := json.Unmarshal(b, &f); err != nil || f.Verdict == "" {
			notes = append(notes, fmt.Sprintf("skipped the certification %s: not a certify.json", e.Name()))
			continue
		}
		all = append(all, found{e.Name(), f})
	}
	slices.SortStableFunc(all, func(a, b found) int {
		return cmp.Or(a.f.Started.Compare(b.f.Started), cmp.Compare(a.id, b.id))
	})
	last := map[string]string{} // store -> its previous verdict, oldest first
	out := make([]trendCert, 0, len(all))
	for _, c := range all {
		name := certStore(c.f.Store)
		tc := trendCert{ID: c.id, Href: url.PathEscape(c.id) + "/certify.html", Store: name, Started: fmtWall(c.f.Started),
			Verdict: certBadge(c.f.Verdict)}
		if prev, ok := last[name]; ok && prev != c.f.Verdict {
			tc.Changed, tc.Was = true, prev
		}
		last[name] = c.f.Verdict
		out = append(out, tc)
	}
	slices.Reverse(out)
	return out, notes
}

func certStore(i store.Info) string {
	s := cmp.Or(i.Server, "store")
	if i.Endpoint != "" {
		s += " at " + i.Endpoint
	}
	if i.Bucket != "" {
		s += ", bucket " + i.Bucket
	}
	return s
}

func certBadge(v string) badge {
	switch v {
	case "certified":
		return badge{Label: v, Class: "pass"}
	case "not certified":
		return badge{Label: v, Class: "fail"}
	}
	return badge{Label: v, Class: "inconclusive"}
}
