package storeprobe

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fencebench/fencebench/store"
)

// Kind names one racing probe.
type Kind struct {
	// ID is the probe's number in the object-store design notes, shared with certify.
	ID string `json:"id"`
	// Name says what races.
	Name string `json:"name"`
}

// The racing probes.
var (
	CreateRace = Kind{ID: "B9", Name: "create race"}
	CASRace    = Kind{ID: "B10", Name: "CAS race"}
)

// DefaultRacers and DefaultKeys are the defaults of [Options]: 16 fresh keys per racer
// count, each raced by 8 and then by 32 writers, which a check-then-act window of a few
// milliseconds does not survive.
var DefaultRacers = []int{8, 32}

// DefaultKeys is the default of [Options.Keys].
const DefaultKeys = 16

// Options configure [Run].
type Options struct {
	// Reader writes the CAS race's starting version of each key and reads every key after
	// its race.
	Reader store.Store
	// NewClient returns a fresh client with its own connections; one per racer.
	NewClient func() (store.Store, error)
	// Prefix is where the races write, one fresh key per race; it ends in "/".
	Prefix string
	// Racers are the racer counts (each at least 2); nil means DefaultRacers.
	Racers []int
	// Keys is the number of races per racer count; 0 means DefaultKeys.
	Keys int
	// Kinds are the probes to run, in order; nil means CreateRace, then CASRace.
	// [Preflight] adds the sequential probes MissingIfMatch and ReadAfterCAS before them.
	Kinds []Kind
	// Origin names the writer in the racers' bodies ("fencebench-<origin> ...").
	Origin string
}

// Result is what one racing probe found.
type Result struct {
	Kind
	// Racers are the racer counts raced, Races the number of races judged; a sequential
	// probe races nothing (Racers is nil) and Races counts its keys.
	Racers []int `json:"racers"`
	Races  int   `json:"races"`
	// Wins, Refused and NoAnswer count the racers' answers over every race: 2xx, 412 or
	// 409, and no response.
	Wins     int `json:"wins"`
	Refused  int `json:"refused"`
	NoAnswer int `json:"no_answer"`
	// Duration is how long the probe took.
	Duration time.Duration `json:"duration"`
	// Witness describes the first race the store got wrong: the probe, the racer count, the
	// key and what happened; "" when every race had exactly one winner.
	Witness string `json:"witness,omitempty"`
	// Cut says, when ctx's deadline left too little time to race every key, for which racer
	// counts the probe raced fewer ("N=32: 3 of 16 keys"); "" when it raced them all.
	Cut string `json:"cut,omitempty"`
}

// Unsafe reports whether the store failed the probe.
func (r Result) Unsafe() bool { return r.Witness != "" }

// Run runs the probes of o.Kinds; each stops at its first violating race,
// and a failed probe skips the ones after it. It returns an error, with the results so far,
// when a race could not be judged: a configuration problem, the reader's own calls failing
// (the GET after a race included), or ctx ending.
//
// When ctx has a deadline, each racer count of each racing probe still to run gets an equal
// share of most of the time left, and stops starting new keys when its share is spent (after
// at least one race): a slow store is judged on the races it finished, said in Result.Cut,
// rather than not at all.
func Run(ctx context.Context, o Options) ([]Result, error) {
	if o.Racers == nil {
		o.Racers = DefaultRacers
	}
	if o.Keys == 0 {
		o.Keys = DefaultKeys
	}
	if slices.ContainsFunc(o.Racers, func(n int) bool { return n < 2 }) || o.Keys < 1 {
		return nil, fmt.Errorf("storeprobe: want racer counts of at least 2 and at least 1 key, got %v and %d", o.Racers, o.Keys)
	}
	var out []Result
	if o.Kinds == nil {
		o.Kinds = []Kind{CreateRace, CASRace}
	}
	racing := 0 // racing probes still to run
	for _, k := range o.Kinds {
		if _, seq := sequentialChecks[k]; !seq {
			racing++
		}
	}
	for _, k := range o.Kinds {
		res, err := o.probe(ctx, k, racing)
		if _, seq := sequentialChecks[k]; !seq {
			racing--
		}
		out = append(out, res)
		if err != nil || res.Unsafe() {
			return out, err
		}
	}
	return out, nil
}

// probe runs one probe; racing is the number of racing probes still to run, this one included.
func (o Options) probe(ctx context.Context, k Kind, racing int) (res Result, err error) {
	if check, ok := sequentialChecks[k]; ok {
		return o.sequential(ctx, k, check)
	}
	res = Result{Kind: k, Racers: o.Racers}
	start := time.Now()
	defer func() { res.Duration = time.Since(start) }()
	var cut []string
	defer func() { res.Cut = strings.Join(cut, ", ") }()
	for ri, n := range o.Racers {
		stop, budgeted := DeadlineShare(ctx, racing*len(o.Racers)-ri, raceShare)
		clients := make([]store.Store, n)
		for i := range clients {
			s, err := o.NewClient()
			if err != nil {
				return res, fmt.Errorf("storeprobe: store client: %w", err)
			}
			clients[i] = s
		}
		for i := 0; i < o.Keys; i++ {
			if i > 0 && budgeted && time.Now().After(stop) {
				cut = append(cut, fmt.Sprintf("N=%d: %d of %d keys", n, i, o.Keys))
				break
			}
			key := fmt.Sprintf("%s%s-n%d-k%d-%s", o.Prefix, k.ID, n, i, Nonce())
			witness, err := o.race(ctx, k, clients, key, &res)
			if err != nil {
				return res, err
			}
			if witness != "" {
				res.Witness = fmt.Sprintf("%s %s: N=%d key %s: %s", k.ID, k.Name, n, key, witness)
				return res, nil
			}
		}
	}
	return res, nil
}

// raceShare is the part of the time to ctx's deadline that the racer counts still to run may
// spend starting new keys; the rest is left for the races in flight and their judging.
const raceShare = 0.6

// DeadlineShare is when the first of left equal parts of share (0 to 1) of the time from now
// to ctx's deadline ends: the moment a racer count, with left racer counts (itself included)
// still to run, stops starting new keys. ok is false when ctx has no deadline or left < 1.
func DeadlineShare(ctx context.Context, left int, share float64) (stop time.Time, ok bool) {
	dl, has := ctx.Deadline()
	if !has || left < 1 {
		return time.Time{}, false
	}
	return time.Now().Add(time.Duration(float64(time.Until(dl)) * share / float64(left))), true
}

// race runs and judges one race on key; it returns what the store got wrong, "" if nothing.
func (o Options) race(ctx context.Context, k Kind, clients []store.Store, key string, res *Result) (string, error) {
	var e0 string
	if k == CASRace {
		var err error
		if e0, err = o.Reader.Put(ctx, key, []byte("fencebench-"+o.Origin+" E0")); err != nil {
			return "", fmt.Errorf("storeprobe: PUT the starting version of %s: %w", key, err)
		}
	}
	rs := Race(clients, o.Origin, k.ID, func(s store.Store, b []byte) (string, error) {
		if k == CASRace {
			return s.PutIfMatch(ctx, key, b, e0)
		}
		return s.PutIfAbsent(ctx, key, b)
	})
	res.Races++
	unexpected := ""
	for i, r := range rs {
		if res.add(r.Err) != Unexpected {
			continue
		}
		if errors.Is(r.Err, store.ErrConfig) || ctx.Err() != nil {
			return "", fmt.Errorf("storeprobe: %s racer %d on %s: %w", k.ID, i, key, r.Err)
		}
		unexpected = cmp.Or(unexpected, fmt.Sprintf("racer %d answered %v, want 2xx, 412 or 409", i, r.Err))
	}
	if _, multiple := Winners(rs); multiple != "" {
		return multiple, nil
	}
	if unexpected != "" {
		return unexpected, nil
	}
	obj, err := o.Reader.Get(ctx, key)
	if err != nil {
		return "", fmt.Errorf("storeprobe: GET %s after the race: %w", key, err)
	}
	return Judge(rs, obj.Body).Violation(), nil
}

// add counts the class of an answer's error in r and returns it.
func (r *Result) add(err error) Answer {
	a := Classify(err)
	switch a {
	case Won:
		r.Wins++
	case Refused412, Refused409:
		r.Refused++
	case NoAnswer:
		r.NoAnswer++
	}
	return a
}
