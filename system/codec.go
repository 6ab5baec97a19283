package system

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
)

// MaxLine bounds one protocol line.
const MaxLine = 1 << 20

// Decoder reads one side's messages, one JSON object per line, strictly. Its errors are
// *HarnessError naming Node and the line.
type Decoder struct {
	node string
	rd   *bufio.Reader
	line int
	// fromNode: the messages are a node's (answers and events); otherwise the bench's
	// (requests).
	fromNode bool
}

// NewNodeDecoder decodes what node prints on its stdout.
func NewNodeDecoder(node string, r io.Reader) *Decoder {
	return &Decoder{node: node, rd: bufio.NewReaderSize(r, 64*1024), fromNode: true}
}

// NewBenchDecoder decodes the bench's requests, as a node reads them on its stdin.
func NewBenchDecoder(r io.Reader) *Decoder {
	return &Decoder{node: "bench", rd: bufio.NewReaderSize(r, 64*1024)}
}

// Line is the number of the last line read.
func (d *Decoder) Line() int { return d.line }

// Next returns the next message. io.EOF at a clean end of input; any other error is a
// *HarnessError.
func (d *Decoder) Next() (Message, error) {
	for {
		b, err := d.readLine()
		if err != nil {
			return Message{}, err
		}
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		var m Message
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&m); err != nil {
			return Message{}, d.errf("not a protocol message (%v): %s", err, quote(b))
		}
		if dec.More() {
			return Message{}, d.errf("more than one JSON value on the line: %s", quote(b))
		}
		if msg := d.check(m); msg != "" {
			return Message{}, d.errf("%s: %s", msg, quote(b))
		}
		return m, nil
	}
}

func (d *Decoder) readLine() ([]byte, error) {
	var buf []byte
	for {
		chunk, err := d.rd.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > MaxLine {
			d.line++
			return nil, d.errf("line longer than %d bytes", MaxLine)
		}
		switch {
		case err == nil:
			d.line++
			return bytes.TrimRight(buf, "\r\n"), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(buf) > 0 {
				d.line++
				return nil, d.errf("output ends inside a line (no newline): %s", quote(buf))
			}
			return nil, io.EOF
		default:
			return nil, err
		}
	}
}

func (d *Decoder) errf(format string, a ...any) error {
	return &HarnessError{Node: d.node, Line: d.line, Msg: fmt.Sprintf(format, a...)}
}

// check holds a message to its type's fields.
func (d *Decoder) check(m Message) string {
	if d.fromNode {
		switch m.Type {
		case TypeInitOK:
			if m.Protocol != Version {
				return fmt.Sprintf("init_ok speaks protocol %q, the bench %q", m.Protocol, Version)
			}
			if m.Name == "" {
				return "init_ok without a name"
			}
			for _, c := range m.Capabilities {
				if !slices.Contains(CapabilityNames, c) {
					return fmt.Sprintf("unknown capability %q (the protocol has %v)", c, CapabilityNames)
				}
			}
		case TypeWriteOK:
			if m.Op <= 0 {
				return "write_ok without the op it acknowledges"
			}
			if m.Term < 0 {
				return "write_ok with a negative term"
			}
		case TypePromoteOK, TypeReadOK, TypeRelocateOK:
			if m.Term < 0 {
				return m.Type + " with a negative term"
			}
			for _, op := range m.Ops {
				if op <= 0 {
					return fmt.Sprintf("%s lists op %d (op ids are positive)", m.Type, op)
				}
			}
		case TypeError:
			if !slices.Contains(Codes, m.Code) {
				return fmt.Sprintf("error code %q is not one of %v", m.Code, Codes)
			}
		case TypeEvent:
			if !slices.Contains(EventNames, m.Event) {
				return fmt.Sprintf("event %q is not one of %v", m.Event, EventNames)
			}
			if m.Term < 0 {
				return "event with a negative term"
			}
			if m.InReplyTo != 0 {
				return "an event answers no request (in_reply_to set)"
			}
			return ""
		case "":
			return "no type"
		default:
			return fmt.Sprintf("unknown message type %q from a node", m.Type)
		}
		if m.InReplyTo <= 0 {
			return m.Type + " without in_reply_to"
		}
		if m.AccessKey != "" || m.SecretKey != "" {
			return "a node's message carries credentials"
		}
		return ""
	}
	switch m.Type {
	case TypeInit, TypeWrite, TypePromote, TypeRead:
	case TypeRelocate:
		if m.Target == "" || m.Term <= 0 {
			return "relocate without a target or a term"
		}
	default:
		return fmt.Sprintf("unknown request type %q", m.Type)
	}
	if m.ID <= 0 {
		return m.Type + " without an id"
	}
	return ""
}

func quote(b []byte) string {
	if len(b) > 200 {
		return fmt.Sprintf("%q…", b[:200])
	}
	return fmt.Sprintf("%q", b)
}

// Encoder writes messages as JSON lines; it is safe for concurrent use.
type Encoder struct {
	mu sync.Mutex
	w  io.Writer
}

// NewEncoder writes to w.
func NewEncoder(w io.Writer) *Encoder { return &Encoder{w: w} }

// Send writes m as one line.
func (e *Encoder) Send(m Message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	_, err = e.w.Write(append(b, '\n'))
	return err
}
