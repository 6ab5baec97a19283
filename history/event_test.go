package history

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestEncodeDecodeRoundTrip(t *testing.T) {
	in := []Event{
		{ID: 1, Invoke: time.Millisecond, Complete: 2 * time.Millisecond, Writer: "a", Kind: CAS, Key: "k",
			Term: 5, Token: "etag", Seq: 3, Ops: []int64{1, 2}, Outcome: Ambiguous, Err: "boom", Status: 503,
			Code: "SlowDown", Detail: "d"},
		{ID: 2, Kind: FaultStart, Detail: "partition a", Outcome: OK},
	}
	var buf bytes.Buffer
	if err := Encode(&buf, in); err != nil {
		t.Fatal(err)
	}
	out, err := Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(in) {
		t.Fatalf("got %d events, want %d", len(out), len(in))
	}
	for i := range in {
		if out[i].String() != in[i].String() || out[i].Token != in[i].Token || len(out[i].Ops) != len(in[i].Ops) ||
			out[i].Status != in[i].Status || out[i].Complete != in[i].Complete {
			t.Fatalf("event %d: got %+v, want %+v", i, out[i], in[i])
		}
	}
}

func TestDecodeRejectsUnknownFieldWithLine(t *testing.T) {
	_, err := Decode(strings.NewReader("{\"id\":1,\"kind\":\"op\"}\n{\"id\":2,\"bogus\":1}\n"))
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("got %v, want an error naming line 2", err)
	}
}

func TestRecorderConcurrentUniqueIDs(t *testing.T) {
	r := NewRecorder()
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				s := r.Begin(Event{Kind: StorePut, Writer: "w"})
				s.End(OK, nil)
			}
		}()
	}
	wg.Wait()
	ev := r.Events()
	if len(ev) != 4000 {
		t.Fatalf("got %d events, want 4000", len(ev))
	}
	seen := map[int64]bool{}
	for i, e := range ev {
		if seen[e.ID] {
			t.Fatalf("duplicate id %d", e.ID)
		}
		seen[e.ID] = true
		if e.Complete < e.Invoke {
			t.Fatalf("event %v completes before it is invoked", e)
		}
		if i > 0 && ev[i-1].Invoke > e.Invoke {
			t.Fatalf("events not ordered by invoke time at %d", i)
		}
	}
}

func TestRecordPanicsOnReversedTimes(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("want a panic for an event completing before its invoke")
		}
	}()
	NewRecorder().Record(Event{Invoke: 2 * time.Second, Complete: time.Second, Kind: Op})
}
