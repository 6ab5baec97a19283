package system

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ProcOptions say how to start the nodes of a system that runs as a command.
type ProcOptions struct {
	// Command is the program and its arguments, run once per node.
	Command []string
	// Dir is the folder each node's stderr goes to, as node-<id>.stderr.
	Dir string
	// AnswerTimeout bounds how long a running node may take to answer a request; 0 means
	// 15s. Time the node spends paused does not count.
	AnswerTimeout time.Duration
	// StartTimeout bounds the answer to init; 0 means 20s.
	StartTimeout time.Duration
}

func (o ProcOptions) answer() time.Duration {
	if o.AnswerTimeout > 0 {
		return o.AnswerTimeout
	}
	return 15 * time.Second
}

func (o ProcOptions) start() time.Duration {
	if o.StartTimeout > 0 {
		return o.StartTimeout
	}
	return 20 * time.Second
}

// running is every Proc started and not yet closed.
var running = struct {
	sync.Mutex
	m map[*Proc]struct{}
}{m: map[*Proc]struct{}{}}

// Running returns the pids of every node process started and not yet reaped.
func Running() []int {
	running.Lock()
	defer running.Unlock()
	var out []int
	for p := range running.m {
		out = append(out, p.pid)
	}
	sort.Ints(out)
	return out
}

// Proc is one node of a system running as a separate process: its own stdin and stdout
// pipes, its stderr in a file, its own process group. Its methods are safe for concurrent use.
type Proc struct {
	id    string
	o     ProcOptions
	cmd   *exec.Cmd
	pid   int
	enc   *Encoder
	stdin io.WriteCloser
	errf  *os.File
	emit  func(Event)
	hello Hello
	exit  chan struct{} // closed when the process was reaped
	read  chan struct{} // closed when stdout ended

	mu      sync.Mutex
	nextID  int64
	pending map[int64]*call
	failure error // the first harness error; sticky
	killed  bool  // Kill or Close ended it: its end is not an error
	paused  bool
	change  chan struct{} // closed and replaced on every pause and resume
	waitErr error
}

type call struct {
	req   Message
	reply chan Message
	at    time.Time // when the reply's line was read
}

// StartProc starts node cfg.Node of the command and performs the init handshake. emit (may
// be nil) receives the node's events. A node that exits, prints garbage or does not answer
// init in time is a *HarnessError, and nothing of it is left running.
func StartProc(ctx context.Context, o ProcOptions, cfg Config, emit func(Event)) (*Proc, error) {
	if len(o.Command) == 0 {
		return nil, errors.New("system: no command")
	}
	if emit == nil {
		emit = func(Event) {}
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("system: stderr folder: %w", err)
	}
	errPath := filepath.Join(o.Dir, "node-"+safeName(cfg.Node)+".stderr")
	ef, err := os.OpenFile(errPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("system: stderr file: %w", err)
	}
	fmt.Fprintf(ef, "--- fencebench: node %s started %s: %s\n", cfg.Node, time.Now().UTC().Format(time.RFC3339Nano), strings.Join(o.Command, " "))
	cmd := exec.Command(o.Command[0], o.Command[1:]...)
	cmd.Stderr = ef
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Env = os.Environ()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		ef.Close()
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		ef.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		ef.Close()
		return nil, &HarnessError{Node: cfg.Node, Msg: fmt.Sprintf("cannot start %q: %v", o.Command[0], err)}
	}
	p := &Proc{id: cfg.Node, o: o, cmd: cmd, pid: cmd.Process.Pid, enc: NewEncoder(stdin), stdin: stdin, errf: ef,
		emit: emit, exit: make(chan struct{}), read: make(chan struct{}), pending: map[int64]*call{},
		change: make(chan struct{})}
	running.Lock()
	running.m[p] = struct{}{}
	running.Unlock()
	go p.readLoop(stdout)
	go func() {
		<-p.read
		// Stdout ended: the node exited or closed it. Either way its group goes (a process
		// still holding the pipe's other end is still in the group until it is reaped).
		_ = syscall.Kill(-p.pid, syscall.SIGKILL)
		err := cmd.Wait()
		p.mu.Lock()
		p.waitErr = err
		p.mu.Unlock()
		close(p.exit)
		p.died(err)
	}()
	hctx, cancel := context.WithTimeout(ctx, o.start())
	defer cancel()
	rep, err := p.call(hctx, cfg.message(), o.start())
	if err == nil && rep.Type != TypeInitOK {
		err = p.fail(&HarnessError{Node: p.id, Msg: fmt.Sprintf("answered init with %s %s", rep.Type, describe(rep))})
	}
	if err != nil {
		p.Close()
		if !IsHarness(err) {
			err = &HarnessError{Node: p.id, Msg: "no answer to init: " + err.Error()}
		}
		return nil, err
	}
	p.hello = Hello{Name: rep.Name, Version: rep.Version, Capabilities: rep.Capabilities}
	return p, nil
}

func describe(m Message) string {
	if m.Type == TypeError {
		return m.Code + ": " + m.Text
	}
	return ""
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, s)
}

// ID is the node's id.
func (p *Proc) ID() string { return p.id }

// Pid is the node's process id (its process group's id too).
func (p *Proc) Pid() int { return p.pid }

// Hello is the node's answer to init.
func (p *Proc) Hello() Hello { return p.hello }

// Err is the first harness error of the node, nil while it behaves.
func (p *Proc) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failure
}

// fail records err as the node's harness error (the first one stays) and kills the node.
func (p *Proc) fail(err error) error {
	p.mu.Lock()
	if p.failure == nil && !p.killed {
		p.failure = err
	}
	first := p.failure
	p.mu.Unlock()
	p.signal(syscall.SIGKILL)
	p.wake()
	if first == nil {
		return err
	}
	return first
}

// wake ends every waiting call (they look at the node's state again).
func (p *Proc) wake() {
	p.mu.Lock()
	close(p.change)
	p.change = make(chan struct{})
	p.mu.Unlock()
}

func (p *Proc) died(err error) {
	p.mu.Lock()
	killed := p.killed
	p.mu.Unlock()
	if !killed {
		msg := "exited"
		if err != nil {
			msg = "exited: " + err.Error()
		}
		if tail := p.stderrTail(); tail != "" {
			msg += "; stderr ends: " + tail
		}
		p.fail(&HarnessError{Node: p.id, Msg: msg})
	}
	p.wake()
}

// stderrTail is the end of the node's stderr file, for a message.
func (p *Proc) stderrTail() string {
	b, err := os.ReadFile(p.errf.Name())
	if err != nil {
		return ""
	}
	s := strings.TrimSpace(string(b))
	if i := strings.LastIndex(s, "--- fencebench:"); i >= 0 {
		if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
			s = strings.TrimSpace(s[i+j:])
		} else {
			s = ""
		}
	}
	if len(s) > 300 {
		s = "…" + s[len(s)-300:]
	}
	return s
}

func (p *Proc) readLoop(stdout io.Reader) {
	defer close(p.read)
	d := NewNodeDecoder(p.id, stdout)
	for {
		m, err := d.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) && !p.wasKilled() {
				if !IsHarness(err) {
					err = &HarnessError{Node: p.id, Msg: "reading stdout: " + err.Error()}
				}
				p.fail(err)
			}
			_, _ = io.Copy(io.Discard, stdout)
			return
		}
		if m.Type == TypeEvent {
			p.emit(Event{Node: p.id, Event: m.Event, Term: m.Term, Text: m.Text})
			continue
		}
		p.mu.Lock()
		c := p.pending[m.InReplyTo]
		delete(p.pending, m.InReplyTo)
		p.mu.Unlock()
		if c == nil {
			p.fail(&HarnessError{Node: p.id, Line: d.Line(), Msg: fmt.Sprintf("%s in reply to request %d, which is not waiting for an answer", m.Type, m.InReplyTo)})
			continue
		}
		if msg := mismatch(c.req, m); msg != "" {
			p.fail(&HarnessError{Node: p.id, Line: d.Line(), Msg: msg})
			continue
		}
		c.at = time.Now()
		c.reply <- m
	}
}

// mismatch says why rep cannot answer req, "" when it can.
func mismatch(req, rep Message) string {
	if rep.Type == TypeError {
		return ""
	}
	want := map[string]string{TypeInit: TypeInitOK, TypeWrite: TypeWriteOK, TypePromote: TypePromoteOK, TypeRead: TypeReadOK,
		TypeRelocate: TypeRelocateOK}[req.Type]
	if rep.Type != want {
		return fmt.Sprintf("answered %s request %d with %s", req.Type, req.ID, rep.Type)
	}
	if req.Type == TypeWrite && rep.Op != req.Op {
		return fmt.Sprintf("write_ok for op %d in reply to the write of op %d: it acknowledges an op it was not sent", rep.Op, req.Op)
	}
	return ""
}

func (p *Proc) wasKilled() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.killed
}

// call sends m as a request and waits for its answer: at most timeout of the node's running
// time (paused time does not count), or until ctx ends.
func (p *Proc) call(ctx context.Context, m Message, timeout time.Duration) (Message, error) {
	rep, _, err := p.callAt(ctx, m, timeout)
	return rep, err
}

// callAt is call, also saying when the answer's line was read (now when there was none).
func (p *Proc) callAt(ctx context.Context, m Message, timeout time.Duration) (rep Message, at time.Time, err error) {
	var c *call
	defer func() {
		switch {
		case err == nil && c != nil:
			at = c.at
		default:
			at = time.Now()
		}
	}()
	rep, c, err = p.exchange(ctx, m, timeout)
	return rep, at, err
}

// exchange sends m and waits for its answer.
func (p *Proc) exchange(ctx context.Context, m Message, timeout time.Duration) (Message, *call, error) {
	p.mu.Lock()
	if p.failure != nil {
		err := p.failure
		p.mu.Unlock()
		return Message{}, nil, err
	}
	if p.killed {
		p.mu.Unlock()
		return Message{}, nil, ErrCrashed
	}
	p.nextID++
	m.ID = p.nextID
	c := &call{req: m, reply: make(chan Message, 1)}
	p.pending[m.ID] = c
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.pending, m.ID)
		p.mu.Unlock()
	}()
	if err := p.enc.Send(m); err != nil {
		if p.wasKilled() {
			return Message{}, nil, ErrCrashed
		}
		// The node closed its stdin or died: its own end says why, when it comes.
		select {
		case <-p.exit:
		case <-time.After(time.Second):
		}
		if e := p.Err(); e != nil {
			return Message{}, nil, e
		}
		return Message{}, nil, p.fail(&HarnessError{Node: p.id, Msg: "does not read its stdin: " + err.Error()})
	}
	left := timeout
	for {
		p.mu.Lock()
		paused, change, failure, killed := p.paused, p.change, p.failure, p.killed
		p.mu.Unlock()
		select {
		case rep := <-c.reply:
			return rep, c, nil
		default:
		}
		switch {
		case failure != nil:
			return Message{}, nil, failure
		case killed:
			return Message{}, nil, ErrCrashed
		}
		var tick <-chan time.Time
		var t *time.Timer
		started := time.Now()
		if !paused {
			t = time.NewTimer(left)
			tick = t.C
		}
		select {
		case rep := <-c.reply:
			if t != nil {
				t.Stop()
			}
			return rep, c, nil
		case <-ctx.Done():
			if t != nil {
				t.Stop()
			}
			return Message{}, nil, ctx.Err()
		case <-change:
			if t != nil {
				t.Stop()
				left -= time.Since(started)
			}
		case <-tick:
			return Message{}, nil, p.fail(&HarnessError{Node: p.id,
				Msg: fmt.Sprintf("never answered %s request %d within %s while running", m.Type, m.ID, timeout)})
		}
	}
}

// Write implements Node.
func (p *Proc) Write(ctx context.Context, op int64, payload string) (int64, error) {
	t, _, err := p.WriteAt(ctx, op, payload)
	return t, err
}

// WriteAt is Write, also saying when the answer's line was read: in the order of the node's
// stdout, so an answer printed before an event was read before it.
func (p *Proc) WriteAt(ctx context.Context, op int64, payload string) (int64, time.Time, error) {
	rep, at, err := p.callAt(ctx, Message{Type: TypeWrite, Op: op, Payload: payload}, p.o.answer())
	if err != nil {
		return 0, at, err
	}
	if rep.Type == TypeError {
		return 0, at, &Error{Code: rep.Code, Text: rep.Text}
	}
	return rep.Term, at, nil
}

// Promote implements Node.
func (p *Proc) Promote(ctx context.Context, term int64) error {
	rep, err := p.call(ctx, Message{Type: TypePromote, Term: term}, p.o.answer())
	if err != nil {
		return err
	}
	if rep.Type == TypeError {
		return &Error{Code: rep.Code, Text: rep.Text}
	}
	return nil
}

// Relocate implements Relocator: the relocate request, answered relocate_ok or an error.
func (p *Proc) Relocate(ctx context.Context, term int64, target string) error {
	rep, err := p.call(ctx, Message{Type: TypeRelocate, Term: term, Target: target}, p.o.answer())
	if err != nil {
		return err
	}
	if rep.Type == TypeError {
		return &Error{Code: rep.Code, Text: rep.Text}
	}
	return nil
}

// Read implements Node.
func (p *Proc) Read(ctx context.Context, term int64) ([]int64, error) {
	rep, err := p.call(ctx, Message{Type: TypeRead, Term: term}, p.o.answer())
	if err != nil {
		return nil, err
	}
	if rep.Type == TypeError {
		return nil, &Error{Code: rep.Code, Text: rep.Text}
	}
	return rep.Ops, nil
}

func (p *Proc) signal(sig syscall.Signal) error {
	select {
	case <-p.exit:
		return nil
	default:
	}
	err := syscall.Kill(-p.pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// Pause stops the node's process group (SIGSTOP).
func (p *Proc) Pause() error {
	p.mu.Lock()
	p.paused = true
	p.mu.Unlock()
	err := p.signal(syscall.SIGSTOP)
	if err == nil {
		p.awaitStopped()
	}
	p.wake()
	return err
}

// awaitStopped waits (at most a second) until the kernel shows the node stopped, so that
// nothing sent after Pause returns is handled before Resume.
func (p *Proc) awaitStopped() {
	path := fmt.Sprintf("/proc/%d/stat", p.pid)
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		b, err := os.ReadFile(path)
		if err != nil {
			return // no procfs, or the process is gone
		}
		// The state follows the command name in parentheses, which may itself hold ") ".
		if i := strings.LastIndexByte(string(b), ')'); i >= 0 && i+2 < len(b) && (b[i+2] == 'T' || b[i+2] == 't') {
			return
		}
	}
}

// Resume continues a paused node (SIGCONT).
func (p *Proc) Resume() error {
	err := p.signal(syscall.SIGCONT)
	p.mu.Lock()
	p.paused = false
	p.mu.Unlock()
	p.wake()
	return err
}

// Paused reports whether the node is stopped.
func (p *Proc) Paused() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.paused
}

// Kill ends the node at once (SIGKILL of its process group) and waits until it is reaped.
// Requests in flight fail with ErrCrashed. Killing a node is not an error of the node.
func (p *Proc) Kill() {
	p.mu.Lock()
	p.killed = true
	p.mu.Unlock()
	_ = p.signal(syscall.SIGKILL)
	p.wake()
	select {
	case <-p.exit:
	case <-time.After(10 * time.Second):
		// The process ignores nothing after SIGKILL; only an unreaped zombie of a stuck pipe
		// reader could keep us here. Close the pipes so the reader ends.
		_ = p.stdin.Close()
		<-p.exit
	}
	running.Lock()
	delete(running.m, p)
	running.Unlock()
	_ = p.errf.Close()
}

// Close is Kill: a node never outlives its run.
func (p *Proc) Close() { p.Kill() }
