package scenarios

import (
	"strings"
	"testing"
	"time"
)

const storeStepsDoc = `name: store-steps
duration: 3s
writers:
  - {id: a, role: primary, term: 1}
store: {drives: 4}
steps:
  - after: {writer: a, event: acked, count: 5}
    drive-offline: {drive: 2}
    for: 500ms
  - at: 1s
    drive-offline: {drive: 3}
  - at: 1500ms
    drive-online: {drive: 3}
  - at: 2s
    store-restart: {down: 200ms}
  - at: 2500ms
    drive-slow: {drive: 4, delay: 200ms}
    for: 300ms
`

func TestStoreSteps(t *testing.T) {
	s, err := Parse("s.yaml", []byte(storeStepsDoc), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Store.Drives != 4 {
		t.Fatalf("store.drives = %d, want 4", s.Store.Drives)
	}
	want := []struct {
		a     Action
		drive int
		name  string
	}{{DriveOffline, 2, "drive-offline:drive2@step0"}, {DriveOffline, 3, "drive-offline:drive3@step1"},
		{DriveOnline, 3, "drive-online:drive3@step2"}, {StoreRestart, 0, "store-restart@step3"},
		{DriveSlow, 4, "drive-slow:drive4@step4"}}
	for i, w := range want {
		st := s.Steps[i]
		if st.Action != w.a || st.Params.Drive != w.drive || st.FaultName() != w.name || st.Spec().Layer != StoreLayer {
			t.Errorf("step %d: %s drive %d named %s (layer %s), want %s drive %d named %s",
				i, st.Action, st.Params.Drive, st.FaultName(), st.Spec().Layer, w.a, w.drive, w.name)
		}
	}
	if s.Steps[3].Params.Down != 200*time.Millisecond {
		t.Errorf("store-restart down = %v, want 200ms", s.Steps[3].Params.Down)
	}
	if st := s.Steps[4]; st.Params.Delay != 200*time.Millisecond || st.For != 300*time.Millisecond || !st.Spec().Fault || !st.Spec().Window {
		t.Errorf("drive-slow: delay %v for %v (fault %v, window %v), want 200ms for 300ms, a fault with a window",
			st.Params.Delay, st.For, st.Spec().Fault, st.Spec().Window)
	}
}

func TestStoreStepsRefused(t *testing.T) {
	for _, c := range []struct{ from, to, msg string }{
		{"store: {drives: 4}\n", "", "drive-offline needs an erasure-coded store: declare store.drives"},
		{"drive-offline: {drive: 2}", "drive-offline: {drive: 5}", "no drive 5: the store has drives 1 to 4"},
		{"drive-offline: {drive: 2}", "drive-offline: {writer: a, drive: 2}", "writer"},
		{"drive-offline: {drive: 2}", "drive-offline: {}", "missing: drive-offline needs drive"},
		{"store-restart: {down: 200ms}", "store-restart: {down: 200ms}\n    for: 1s", "a window (for) applies"},
		{"drive-slow: {drive: 4, delay: 200ms}", "drive-slow: {drive: 4}", "missing: drive-slow needs delay"},
		{"drive-slow: {drive: 4, delay: 200ms}", "drive-slow: {drive: 9, delay: 200ms}", "no drive 9: the store has drives 1 to 4"},
		{"drive-slow: {drive: 4, delay: 200ms}", "drive-slow: {drive: 4, delay: 11s}", "expected 1ms to 10s"},
		{"drive-slow: {drive: 4, delay: 200ms}", "drive-slow: {writer: a, drive: 4, delay: 1s}", "writer"},
	} {
		doc := strings.Replace(storeStepsDoc, c.from, c.to, 1)
		_, err := Parse("s.yaml", []byte(doc), Options{})
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%q -> %q: %v, want an error with %q", c.from, c.to, err, c.msg)
		}
	}
}
