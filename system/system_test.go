package system

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary is also every node these tests start: FENCEBENCH_TEST_NODE names how it
// behaves.
func TestMain(m *testing.M) {
	if mode := os.Getenv("FENCEBENCH_TEST_NODE"); mode != "" {
		os.Exit(helperNode(mode))
	}
	os.Exit(m.Run())
}

func helperNode(mode string) int {
	if mode == "exit" {
		fmt.Fprintln(os.Stderr, "cannot open the store: no such bucket")
		return 3
	}
	in := bufio.NewScanner(os.Stdin)
	out := json.NewEncoder(os.Stdout)
	name := "helper"
	if mode == "child" {
		c := exec.Command("sleep", "300")
		if err := c.Start(); err != nil {
			return 4
		}
		name = "child-" + strconv.Itoa(c.Process.Pid)
	}
	for in.Scan() {
		var m Message
		if err := json.Unmarshal(in.Bytes(), &m); err != nil {
			return 5
		}
		switch m.Type {
		case TypeInit:
			if mode == "silent-init" {
				continue
			}
			_ = out.Encode(Message{Type: TypeInitOK, InReplyTo: m.ID, Protocol: Version, Name: name, Version: "0",
				Capabilities: []string{CapPromote, CapTerms, CapRead}})
		case TypeWrite:
			switch mode {
			case "garbage":
				fmt.Println("INFO connected to s3")
			case "hang":
			case "phantom-ack":
				_ = out.Encode(Message{Type: TypeWriteOK, InReplyTo: m.ID, Op: m.Op + 1000, Term: 1})
			case "unknown-field":
				fmt.Printf("{\"type\":\"write_ok\",\"in_reply_to\":%d,\"op\":%d,\"term\":1,\"lease\":\"x\"}\n", m.ID, m.Op)
			case "exit-on-write":
				return 0
			default:
				_ = out.Encode(Message{Type: TypeEvent, Event: EventOwner, Term: 1})
				_ = out.Encode(Message{Type: TypeWriteOK, InReplyTo: m.ID, Op: m.Op, Term: 1})
			}
		case TypeRead:
			_ = out.Encode(Message{Type: TypeReadOK, InReplyTo: m.ID, Ops: []int64{1, 2}})
		case TypePromote:
			_ = out.Encode(Message{Type: TypeError, InReplyTo: m.ID, Code: CodeFenced, Text: "superseded by term 9"})
		case TypeRelocate:
			if mode == "relocate-as-promote" {
				_ = out.Encode(Message{Type: TypePromoteOK, InReplyTo: m.ID, Term: m.Term})
				continue
			}
			_ = out.Encode(Message{Type: TypeRelocateOK, InReplyTo: m.ID, Term: m.Term})
		}
	}
	return 0
}

func start(t *testing.T, mode string, timeout time.Duration) (*Proc, error) {
	t.Helper()
	t.Setenv("FENCEBENCH_TEST_NODE", mode)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p, err := StartProc(context.Background(), ProcOptions{Command: []string{exe}, Dir: dir, AnswerTimeout: timeout,
		StartTimeout: 5 * time.Second}, Config{Node: "n1", Endpoint: "http://127.0.0.1:1", Bucket: "b", Prefix: "p/",
		AccessKey: "AKIDTEST", SecretKey: "s3cr3t-value"}, nil)
	t.Cleanup(func() {
		if p != nil {
			p.Close()
		}
		noneLeft(t)
	})
	return p, err
}

// noneLeft fails the test when a node process the package started is still running.
func noneLeft(t *testing.T) {
	t.Helper()
	if pids := Running(); len(pids) > 0 {
		t.Errorf("node processes still running: %v", pids)
	}
}

// gone waits until pid no longer exists (or is a zombie nobody waits for).
func gone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && strings.Contains(string(b), ") Z ") {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("process %d is still running", pid)
}

func harness(t *testing.T, err error, wantLine bool, want string) *HarnessError {
	t.Helper()
	var h *HarnessError
	if !errors.As(err, &h) {
		t.Fatalf("want a harness error, got %T %v", err, err)
	}
	if h.Node != "n1" {
		t.Errorf("the error names node %q, want n1: %v", h.Node, h)
	}
	if wantLine && h.Line == 0 {
		t.Errorf("the error names no line: %v", h)
	}
	if !strings.Contains(h.Error(), want) {
		t.Errorf("error %q does not say %q", h.Error(), want)
	}
	if strings.Contains(h.Error(), "s3cr3t-value") {
		t.Errorf("the error carries the secret: %v", h)
	}
	return h
}

func TestGoodNodeAnswersAndReportsEvents(t *testing.T) {
	t.Setenv("FENCEBENCH_TEST_NODE", "good")
	exe, _ := os.Executable()
	events := make(chan Event, 4)
	p, err := StartProc(context.Background(), ProcOptions{Command: []string{exe}, Dir: t.TempDir()},
		Config{Node: "n1", Bucket: "b", Prefix: "p/"}, func(e Event) { events <- e })
	if err != nil {
		t.Fatal(err)
	}
	defer func() { p.Close(); gone(t, p.Pid()); noneLeft(t) }()
	if h := p.Hello(); h.Name != "helper" || !h.Has(CapTerms) {
		t.Fatalf("hello %+v", h)
	}
	term, err := p.Write(context.Background(), 7, "x")
	if err != nil || term != 1 {
		t.Fatalf("write: term %d, %v", term, err)
	}
	if e := <-events; e.Event != EventOwner || e.Term != 1 || e.Node != "n1" {
		t.Fatalf("event %+v", e)
	}
	ops, err := p.Read(context.Background(), 2)
	if err != nil || len(ops) != 2 {
		t.Fatalf("read %v %v", ops, err)
	}
	if err := p.Promote(context.Background(), 3); CodeOf(err) != CodeFenced {
		t.Fatalf("promote: want the node's fenced answer, got %v", err)
	}
}

func TestNodeThatExitsAtStart(t *testing.T) {
	_, err := start(t, "exit", time.Second)
	h := harness(t, err, false, "exited")
	if !strings.Contains(h.Error(), "no such bucket") {
		t.Errorf("the error does not quote the node's stderr: %v", h)
	}
}

func TestNodeThatNeverAnswersInit(t *testing.T) {
	t0 := time.Now()
	_, err := start(t, "silent-init", time.Second)
	harness(t, err, false, "init")
	if time.Since(t0) > 15*time.Second {
		t.Errorf("the start timeout was not kept: %s", time.Since(t0))
	}
}

func TestGarbageOnStdout(t *testing.T) {
	p, err := start(t, "garbage", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Write(context.Background(), 1, "x")
	h := harness(t, err, true, "not a protocol message")
	if h.Line != 2 {
		t.Errorf("line %d, want 2 (init_ok is line 1)", h.Line)
	}
	gone(t, p.Pid())
}

func TestUnknownFieldIsRefused(t *testing.T) {
	p, err := start(t, "unknown-field", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Write(context.Background(), 1, "x")
	harness(t, err, true, "unknown field")
}

func TestHangIsBounded(t *testing.T) {
	p, err := start(t, "hang", 700*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	_, err = p.Write(context.Background(), 1, "x")
	harness(t, err, false, "never answered write")
	if d := time.Since(t0); d < 600*time.Millisecond || d > 10*time.Second {
		t.Errorf("the hang ended after %s, want about the 700ms answer timeout", d)
	}
	gone(t, p.Pid())
}

func TestAckOfAnOpNeverSent(t *testing.T) {
	p, err := start(t, "phantom-ack", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Write(context.Background(), 1, "x")
	harness(t, err, true, "acknowledges an op it was not sent")
}

func TestExitMidRun(t *testing.T) {
	p, err := start(t, "exit-on-write", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Write(context.Background(), 1, "x")
	harness(t, err, false, "exited")
}

// A paused node says nothing; that is not a hang. Its answer arrives once it runs again.
func TestPausedTimeIsNotAHang(t *testing.T) {
	p, err := start(t, "good", 500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Pause(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := p.Write(context.Background(), 1, "x"); done <- err }()
	select {
	case err := <-done:
		t.Fatalf("a paused node answered: %v", err)
	case <-time.After(1500 * time.Millisecond):
	}
	if err := p.Resume(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("after resume: %v", err)
	}
	if err := p.Err(); err != nil {
		t.Fatalf("harness error: %v", err)
	}
}

func TestKillEndsTheWholeGroupAndInFlightIsUnknown(t *testing.T) {
	p, err := start(t, "child", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	child, err := strconv.Atoi(strings.TrimPrefix(p.Hello().Name, "child-"))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(child, 0); err != nil {
		t.Fatalf("the node's child is not running: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, err := p.Write(context.Background(), 1, "x"); done <- err }()
	time.Sleep(100 * time.Millisecond)
	p.Kill()
	if err := <-done; !errors.Is(err, ErrCrashed) && CodeOf(err) == "" && err != nil {
		t.Fatalf("in flight at the kill: want ErrCrashed (or the answer), got %v", err)
	}
	if err := p.Err(); err != nil {
		t.Fatalf("a kill is not the node's fault: %v", err)
	}
	gone(t, p.Pid())
	gone(t, child)
}

func TestStderrIsKeptPerNode(t *testing.T) {
	t.Setenv("FENCEBENCH_TEST_NODE", "exit")
	exe, _ := os.Executable()
	dir := t.TempDir()
	_, err := StartProc(context.Background(), ProcOptions{Command: []string{exe}, Dir: dir}, Config{Node: "a/b"}, nil)
	if err == nil {
		t.Fatal("want an error")
	}
	b, err := os.ReadFile(filepath.Join(dir, "node-a_b.stderr"))
	if err != nil || !strings.Contains(string(b), "no such bucket") {
		t.Fatalf("stderr file: %q %v", b, err)
	}
	noneLeft(t)
}

func TestDecoderNamesNodeAndLine(t *testing.T) {
	cases := []struct{ in, want string }{
		{"{\"type\":\"event\",\"event\":\"owner\",\"term\":1}\n{\"type\":\"event\",\"event\":\"elected\"}\n", "line 2"},
		{"\n{\"type\":\"write_ok\",\"in_reply_to\":1}\n", "without the op"},
		{"{\"type\":\"error\",\"in_reply_to\":1,\"code\":\"timeout\"}\n", "error code"},
		{"{\"type\":\"init_ok\",\"in_reply_to\":1,\"protocol\":\"v0\",\"name\":\"x\"}\n", "protocol"},
		{"{\"type\":\"event\",\"event\":\"owner\"} {}\n", "more than one"},
		{"{\"type\":\"read_ok\",\"in_reply_to\":1,\"ops\":[1,-2]}\n", "op -2"},
		{"{\"type\":\"event\",\"event\":\"owner\"}", "no newline"},
		{strings.Repeat("x", MaxLine+10) + "\n", "longer than"},
	}
	for _, c := range cases {
		d := NewNodeDecoder("n7", strings.NewReader(c.in))
		var err error
		for err == nil {
			_, err = d.Next()
		}
		var h *HarnessError
		if !errors.As(err, &h) || h.Node != "n7" || h.Line == 0 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.60q: got %v, want a harness error of n7 with a line, saying %q", c.in, err, c.want)
		}
	}
}

func TestMessageStringRedacts(t *testing.T) {
	m := Config{Node: "a", AccessKey: "AK", SecretKey: "sekrit"}.message()
	if strings.Contains(m.String(), "sekrit") || strings.Contains(Config{SecretKey: "sekrit"}.String(), "sekrit") {
		t.Fatal("a message or config prints its secret")
	}
}

// TestRelocateIsAnswered: relocate carries its term and target to the node and is answered
// relocate_ok; a node that answers it with another type is a harness error naming the line.
func TestRelocateIsAnswered(t *testing.T) {
	p, err := start(t, "good", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Relocate(context.Background(), 4, "n2"); err != nil {
		t.Fatalf("relocate: %v", err)
	}
	p.Close()
	p, err = start(t, "relocate-as-promote", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	harness(t, p.Relocate(context.Background(), 4, "n2"), true, "answered relocate request")
}

// stayPut is a Go node without relocate.
type stayPut struct{}

func (stayPut) Write(context.Context, int64, string) (int64, error) { return 1, nil }
func (stayPut) Promote(context.Context, int64) error                { return nil }
func (stayPut) Read(context.Context, int64) ([]int64, error)        { return nil, nil }

type stayPutSystem struct{}

func (stayPutSystem) Start(context.Context, Config, func(Event)) (Node, Hello, error) {
	return stayPut{}, Hello{Name: "stay-put", Version: "0", Capabilities: []string{CapPromote, CapRead}}, nil
}

// TestServeRelocate: Serve answers relocate for a node that does not implement Relocator with
// code unsupported, and refuses a relocate without a target as a malformed request.
func TestServeRelocate(t *testing.T) {
	in := `{"type":"init","id":1,"protocol":"` + Version + `","node":"n1","bucket":"b","prefix":"p/"}
{"type":"relocate","id":2,"term":3,"target":"n2"}
`
	var out strings.Builder
	if err := Serve(context.Background(), strings.NewReader(in), &out, stayPutSystem{}); err != nil {
		t.Fatal(err)
	}
	d := NewNodeDecoder("n1", strings.NewReader(out.String()))
	var got []Message
	for {
		m, err := d.Next()
		if err != nil {
			break
		}
		got = append(got, m)
	}
	if len(got) != 2 || got[1].Type != TypeError || got[1].Code != CodeUnsupported || got[1].InReplyTo != 2 {
		t.Fatalf("answers %v, want init_ok and an unsupported error for request 2", got)
	}
	bad := `{"type":"init","id":1,"protocol":"` + Version + `","node":"n1"}
{"type":"relocate","id":2,"term":3}
`
	err := Serve(context.Background(), strings.NewReader(bad), io.Discard, stayPutSystem{})
	if err == nil || !strings.Contains(err.Error(), "relocate without a target") {
		t.Fatalf("want the relocate without a target refused, got %v", err)
	}
}
