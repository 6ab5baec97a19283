package compose

import (
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// slowDrive is one drive folder of the server served by this process through a FUSE loopback
// of a real folder (the backing folder): each operation that reads, writes, syncs, opens,
// creates, renames or removes on the drive first waits the drive's current delay. Looking
// names up and reading attributes are not delayed.
type slowDrive struct {
	mnt, back string
	delay     atomic.Int64 // nanoseconds
	server    *fuse.Server
}

// slowFS is the FUSE file system of a slow drive: the loopback, delayed.
type slowFS struct {
	fuse.RawFileSystem
	delay *atomic.Int64
}

// wait waits the drive's delay, or until the kernel interrupts the request.
func (s slowFS) wait(cancel <-chan struct{}) {
	d := time.Duration(s.delay.Load())
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-cancel:
	}
}

func (s slowFS) Open(c <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	s.wait(c)
	return s.RawFileSystem.Open(c, in, out)
}

func (s slowFS) Create(c <-chan struct{}, in *fuse.CreateIn, name string, out *fuse.CreateOut) fuse.Status {
	s.wait(c)
	return s.RawFileSystem.Create(c, in, name, out)
}

func (s slowFS) Read(c <-chan struct{}, in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	s.wait(c)
	return s.RawFileSystem.Read(c, in, buf)
}

// Writev is how the server delivers every WRITE (Write only when Writev is not implemented,
// which the loopback's is).
func (s slowFS) Writev(c <-chan struct{}, in *fuse.WriteIn, data [][]byte) (uint32, fuse.Status) {
	s.wait(c)
	return s.RawFileSystem.Writev(c, in, data)
}

func (s slowFS) Fsync(c <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	s.wait(c)
	return s.RawFileSystem.Fsync(c, in)
}

func (s slowFS) Rename(c <-chan struct{}, in *fuse.RenameIn, oldName, newName string) fuse.Status {
	s.wait(c)
	return s.RawFileSystem.Rename(c, in, oldName, newName)
}

func (s slowFS) Unlink(c <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	s.wait(c)
	return s.RawFileSystem.Unlink(c, h, name)
}

func (s slowFS) Mkdir(c <-chan struct{}, in *fuse.MkdirIn, name string, out *fuse.EntryOut) fuse.Status {
	s.wait(c)
	return s.RawFileSystem.Mkdir(c, in, name, out)
}

// mountSlowDrive serves the folder back at mnt (both exist) with no delay.
func mountSlowDrive(mnt, back string) (*slowDrive, error) {
	d := &slowDrive{mnt: mnt, back: back}
	root, err := fs.NewLoopbackRoot(back)
	if err != nil {
		return nil, fmt.Errorf("compose: loopback of %s: %w", back, err)
	}
	// No kernel caching of names or attributes: the drive's backing folder also changes
	// behind the mount (a drive taken offline, a corrupted xl.meta).
	zero := time.Duration(0)
	opts := &fs.Options{EntryTimeout: &zero, AttrTimeout: &zero, NegativeTimeout: &zero}
	asRoot := os.Geteuid() == 0
	opts.MountOptions = fuse.MountOptions{FsName: "fencebench-drive", Name: "fencebench",
		DirectMountStrict: asRoot, Logger: nopLogger()}
	raw := slowFS{RawFileSystem: fs.NewNodeFS(root, opts), delay: &d.delay}
	var srv *fuse.Server
	if asRoot {
		// A direct mount opens /dev/fuse without close-on-exec: a server started afterwards
		// would hold the connection, so that when this process dies the kernel does not end
		// it and the server hangs, unkillable, on a request to its own drive. No process
		// starts while the fork lock is held; the descriptor is marked before it is let go.
		// (Through fusermount, go-fuse marks it itself.)
		syscall.ForkLock.Lock()
		srv, err = fuse.NewServer(raw, mnt, &opts.MountOptions)
		closeFUSEOnExec()
		syscall.ForkLock.Unlock()
	} else {
		srv, err = fuse.NewServer(raw, mnt, &opts.MountOptions)
	}
	if err != nil {
		return nil, fmt.Errorf("compose: mount a FUSE drive at %s: %w", mnt, err)
	}
	go srv.Serve()
	if err := srv.WaitMount(); err != nil {
		unmount(mnt)
		return nil, fmt.Errorf("compose: mount a FUSE drive at %s: %w", mnt, err)
	}
	d.server = srv
	return d, nil
}

// closeFUSEOnExec marks every descriptor of /dev/fuse this process holds close-on-exec.
func closeFUSEOnExec() {
	fds, _ := os.ReadDir("/proc/self/fd")
	for _, f := range fds {
		if target, err := os.Readlink("/proc/self/fd/" + f.Name()); err == nil && target == "/dev/fuse" {
			if fd, err := strconv.Atoi(f.Name()); err == nil {
				syscall.CloseOnExec(fd)
			}
		}
	}
}

// unmount takes the drive's mount away: at once when nothing holds it, else lazily (the
// kernel detaches it now and drops it when its last user lets go).
func (d *slowDrive) unmount() error {
	if err := d.server.Unmount(); err == nil {
		return nil
	}
	return unmount(d.mnt)
}

// unmount detaches the mount at mnt lazily: with umount2 as root, else with fusermount.
func unmount(mnt string) error {
	if err := syscall.Unmount(mnt, syscall.MNT_DETACH); err == nil {
		return nil
	}
	var last error
	for _, bin := range []string{"fusermount3", "fusermount"} {
		out, err := exec.Command(bin, "-u", "-z", mnt).CombinedOutput()
		if err == nil {
			return nil
		}
		last = fmt.Errorf("%s -u -z %s: %v: %s", bin, mnt, err, out)
	}
	return fmt.Errorf("compose: unmount %s: %w", mnt, last)
}

// unmountOnExit is the watchdog's script: it waits until its standard input (a pipe whose
// only writer is this process) reaches end of file, which the kernel makes happen when this
// process exits in any way, SIGKILL included, and then detaches every mount it was given.
const unmountOnExit = `read _ ; for m do umount -l "$m" 2>/dev/null || fusermount3 -u -z "$m" 2>/dev/null || fusermount -u -z "$m" 2>/dev/null; done`

// slowDrives are the FUSE drives of a server and the watchdog that unmounts them should this
// process die without unmounting them itself.
type slowDrives struct {
	drives   []*slowDrive
	watchdog *exec.Cmd
	pipe     *os.File // the watchdog's standard input; closing it releases the watchdog
}

// mountSlowDrives makes drives 1..n of dataDir FUSE loopbacks of dataDir/backing/d<i>, and
// starts their watchdog.
func mountSlowDrives(dataDir string, n int) (*slowDrives, error) {
	if err := FUSEUsable(); err != nil {
		return nil, err
	}
	s := &slowDrives{}
	var mnts []string
	for i := 1; i <= n; i++ {
		mnt := filepath.Join(dataDir, fmt.Sprintf("d%d", i))
		back := filepath.Join(dataDir, "backing", fmt.Sprintf("d%d", i))
		if err := errors.Join(os.MkdirAll(mnt, 0o755), os.MkdirAll(back, 0o755)); err != nil {
			s.unmount()
			return nil, fmt.Errorf("compose: drive folders: %w", err)
		}
		mnts = append(mnts, mnt)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("compose: watchdog pipe: %w", err)
	}
	defer r.Close()
	// Its own process group: a Ctrl-C to the bench's group does not stop it before it acts.
	s.watchdog = exec.Command("sh", append([]string{"-c", unmountOnExit, "sh"}, mnts...)...)
	s.watchdog.Stdin = r
	s.watchdog.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.watchdog.Start(); err != nil {
		w.Close()
		return nil, fmt.Errorf("compose: start the unmount watchdog: %w", err)
	}
	s.pipe = w
	for i, mnt := range mnts {
		d, err := mountSlowDrive(mnt, filepath.Join(dataDir, "backing", fmt.Sprintf("d%d", i+1)))
		if err != nil {
			s.unmount()
			return nil, err
		}
		s.drives = append(s.drives, d)
	}
	return s, nil
}

// unmount unmounts every drive and releases the watchdog (which then finds nothing left).
func (s *slowDrives) unmount() error {
	var errs []error
	for _, d := range s.drives {
		errs = append(errs, d.unmount())
	}
	if s.pipe != nil {
		s.pipe.Close()
		s.pipe = nil
		errs = append(errs, s.watchdog.Wait())
	}
	return errors.Join(errs...)
}

var fuseUsable = sync.OnceValue(probeFUSE)

// FUSEUsable reports why this process cannot serve a drive through FUSE (nil when it can).
// It mounts a loopback of an empty folder and unmounts it, once per process.
func FUSEUsable() error { return fuseUsable() }

func probeFUSE() error {
	if runtime.GOOS != "linux" {
		return fmt.Errorf("compose: slow drives need FUSE on Linux, not %s", runtime.GOOS)
	}
	f, err := os.OpenFile("/dev/fuse", os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("compose: slow drives need FUSE: %w", err)
	}
	f.Close()
	dir, err := os.MkdirTemp("", "fencebench-fuse-probe-")
	if err != nil {
		return fmt.Errorf("compose: FUSE probe: %w", err)
	}
	defer os.RemoveAll(dir)
	mnt, back := filepath.Join(dir, "mnt"), filepath.Join(dir, "back")
	if err := errors.Join(os.Mkdir(mnt, 0o755), os.Mkdir(back, 0o755)); err != nil {
		return fmt.Errorf("compose: FUSE probe: %w", err)
	}
	d, err := mountSlowDrive(mnt, back)
	if err != nil {
		return fmt.Errorf("compose: slow drives need FUSE mounts, which fail here (as uid %d; root, or fusermount with /dev/fuse usable): %w",
			os.Geteuid(), err)
	}
	return d.unmount()
}

func nopLogger() *log.Logger { return log.New(io.Discard, "", 0) }
