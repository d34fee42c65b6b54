package rpc

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"syscall"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
)

// Pool keeps Thrift clients of one service type to many peers. Thrift
// clients are not safe for concurrent calls, so a Pool hands each call its
// own connection and returns it afterwards. Connections per peer are capped
// (Config.MaxConnsPerPeer): past the cap a call waits for one to come back
// rather than dialing, because new connections are far costlier than reuse
// and a dial storm under load turns slowness into failures. Safe for
// concurrent use.
//
// Each connection has a ConnID, which names it for as long as it is
// open, so that a caller can keep state per connection (a session) and
// later call on that very connection (CallOptions.Conn). A hook set with
// OnOpen runs on every new connection before its first call.
type Pool[C any] struct {
	cfg       Config
	tcfg      *thrift.TConfiguration
	newClient func(thrift.TClient) C
	open      func(ctx context.Context, addr string, c C) error // OnOpen's hook; nil: none
	addrs     *lastKnownAddrs                                   // resolves peers' host names for dial
	made      *CallCounter                                      // Config.Calls' Made; nil: not counted

	mu     sync.Mutex
	peers  map[string]*peer[C]
	nextID ConnID
	closed bool
}

// ConnID names one pooled connection. A pool never gives two connections
// the same ID; zero names none.
type ConnID uint64

// CallOptions adjust one call (CallWith).
type CallOptions struct {
	// Timeout, when positive, bounds each read and write of this call
	// instead of Config.CallTimeout (an OnOpen hook keeps CallTimeout).
	Timeout time.Duration
	// Conn, when not zero, makes the call on that connection only: it is
	// never dialed anew nor sent again. The call fails with ErrConnGone
	// if the connection is closed, and with ErrConnBusy if it carries
	// another call until the call's timeout (or ConnectTimeout) passes.
	Conn ConnID
}

// ErrConnGone means the connection a call named (CallOptions.Conn) is
// closed: a call on it failed, its peer closed it, or the pool dropped
// it. The call was not sent.
var ErrConnGone = errors.New("the connection is closed")

// ErrConnBusy means the connection a call named (CallOptions.Conn) stayed
// in use by another call. The call was not sent.
var ErrConnBusy = errors.New("the connection is carrying another call")

// peer is one address's connections.
type peer[C any] struct {
	idle   []*pooled[C]
	inUse  map[ConnID]bool // connections carrying a call
	parked map[ConnID]bool // connections only calls naming them may use (Park)
	open   int             // connections open or being dialed
	free   chan struct{}   // closed when a connection is returned or closed
}

// signal wakes callers waiting for a connection. Called with the pool lock.
func (p *peer[C]) signal() {
	close(p.free)
	p.free = make(chan struct{})
}

type pooled[C any] struct {
	id       ConnID
	conn     net.Conn      // as dialed, for idleConnAlive
	counted  *countingConn // conn, counting the bytes read through it
	trans    thrift.TTransport
	client   C
	lastUsed time.Time
	reused   bool // taken from the idle list for this call
}

// countingConn counts the bytes read from a client connection, so that a
// failed call can tell whether any byte of its reply arrived. Used by one
// call at a time, as its connection is.
//
// It also applies a call's own timeout (CallOptions.Timeout): Thrift sets
// a deadline of the pool's CallTimeout before each read and write, and
// while timeout is set each such deadline is replaced by one timeout from
// now.
type countingConn struct {
	net.Conn
	read    int64
	timeout time.Duration // zero: the deadlines Thrift sets
}

func (c *countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.read += int64(n)
	return n, err
}

func (c *countingConn) deadline(t time.Time) time.Time {
	if c.timeout > 0 {
		return time.Now().Add(c.timeout)
	}
	return t
}

func (c *countingConn) SetDeadline(t time.Time) error { return c.Conn.SetDeadline(c.deadline(t)) }
func (c *countingConn) SetReadDeadline(t time.Time) error {
	return c.Conn.SetReadDeadline(c.deadline(t))
}
func (c *countingConn) SetWriteDeadline(t time.Time) error {
	return c.Conn.SetWriteDeadline(c.deadline(t))
}

// checkIdleAfter is how long a pooled connection may sit idle before it is
// checked for a close by its server (see idleConnAlive) before reuse. A
// server that closes idle connections does so after seconds (see
// Config.IdleTimeout), so a connection reused sooner cannot have been
// closed for idleness, and the hot path pays no system call.
const checkIdleAfter = 250 * time.Millisecond

// NewPool returns a pool that wraps connections with newClient, for example
// sparrowrpc.NewGetTaskServiceClient.
func NewPool[C any](cfg Config, newClient func(thrift.TClient) C) *Pool[C] {
	cfg = cfg.withDefaults()
	var made *CallCounter
	if cfg.Calls != nil {
		made = &cfg.Calls.Made
	}
	return &Pool[C]{
		made:      made,
		cfg:       cfg,
		tcfg:      cfg.thrift(cfg.CallTimeout),
		newClient: newClient,
		addrs:     newLastKnownAddrs(net.DefaultResolver, lastKnownNames),
		peers:     make(map[string]*peer[C]),
	}
}

// OnOpen makes open run on every new connection, with its address,
// before the call the connection was opened for: a session's opening,
// such as a frontend's registration with whichever scheduler a load
// balancer connected it to. An error closes the connection and fails
// that call with a *DialError (it was never sent). Call OnOpen before
// the pool's first call.
func (p *Pool[C]) OnOpen(open func(ctx context.Context, addr string, c C) error) { p.open = open }

// Park keeps connection id to addr for the calls that name it
// (CallOptions.Conn) and gives it no other call: for a connection whose
// peer refuses new work but finishes what it took, as a draining
// scheduler behind a load balancer does. A parked connection is closed
// once found closed by its peer, or when a call on it fails; it counts
// against MaxConnsPerPeer until then.
func (p *Pool[C]) Park(addr string, id ConnID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pr := p.peers[addr]; pr != nil && id != 0 {
		pr.parked[id] = true
		pr.signal()
	}
}

// ErrBusy means every connection to a peer stayed in use for the whole
// connect timeout: the caller is overloading that peer, which is not the
// same as the peer having failed.
var ErrBusy = errors.New("every connection to the peer is in use")

// DialError means a call was never sent: its connection could not be
// opened. Unlike a failure after sending, the call certainly had no effect.
type DialError struct {
	Addr string
	Err  error
}

func (e *DialError) Error() string { return fmt.Sprintf("connect to %s: %v", e.Addr, e.Err) }
func (e *DialError) Unwrap() error { return e.Err }

// ErrClosed is returned by calls on a closed Pool.
var ErrClosed = errors.New("rpc pool closed")

// Call runs fn with a client connected to addr. A transport or protocol
// error closes that connection, since its stream may be out of step; other
// errors (the service's declared exceptions) keep it for reuse.
//
// A call is sent again in one case only: it went out on a reused
// connection and the server closed that connection without sending a byte
// of the reply. That is a server closing an idle connection (its idle
// timeout, or eviction at its connection cap) as the call arrived, which it
// never reads; idleConnAlive cannot see a close that crosses the call on
// the wire. The repeat goes on a new connection and is not repeated again.
// Any other failure after sending is returned, never retried: a retried
// getTask or launchTask could act twice. (A server that read the call and
// then died without replying also reads as this case; the repeat then
// meets a closed port.)
func (p *Pool[C]) Call(ctx context.Context, addr string, fn func(ctx context.Context, c C) error) error {
	return p.CallWith(ctx, addr, CallOptions{}, func(ctx context.Context, _ ConnID, c C) error { return fn(ctx, c) })
}

// CallWith is Call with options, giving fn the ID of the connection it
// runs on (a call sent again runs fn again, on its new connection).
func (p *Pool[C]) CallWith(ctx context.Context, addr string, opts CallOptions, fn func(ctx context.Context, id ConnID, c C) error) error {
	if opts.Conn != 0 {
		return p.callOn(ctx, addr, opts, fn)
	}
	pc, err := p.get(ctx, addr, false)
	if err != nil {
		return err
	}
	read := pc.counted.read
	err = p.run(ctx, pc, opts, fn)
	if err != nil && isConnError(err) {
		p.discard(addr, pc)
		if !pc.reused || pc.counted.read != read || !peerClosed(err) {
			return fmt.Errorf("call %s: %w", addr, err)
		}
		first := err
		if pc, err = p.get(ctx, addr, true); err != nil {
			// Not a DialError or ErrBusy: the first send may have been
			// read by a server that then died, so the call is in doubt.
			return fmt.Errorf("call %s: %w (sending it again: %v)", addr, first, err)
		}
		if err = p.run(ctx, pc, opts, fn); err != nil && isConnError(err) {
			p.discard(addr, pc)
			return fmt.Errorf("call %s (again, after the server closed an idle connection): %w", addr, err)
		}
	}
	p.put(addr, pc)
	return err
}

// run runs fn on pc with the call's own timeout, if any.
func (p *Pool[C]) run(ctx context.Context, pc *pooled[C], opts CallOptions, fn func(ctx context.Context, id ConnID, c C) error) error {
	pc.counted.timeout = opts.Timeout
	defer func() { pc.counted.timeout = 0 }()
	return fn(ctx, pc.id, pc.client)
}

// callOn runs fn on connection opts.Conn to addr, waiting while it carries
// another call, for at most opts.Timeout (else ConnectTimeout).
func (p *Pool[C]) callOn(ctx context.Context, addr string, opts CallOptions, fn func(ctx context.Context, id ConnID, c C) error) error {
	wait := opts.Timeout
	if wait <= 0 {
		wait = p.cfg.ConnectTimeout
	}
	var deadline <-chan time.Time
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return ErrClosed
		}
		pr := p.peers[addr]
		var pc *pooled[C]
		if pr != nil {
			for i, c := range pr.idle {
				if c.id == opts.Conn {
					pc = c
					pr.idle = append(pr.idle[:i], pr.idle[i+1:]...)
					break
				}
			}
		}
		switch {
		case pc != nil:
			if !p.reusable(pc, time.Now()) {
				pr.open--
				delete(pr.parked, pc.id)
				pr.signal()
				p.mu.Unlock()
				pc.trans.Close()
				return fmt.Errorf("call %s: %w", addr, ErrConnGone)
			}
			pr.inUse[pc.id] = true
			p.mu.Unlock()
			err := p.run(ctx, pc, opts, fn)
			if err != nil && isConnError(err) {
				p.discard(addr, pc)
				return fmt.Errorf("call %s: %w", addr, err)
			}
			p.put(addr, pc)
			return err
		case pr == nil || !pr.inUse[opts.Conn]:
			p.mu.Unlock()
			return fmt.Errorf("call %s: %w", addr, ErrConnGone)
		}
		free := pr.free
		p.mu.Unlock()
		if deadline == nil {
			t := time.NewTimer(wait)
			defer t.Stop()
			deadline = t.C
		}
		select {
		case <-free:
		case <-deadline:
			return fmt.Errorf("call %s: %w", addr, ErrConnBusy)
		case <-ctx.Done():
			return fmt.Errorf("call %s: %w", addr, ctx.Err())
		}
	}
}

// peerClosed reports whether err says the peer closed the connection: an
// end of stream, a reset, or a write to a closed socket.
func peerClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// IsUnknownMethod reports whether err is a peer's answer that it has no
// such method: an older peer, to which a caller of an extension falls
// back on the original calls. Nothing was done by the peer.
func IsUnknownMethod(err error) bool {
	var ae thrift.TApplicationException
	return errors.As(err, &ae) && ae.TypeId() == thrift.UNKNOWN_METHOD
}

func isConnError(err error) bool {
	var te thrift.TTransportException
	var pe thrift.TProtocolException
	if errors.As(err, &te) || errors.As(err, &pe) {
		return true
	}
	// A server answers an unknown method, or arguments it could not read,
	// with an application exception and then closes the connection; only a
	// handler's own error (INTERNAL_ERROR) leaves the stream usable.
	var ae thrift.TApplicationException
	return errors.As(err, &ae) && ae.TypeId() != thrift.INTERNAL_ERROR
}

// get returns a connection to addr for one call: an idle one unless fresh
// is set, else a new one, waiting while MaxConnsPerPeer are in use.
func (p *Pool[C]) get(ctx context.Context, addr string, fresh bool) (*pooled[C], error) {
	var deadline <-chan time.Time
	for {
		now := time.Now()
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, ErrClosed
		}
		pr := p.peers[addr]
		if pr == nil {
			pr = &peer[C]{free: make(chan struct{}), inUse: make(map[ConnID]bool), parked: make(map[ConnID]bool)}
			p.peers[addr] = pr
		}
		for i := len(pr.idle) - 1; i >= 0; i-- {
			pc := pr.idle[i]
			parked := pr.parked[pc.id]
			if parked && p.reusable(pc, now) || !parked && fresh {
				continue
			}
			// A parked connection found closed by its peer is dropped here.
			pr.idle = append(pr.idle[:i], pr.idle[i+1:]...)
			if !parked && p.reusable(pc, now) {
				pr.inUse[pc.id] = true
				p.mu.Unlock()
				pc.reused = true
				return pc, nil
			}
			delete(pr.parked, pc.id)
			pr.open--
			pc.trans.Close()
		}
		if fresh && pr.open >= p.cfg.MaxConnsPerPeer {
			// Make room for the new connection: close the oldest idle one
			// not parked.
			for i, pc := range pr.idle {
				if !pr.parked[pc.id] {
					pr.idle = append(pr.idle[:i], pr.idle[i+1:]...)
					pr.open--
					pc.trans.Close()
					break
				}
			}
		}
		if pr.open < p.cfg.MaxConnsPerPeer {
			pr.open++
			p.nextID++
			id := p.nextID
			pr.inUse[id] = true
			p.mu.Unlock()
			pc, err := p.dial(ctx, addr, id)
			if err != nil {
				p.mu.Lock()
				pr.open--
				delete(pr.inUse, id)
				pr.signal()
				p.mu.Unlock()
			}
			return pc, err
		}
		free := pr.free
		p.mu.Unlock()
		if deadline == nil {
			t := time.NewTimer(p.cfg.ConnectTimeout)
			defer t.Stop()
			deadline = t.C
		}
		select {
		case <-free:
		case <-deadline:
			return nil, fmt.Errorf("call %s: %w (%d open)", addr, ErrBusy, p.cfg.MaxConnsPerPeer)
		case <-ctx.Done():
			return nil, fmt.Errorf("call %s: %w", addr, ctx.Err())
		}
	}
}

// reusable reports whether an idle pooled connection may carry the next
// call. With an IdleTimeout configured, connections idle for half of it
// are dropped rather than raced against a server applying the same
// timeout; any connection idle past checkIdleAfter is checked for a close
// by its server, so that a server that closes idle connections costs the
// caller a new connection, never a failed call.
func (p *Pool[C]) reusable(pc *pooled[C], now time.Time) bool {
	idle := now.Sub(pc.lastUsed)
	if p.cfg.IdleTimeout > 0 && idle >= p.cfg.IdleTimeout/2 {
		return false
	}
	return idle < checkIdleAfter || idleConnAlive(pc.conn)
}

// dial opens connection id to addr and runs the OnOpen hook on it.
func (p *Pool[C]) dial(ctx context.Context, addr string, id ConnID) (*pooled[C], error) {
	conn, err := p.connect(ctx, addr)
	if err != nil {
		return nil, &DialError{Addr: addr, Err: thrift.NewTTransportExceptionFromError(err)}
	}
	counted := &countingConn{Conn: conn}
	framed := newFramed(thrift.NewTSocketFromConnConf(counted, p.tcfg), p.tcfg)
	prot := newCallerProtocol(framed, p.tcfg, p.made)
	pc := &pooled[C]{id: id, conn: conn, counted: counted, trans: framed, client: p.newClient(thrift.NewTStandardClient(prot, prot))}
	if p.open != nil {
		if err := p.open(ctx, addr, pc.client); err != nil {
			framed.Close()
			return nil, &DialError{Addr: addr, Err: fmt.Errorf("opening the connection: %w", err)}
		}
	}
	return pc, nil
}

// connect opens a connection to addr ("host:port"), TLS when configured,
// within ConnectTimeout (the handshake included). A host name is resolved
// through p.addrs, so a peer whose name has just left DNS is dialed at its
// last known addresses; TLS still verifies the peer's certificate against
// the host name.
func (p *Pool[C]) connect(ctx context.Context, addr string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.ConnectTimeout)
	defer cancel()
	host, conn, err := p.dialTCP(ctx, addr)
	if err != nil || p.cfg.TLS == nil {
		return conn, err
	}
	cfg := p.cfg.TLS
	if cfg.ServerName == "" {
		cfg = cfg.Clone()
		cfg.ServerName = host
	}
	tc := tls.Client(conn, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		conn.Close()
		return nil, err
	}
	return tc, nil
}

// dialTCP opens a TCP connection to addr, resolving its host through
// p.addrs; it returns the host too.
func (p *Pool[C]) dialTCP(ctx context.Context, addr string) (string, net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", nil, err
	}
	ips := []string{host}
	if _, err := netip.ParseAddr(host); err != nil {
		var fallback error
		if ips, fallback, err = p.addrs.resolve(ctx, host); err != nil {
			return "", nil, err
		}
		if fallback != nil && p.cfg.DialLog != nil {
			p.cfg.DialLog.Debug().Err(fallback).Str("peer", addr).Strs("addresses", ips).
				Msg("peer's name did not resolve; dialing the addresses it last resolved to")
		}
	}
	conn, err := dialFirst(ctx, ips, port)
	return host, conn, err
}

// Reachable reports whether addr accepts a TCP connection within
// timeout, its host name resolved as for calls (a name that has left DNS
// is dialed at the addresses it last resolved to). It sends nothing, not
// even a TLS handshake.
func (p *Pool[C]) Reachable(ctx context.Context, addr string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, conn, err := p.dialTCP(ctx, addr)
	if err != nil {
		return err
	}
	return conn.Close()
}

// dialFirst connects over TCP to the first of ips (at port) that accepts,
// in order, each attempt given an equal share of the time left until
// ctx's deadline. The error is the first attempt's.
func dialFirst(ctx context.Context, ips []string, port string) (net.Conn, error) {
	var d net.Dialer
	first := errors.New("no addresses to dial")
	for i, ip := range ips {
		attempt, cancel := ctx, context.CancelFunc(func() {})
		if deadline, ok := ctx.Deadline(); ok {
			share := time.Until(deadline) / time.Duration(len(ips)-i)
			attempt, cancel = context.WithTimeout(ctx, share)
		}
		conn, err := d.DialContext(attempt, "tcp", net.JoinHostPort(ip, port))
		cancel()
		if err == nil {
			return conn, nil
		}
		if i == 0 {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, first
}

func (p *Pool[C]) put(addr string, pc *pooled[C]) {
	pc.lastUsed = time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	pr := p.peers[addr]
	if p.closed || pr == nil {
		pc.trans.Close()
		return
	}
	delete(pr.inUse, pc.id)
	pr.idle = append(pr.idle, pc)
	pr.signal()
}

// discard closes a connection whose stream may be out of step.
func (p *Pool[C]) discard(addr string, pc *pooled[C]) {
	pc.trans.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	if pr := p.peers[addr]; pr != nil {
		pr.open--
		delete(pr.inUse, pc.id)
		delete(pr.parked, pc.id)
		pr.signal()
	}
}

// Forget closes the idle connections to addr, e.g. when the peer left.
func (p *Pool[C]) Forget(addr string) {
	p.mu.Lock()
	pr := p.peers[addr]
	var idle []*pooled[C]
	if pr != nil {
		idle = pr.idle
		pr.idle = nil
		pr.open -= len(idle)
		for _, pc := range idle {
			delete(pr.parked, pc.id)
		}
		if pr.open == 0 {
			delete(p.peers, addr)
		}
		pr.signal()
	}
	p.mu.Unlock()
	for _, pc := range idle {
		pc.trans.Close()
	}
}

// Close closes every idle connection; connections in use close when their
// calls return.
func (p *Pool[C]) Close() {
	p.mu.Lock()
	p.closed = true
	peers := p.peers
	p.peers = nil
	for _, pr := range peers {
		pr.signal()
	}
	p.mu.Unlock()
	for _, pr := range peers {
		for _, pc := range pr.idle {
			pc.trans.Close()
		}
	}
}
