// Package hog keeps a machine's cores busy, as a loaded CI machine's are, so that a
// stability run can show which verdicts depend on having the CPU to themselves.
//
// Start runs n processes that each burn one core (a shell busy loop: a separate process, so
// the bench's own scheduler is not part of the load) until Stop. They die with the bench:
// each is started with the parent-death signal, so a bench killed without cleaning up leaves
// no hog behind.
package hog

import (
	"fmt"
	"os/exec"
	"syscall"
)

// Hog is a set of running CPU burners.
type Hog struct {
	procs []*exec.Cmd
}

// Start starts n burners; n <= 0 starts none.
func Start(n int) (*Hog, error) {
	h := &Hog{}
	for range max(n, 0) {
		cmd := exec.Command("/bin/sh", "-c", "while :; do :; done")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			h.Stop()
			return nil, fmt.Errorf("hog: start a CPU burner: %w", err)
		}
		h.procs = append(h.procs, cmd)
	}
	return h, nil
}

// N is how many burners run.
func (h *Hog) N() int {
	if h == nil {
		return 0
	}
	return len(h.procs)
}

// Stop kills the burners and waits for them; it may be called more than once.
func (h *Hog) Stop() {
	if h == nil {
		return
	}
	for _, c := range h.procs {
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		_ = c.Wait()
	}
	h.procs = nil
}
