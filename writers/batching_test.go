package writers

import "testing"

// The batching rule a sync's end applies: another sync is due at once when SyncEvery ops
// wait, or, when the caller flushes everything (a drain, a tick), when any op waits; it ends
// the sync in flight either way.
func TestAnotherSyncIsDueByTheBatchingRule(t *testing.T) {
	for _, tc := range []struct {
		buffered, every int
		all, want       bool
	}{
		{0, 5, false, false},
		{4, 5, false, false},
		{5, 5, false, true},
		{6, 5, false, true},
		{0, 5, true, false},
		{1, 5, true, true},
		{5, 5, true, true},
	} {
		l := writeLog{syncing: true}
		for i := range tc.buffered {
			l.add(int64(i))
		}
		if got := l.synced(tc.every, tc.all); got != tc.want || l.syncing {
			t.Errorf("%d ops buffered, every %d, all %v: another sync due %v (still syncing: %v); want %v",
				tc.buffered, tc.every, tc.all, got, l.syncing, tc.want)
		}
	}
}
