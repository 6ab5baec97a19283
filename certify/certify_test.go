package certify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/internal/unsafestore"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/store"
	"github.com/fencebench/fencebench/store/s3store"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func minioEnv(t *testing.T) env.Env { return env.Local{Local: testenv.MinIO(t)} }

func find(t *testing.T, rep *Report, id string, c store.Client) Result {
	t.Helper()
	for _, r := range rep.Results {
		if r.ID == id && r.Client == string(c) {
			return r
		}
	}
	t.Fatalf("no result for %s with %s", id, c)
	return Result{}
}

// TestMinIO certifies the shared MinIO with both clients: every HARD probe passes, every
// INFO probe passes or records, and MinIO's known answers are the recorded ones.
func TestMinIO(t *testing.T) {
	env := minioEnv(t)
	prefix := testenv.Prefix(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var progress []string
	rep, err := Run(ctx, env, Options{Keys: 4, Racers: []int{2, 8, 32}, Prefix: prefix, Cleanup: true,
		Progress: func(r Result) { progress = append(progress, r.ID+"/"+r.Client) }})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text, true); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", text.String())
	if rep.Verdict != Certified {
		t.Fatalf("verdict %s, want certified", rep.Verdict)
	}
	if want := len(Probes()) * len(store.Clients); len(rep.Results) != want || len(progress) != want {
		t.Fatalf("%d results, %d progress calls; want %d", len(rep.Results), len(progress), want)
	}
	for _, r := range rep.Results {
		switch {
		case r.Class == Hard && r.Verdict != Pass:
			t.Errorf("%s %s: HARD probe verdict %s: %s", r.Client, r.ID, r.Verdict, r.Observed)
		case r.Class == Informational && r.Verdict != Pass && r.Verdict != Info:
			t.Errorf("%s %s: INFO probe verdict %s: %s", r.Client, r.ID, r.Verdict, r.Observed)
		}
		if r.Observed == "" || r.Title == "" || r.Asserts == "" {
			t.Errorf("%s %s: empty observation, title or assertion", r.Client, r.ID)
		}
	}
	for _, c := range store.Clients {
		if got := find(t, rep, "A5", c).Facts["status"]; got != "404" {
			t.Errorf("%s A5: If-Match on a missing key answered %q, want MinIO's 404", c, got)
		}
		if got := find(t, rep, "C14", c); got.Facts["identical_etag"] != "true" || got.Verdict != Info {
			t.Errorf("%s C14: %s %v, want info with identical ETags", c, got.Verdict, got.Facts)
		}
		if got := find(t, rep, "C15", c); got.Facts["aba_exploit"] != "works" || got.Verdict != Info {
			t.Errorf("%s C15: %s %v, want info with the exploit working", c, got.Verdict, got.Facts)
		}
		if got := find(t, rep, "E19", c); got.Facts["honoured"] != "false" || got.Verdict != Info || got.Class != Informational {
			t.Errorf("%s E19: %s %s %v, want INFO/info with If-Match on DELETE ignored", c, got.Class, got.Verdict, got.Facts)
		}
		if got := find(t, rep, "F24", c); got.Verdict != Pass || got.Facts["settled"] != "own nonce found" {
			t.Errorf("%s F24: %s %v", c, got.Verdict, got.Facts)
		}
		if got := find(t, rep, "B11", c); got.Facts["linearizable"] != "true" {
			t.Errorf("%s B11: %v", c, got.Facts)
		}
	}
	// Cleanup removed everything under the prefix.
	if !strings.HasPrefix(rep.Cleanup, "deleted the ") {
		t.Errorf("cleanup: %q", rep.Cleanup)
	}
	s, err := s3store.New(store.ClientMinio, env.Config())
	if err != nil {
		t.Fatal(err)
	}
	if es, err := s.List(ctx, prefix); err != nil || len(es) != 0 {
		t.Fatalf("after the run the prefix holds %d objects (err %v)", len(es), err)
	}
	// The JSON report round-trips.
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.Verdict != Certified || len(back.Results) != len(rep.Results) {
		t.Fatalf("JSON round trip: %v, %+v", err, back.Verdict)
	}
}

// lyingStore turns every conditional write into a plain PUT: the store of a proxy or gateway
// that drops the conditional headers.
type lyingStore struct{ store.Store }

func (l lyingStore) PutIfAbsent(ctx context.Context, key string, body []byte) (string, error) {
	return l.Put(ctx, key, body)
}

func (l lyingStore) PutIfMatch(ctx context.Context, key string, body []byte, _ string) (string, error) {
	return l.Put(ctx, key, body)
}

// TestLyingStoreFails: a store that ignores the conditions fails the certification, and the
// failing HARD probes are named.
func TestLyingStoreFails(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := Run(ctx, minioEnv(t), Options{Clients: []store.Client{store.ClientAWS}, Keys: 2, Racers: []int{2, 8},
		Probes: []string{"a1", "A2", "A3", "A4", "A5", "B9", "B10"}, Prefix: testenv.Prefix(t),
		Wrap: func(_ store.Client, s store.Store) store.Store { return lyingStore{s} }})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != NotCertified {
		t.Fatalf("verdict %s, want not certified", rep.Verdict)
	}
	var failed []string
	for _, r := range rep.HardFailures() {
		failed = append(failed, r.ID)
	}
	for _, id := range []string{"A1", "A2", "A3", "A5", "B9", "B10"} {
		if !slices.Contains(failed, id) {
			t.Errorf("HARD failures %v do not name %s", failed, id)
		}
	}
	if r := find(t, rep, "A4", store.ClientAWS); r.Verdict != Pass {
		t.Errorf("A4 (a create on a fresh key) should still pass: %s %s", r.Verdict, r.Observed)
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"NOT CERTIFIED", "A1 (aws-sdk)", "A2 (aws-sdk)", "B9 (aws-sdk)", "FAIL"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
	t.Logf("\n%s", text.String())
}

// racyStore checks the condition with a GET and then writes unconditionally: check-then-act,
// so racing conditional writes can all "succeed".
type racyStore struct{ store.Store }

func (r racyStore) PutIfAbsent(ctx context.Context, key string, body []byte) (string, error) {
	if _, err := r.Get(ctx, key); err == nil {
		return "", &store.Error{Op: "put-if-absent", Key: key, Kind: store.ErrPreconditionFailed, Status: 412, Code: "PreconditionFailed"}
	} else if !errors.Is(err, store.ErrNotFound) {
		return "", err
	}
	time.Sleep(20 * time.Millisecond)
	return r.Put(ctx, key, body)
}

func (r racyStore) PutIfMatch(ctx context.Context, key string, body []byte, etag string) (string, error) {
	o, err := r.Get(ctx, key)
	if err != nil {
		return "", err
	}
	if o.ETag != store.NormalizeETag(etag) {
		return "", &store.Error{Op: "put-if-match", Key: key, Kind: store.ErrPreconditionFailed, Status: 412, Code: "PreconditionFailed"}
	}
	time.Sleep(20 * time.Millisecond)
	return r.Put(ctx, key, body)
}

// TestRacyStoreFails: a store that honours the conditions one request at a time but checks
// before it acts passes the header probes and fails the race (B9) and the linearizability
// check (B11).
func TestRacyStoreFails(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := Run(ctx, minioEnv(t), Options{Clients: []store.Client{store.ClientMinio}, Keys: 3, Racers: []int{2, 8},
		Probes: []string{"A1", "A2", "B9", "B11"}, Prefix: testenv.Prefix(t),
		Wrap: func(_ store.Client, s store.Store) store.Store { return racyStore{s} }})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	_ = rep.WriteText(&text, false)
	t.Logf("\n%s", text.String())
	if rep.Verdict != NotCertified {
		t.Fatalf("verdict %s, want not certified", rep.Verdict)
	}
	for _, id := range []string{"A1", "A2"} {
		if r := find(t, rep, id, store.ClientMinio); r.Verdict != Pass {
			t.Errorf("%s: %s %s; a check-then-act store honours one request at a time", id, r.Verdict, r.Observed)
		}
	}
	if r := find(t, rep, "B9", store.ClientMinio); r.Verdict != Fail {
		t.Errorf("B9: %s %s, want fail", r.Verdict, r.Observed)
	}
	r := find(t, rep, "B11", store.ClientMinio)
	if r.Verdict != Fail || r.Facts["linearizable"] != "false" {
		t.Errorf("B11: %s %v, want fail and not linearizable", r.Verdict, r.Facts)
	}
	if !slices.ContainsFunc(r.Details, func(d string) bool { return strings.Contains(d, "fork") }) {
		t.Errorf("B11 does not report a fork: %v", r.Details)
	}
}

// TestPrefixMustBeFresh: a prefix that holds someone's object is refused before anything is
// written, and that object is left alone.
func TestPrefixMustBeFresh(t *testing.T) {
	ctx := context.Background()
	env := minioEnv(t)
	prefix := testenv.Prefix(t)
	s := testenv.Store(t, store.ClientMinio, nil)
	e, err := s.Put(ctx, prefix+"theirs", []byte("not ours"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(ctx, env, Options{Prefix: prefix, Cleanup: true})
	if err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Fatalf("err %v, want a refusal", err)
	}
	if es, err := s.List(ctx, prefix); err != nil || len(es) != 1 || es[0].ETag != e {
		t.Fatalf("the prefix now holds %v (err %v)", es, err)
	}
	for _, o := range []Options{{Prefix: "no-slash"}, {Prefix: "p/", Keys: -1}, {Prefix: "p/", Racers: []int{1}},
		{Prefix: "p/", Clients: []store.Client{"curl"}}, {Prefix: "p/", Probes: []string{"Z9"}}} {
		if _, err := Run(ctx, env, o); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
}

// TestChainModel checks, on hand-made histories, the checker's register model as B11 uses it:
// each state's value is the link's value and nonce.
func TestChainModel(t *testing.T) {
	init := checker.RegisterState{Exists: true, ETag: "e0", Value: chainValue(0, "n0")}
	write := func(c int, call, ret int64, ifMatch string, value int, n string, a checker.RegisterAnswer, etag string) checker.RegisterOp {
		return checker.RegisterOp{Client: c, Call: call, Return: ret, Request: checker.RegisterCAS, IfMatch: ifMatch, Answer: a,
			ETag: etag, Value: chainValue(value, n)}
	}
	get := func(c int, call, ret int64, etag string, value int, n string) checker.RegisterOp {
		return checker.RegisterOp{Client: c, Call: call, Return: ret, Request: checker.RegisterGet, Answer: checker.AnswerOK,
			ETag: etag, Value: chainValue(value, n)}
	}
	ok := []checker.RegisterOp{
		write(0, 0, 10, "e0", 1, "a", checker.AnswerOK, "e1"),
		write(1, 1, 11, "e0", 1, "b", checker.AnswerRefused, ""),
		get(1, 12, 13, "e1", 1, "a"),
		write(2, 14, 15, "e1", 2, "c", checker.AnswerUnknown, ""),
		get(0, 16, 17, "e2", 2, "c"),
	}
	if res := checker.CheckRegister(init, ok, time.Second); res != checker.Pass {
		t.Fatalf("linearizable history judged %s", res)
	}
	forked := []checker.RegisterOp{
		write(0, 0, 10, "e0", 1, "a", checker.AnswerOK, "e1"),
		write(1, 1, 11, "e0", 1, "b", checker.AnswerOK, "e2"),
	}
	if res := checker.CheckRegister(init, forked, time.Second); res != checker.Fail {
		t.Fatalf("two CAS wins from one ETag judged %s", res)
	}
	stale := []checker.RegisterOp{
		write(0, 0, 1, "e0", 1, "a", checker.AnswerOK, "e1"),
		get(1, 2, 3, "e0", 0, "n0"),
	}
	if res := checker.CheckRegister(init, stale, time.Second); res != checker.Fail {
		t.Fatalf("a stale read after an acknowledged CAS judged %s", res)
	}
	wrongLink := []checker.RegisterOp{
		write(0, 0, 1, "e0", 1, "a", checker.AnswerOK, "e1"),
		get(1, 2, 3, "e1", 1, "b"),
	}
	if res := checker.CheckRegister(init, wrongLink, time.Second); res != checker.Fail {
		t.Fatalf("a read of a link no acknowledged write stored judged %s", res)
	}
}

// TestHTMLEscapes: the HTML page escapes what the store answered.
func TestHTMLEscapes(t *testing.T) {
	rep := &Report{Store: store.Info{Server: "S3 <b>", Endpoint: "http://x"}, Prefix: "p/", Clients: []string{"minio-go"},
		Results: []Result{{ID: "A1", Class: Hard, Verdict: Fail, Client: "minio-go", Observed: `<script>alert(1)</script>`,
			Details: []string{"<img src=x>"}}}}
	rep.judge()
	var b bytes.Buffer
	if err := rep.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, bad := range []string{"<script>", "<img", "S3 <b>"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page contains %q unescaped", bad)
		}
	}
	if !strings.Contains(page, "NOT CERTIFIED") || !strings.Contains(page, "&lt;script&gt;") {
		t.Errorf("the page lacks the verdict or the escaped observation")
	}
}

// TestInterrupt: a cancelled run returns promptly, and what was cut short is an error, never
// a pass.
func TestInterrupt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	start := time.Now()
	rep, err := Run(ctx, minioEnv(t), Options{Clients: []store.Client{store.ClientMinio}, Keys: 10000,
		Probes: []string{"B9", "B10"}, Prefix: testenv.Prefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("Run took %v after an interrupt at 500ms", d)
	}
	if rep.Verdict != Inconclusive {
		t.Fatalf("verdict %s, want inconclusive", rep.Verdict)
	}
	for _, r := range rep.Results {
		if r.Verdict != Error {
			t.Errorf("%s: %s %s, want error", r.ID, r.Verdict, r.Observed)
		}
	}
}

// TestCheckThenActFrontFails: through an S3 front whose conditional writes are
// check-then-act, with both clients, the one-request-at-a-time probes pass and the races of
// B9 and B10 fail with more than one winner.
func TestCheckThenActFrontFails(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	front, err := unsafestore.Start(testenv.MinIO(t).Config(), 5*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer front.Close()
	prefix := testenv.Prefix(t)
	e, err := env.NewExternal(front.Config(), "check-then-act front", prefix)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(ctx, e, Options{Keys: 3, Racers: []int{8}, Probes: []string{"A1", "A2", "A4", "B9", "B10"}, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != NotCertified || rep.ExitCode() != outcome.ExitFail {
		t.Fatalf("verdict %s, exit %d; want not certified, exit 1", rep.Verdict, rep.ExitCode())
	}
	for _, c := range store.Clients {
		for _, id := range []string{"A1", "A2", "A4"} {
			if r := find(t, rep, id, c); r.Verdict != Pass {
				t.Errorf("%s/%s: %s %s; a check-then-act store honours one request at a time", id, c, r.Verdict, r.Observed)
			}
		}
		for _, id := range []string{"B9", "B10"} {
			if r := find(t, rep, id, c); r.Verdict != Fail || !strings.Contains(r.Observed, "the condition is not atomic") {
				t.Errorf("%s/%s: %s %s; want fail with more than one winner", id, c, r.Verdict, r.Observed)
			}
		}
	}
}
