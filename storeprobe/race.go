package storeprobe

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/fencebench/fencebench/store"
)

// Racer is what one racer sent and got.
type Racer struct {
	// Nonce is the token the racer's body carries.
	Nonce string
	// ETag is the ETag of a 2xx answer.
	ETag string
	// Err is the racer's error; nil for 2xx.
	Err error
}

// Race runs op once per client, all released at the same instant, each with a body carrying
// its own nonce ("fencebench-<origin> <tag> racer=<i> nonce=<nonce>").
func Race(clients []store.Store, origin, tag string, op func(s store.Store, body []byte) (string, error)) []Racer {
	out := make([]Racer, len(clients))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, s := range clients {
		out[i].Nonce = Nonce()
		b := fmt.Appendf(nil, "fencebench-%s %s racer=%d nonce=%s", origin, tag, i, out[i].Nonce)
		wg.Go(func() {
			<-start
			out[i].ETag, out[i].Err = op(s, b)
		})
	}
	close(start)
	wg.Wait()
	return out
}

// Answer is the class of a racer's answer.
type Answer int

// The answer classes.
const (
	// Won: 2xx.
	Won Answer = iota
	// Refused412: 412 Precondition Failed.
	Refused412
	// Refused409: 409 Conflict.
	Refused409
	// NoAnswer: the call got no response; it may or may not have taken effect.
	NoAnswer
	// Unexpected: any other answer.
	Unexpected
)

// Classify returns the class of a racer's error.
func Classify(err error) Answer {
	switch {
	case err == nil:
		return Won
	case errors.Is(err, store.ErrPreconditionFailed):
		return Refused412
	case errors.Is(err, store.ErrConflict):
		return Refused409
	case errors.Is(err, store.ErrAmbiguous):
		return NoAnswer
	default:
		return Unexpected
	}
}

// Judgement is the verdict on one race, given what a GET after it returned.
type Judgement struct {
	// Wins and NoAnswer are the indexes of the racers that got 2xx and no answer.
	Wins, NoAnswer []int
	// Multiple describes more than one 2xx ("2 of 8 racers got 2xx (ETags ...): the
	// condition is not atomic"); "" when at most one racer won.
	Multiple string
	// Holder is the racer whose nonce the object holds, -1 when none.
	Holder int
	// Held describes a GET that does not return the winner's nonce; "" when it does.
	Held string
}

// Violation is the first thing the race got wrong, "" when nothing.
func (j Judgement) Violation() string { return cmp.Or(j.Multiple, j.Held) }

// Winners returns the racers that got 2xx and, when there is more than one, the sentence
// that says so.
func Winners(rs []Racer) (wins []int, multiple string) {
	for i, r := range rs {
		if r.Err == nil {
			wins = append(wins, i)
		}
	}
	if len(wins) > 1 {
		multiple = fmt.Sprintf("%d of %d racers got 2xx (ETags %s): the condition is not atomic", len(wins), len(rs), etagsOf(rs, wins))
	}
	return wins, multiple
}

// Judge judges a race whose GET afterwards returned body.
func Judge(rs []Racer, body []byte) Judgement {
	var j Judgement
	j.Wins, j.Multiple = Winners(rs)
	for i, r := range rs {
		if Classify(r.Err) == NoAnswer {
			j.NoAnswer = append(j.NoAnswer, i)
		}
	}
	j.Holder = -1
	for i, r := range rs {
		if bytes.Contains(body, []byte("nonce="+r.Nonce)) {
			j.Holder = i
		}
	}
	switch {
	case len(j.Wins) == 1 && j.Holder != j.Wins[0]:
		j.Held = fmt.Sprintf("racer %d got 2xx, but GET returns %s: the acknowledged write is not the one that holds", j.Wins[0], describeHolder(j.Holder))
	case len(j.Wins) == 0 && len(j.NoAnswer) == 0:
		j.Held = fmt.Sprintf("no racer got 2xx (GET returns %s)", describeHolder(j.Holder))
	case len(j.Wins) == 0 && !slices.Contains(j.NoAnswer, j.Holder):
		j.Held = fmt.Sprintf("no racer got 2xx and GET returns %s, not one of the racers without an answer", describeHolder(j.Holder))
	}
	return j
}

func describeHolder(i int) string {
	if i < 0 {
		return "no racer's nonce"
	}
	return fmt.Sprintf("racer %d's nonce", i)
}

func etagsOf(rs []Racer, idx []int) string {
	var s []string
	for _, i := range idx {
		s = append(s, rs[i].ETag)
	}
	return strings.Join(s, ", ")
}

// Nonce returns a fresh random token.
func Nonce() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
