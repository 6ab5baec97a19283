package compose

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// dataArgs are the server's data arguments: one folder, or the drives of an erasure-coded
// server in MinIO's ellipsis notation (<data dir>/d{1...N}).
func (l *Local) dataArgs() []string {
	if l.drives <= 1 {
		return []string{filepath.Join(l.dataDir, "data")}
	}
	return []string{filepath.Join(l.dataDir, fmt.Sprintf("d{1...%d}", l.drives))}
}

// Drives is the number of drives the server runs on (1 for a single folder).
func (l *Local) Drives() int { return max(l.drives, 1) }

// drivePath is the folder of drive i (1-based) and where it goes while offline. For a FUSE
// drive it is the backing folder: the mount stays, and serves nothing while the folder is away.
func (l *Local) drivePath(i int) (online, offline string, err error) {
	if err := l.checkDrive(i); err != nil {
		return "", "", err
	}
	online = filepath.Join(l.dataDir, fmt.Sprintf("d%d", i))
	if l.slow != nil {
		online = filepath.Join(l.dataDir, "backing", fmt.Sprintf("d%d", i))
	}
	return online, online + ".offline", nil
}

func (l *Local) checkDrive(i int) error {
	if l.drives <= 1 {
		return errors.New("compose: the server runs on one folder; drive faults need an erasure-coded server (Drives > 1)")
	}
	if i < 1 || i > l.drives {
		return fmt.Errorf("compose: no drive %d: the server has drives 1 to %d", i, l.drives)
	}
	return nil
}

// mountDrives serves every drive through FUSE (LocalOptions.SlowableDrives).
func (l *Local) mountDrives() error {
	if l.drives <= 1 {
		return errors.New("compose: slowable drives need an erasure-coded server (Drives > 1)")
	}
	s, err := mountSlowDrives(l.dataDir, l.drives)
	if err != nil {
		return err
	}
	l.slow = s
	return nil
}

// Slowable reports whether the server's drives are served through FUSE, so that DriveSlow
// can delay them.
func (l *Local) Slowable() bool { return l.slow != nil }

// DriveSlow makes every read, write, sync, open, create, rename, removal and folder creation
// on drive i (1-based) wait delay before it is carried out, from now on (the operations
// already waiting keep their delay); 0 makes the drive fast again. The server must have been
// started with SlowableDrives.
func (l *Local) DriveSlow(i int, delay time.Duration) error {
	if err := l.checkDrive(i); err != nil {
		return err
	}
	if l.slow == nil {
		return errors.New("compose: drive-slow needs a server started with slowable (FUSE) drives")
	}
	if delay < 0 {
		return fmt.Errorf("compose: negative drive delay %v", delay)
	}
	l.slow.drives[i-1].delay.Store(int64(delay))
	return nil
}

// DriveNoticed is how long a drive fault takes to be seen by the server: MinIO checks a
// drive's identity (its format.json) at most once a second and, until it does, serves the
// folder's absence as "no such object" rather than as a missing drive. DriveOffline and
// DriveOnline return after it, so that the server acts on the drive's new state.
const DriveNoticed = 1200 * time.Millisecond

// DriveOffline takes drive i (1-based) away from the running server: its folder is moved out
// of the server's path, so every read and write of the server on that drive fails as on a
// drive that was unplugged (the bench runs as root, so withdrawing permissions would not stop
// the server). A drive already offline stays so. It returns once the server has noticed.
func (l *Local) DriveOffline(i int) error {
	if err := l.driveOffline(i); err != nil {
		return err
	}
	time.Sleep(DriveNoticed)
	return nil
}

// DriveOnline puts drive i back with the data it held, and returns once the server has
// noticed. A drive already online stays so.
func (l *Local) DriveOnline(i int) error {
	if err := l.driveOnline(i); err != nil {
		return err
	}
	time.Sleep(DriveNoticed)
	return nil
}

// DrivesOnline puts every offline drive back.
func (l *Local) DrivesOnline() error {
	var errs []error
	for i := 1; l.drives > 1 && i <= l.drives; i++ {
		errs = append(errs, l.driveOnline(i))
	}
	time.Sleep(DriveNoticed)
	return errors.Join(errs...)
}

func (l *Local) driveOffline(i int) error {
	online, offline, err := l.drivePath(i)
	if err != nil {
		return err
	}
	if _, err := os.Stat(offline); err == nil {
		return nil
	}
	if err := os.Rename(online, offline); err != nil {
		return fmt.Errorf("compose: take drive %d offline: %w", i, err)
	}
	return nil
}

func (l *Local) driveOnline(i int) error {
	online, offline, err := l.drivePath(i)
	if err != nil {
		return err
	}
	if _, err := os.Stat(offline); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	// The server may have recreated an empty folder at the drive's path meanwhile.
	if err := os.RemoveAll(online); err != nil {
		return fmt.Errorf("compose: bring drive %d online: %w", i, err)
	}
	if err := os.Rename(offline, online); err != nil {
		return fmt.Errorf("compose: bring drive %d online: %w", i, err)
	}
	return nil
}

// Restart kills the server (as a crash would) and, after down, starts it again on the same
// address with the same credentials and data, and waits until it answers. ctx bounds the
// wait; the server's log continues in the same file.
func (l *Local) Restart(ctx context.Context, down time.Duration) error {
	l.mu.Lock()
	stopped := l.stopped
	l.mu.Unlock()
	if stopped {
		return errors.New("compose: the server was stopped")
	}
	l.kill()
	if down > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(down):
		}
	}
	// The port may linger a moment after the kill: a bind failure is retried.
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if err = l.spawn(ctx); err != nil {
			return err
		}
		if err = l.waitReady(ctx, 60*time.Second); err == nil {
			return nil
		}
		l.kill()
		if ctx.Err() != nil {
			break
		}
	}
	return fmt.Errorf("compose: restart: %w", err)
}

// CorruptObjectMeta replaces the metadata file (xl.meta) of key in the server's bucket on
// drive i (1-based) with bytes that do not parse, as bit rot or a torn write would leave it:
// the drive stays online and takes writes, but cannot tell what the key holds. It returns the
// function that puts the replaced file back.
func (l *Local) CorruptObjectMeta(i int, key string) (restore func() error, err error) {
	online, _, err := l.drivePath(i)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(online, l.Bucket, filepath.FromSlash(key), "xl.meta")
	orig, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("compose: metadata of %s on drive %d: %w", key, i, err)
	}
	if err := os.WriteFile(path, []byte("not an xl.meta: overwritten by the bench"), 0o644); err != nil {
		return nil, fmt.Errorf("compose: corrupt the metadata of %s on drive %d: %w", key, i, err)
	}
	return func() error { return os.WriteFile(path, orig, 0o644) }, nil
}
