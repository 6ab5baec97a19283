//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package wait

import "time"

// nap waits about d (see nap_unix.go).
func nap(d time.Duration) { time.Sleep(d) }
