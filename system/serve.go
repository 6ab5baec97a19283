package system

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Serve runs one node of a Go system as a process speaking the protocol: it reads the bench's
// requests from r (the process's stdin), starts the node with sys on init, and writes every
// answer and event to w (its stdout). Requests are handled concurrently, each in its own
// goroutine; an error the node returns that is not an *Error is answered with code unknown.
// Serve returns when r ends (the bench closed stdin) or on a malformed request.
func Serve(ctx context.Context, r io.Reader, w io.Writer, sys System) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	enc := NewEncoder(w)
	dec := NewBenchDecoder(r)
	var node Node
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		m, err := dec.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if m.Type == TypeInit {
			if node != nil {
				return fmt.Errorf("init sent twice (line %d)", dec.Line())
			}
			if m.Protocol != Version {
				return fmt.Errorf("the bench speaks %q, this node %q", m.Protocol, Version)
			}
			emit := func(e Event) {
				_ = enc.Send(Message{Type: TypeEvent, Event: e.Event, Term: e.Term, Text: e.Text})
			}
			n, hello, err := sys.Start(ctx, configOf(m), emit)
			if err != nil {
				return fmt.Errorf("start: %w", err)
			}
			node = n
			if err := enc.Send(Message{Type: TypeInitOK, InReplyTo: m.ID, Protocol: Version, Name: hello.Name,
				Version: hello.Version, Capabilities: hello.Capabilities}); err != nil {
				return err
			}
			continue
		}
		if node == nil {
			return fmt.Errorf("%s before init (line %d)", m.Type, dec.Line())
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = enc.Send(handle(ctx, node, m))
		}()
	}
}

func handle(ctx context.Context, n Node, m Message) Message {
	rep := Message{InReplyTo: m.ID}
	var err error
	switch m.Type {
	case TypeWrite:
		var term int64
		term, err = n.Write(ctx, m.Op, m.Payload)
		rep.Type, rep.Op, rep.Term = TypeWriteOK, m.Op, term
	case TypePromote:
		err = n.Promote(ctx, m.Term)
		rep.Type, rep.Term = TypePromoteOK, m.Term
	case TypeRelocate:
		rep.Type, rep.Term = TypeRelocateOK, m.Term
		if r, ok := n.(Relocator); ok {
			err = r.Relocate(ctx, m.Term, m.Target)
		} else {
			err = &Error{Code: CodeUnsupported, Text: "the node does not implement relocate"}
		}
	case TypeRead:
		var ops []int64
		ops, err = n.Read(ctx, m.Term)
		rep.Type, rep.Ops = TypeReadOK, ops
	}
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			e = &Error{Code: CodeUnknown, Text: err.Error()}
		}
		return Message{Type: TypeError, InReplyTo: m.ID, Code: e.Code, Text: e.Text}
	}
	return rep
}
