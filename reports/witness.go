package reports

import (
	"fmt"
	"time"

	"github.com/fencebench/fencebench/checker"
)

// witnessView is a linearizability witness as the pages show it.
type witnessView struct {
	Key     string         `json:"key,omitempty"`
	Initial string         `json:"initial"`
	Why     string         `json:"why"`
	Of      int            `json:"of"`
	Minimal bool           `json:"minimal"`
	Ops     []witnessOpRow `json:"ops"`
}

type witnessOpRow struct {
	N        int    `json:"n"`
	ID       int64  `json:"id"`
	Client   string `json:"client"`
	Invoke   string `json:"invoke"`
	Complete string `json:"complete"`
	Request  string `json:"request"`
	Answer   string `json:"answer"`
	ETag     string `json:"etag,omitempty"`
	Value    string `json:"value,omitempty"`
}

func toWitnessView(w *checker.Witness) *witnessView {
	if w == nil {
		return nil
	}
	v := &witnessView{Key: w.Key, Initial: w.Initial, Why: w.Why, Of: w.Of, Minimal: w.Minimal}
	at := func(d time.Duration) string { return fmt.Sprintf("%.6fs", d.Seconds()) }
	for _, o := range w.Ops {
		done := at(o.Complete)
		if o.Pending {
			done = "no answer"
		}
		v.Ops = append(v.Ops, witnessOpRow{N: o.N, ID: o.ID, Client: o.Client, Invoke: at(o.Invoke), Complete: done,
			Request: o.Request, Answer: o.Answer, ETag: o.ETag, Value: o.Value})
	}
	return v
}
