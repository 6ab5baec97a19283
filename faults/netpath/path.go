package netpath

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"

	"github.com/fencebench/fencebench/faults"
)

const (
	// toxicWatchdog bounds a Toxiproxy toxic operation: adding or updating a toxic on live
	// links can block when a link is wedged.
	toxicWatchdog = 5 * time.Second
	// connDrainWait bounds how long the path waits for clients to notice their connections were
	// closed (their transport drops them from its idle pool when it does).
	connDrainWait = 2 * time.Second
)

// Path is one writer's fault path: a Toxiproxy proxy (faults.L4) in front of an faults.L7 fault proxy
// listener in front of the store. Its methods are safe for concurrent use.
type Path struct {
	b      *Bench
	writer string
	listen string // the Toxiproxy listener the client dials; stable across Heal
	l7     string // the faults.L7 listener the Toxiproxy proxy forwards to
	cred   credential
	srv    *http.Server
	served chan struct{}

	mu    sync.Mutex // faults.L4 state
	proxy *toxiproxy.Proxy
	set   *faults.Set // the faults open on the path

	rules *faults.Rules

	connMu sync.Mutex
	conns  map[*trackedConn]struct{}
}

func newPath(b *Bench, writer string) (*Path, error) {
	cred, err := newCredential()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faults: faults.L7 listener for %s: %w", writer, err)
	}
	p := &Path{b: b, writer: writer, l7: ln.Addr().String(), cred: cred, served: make(chan struct{}),
		rules: faults.NewRules(writer), conns: map[*trackedConn]struct{}{}}
	p.set = faults.NewSet(writer, p, b.o.Record)
	p.srv = &http.Server{
		Handler:  b.o.Guard.Handler("the fault proxy of "+writer, http.HandlerFunc(p.serveHTTP)),
		ErrorLog: log.New(discard{}, "", 0),
	}
	serve := ln
	if b.srvTLS != nil {
		// HTTP/1.1 only: no h2 upgrade, whatever the client offers.
		p.srv.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){}
		serve = tls.NewListener(ln, b.srvTLS)
	}
	b.o.Guard.Go("the fault proxy listener of "+writer, func() { _ = p.srv.Serve(serve) }, func() { close(p.served) })
	p.proxy = toxiproxy.NewProxy(b.tp, p.proxyName(), "127.0.0.1:0", p.l7)
	if err := b.tp.Collection.Add(p.proxy, true); err != nil {
		_ = p.srv.Close()
		<-p.served
		return nil, fmt.Errorf("faults: toxiproxy proxy for %s: %w", writer, err)
	}
	p.listen = p.proxy.Listen
	b.log.Debug("faults: path created", "writer", writer, "l4", p.listen, "l7", p.l7)
	return p, nil
}

type discard struct{}

func (discard) Write(b []byte) (int, error) { return len(b), nil }

func (p *Path) proxyName() string { return "faults/" + p.writer }

// Faults is the set of faults open on the path. Open and heal the path's faults through it
// (its faults.L4 faults, its rules) so that healing one restores the others and every fault's start
// and end is recorded; the methods below act on the path directly and record nothing.
func (p *Path) Faults() *faults.Set { return p.set }

// Writer is the name the path was created for.
func (p *Path) Writer() string { return p.writer }

// Credentials is the path's own SigV4 key pair, drawn from crypto/rand when the path was
// created: the writer's client signs with it (instead of the store's credentials), and the
// path refuses every request that does not verify against it.
func (p *Path) Credentials() (accessKey, secretKey string) {
	return p.cred.accessKey, p.cred.secretKey
}

// Addr is the address of the path's entry (the Toxiproxy listener) that DialContext dials.
func (p *Path) Addr() string { return p.listen }

// DialContext opens a connection into the path, whatever address the client asked for: plug it
// into store.Config.DialContext (or an http.Transport) and keep the real store endpoint in the
// client's configuration. Connections it returns are tracked so that Partition, Reset, Heal and
// Close can close them.
func (p *Path) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	_ = addr // the path has one destination
	if p.b.isClosed() {
		return nil, ErrClosed
	}
	if !strings.HasPrefix(network, "tcp") {
		return nil, fmt.Errorf("faults: network %q not supported", network)
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", p.listen)
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: c, p: p, done: make(chan struct{})}
	p.connMu.Lock()
	p.conns[tc] = struct{}{}
	p.connMu.Unlock()
	return tc, nil
}

// trackedConn is a client connection handed out by DialContext. done is closed when its owner
// (the client's transport) closes it.
type trackedConn struct {
	net.Conn
	p    *Path
	once sync.Once
	done chan struct{}
}

func (c *trackedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		close(c.done)
		c.p.connMu.Lock()
		delete(c.p.conns, c)
		c.p.connMu.Unlock()
	})
	return err
}

// closeClientConns closes every connection the path handed out, then waits up to wait for
// their owners to notice (an http.Transport closes a connection, and drops it from its idle
// pool, as soon as its read loop sees the error). After that no request can be sent on one of
// them, so the next call dials afresh.
func (p *Path) closeClientConns(wait time.Duration) {
	p.connMu.Lock()
	conns := make([]*trackedConn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	p.connMu.Unlock()
	for _, c := range conns {
		_ = c.Conn.Close()
	}
	if wait <= 0 {
		return
	}
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for _, c := range conns {
		select {
		case <-c.done:
		case <-deadline.C:
			return
		}
	}
}

// ---- faults.L4 faults ----

// Partition cuts the path. faults.Refuse stops the proxy (dials fail fast, open connections are
// closed); faults.Blackhole adds timeout toxics with timeout 0 on both directions (bytes stop, nothing
// is closed, the client waits for its own deadline). Heal undoes it.
func (p *Path) Partition(mode faults.PartitionMode) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.b.isClosed() {
		return ErrClosed
	}
	switch mode {
	case faults.Refuse:
		p.proxy.Stop()
		p.closeClientConns(connDrainWait)
	case faults.Blackhole:
		if err := p.startLocked(); err != nil {
			return err
		}
		for _, t := range []struct{ name, stream string }{{"blackhole_up", "upstream"}, {"blackhole_down", "downstream"}} {
			if err := p.setToxicLocked(t.name, "timeout", t.stream, `{"timeout":0}`); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("faults: unknown partition mode %v", mode)
	}
	p.b.log.Debug("faults: partition", "writer", p.writer, "mode", mode.String())
	return nil
}

// Heal removes every faults.L4 fault of the path: partition and toxics. It replaces the
// path's Toxiproxy proxy by a fresh one on the same address (removing toxics from live links
// can wedge Toxiproxy; a fresh proxy cannot), which closes every connection the path carried,
// and returns once the clients have dropped them. Calls in flight at that moment fail with a
// transport error; the next call opens a new, healthy connection.
func (p *Path) Heal() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.b.isClosed() {
		return ErrClosed
	}
	if err := p.b.tp.Collection.Remove(p.proxyName()); err != nil && !errors.Is(err, toxiproxy.ErrProxyNotFound) {
		return fmt.Errorf("faults: heal %s: %w", p.writer, err)
	}
	p.closeClientConns(connDrainWait)
	var err error
	for attempt := 0; attempt < 20; attempt++ {
		np := toxiproxy.NewProxy(p.b.tp, p.proxyName(), p.listen, p.l7)
		if err = p.b.tp.Collection.Add(np, true); err == nil {
			p.proxy = np
			p.b.log.Debug("faults: healed", "writer", p.writer)
			return nil
		}
		time.Sleep(50 * time.Millisecond) // the old listener's port is being released
	}
	return fmt.Errorf("faults: heal %s: rebind %s: %w", p.writer, p.listen, err)
}

// Latency delays the request direction by d (every chunk of bytes the client sends reaches the
// store d later), with toxicity 1.0 and no jitter: each call takes about d longer. Calling it
// again changes the delay.
func (p *Path) Latency(d time.Duration) error {
	if d < 0 {
		return errors.New("faults: negative latency")
	}
	return p.toxic("latency_up", "latency", "upstream", fmt.Sprintf(`{"latency":%d,"jitter":0}`, d.Milliseconds()))
}

// Bandwidth limits each direction of every connection of the path to kbps kilobytes per
// second. Calling it again changes the rate.
func (p *Path) Bandwidth(kbps int64) error {
	if kbps <= 0 {
		return errors.New("faults: bandwidth must be positive")
	}
	attrs := fmt.Sprintf(`{"rate":%d}`, kbps)
	if err := p.toxic("bandwidth_up", "bandwidth", "upstream", attrs); err != nil {
		return err
	}
	return p.toxic("bandwidth_down", "bandwidth", "downstream", attrs)
}

// Reset makes the path reset every connection as soon as the client sends on it (a reset_peer
// toxic on the request direction): the request never reaches the store and the client sees a
// connection reset. Open connections are closed first, so every later call runs on a new
// connection and gets a real RST (on a connection that predates the toxic Toxiproxy would send a
// FIN instead).
func (p *Path) Reset() error {
	if err := p.toxic("reset_up", "reset_peer", "upstream", `{"timeout":0}`); err != nil {
		return err
	}
	p.closeClientConns(connDrainWait)
	return nil
}

// SlowClose delays by d the close of a connection by the store side as seen by the client.
func (p *Path) SlowClose(d time.Duration) error {
	if d < 0 {
		return errors.New("faults: negative slow-close delay")
	}
	return p.toxic("slow_close_down", "slow_close", "downstream", fmt.Sprintf(`{"delay":%d}`, d.Milliseconds()))
}

func (p *Path) startLocked() error {
	if err := p.proxy.Start(); err != nil && !errors.Is(err, toxiproxy.ErrProxyAlreadyStarted) {
		return fmt.Errorf("faults: start proxy of %s: %w", p.writer, err)
	}
	return nil
}

// toxic adds or updates a toxic on the path.
func (p *Path) toxic(name, typ, stream, attrs string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.b.isClosed() {
		return ErrClosed
	}
	if err := p.setToxicLocked(name, typ, stream, attrs); err != nil {
		return err
	}
	p.b.log.Debug("faults: toxic", "writer", p.writer, "toxic", name, "attributes", attrs)
	return nil
}

// setToxicLocked adds (or updates) a toxic with toxicity 1.0, under a watchdog. Caller holds
// p.mu.
func (p *Path) setToxicLocked(name, typ, stream, attrs string) error {
	tc := p.proxy.Toxics
	errc := make(chan error, 1)
	p.b.o.Guard.Go("a toxic change on "+p.writer, func() {
		var err error
		if w := tc.GetToxic(name); w != nil {
			if sameAttributes(w.Toxic, attrs) {
				// Already in place: nothing to change.
				errc <- nil
				return
			}
			// Toxiproxy updates a toxic by decoding into the struct its running pipes read
			// (a data race under -race, and a torn delay for the bytes in flight), so a
			// changed toxic is removed and added anew: its links are rebuilt around the new one.
			if err = tc.RemoveToxic(context.Background(), name); err != nil {
				errc <- err
				return
			}
		}
		_, err = tc.AddToxicJson(strings.NewReader(fmt.Sprintf(
			`{"name":%q,"type":%q,"stream":%q,"toxicity":1.0,"attributes":%s}`, name, typ, stream, attrs)))
		errc <- err
	})
	select {
	case err := <-errc:
		if err != nil {
			return fmt.Errorf("faults: toxic %s on %s: %w", name, p.writer, err)
		}
		return nil
	case <-time.After(toxicWatchdog):
		return fmt.Errorf("faults: toxic %s on %s: toxiproxy did not answer within %v (wedged link); Heal replaces the proxy",
			name, p.writer, toxicWatchdog)
	}
}

// sameAttributes reports whether a running toxic already has the attributes attrs (a JSON
// object) gives it. It only reads the toxic.
func sameAttributes(t any, attrs string) bool {
	cur, err := json.Marshal(t)
	if err != nil {
		return false
	}
	var have, want map[string]any
	if json.Unmarshal(cur, &have) != nil || json.Unmarshal([]byte(attrs), &want) != nil {
		return false
	}
	for k, v := range want {
		if !reflect.DeepEqual(have[k], v) {
			return false
		}
	}
	return true
}
