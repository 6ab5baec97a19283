package faults

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/fencebench/fencebench/history"
)

// Set holds the open faults of one target, in the order they opened, and records their life:
// a history.FaultStart event when a fault opens and a history.FaultEnd when it heals, with the
// set's subject as the event's writer and the fault's name as its detail. It is the one place
// fault events come from. Healing one fault leaves the others of the set in place: when the
// target can only lift a layer as a whole, the set injects the layer's other open faults
// again. Its methods are safe for concurrent use.
type Set struct {
	subject string
	target  any
	record  func(history.Event)

	mu   sync.Mutex
	open []Fault
}

// NewSet returns an empty set of faults acting on target and recorded for subject (a writer
// id) into record; a nil record discards the events.
func NewSet(subject string, target any, record func(history.Event)) *Set {
	if record == nil {
		record = func(history.Event) {}
	}
	return &Set{subject: subject, target: target, record: record}
}

// Open injects f. Its start is recorded when it opens: after the injection succeeded, or
// before it for a protocol fault, which acts on the writer at once (the writer's own events
// then follow the start). Opening a fault already open under the same name injects the new
// value and records nothing. A one-off fault ([FuncFault] without heal) is recorded and not
// kept. A failed injection records nothing and leaves the set as it was.
func (s *Set) Open(f Fault) error {
	early := f.Layer() == Protocol
	if oneOff(f) {
		// A one-off keeps nothing in the set, so it is injected outside the set's lock: a crash
		// waits for the writer's goroutines to stop, and one of them may at that moment be
		// opening another fault of this set (an inline step at one of its events).
		if early {
			s.emit(history.FaultStart, f.Name())
		}
		if err := f.inject(s.target); err != nil {
			return fmt.Errorf("%s on %s: %w", f.Name(), s.subject, err)
		}
		if !early {
			s.emit(history.FaultStart, f.Name())
		}
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.index(f.Name())
	if i < 0 && early {
		s.emit(history.FaultStart, f.Name())
	}
	if err := f.inject(s.target); err != nil {
		return fmt.Errorf("%s on %s: %w", f.Name(), s.subject, err)
	}
	switch {
	case i < 0:
		s.open = append(s.open, f)
		if !early {
			s.emit(history.FaultStart, f.Name())
		}
	default:
		s.open[i] = f
	}
	return nil
}

// Close heals the open fault called name and records its end; the set's other faults stay in
// place. A name that is not open is ignored.
func (s *Set) Close(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.index(name)
	if i < 0 {
		return nil
	}
	f := s.open[i]
	s.open = slices.Delete(s.open, i, i+1)
	var errs []error
	cleared, err := f.heal(s.target)
	if err != nil {
		errs = append(errs, fmt.Errorf("heal %s on %s: %w", name, s.subject, err))
	}
	if cleared {
		for _, g := range s.open {
			if g.Layer() != f.Layer() {
				continue
			}
			if err := g.inject(s.target); err != nil {
				errs = append(errs, fmt.Errorf("restore %s on %s after healing %s: %w", g.Name(), s.subject, name, err))
			}
		}
	}
	s.emit(history.FaultEnd, name)
	return errors.Join(errs...)
}

// CloseLayer heals every open fault of layer l and records their ends, in the order they
// opened. A target that lifts the layer as a whole is healed once.
func (s *Set) CloseLayer(l Layer) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var closing, keep []Fault
	for _, f := range s.open {
		if f.Layer() == l {
			closing = append(closing, f)
		} else {
			keep = append(keep, f)
		}
	}
	s.open = keep
	var errs []error
	cleared := false
	for _, f := range closing {
		if !cleared {
			c, err := f.heal(s.target)
			if err != nil {
				errs = append(errs, fmt.Errorf("heal %s on %s: %w", f.Name(), s.subject, err))
			}
			cleared = c
		}
		s.emit(history.FaultEnd, f.Name())
	}
	return errors.Join(errs...)
}

// Names lists the open faults, in the order they opened.
func (s *Set) Names() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, len(s.open))
	for i, f := range s.open {
		out[i] = f.Name()
	}
	return out
}

func (s *Set) index(name string) int {
	return slices.IndexFunc(s.open, func(f Fault) bool { return f.Name() == name })
}

func (s *Set) emit(kind history.Kind, name string) {
	s.record(history.Event{Kind: kind, Writer: s.subject, Detail: name})
}
