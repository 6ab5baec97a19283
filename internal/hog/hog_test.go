package hog

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cpuTicks is the user+system time of pid in clock ticks, from /proc.
func cpuTicks(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b)[strings.LastIndexByte(string(b), ')')+2:])
	u, _ := strconv.Atoi(f[11])
	s, _ := strconv.Atoi(f[12])
	return u + s
}

// TestHogBurnsAndStops: each burner uses CPU while it runs, and none is left after Stop.
func TestHogBurnsAndStops(t *testing.T) {
	h, err := Start(2)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Stop()
	if h.N() != 2 {
		t.Fatalf("%d burners, want 2", h.N())
	}
	pids := []int{h.procs[0].Process.Pid, h.procs[1].Process.Pid}
	deadline := time.Now().Add(20 * time.Second)
	for _, pid := range pids {
		for cpuTicks(t, pid) < 10 { // 10 ticks: 100 ms of CPU at the usual 100 Hz
			if time.Now().After(deadline) {
				t.Fatalf("burner %d used %d ticks in 20 s", pid, cpuTicks(t, pid))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	h.Stop()
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); err == nil {
			t.Errorf("burner %d still runs after Stop", pid)
		}
	}
}
