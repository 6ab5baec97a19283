package explore

import (
	"cmp"
	"fmt"
	"maps"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/scenarios"
)

// Features are what one run reached, as guided exploration counts coverage. Each is a short
// string; two runs reached the same thing when they share it:
//
//   - "rule:K/P/R": a request rule of kind K fired on a writer of role R while it was in
//     protocol phase P (a claim, a sync, a hydration, ...);
//   - "net:K/P": a network, process or store fault of kind K was open while a phase P ran;
//   - "pair:K1>K2/P": two different request rules fired on one writer within one phase, K1
//     first (an upload and its read-back both failing);
//   - "seq:A>B/S": protocol event B (kind and outcome) came right after A, by the same writer
//     (S "self") or another ("other"): orderings of claims, syncs, fences, restores and faults;
//   - "fail:C/P": a store call C of a writer failed while it was in phase P (a verify or a
//     read-back whose own read fails);
//   - "depth:N": some writer synced at least N times (N a power of two): long histories;
//   - "why:K/O:R": a protocol step of kind K (a claim, a CAS, a promotion, a transfer, a
//     fence, ...) ended with outcome O for reason R, the step's error with its keys, names
//     and numbers taken out ("fence claim fenced: taken over mid-claim by allocation #"): the
//     branches the protocol took, so a schedule that first makes a claim lose its key to a
//     twin, or a verify find the key moved, is kept and mutated further.
//
// Roles are "primary" (declared primary), "standby" (declared standby), "twin" (promoted at
// a term another writer held), "target" (of a relocation) and "restarted" (a new
// incarnation); a writer's role is the last one the schedule gave it.
func Features(sc *scenarios.Scenario, events []history.Event, ledger []history.LedgerEntry) []string {
	set := map[string]bool{}
	role := roles(sc)
	names := map[string]bool{}
	for _, id := range ids(sc) {
		names[id] = true
	}
	var spans []span
	for _, e := range events {
		if p := phaseOf(e); p != "" {
			spans = append(spans, span{e.Writer, p, e.Invoke, max(e.Complete, e.Invoke)})
		}
	}
	phasesAt := func(w string, t time.Duration) []string {
		var out []string
		for _, s := range spans {
			if s.writer == w && s.from <= t && t <= s.to && !slices.Contains(out, s.phase) {
				out = append(out, s.phase)
			}
		}
		return out
	}
	rules, opened := map[string]string{}, map[string]string{}
	for _, st := range sc.Steps {
		switch k := FaultKind(st); {
		case k == "":
		case st.Action == scenarios.HTTP:
			rules[st.FaultName()] = k + ":" + strings.ToUpper(cmp.Or(st.Params.Rule.Method, "any"))
		default:
			opened[st.FaultName()] = k
		}
	}
	// Request rules that fired, by writer, in arrival order.
	last := map[string]history.LedgerEntry{}
	for _, l := range ledger {
		k, ok := rules[l.Rule]
		if !ok || l.Rule == "" {
			continue
		}
		ps := phasesAt(l.Writer, l.Time)
		if len(ps) == 0 {
			ps = []string{"idle"}
		}
		for _, p := range ps {
			set[fmt.Sprintf("rule:%s/%s/%s", k, p, role(l.Writer))] = true
		}
		if prev, ok := last[l.Writer]; ok && prev.Rule != l.Rule {
			for _, p := range ps {
				if slices.Contains(phasesAt(l.Writer, prev.Time), p) {
					set[fmt.Sprintf("pair:%s>%s/%s", rules[prev.Rule], k, p)] = true
				}
			}
		}
		last[l.Writer] = l
	}
	var end time.Duration
	for _, e := range events {
		end = max(end, e.Complete, e.Invoke)
	}
	for _, w := range windows(events, opened, end) {
		for _, s := range spans {
			if (w.writer == "" || s.writer == w.writer) && s.from <= w.to && w.from <= s.to {
				set[fmt.Sprintf("net:%s/%s", w.phase, s.phase)] = true
			}
		}
	}
	syncs := map[string]int{}
	prev, prevWriter := "", ""
	for _, e := range events {
		switch {
		case e.Kind == history.Sync && e.Outcome == history.OK:
			syncs[e.Writer]++
		case e.Kind.StoreCall() && e.Outcome != history.OK:
			for _, p := range phasesAt(e.Writer, e.Invoke) {
				set[fmt.Sprintf("fail:%s/%s", e.Kind, p)] = true
			}
		case e.Err != "" && e.Kind != history.Op:
			set[fmt.Sprintf("why:%s/%s:%s", e.Kind, e.Outcome, reason(e.Err, names))] = true
		}
		tok, ok := token(e)
		if !ok {
			continue
		}
		if prev != "" {
			who := "other"
			if e.Writer == prevWriter {
				who = "self"
			}
			set[fmt.Sprintf("seq:%s>%s/%s", prev, tok, who)] = true
		}
		prev, prevWriter = tok, e.Writer
	}
	for _, n := range syncs {
		if n > 0 {
			set[fmt.Sprintf("depth:%d", 1<<(bits.Len(uint(n))-1))] = true
		}
	}
	out := make([]string, 0, len(set))
	for f := range set {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

// reasonWords bounds a reason: the words past it name details, not branches.
const reasonWords = 12

// reason is an error's text as a branch of the protocol: object keys and paths are dropped,
// every word holding a digit (a term, a sequence number, an allocation id, a status code) or
// naming one of the schedule's writers becomes "#", and only the first reasonWords words are
// kept, so two runs that took the same branch for different keys, terms or writers give the
// same reason.
func reason(err string, names map[string]bool) string {
	var out []string
	for _, w := range strings.Fields(err) {
		switch {
		case strings.Contains(w, "/"):
			continue
		case strings.ContainsAny(w, "0123456789"), names[strings.Trim(w, ",.;:()'\"")]:
			w = "#"
		}
		if n := len(out); n > 0 && w == "#" && out[n-1] == "#" {
			continue
		}
		if out = append(out, w); len(out) == reasonWords {
			break
		}
	}
	return strings.Join(out, " ")
}

// token is a protocol event as the orderings count it: its kind and outcome; store calls,
// client ops and acks (too many, and each is in a sync's count already) are not tokens.
func token(e history.Event) (string, bool) {
	switch {
	case e.Kind.StoreCall(), e.Kind == history.Op, e.Kind == history.Ack:
		return "", false
	case e.Kind == history.FaultStart || e.Kind == history.FaultEnd:
		return string(e.Kind), true
	}
	return string(e.Kind) + ":" + string(e.Outcome), true
}

// roles names each writer's role in sc (see Features); an unknown writer is "other".
func roles(sc *scenarios.Scenario) func(string) string {
	r := map[string]string{}
	for _, w := range sc.Writers {
		r[w.ID] = w.Role
	}
	for _, st := range sc.Steps {
		switch st.Action {
		case scenarios.Promote:
			if st.Params.Twin {
				r[st.Params.Writer] = "twin"
			}
		case scenarios.Relocate:
			r[st.Params.Target] = "target"
		case scenarios.Restart:
			r[cmp.Or(st.Params.As, st.Params.Writer+"'")] = "restarted"
		}
	}
	return func(w string) string { return cmp.Or(r[w], "other") }
}

// Corpus is the memory of guided exploration: every feature seen so far, and the schedules
// that were first to reach one, which later schedules are mutated from. It is safe for
// concurrent use.
type Corpus struct {
	mu      sync.Mutex
	seen    map[string]int // feature -> how many runs reached it
	entries []*corpusEntry
	mutated int            // schedules drawn as mutations
	classes map[string]int // feature class -> distinct features of it
	firstOf map[string]int // feature class -> 1-based index of the first run reaching one
	runs    int
}

type corpusEntry struct {
	sc     *scenarios.Scenario
	gain   int // features it was first to reach
	picked int // times it was mutated
}

// NewCorpus returns an empty corpus.
func NewCorpus() *Corpus {
	return &Corpus{seen: map[string]int{}, classes: map[string]int{}, firstOf: map[string]int{}}
}

// Add counts a run's features and keeps sc when it reached one no earlier run had; it returns
// how many were new.
func (c *Corpus) Add(sc *scenarios.Scenario, features []string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.runs++
	gain := 0
	for _, f := range features {
		if c.seen[f] == 0 {
			gain++
			class, _, _ := strings.Cut(f, ":")
			c.classes[class]++
			if c.firstOf[class] == 0 {
				c.firstOf[class] = c.runs
			}
		}
		c.seen[f]++
	}
	if gain > 0 {
		c.entries = append(c.entries, &corpusEntry{sc: sc, gain: gain})
	}
	return gain
}

// Classes is how many distinct features of each class the runs reached, and FirstOf the
// 1-based number of the first run (in the order Add saw them) that reached one of a class.
func (c *Corpus) Classes() (classes, firstOf map[string]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.classes), maps.Clone(c.firstOf)
}

// Seen is how many distinct features the runs reached.
func (c *Corpus) Seen() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.seen)
}

// Kept is how many schedules the corpus holds.
func (c *Corpus) Kept() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// Mutated is how many schedules Next drew as mutations.
func (c *Corpus) Mutated() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mutated
}

// GuidedShare is the share of schedules Next draws as mutations once the corpus holds any.
const GuidedShare = 0.5

// Next draws the schedule of seed: a fresh one as Generate draws it, or, about GuidedShare of
// the time once the corpus holds schedules, a mutation of one of them (chosen by how much new
// coverage it brought and how seldom it was mutated). The draw is fixed by seed and the
// corpus's content; the scenario's name says which it is.
func (c *Corpus) Next(seed uint64, o GenOptions) (*scenarios.Scenario, error) {
	r := rand.New(rand.NewPCG(seed, 0x6a09e667f3bcc908))
	c.mu.Lock()
	var parent *corpusEntry
	if len(c.entries) > 0 && r.Float64() < GuidedShare {
		total := 0.0
		w := make([]float64, len(c.entries))
		for i, e := range c.entries {
			w[i] = float64(e.gain) / float64(1+e.picked)
			total += w[i]
		}
		x := r.Float64() * total
		for i, e := range c.entries {
			if x -= w[i]; x <= 0 || i == len(c.entries)-1 {
				parent = e
				break
			}
		}
		parent.picked++
	}
	c.mu.Unlock()
	if parent == nil {
		return Generate(seed, o)
	}
	for try := range 8 {
		if sc, err := Mutate(parent.sc, seed+uint64(try)*0x9e3779b9, o); err == nil {
			c.mu.Lock()
			c.mutated++
			c.mu.Unlock()
			return sc, nil
		}
	}
	return Generate(seed, o)
}

// maxGuidedDuration bounds how long a mutation may stretch a schedule.
const maxGuidedDuration = 12 * time.Second

// Mutate derives a new schedule from sc, drawn from seed: one to three edits, each one of
//
//   - splice: a step of a freshly drawn schedule joins sc's (its writers must be sc's);
//   - pair: a request rule gains a twin on another method of the same kind of file, its
//     window meeting the first one's (an upload and its read-back failing together);
//   - stop-after-sync: a writer that syncs is crashed, paused, or superseded by a standby
//     right after one of its syncs;
//   - shift: a step moves in time, or waits for one more or one fewer of its event;
//   - stretch: the schedule runs twice as long with syncs twice as often, and one step moves
//     into the new time (long histories, many publications);
//
// and the result is loaded back by the strict loader, so it is valid YAML a person could run.
// Expectations a mutation could falsify (the copy that must end serving, the liveness bound)
// are dropped: a mutated schedule is judged by the safety invariants alone.
func Mutate(sc *scenarios.Scenario, seed uint64, o GenOptions) (*scenarios.Scenario, error) {
	o = o.normalized()
	r := rand.New(rand.NewPCG(seed, 0xbb67ae8584caa73b))
	m := clone(sc)
	m.Name = fmt.Sprintf("explore-%d-from-%d", seed, sc.Seed)
	m.Seed = seed
	m.Expect.Serving, m.Expect.MaxTimeToFence, m.Expect.MaxTimeToAck = "", 0, 0
	m.Expect.Fenced = nil
	var did []string
	for n := 1 + r.IntN(3); len(did) < n; {
		op := mutations[r.IntN(len(mutations))]
		if op.apply(m, r, seed, o) {
			did = append(did, op.name)
		}
		if len(did) == 0 && r.IntN(8) == 0 {
			break
		}
	}
	if len(did) == 0 {
		return nil, fmt.Errorf("explore: no mutation applies to %s", sc.Name)
	}
	for i := range m.Steps {
		m.Steps[i].Index = i
	}
	m.Description = fmt.Sprintf("Guided: %s, mutated (%s). %s", sc.Name, strings.Join(did, ", "), sc.Description)
	out, err := reparse(m)
	if err != nil {
		return nil, err
	}
	if err := o.System.check(out); err != nil {
		return nil, err
	}
	return out, nil
}

type mutation struct {
	name  string
	apply func(m *scenarios.Scenario, r *rand.Rand, seed uint64, o GenOptions) bool
}

var mutations = []mutation{
	{"splice", splice}, {"splice", splice}, {"pair", pairRule}, {"pair", pairRule},
	{"stop-after-sync", stopAfterSync}, {"stop-after-sync", stopAfterSync}, {"shift", shift}, {"stretch", stretch},
	{"script", scriptRules},
}

// ids is every writer id sc declares or restarts.
func ids(sc *scenarios.Scenario) []string {
	var out []string
	for _, w := range sc.Writers {
		out = append(out, w.ID)
	}
	for _, st := range sc.Steps {
		if st.Action == scenarios.Restart {
			out = append(out, cmp.Or(st.Params.As, st.Params.Writer+"'"))
		}
	}
	return out
}

// refers lists the writers a step names.
func refers(st scenarios.Step) []string {
	var out []string
	for _, w := range []string{st.Params.Writer, st.Params.Target, st.Params.From} {
		if w != "" {
			out = append(out, w)
		}
	}
	if st.After != nil {
		out = append(out, st.After.Writer)
	}
	return out
}

func splice(m *scenarios.Scenario, r *rand.Rand, seed uint64, o GenOptions) bool {
	if len(m.Steps) >= maxSteps {
		return false
	}
	donor, err := Generate(seed^0x510e527fade682d1, o)
	if err != nil {
		return false
	}
	have := ids(m)
	var ok []scenarios.Step
	for _, st := range donor.Steps {
		if st.Action == scenarios.Restart || st.Spec().Store && m.Store.Drives == 0 {
			continue
		}
		if !slices.ContainsFunc(refers(st), func(w string) bool { return !slices.Contains(have, w) }) {
			ok = append(ok, st)
		}
	}
	if len(ok) == 0 {
		return false
	}
	st := ok[r.IntN(len(ok))]
	if st.After != nil {
		t := *st.After
		st.After = &t
	}
	rename(&st, m, "s")
	if st.Trigger == scenarios.TriggerAt {
		st.At = min(st.At, m.Duration)
	}
	m.Steps = append(m.Steps, st)
	return true
}

// rename gives a copied step's fault a name no step of m has.
func rename(st *scenarios.Step, m *scenarios.Scenario, tag string) {
	if st.Action != scenarios.HTTP {
		return
	}
	base := st.Params.Rule.Name
	for i := 2; ; i++ {
		name := fmt.Sprintf("%s-%s%d", base, tag, i)
		if !slices.ContainsFunc(m.Steps, func(o scenarios.Step) bool { return o.Action == scenarios.HTTP && o.Params.Rule.Name == name }) {
			st.Params.Rule.Name = name
			return
		}
	}
}

// pairRule gives a request rule a twin on the other side of the same kind of file, armed by
// the same trigger and firing at the first request it matches: an upload's read-back (GET of
// the key an upload rule matches), a read's upload (PUT), a batch delete's verifying read, a
// listing's writes into the prefix it lists. Half the time the writer then crashes within a
// sync interval: before the sync that would have repaired what the two faults left.
func pairRule(m *scenarios.Scenario, r *rand.Rand, _ uint64, _ GenOptions) bool {
	var idx []int
	for i, st := range m.Steps {
		if st.Action == scenarios.HTTP && st.Params.Rule.Action != faults.StripConditions {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 || len(m.Steps)+2 > maxSteps {
		return false
	}
	orig := m.Steps[idx[r.IntN(len(idx))]]
	st := orig
	if st.After != nil {
		t := *st.After
		st.After = &t
	}
	rule := &st.Params.Rule
	listing := strings.HasSuffix(rule.Key, "__")
	switch method := strings.ToUpper(rule.Method); {
	case listing:
		rule.Method, rule.Key = "PUT", rule.Key+"?*"
	case method == "PUT":
		rule.Method = "GET"
	default: // a read, a delete batch, any method: the upload, or the read of the batch's keys
		rule.Method = []string{"PUT", "GET"}[r.IntN(2)]
		if method == "GET" {
			rule.Method = "PUT"
		}
	}
	if rule.Action == faults.FailDeleteKeys || rule.Action == faults.Duplicate && rule.Method == "GET" ||
		rule.Action == faults.Misdirect && rule.Method != "GET" {
		rule.Action, rule.Status, rule.Code = faults.SyntheticStatus, 500, ""
	}
	if rule.Method == "PUT" && rule.Header == "" && rule.Status == 404 {
		// A store answers 404 to an upload only for a precondition on a missing key: the
		// twin of a hidden file's read is a failed upload instead.
		rule.Status, rule.Code = 500, ""
	}
	if rule.Method == "PUT" && rule.Action == faults.DropResponse && r.IntN(2) == 0 {
		rule.Action, rule.Status, rule.Code = faults.SyntheticStatus, 500, ""
	}
	if rule.Method == "GET" {
		rule.Header, rule.Value = "", "" // a read carries no precondition
	}
	rule.Nth, rule.Count = 1, 1+r.IntN(2)
	rename(&st, m, "pair")
	m.Steps = append(m.Steps, st)
	if r.IntN(2) == 0 && slices.Contains(syncers(m), st.Params.Writer) {
		d := time.Duration(r.Int64N(int64(max(m.Traffic.SyncInterval, 10*time.Millisecond)))).Truncate(time.Millisecond)
		crash := scenarios.Step{Trigger: orig.Trigger, At: min(orig.At+d, m.Duration), Action: scenarios.Crash,
			Params: scenarios.Params{Writer: st.Params.Writer}}
		if orig.After != nil {
			t := *orig.After
			t.Delay += d
			crash.After = &t
		}
		m.Steps = append(m.Steps, crash)
	}
	return true
}

// syncers are the writers that hold or will hold a term: the declared primaries, and those a
// step promotes, restarts or makes a relocation's target.
func syncers(m *scenarios.Scenario) []string {
	var out []string
	for _, w := range m.Writers {
		if w.Role == "primary" {
			out = append(out, w.ID)
		}
	}
	for _, st := range m.Steps {
		switch st.Action {
		case scenarios.Promote:
			out = append(out, st.Params.Writer)
		case scenarios.Restart:
			out = append(out, cmp.Or(st.Params.As, st.Params.Writer+"'"))
		case scenarios.Relocate:
			out = append(out, st.Params.Target)
		}
	}
	return out
}

func stopAfterSync(m *scenarios.Scenario, r *rand.Rand, _ uint64, o GenOptions) bool {
	ws := syncers(m)
	if len(ws) == 0 || len(m.Steps) >= maxSteps {
		return false
	}
	w := ws[r.IntN(len(ws))]
	trig := &scenarios.EventTrigger{Writer: w, Event: history.SigSynced, Count: 1 + r.IntN(12)}
	if o.System != nil {
		trig.Event = history.SigAcked // a system's node reports its acks, not its syncs
	}
	st := scenarios.Step{Trigger: scenarios.TriggerAfter, After: trig, Params: scenarios.Params{Writer: w}}
	switch r.IntN(3) {
	case 0:
		st.Action = scenarios.Crash
	case 1:
		st.Action, st.For = scenarios.Pause, time.Duration(50+r.IntN(500))*time.Millisecond
	default:
		var standby []string
		used := syncers(m)
		for _, d := range m.Writers {
			if d.Role == "standby" && !slices.Contains(used, d.ID) {
				standby = append(standby, d.ID)
			}
		}
		if len(standby) == 0 {
			return false
		}
		top := int64(0)
		for _, d := range m.Writers {
			top = max(top, d.Term)
		}
		for _, s := range m.Steps {
			top = max(top, s.Params.Term)
		}
		st.Action = scenarios.Promote
		st.Params = scenarios.Params{Writer: standby[r.IntN(len(standby))], Term: top + 1}
	}
	m.Steps = append(m.Steps, st)
	return true
}

func shift(m *scenarios.Scenario, r *rand.Rand, _ uint64, _ GenOptions) bool {
	if len(m.Steps) == 0 {
		return false
	}
	st := &m.Steps[r.IntN(len(m.Steps))]
	if st.After != nil {
		t := *st.After
		if r.IntN(2) == 0 {
			t.Count = max(1, t.Count+[]int{-1, 1}[r.IntN(2)])
		} else {
			t.Delay = time.Duration(r.IntN(60)) * time.Millisecond
		}
		st.After = &t
		return true
	}
	d := time.Duration(r.IntN(400)-200) * time.Millisecond
	st.At = min(max(0, st.At+d), m.Duration)
	return true
}

func stretch(m *scenarios.Scenario, r *rand.Rand, _ uint64, _ GenOptions) bool {
	if 2*m.Duration > maxGuidedDuration || len(m.Steps) == 0 {
		return false
	}
	m.Duration *= 2
	if m.Traffic.SyncEvery > 2 {
		m.Traffic.SyncEvery /= 2
	}
	if m.Traffic.SyncInterval > 20*time.Millisecond {
		m.Traffic.SyncInterval /= 2
	}
	st := &m.Steps[r.IntN(len(m.Steps))]
	if st.Trigger == scenarios.TriggerAt {
		st.At += m.Duration / 2
	} else if st.After != nil {
		t := *st.After
		t.Count *= 4
		st.After = &t
	}
	return true
}
