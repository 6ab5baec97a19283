package checker

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/fencebench/fencebench/history"
)

// seqJudge judges the fence chains' sequence numbers: SeqMonotonic.
type seqJudge struct{ *index }

type chainWrite struct {
	seq    int64
	token  string
	pos    int32 // event position; -1 for a write known from the ledger only
	writer string
	// after is the token an applied write of unknown seq presented (If-Match): a claim that
	// re-adopts its key learns its seq only from the read that its lost answer prevented.
	// Its seq is the presented token's plus one.
	after string
}

// SeqMonotonic: per fence key, the accepted writes (ok Claim, CAS, Transfer, Revert, Adopt,
// plus ambiguous ones the ledger shows applied) sorted by seq must form a chain: no two
// distinct writes at one seq (a fork; this includes a recreated key), and no gap unless an
// ambiguous write of unknown outcome at the missing seq may fill it, or the ledger shows the
// store applied the missing write (a claim taken over between its CAS and its verifying read
// records fenced, not the write the store accepted). Ordering by seq rather
// than by time keeps the check independent of response delays. Tokens must not repeat on a
// key, neither in the events nor among the ETags the ledger saw applied conditional PUTs
// return.
func (x *seqJudge) seqMonotonic() InvariantResult {
	r := newResult(SeqMonotonic)
	chains, excused := x.seqChains()
	var v seqViolations
	hops := x.ledgerHops()
	keys := make([]string, 0, len(chains))
	for k := range chains {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	writes := 0
	for _, k := range keys {
		ch := chains[k]
		writes += len(ch)
		// Stable: writes at one seq stay in history order.
		sort.SliceStable(ch, func(i, j int) bool { return ch[i].seq < ch[j].seq })
		ch = dedupeChain(ch)
		v.chain(k, ch, excuseLedgerHops(k, ch, hops, excused[k]))
	}
	v.ledgerETags(x.in.Ledger)
	r.Violations = v.n
	if r.Violations == 0 {
		r.Explanation = fmt.Sprintf("%s on %s form gap-free chains with distinct tokens",
			plural(writes, "accepted fence write", "accepted fence writes"), plural(len(keys), "key", "keys"))
		return r
	}
	r.Status = Fail
	r.Explanation = fmt.Sprintf("%s of the per-key seq chain", plural(r.Violations, "violation", "violations"))
	r.Narrative = v.msg
	r.Counterexample = x.idsOf(v.a, v.b)
	r.LedgerEntries = v.ledger
	return r
}

// seqChains collects the accepted writes per fence key, and the seqs of ambiguous writes
// whose outcome stays unknown (they may fill a gap).
func (x *seqJudge) seqChains() (map[string][]chainWrite, map[string]map[int64]bool) {
	chains := map[string][]chainWrite{}
	excused := map[string]map[int64]bool{}
	var ledgerByID map[int64]int
	for _, i := range x.order {
		e := &x.ev[i]
		if !writesKey(e.Kind) || e.Key == "" {
			continue
		}
		switch e.Outcome {
		case history.OK:
			chains[e.Key] = append(chains[e.Key], chainWrite{seq: e.Seq, token: normToken(e.Token), pos: i, writer: e.Writer})
		case history.Ambiguous:
			res := x.resolved[i]
			switch res.Outcome {
			case ResolvedApplied:
				if e.Kind == history.Claim && !x.actedOnAfter(e.Writer, e.Key, e.Invoke) {
					// A claim that never completed and after which its writer never acted on
					// the key (it learned of a higher term and withdrew, or was fenced): its
					// create may have landed on a key a sweep had just removed, which ends
					// nothing and forks nothing anyone acts on.
					continue
				}
				if ledgerByID == nil {
					ledgerByID = make(map[int64]int, len(x.in.Ledger))
					for j := range x.in.Ledger {
						ledgerByID[x.in.Ledger[j].ID] = j
					}
				}
				tok, after := "", ""
				for _, id := range res.Ledger {
					if l := &x.in.Ledger[ledgerByID[id]]; l.Applied() {
						tok, after = normToken(l.ETag), normToken(l.IfMatch)
					}
				}
				if e.Seq != 0 || after == "" {
					after = ""
				}
				chains[e.Key] = append(chains[e.Key], chainWrite{seq: e.Seq, token: tok, pos: i, writer: e.Writer, after: after})
			case ResolvedUnknown:
				if excused[e.Key] == nil {
					excused[e.Key] = map[int64]bool{}
				}
				excused[e.Key][e.Seq] = true
			}
		}
	}
	var hops map[[2]string][]string
	for k, ch := range chains {
		if slices.ContainsFunc(ch, func(w chainWrite) bool { return w.after != "" }) && hops == nil {
			hops = x.ledgerHops()
		}
		placeAfter(ch, k, hops)
		chains[k] = ch
	}
	return chains, excused
}

// actedOnAfter reports whether w completed a write or an ack on key after t: a claim,
// CAS, transfer, revert or adoption that succeeded, or an acknowledgement.
func (x *seqJudge) actedOnAfter(w, key string, t time.Duration) bool {
	for i := range x.ev {
		e := &x.ev[i]
		if e.Writer == w && e.Key == key && e.Invoke > t && e.Outcome == history.OK &&
			(writesKey(e.Kind) || e.Kind == history.Ack) {
			return true
		}
	}
	return false
}

// placeAfter gives each write known only by the token it presented the seq that follows that
// token's write on key. A token no event reports (a step whose write the store applied,
// then failed on its verifying read, records no write) is placed through the ledger: the
// applied PUT If-Match on key (hops) that returned it follows the write whose token it
// presented.
func placeAfter(ch []chainWrite, key string, hops map[[2]string][]string) {
	seqOf := map[string]int64{}
	for _, w := range ch {
		if w.token != "" && w.after == "" {
			seqOf[w.token] = w.seq
		}
	}
	prev := map[string]string{} // an applied If-Match PUT's ETag -> the token it presented
	for k, etags := range hops {
		if k[0] != key {
			continue
		}
		for _, t := range etags {
			prev[t] = k[1]
		}
	}
	for changed := true; changed; {
		changed = false
		for i := range ch {
			if w := &ch[i]; w.after != "" {
				if s, ok := seqThrough(w.after, seqOf, prev); ok {
					w.seq, w.after = s+1, ""
					if w.token != "" {
						seqOf[w.token] = w.seq
					}
					changed = true
				}
			}
		}
	}
}

// seqThrough is the seq of the write that returned tok: known from seqOf, or one past the
// write whose token the ledger's applied PUT that returned tok presented (prev), followed
// back as far as the ledger goes.
func seqThrough(tok string, seqOf map[string]int64, prev map[string]string) (int64, bool) {
	hops := int64(0)
	for range len(prev) + 1 {
		if s, ok := seqOf[tok]; ok {
			return s + hops, true
		}
		p, ok := prev[tok]
		if !ok {
			return 0, false
		}
		tok, hops = p, hops+1
	}
	return 0, false
}

// ledgerHops maps (key, token) to the ETags of the ledger's applied PUT If-Match on key
// that presented token.
func (x *seqJudge) ledgerHops() map[[2]string][]string {
	next := map[[2]string][]string{}
	for i := range x.in.Ledger {
		l := &x.in.Ledger[i]
		if l.Method == "PUT" && l.IfMatch != "" && l.ETag != "" && l.Applied() && isFenceKey(l.Key) {
			k := [2]string{l.Key, normToken(l.IfMatch)}
			next[k] = append(next[k], normToken(l.ETag))
		}
	}
	return next
}

// excuseLedgerHops excuses the seqs of a gap that the ledger shows accepted though no event
// reports them: a claim whose arbitration CAS the store applied and which was then taken
// over before its verifying read records fenced, not its write. A gap from seq s (token t)
// to seq s+k (token u) is filled when, from t, exactly one applied PUT If-Match presented
// each token in turn and the k-th of them answered u.
func excuseLedgerHops(key string, ch []chainWrite, hops map[[2]string][]string, excused map[int64]bool) map[int64]bool {
	for i := 1; i < len(ch); i++ {
		prev, w := ch[i-1], ch[i]
		gap := w.seq - prev.seq
		if gap < 2 || prev.token == "" || w.token == "" {
			continue
		}
		tok := prev.token
		for h := int64(0); h < gap && tok != ""; h++ {
			if n := hops[[2]string{key, tok}]; len(n) == 1 {
				tok = n[0]
			} else {
				tok = ""
			}
		}
		if tok != w.token {
			continue
		}
		if excused == nil {
			excused = map[int64]bool{}
		}
		for s := prev.seq + 1; s < w.seq; s++ {
			excused[s] = true
		}
	}
	return excused
}

// dedupeChain drops repeats of one write in a chain sorted by seq (the same writer recording
// the same seq twice, e.g. an ambiguous attempt later adopted by identity).
func dedupeChain(ch []chainWrite) []chainWrite {
	out := ch[:0]
	for _, w := range ch {
		if n := len(out); n > 0 && out[n-1].seq == w.seq && out[n-1].writer == w.writer &&
			(out[n-1].token == w.token || out[n-1].token == "" || w.token == "") {
			if out[n-1].token == "" {
				out[n-1].token = w.token
			}
			continue
		}
		out = append(out, w)
	}
	return out
}

// seqViolations counts the violations of SeqMonotonic and keeps the first.
type seqViolations struct {
	n      int
	a, b   int32
	msg    string
	ledger []int64
}

func (v *seqViolations) add(a, b int32, msg string) {
	v.n++
	if v.msg == "" {
		v.a, v.b, v.msg = a, b, msg
	}
}

// chain checks the sorted chain of key k: no fork, no gap that no write of unknown outcome
// may fill, no repeated token.
func (v *seqViolations) chain(k string, ch []chainWrite, excused map[int64]bool) {
	tokens := map[string]int{}
	for i, w := range ch {
		if i > 0 {
			prev := ch[i-1]
			switch {
			case w.seq == prev.seq:
				v.add(prev.pos, w.pos, fmt.Sprintf("%s has two accepted writes at seq %d: by %s and by %s",
					k, w.seq, prev.writer, w.writer))
			case w.seq > prev.seq+1:
				for s := prev.seq + 1; s < w.seq; s++ {
					if !excused[s] {
						v.add(prev.pos, w.pos, fmt.Sprintf("%s jumps from seq %d (by %s) to seq %d (by %s): "+
							"seq %d was never accepted", k, prev.seq, prev.writer, w.seq, w.writer, s))
						break
					}
				}
			}
		}
		if w.token == "" {
			continue
		}
		if j, dup := tokens[w.token]; dup && ch[j].seq != w.seq {
			v.add(ch[j].pos, w.pos, fmt.Sprintf("%s returned token %s twice: at seq %d (by %s) and at seq %d (by %s)",
				k, w.token, ch[j].seq, ch[j].writer, w.seq, w.writer))
		} else if !dup {
			tokens[w.token] = i
		}
	}
}

// ledgerETags is the ledger's view: two applied conditional PUTs on one key must not yield
// one ETag.
func (v *seqViolations) ledgerETags(ledger []history.LedgerEntry) {
	etags := map[[2]string]int64{}
	for i := range ledger {
		l := &ledger[i]
		if l.Method != "PUT" || !isFenceKey(l.Key) || !l.Applied() || l.ETag == "" ||
			(l.IfMatch == "" && l.IfNoneMatch == "") {
			continue
		}
		k := [2]string{l.Key, normToken(l.ETag)}
		if prev, dup := etags[k]; dup && !withdrawnCreate(ledger, i) {
			v.n++
			if v.msg == "" && v.ledger == nil {
				v.ledger = []int64{prev, l.ID}
				v.msg = fmt.Sprintf("the store returned ETag %s twice on %s (ledger entries %d and %d): "+
					"an old token became valid again", k[1], l.Key, prev, l.ID)
			}
			continue
		}
		etags[k] = l.ID
	}
}

// withdrawnCreate reports whether ledger entry i is a create whose revived token nobody used:
// no applied write of the key came after the create answered, and either the key was deleted
// after it or the create was held in flight across the deletion before it. The deletion after
// is by its own writer (a copy re-creating its sealed key with the same body just after a
// higher term swept it, then finding the higher term and withdrawing) or by a sweep (the
// higher term re-verifying its claim removes the re-created key first; a sweep racing the
// create may also have come first). Without one, the create must have arrived before the sweep
// that removed the key, and landed after it (a fault path held it): its writer sent it while
// the key still stood, and a writer that goes on to use the revived token makes an applied
// write of the key, which is the violation. A create sent once the key was gone (a
// re-adoption re-creating what it found missing: recreate-on-404) revives the token however
// nobody uses it.
func withdrawnCreate(ledger []history.LedgerEntry, i int) bool {
	c := &ledger[i]
	if c.IfNoneMatch != "*" {
		return false
	}
	for j := i + 1; j < len(ledger); j++ {
		l := &ledger[j]
		// A request that arrived while the create was in the store may have been applied
		// before it: only what arrived after the create's answer comes after it for sure.
		if !l.Applied() || l.Time < c.Done {
			continue
		}
		switch {
		case l.Method == "PUT" && l.Key == c.Key:
			return false
		case l.Method == "DELETE" && l.Key == c.Key, l.Method == "POST" && slices.Contains(l.Keys, c.Key):
			return true
		}
	}
	// Nothing deleted the key after: the create is excused only if it was on its way before the
	// sweep that removed the key arrived. Its writer could not have known; a create sent after
	// the key was gone (a re-adoption that re-creates what it found missing) is the ABA.
	for j := range ledger {
		l := &ledger[j]
		if l.Applied() && l.Time > c.Time && l.Time < c.Done &&
			(l.Method == "DELETE" && l.Key == c.Key || l.Method == "POST" && slices.Contains(l.Keys, c.Key)) {
			return true
		}
	}
	return false
}
