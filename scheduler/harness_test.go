package scheduler

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// The harness: package tests drive a Scheduler in memory. memNet stands
// for the network: it implements NodeMonitors and Frontends by calling
// fake peers' handlers, registered by address, directly. No socket is
// opened (newCluster fails a test that leaves one open), and a peer can
// be made unreachable, lack a method, hang up, or answer later than the
// call timeout, each with the error the Thrift pool would give.

// memNet is an in-memory network of fake node monitors and frontends.
type memNet struct {
	timeout, connect time.Duration // the call and connect timeouts
	maxConns         int           // connections to one peer at once

	mu     sync.Mutex
	nodes  map[string]sparrowrpc.InternalService
	fronts map[string]sparrowrpc.FrontendService
	conns  map[string]chan struct{}   // one token per connection in use
	down   map[string]bool            // nothing listens: calls are never sent
	hangUp map[string]int             // connections accepted then closed, counted
	lacks  map[string]map[string]bool // address -> methods answered UNKNOWN_METHOD
	next   int                        // the next fake port
}

// newMemNet returns a fake network whose calls follow cfg's call and
// connect timeouts and connections per peer, with the pool's defaults.
func newMemNet(cfg rpc.Config) *memNet {
	m := &memNet{
		timeout: cfg.CallTimeout, connect: cfg.ConnectTimeout, maxConns: cfg.MaxConnsPerPeer,
		conns: make(map[string]chan struct{}),
		nodes: make(map[string]sparrowrpc.InternalService), fronts: make(map[string]sparrowrpc.FrontendService),
		down: make(map[string]bool), hangUp: make(map[string]int), lacks: make(map[string]map[string]bool),
	}
	if m.timeout <= 0 {
		m.timeout = rpc.DefaultCallTimeout
	}
	if m.connect <= 0 {
		m.connect = rpc.DefaultConnectTimeout
	}
	if m.maxConns <= 0 {
		m.maxConns = rpc.DefaultMaxConnsPerPeer
	}
	return m
}

// conn takes a connection to addr, waiting up to the connect timeout for
// one to free when maxConns are in use, and returns its release.
func (m *memNet) conn(addr string) (func(), error) {
	m.mu.Lock()
	c := m.conns[addr]
	if c == nil {
		c = make(chan struct{}, m.maxConns)
		m.conns[addr] = c
	}
	m.mu.Unlock()
	t := time.NewTimer(m.connect)
	defer t.Stop()
	select {
	case c <- struct{}{}:
		return func() { <-c }, nil
	case <-t.C:
		return nil, rpc.ErrBusy
	}
}

// addr returns a fresh address on the fake network.
func (m *memNet) addr() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.next++
	return fmt.Sprintf("127.0.0.1:%d", 40000+m.next)
}

func (m *memNet) serveNode(addr string, h sparrowrpc.InternalService) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.nodes[addr] = h
	delete(m.down, addr)
}

func (m *memNet) serveFrontend(addr string, h sparrowrpc.FrontendService) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fronts[addr] = h
	delete(m.down, addr)
}

// stop makes addr unreachable, as a closed server is.
func (m *memNet) stop(addr string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.down[addr] = true
}

// hangUpAt makes addr accept each connection and close it at once.
func (m *memNet) hangUpAt(addr string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.hangUp[addr] = 0
}

// dials returns how many connections a hang-up address accepted.
func (m *memNet) dials(addr string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.hangUp[addr]
}

// lack makes addr answer method UNKNOWN_METHOD, as an older build does.
func (m *memNet) lack(addr, method string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lacks[addr] == nil {
		m.lacks[addr] = make(map[string]bool)
	}
	m.lacks[addr][method] = true
}

// call runs handler method at addr as a Thrift call would: not sent if
// nothing listens there, failed after sending on a hang-up or past the
// call timeout (the handler may still run to its end), and a handler's
// own error turned into the application exception a client gets.
func (m *memNet) call(ctx context.Context, addr, method string, fn func(ctx context.Context) error) error {
	m.mu.Lock()
	down := m.down[addr]
	_, hangUp := m.hangUp[addr]
	if hangUp {
		m.hangUp[addr]++
	}
	lacks := m.lacks[addr][method]
	m.mu.Unlock()
	switch {
	case down:
		return &rpc.DialError{Addr: addr, Err: errors.New("connection refused")}
	case hangUp:
		return fmt.Errorf("call %s: %w", addr, thrift.NewTTransportException(thrift.END_OF_FILE, "EOF"))
	case lacks:
		return fmt.Errorf("call %s: %w", addr, thrift.NewTApplicationException(thrift.UNKNOWN_METHOD, "Unknown function "+method))
	}
	release, err := m.conn(addr)
	if err != nil {
		return err
	}
	defer release()
	done := make(chan error, 1)
	go func() { done <- fn(ctx) }()
	t := time.NewTimer(m.timeout)
	defer t.Stop()
	select {
	case err := <-done:
		return handlerError(err)
	case <-t.C:
		return fmt.Errorf("call %s: %w", addr, thrift.NewTTransportException(thrift.TIMED_OUT, "i/o timeout"))
	}
}

// handlerError is what a Thrift client gets for a handler's error: a
// declared exception as itself, anything else as an internal error.
func handlerError(err error) error {
	var ire *sparrowrpc.IncompleteRequestException
	var ae thrift.TApplicationException
	if err == nil || errors.As(err, &ire) || errors.As(err, &ae) {
		return err
	}
	return thrift.NewTApplicationException(thrift.INTERNAL_ERROR, err.Error())
}

func (m *memNet) node(addr string) sparrowrpc.InternalService {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.nodes[addr]
}

func (m *memNet) frontend(addr string) sparrowrpc.FrontendService {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.fronts[addr]
}

// unserved is the error for an address with no peer at all.
func unserved(addr string) error {
	return &rpc.DialError{Addr: addr, Err: errors.New("no such host on the fake network")}
}

func (m *memNet) EnqueueTaskReservations(ctx context.Context, addr string, req *sparrowrpc.TEnqueueTaskReservationsRequest) (ok bool, err error) {
	h := m.node(addr)
	if h == nil {
		return false, unserved(addr)
	}
	err = m.call(ctx, addr, "enqueueTaskReservations", func(ctx context.Context) error {
		var err error
		ok, err = h.EnqueueTaskReservations(ctx, req)
		return err
	})
	return ok, err
}

func (m *memNet) EnqueueTaskReservationsWithOffer(ctx context.Context, addr string, req *sparrowrpc.TEnqueueTaskReservationsRequest, offers []*sparrowrpc.TTaskLaunchSpec) (rep *sparrowrpc.TEnqueueOfferReply, err error) {
	h := m.node(addr)
	if h == nil {
		return nil, unserved(addr)
	}
	var got *sparrowrpc.TEnqueueOfferReply
	err = m.call(ctx, addr, methodOffer, func(ctx context.Context) error {
		r, err := h.EnqueueTaskReservationsWithOffer(ctx, req, offers[0], offers[1:])
		got = r
		return err
	})
	return got, err
}

func (m *memNet) CancelTaskReservations(ctx context.Context, addr string, req *sparrowrpc.TCancelTaskReservationsRequest) error {
	h := m.node(addr)
	if h == nil {
		return unserved(addr)
	}
	return m.call(ctx, addr, "cancelTaskReservations", func(ctx context.Context) error {
		return h.CancelTaskReservations(ctx, req)
	})
}

func (m *memNet) OfferOutcome(ctx context.Context, addr, requestID, taskID string) (ans *sparrowrpc.TOfferOutcome, err error) {
	h := m.node(addr)
	if h == nil {
		return nil, unserved(addr)
	}
	var got *sparrowrpc.TOfferOutcome
	err = m.call(ctx, addr, methodOfferOutcome, func(ctx context.Context) error {
		a, err := h.OfferOutcome(ctx, requestID, taskID)
		got = a
		return err
	})
	return got, err
}

func (m *memNet) UpdateRemainingWork(ctx context.Context, addr string, updates []*sparrowrpc.TRemainingWork) error {
	h := m.node(addr)
	if h == nil {
		return unserved(addr)
	}
	return m.call(ctx, addr, methodUpdateRemainingWork, func(ctx context.Context) error {
		return h.UpdateRemainingWork(ctx, updates)
	})
}

func (m *memNet) FrontendMessage(ctx context.Context, addr string, taskID *sparrowrpc.TFullTaskId, status int32, message []byte) error {
	return m.frontendCall(ctx, addr, "frontendMessage", func(ctx context.Context, h sparrowrpc.FrontendService) error {
		return h.FrontendMessage(ctx, taskID, status, message)
	})
}

// frontendCall runs method of the frontend at addr through call.
func (m *memNet) frontendCall(ctx context.Context, addr, method string, fn func(context.Context, sparrowrpc.FrontendService) error) error {
	m.mu.Lock()
	_, hangUp := m.hangUp[addr]
	m.mu.Unlock()
	h := m.frontend(addr)
	if h == nil && !hangUp {
		return unserved(addr)
	}
	return m.call(ctx, addr, method, func(ctx context.Context) error { return fn(ctx, h) })
}

func (m *memNet) Forget(string) {}
func (m *memNet) Close()        {}

// openSockets returns the sockets this process has open, on Linux; ok is
// false where that cannot be read.
func openSockets() (n int, ok bool) {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0, false
	}
	for _, e := range entries {
		if target, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.HasPrefix(target, "socket:") {
			n++
		}
	}
	return n, true
}

// noSockets fails t if it ends with more sockets open than it began with:
// package tests run in memory.
func noSockets(t *testing.T) {
	t.Helper()
	before, ok := openSockets()
	if !ok {
		return
	}
	t.Cleanup(func() {
		if after, _ := openSockets(); after > before {
			t.Errorf("the test opened %d sockets; scheduler tests run in memory (loopback tests belong in integration/)", after-before)
		}
	})
}

// TestMain fails the package if any test left a socket open.
func TestMain(m *testing.M) {
	code := m.Run()
	if n, ok := openSockets(); ok && n > 0 && code == 0 {
		fmt.Fprintf(os.Stderr, "scheduler tests left %d sockets open; they must run in memory\n", n)
		code = 1
	}
	os.Exit(code)
}

// quiesce is how far a cluster's clean-up moves the fake clock, beyond
// Config.MaxHold: past every bound on a goroutine the scheduler starts
// (offers in doubt, re-sent enqueues, links' backoffs).
const quiesce = 2 * time.Minute

// inBubble reports whether the caller runs inside synctest.Test, whose
// fake clock starts at midnight UTC on 2000-01-01.
func inBubble() bool {
	return time.Now().Before(time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC))
}
