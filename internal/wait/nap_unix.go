//go:build linux || darwin || freebsd || netbsd || openbsd

package wait

import (
	"syscall"
	"time"
)

// nap blocks the calling thread for about d. time.Sleep cannot wait less than the runtime's
// poller resolution (a millisecond on Linux), which the virtual driver would pay at every
// instant whose work outlasts its spinning; a nanosleep system call wakes within tens of
// microseconds.
func nap(d time.Duration) {
	ts := syscall.NsecToTimespec(d.Nanoseconds())
	_ = syscall.Nanosleep(&ts, nil)
}
