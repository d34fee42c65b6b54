package rpc

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// waitTimeout bounds every wait on a condition. It is a deadline for a
// hung test, not an expectation of speed.
const waitTimeout = 10 * time.Second

// waitFor polls cond until it holds or waitTimeout passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

// countingListener counts accepted connections.
type countingListener struct {
	net.Listener
	accepted atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.Add(1)
	}
	return c, err
}

type testServer struct {
	*Server
	ln   *countingListener
	done chan error
}

func (s *testServer) tracked() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

func startServer(t *testing.T, cfg Config, proc thrift.TProcessor) *testServer {
	t.Helper()
	return startServerOn(t, cfg, proc, nil)
}

// startServerOn is startServer with the listener wrapped by wrap, if set.
func startServerOn(t *testing.T, cfg Config, proc thrift.TProcessor, wrap func(net.Listener) net.Listener) *testServer {
	t.Helper()
	s, err := Listen("127.0.0.1:0", cfg, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	inner := s.ln
	if wrap != nil {
		inner = wrap(inner)
	}
	ts := &testServer{Server: s, ln: &countingListener{Listener: inner}, done: make(chan error, 1)}
	s.ln = ts.ln // count accepts; set before Serve starts
	go func() { ts.done <- s.Serve(proc) }()
	t.Cleanup(func() {
		s.Close()
		select {
		case err := <-ts.done:
			if err != nil {
				t.Errorf("Serve returned %v", err)
			}
		case <-time.After(waitTimeout):
			t.Error("Serve did not return after Close")
		}
	})
	return ts
}

// failStatus makes the test frontend fail the call.
const failStatus = 1013

// frontend is a FrontendService that records statuses; failStatus fails.
type frontend struct {
	originalFrontend
	mu    sync.Mutex
	calls []int32
}

func (f *frontend) FrontendMessage(_ context.Context, id *sparrowrpc.TFullTaskId, status int32, msg []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, status)
	if status == failStatus {
		return errors.New("unlucky status")
	}
	return nil
}

func (f *frontend) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

func startFrontend(t *testing.T, cfg Config) (*testServer, *frontend) {
	f := &frontend{}
	return startServer(t, cfg, sparrowrpc.NewFrontendServiceProcessor(f)), f
}

func sendStatus(p *Pool[*sparrowrpc.FrontendServiceClient], addr string, status int32) error {
	return p.Call(context.Background(), addr, func(ctx context.Context, c *sparrowrpc.FrontendServiceClient) error {
		return c.FrontendMessage(ctx, &sparrowrpc.TFullTaskId{TaskId: "t", RequestId: "r"}, status, []byte("m"))
	})
}

func newFrontendPool(t *testing.T, cfg Config) *Pool[*sparrowrpc.FrontendServiceClient] {
	p := NewPool(cfg, sparrowrpc.NewFrontendServiceClient)
	t.Cleanup(p.Close)
	return p
}

// dialRaw opens a plain TCP connection with a read deadline.
func dialRaw(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, waitTimeout)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(waitTimeout))
	t.Cleanup(func() { c.Close() })
	return c
}

// expectClosed reads until the server closes c. It fails on a read timeout,
// which would mean the server kept the connection open.
func expectClosed(t *testing.T, c net.Conn) []byte {
	t.Helper()
	data, err := io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("server did not close the connection within %v (read %d bytes)", waitTimeout, len(data))
	}
	// A reset is as good as EOF: the server is gone from this connection.
	return data
}

func TestPoolCallsAndReuse(t *testing.T) {
	srv, fe := startFrontend(t, Config{})
	addr := srv.Addr()
	p := newFrontendPool(t, Config{})

	for i := range 20 {
		if err := sendStatus(p, addr, int32(i)); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	fe.mu.Lock()
	for i, s := range fe.calls {
		if s != int32(i) {
			t.Fatalf("call %d arrived as status %d", i, s)
		}
	}
	fe.mu.Unlock()
	if n := srv.ln.accepted.Load(); n != 1 {
		t.Fatalf("20 sequential calls used %d connections, want 1", n)
	}

	// A declared or application error does not cost the connection.
	err := sendStatus(p, addr, failStatus)
	var ae thrift.TApplicationException
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), "unlucky") {
		t.Fatalf("failing call returned %v, want the application exception", err)
	}
	if err := sendStatus(p, addr, 1); err != nil {
		t.Fatal(err)
	}
	if n := srv.ln.accepted.Load(); n != 1 {
		t.Fatalf("connection not reused after an application error: %d connections", n)
	}

	// Concurrent calls each get a connection; at most one per caller.
	const workers, each = 8, 10
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				errs <- sendStatus(p, addr, 2)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got, want := fe.count(), 22+workers*each; got != want {
		t.Fatalf("server saw %d calls, want %d", got, want)
	}
	if n := srv.ln.accepted.Load(); n > 1+workers {
		t.Fatalf("%d concurrent callers opened %d connections", workers, n)
	}

	// Forget closes the idle connections: the next call dials afresh.
	before := srv.ln.accepted.Load()
	p.Forget(addr)
	if err := sendStatus(p, addr, 3); err != nil {
		t.Fatal(err)
	}
	if n := srv.ln.accepted.Load(); n != before+1 {
		t.Fatalf("after Forget: %d connections, want %d", n, before+1)
	}

	p.Close()
	p.Close() // idempotent
	if err := sendStatus(p, addr, 4); !errors.Is(err, ErrClosed) {
		t.Fatalf("call on closed pool: %v, want ErrClosed", err)
	}
}

// gatedFrontend holds every call until release is closed.
type gatedFrontend struct {
	originalFrontend
	arrived atomic.Int64
	release chan struct{}
}

func (g *gatedFrontend) FrontendMessage(context.Context, *sparrowrpc.TFullTaskId, int32, []byte) error {
	g.arrived.Add(1)
	<-g.release
	return nil
}

func TestPoolCapsConnectionsPerPeer(t *testing.T) {
	g := &gatedFrontend{release: make(chan struct{})}
	srv := startServer(t, Config{}, sparrowrpc.NewFrontendServiceProcessor(g))
	const limit, calls = 4, 10
	p := newFrontendPool(t, Config{MaxConnsPerPeer: limit, ConnectTimeout: time.Minute})
	var wg sync.WaitGroup
	errs := make(chan error, calls)
	for range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- sendStatus(p, srv.Addr(), 0)
		}()
	}
	// Only `limit` calls can be in flight; the rest wait for a connection.
	waitFor(t, "the first calls to reach the server", func() bool { return g.arrived.Load() == limit })
	p.mu.Lock()
	open := p.peers[srv.Addr()].open
	p.mu.Unlock()
	if open != limit {
		t.Fatalf("%d connections open, want the cap of %d", open, limit)
	}
	close(g.release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := g.arrived.Load(); n != calls {
		t.Fatalf("%d calls reached the server, want %d", n, calls)
	}
	p.mu.Lock()
	pr := p.peers[srv.Addr()]
	idle, open := len(pr.idle), pr.open
	p.mu.Unlock()
	if open > limit || idle != open {
		t.Fatalf("after the calls: %d open, %d idle; want at most %d, all idle", open, idle, limit)
	}
}

func TestPoolBusyPeerIsNotADialFailure(t *testing.T) {
	g := &gatedFrontend{release: make(chan struct{})}
	srv := startServer(t, Config{}, sparrowrpc.NewFrontendServiceProcessor(g))
	p := newFrontendPool(t, Config{MaxConnsPerPeer: 1, ConnectTimeout: 50 * time.Millisecond})
	done := make(chan error, 1)
	go func() { done <- sendStatus(p, srv.Addr(), 0) }()
	waitFor(t, "the first call to hold the only connection", func() bool { return g.arrived.Load() == 1 })
	err := sendStatus(p, srv.Addr(), 0)
	var dial *DialError
	if !errors.Is(err, ErrBusy) || errors.As(err, &dial) {
		t.Fatalf("second call: %v, want ErrBusy and not a DialError", err)
	}
	close(g.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestPoolDropsConnectionsNearIdleTimeout(t *testing.T) {
	srv, _ := startFrontend(t, Config{})
	// With a 1ns idle timeout every pooled connection is too old to reuse.
	p := newFrontendPool(t, Config{IdleTimeout: time.Nanosecond})
	for i := range 3 {
		if err := sendStatus(p, srv.Addr(), 0); err != nil {
			t.Fatal(err)
		}
		if n := srv.ln.accepted.Load(); n != int64(i+1) {
			t.Fatalf("call %d: %d connections, want a fresh one per call", i, n)
		}
	}
}

func TestPoolDialError(t *testing.T) {
	// A port that was just free: nothing listens there.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	p := newFrontendPool(t, Config{ConnectTimeout: waitTimeout})
	err = sendStatus(p, addr, 0)
	var de *DialError
	if !errors.As(err, &de) || de.Addr != addr || !strings.Contains(err.Error(), addr) {
		t.Fatalf("call to a dead address: %v, want a *DialError naming %s", err, addr)
	}
	if errors.Unwrap(de) == nil {
		t.Fatal("DialError does not unwrap to its cause")
	}
}

func TestPoolClosesConnectionOnTransportError(t *testing.T) {
	srv, _ := startFrontend(t, Config{})
	p := newFrontendPool(t, Config{})
	if err := sendStatus(p, srv.Addr(), 0); err != nil {
		t.Fatal(err)
	}
	// A transport error from the call closes that connection instead of
	// returning it to the pool.
	err := p.Call(context.Background(), srv.Addr(), func(ctx context.Context, c *sparrowrpc.FrontendServiceClient) error {
		return thrift.NewTTransportException(thrift.TIMED_OUT, "simulated")
	})
	if err == nil || !strings.Contains(err.Error(), srv.Addr()) {
		t.Fatalf("Call = %v, want the transport error with the address", err)
	}
	if err := sendStatus(p, srv.Addr(), 0); err != nil {
		t.Fatal(err)
	}
	if n := srv.ln.accepted.Load(); n != 2 {
		t.Fatalf("%d connections, want a new one after the transport error", n)
	}
}

func TestServerRefusesOversizedFrame(t *testing.T) {
	const limit = 1024
	srv, fe := startFrontend(t, Config{MaxFrameBytes: limit})
	p := newFrontendPool(t, Config{})
	sizes := []uint32{limit + 1, 1 << 20, 1 << 30, 0x7fffffff, 0xffffffff}
	for _, size := range sizes {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			var ms0, ms1 runtime.MemStats
			runtime.ReadMemStats(&ms0)
			c := dialRaw(t, srv.Addr())
			var hdr [4]byte
			binary.BigEndian.PutUint32(hdr[:], size)
			if _, err := c.Write(append(hdr[:], "some bytes of a frame that never ends"...)); err != nil {
				t.Fatal(err)
			}
			if data := expectClosed(t, c); len(data) != 0 {
				t.Fatalf("server answered an oversized frame with %d bytes", len(data))
			}
			runtime.ReadMemStats(&ms1)
			if d := ms1.TotalAlloc - ms0.TotalAlloc; d > 16<<20 {
				t.Fatalf("refusing a %d-byte frame allocated %d bytes", size, d)
			}
			// Others are still served.
			if err := sendStatus(p, srv.Addr(), 5); err != nil {
				t.Fatalf("server stopped serving after an oversized frame: %v", err)
			}
		})
	}
	if fe.count() != len(sizes) {
		t.Fatalf("handler ran %d times, want %d (only the good calls)", fe.count(), len(sizes))
	}
}

// nodeMonitor is a NodeMonitorService that records tasksFinished calls.
type nodeMonitor struct{ finished atomic.Int64 }

func (n *nodeMonitor) RegisterBackend(context.Context, string, string) (bool, error) {
	return true, nil
}

func (n *nodeMonitor) RegisterBackendWithFeatures(context.Context, string, string, int32) (bool, error) {
	return true, nil
}

func (n *nodeMonitor) TasksFinished(_ context.Context, tasks []*sparrowrpc.TFullTaskId) error {
	n.finished.Add(int64(len(tasks)))
	return nil
}

func (n *nodeMonitor) SendFrontendMessage(context.Context, string, *sparrowrpc.TFullTaskId, int32, []byte) error {
	return nil
}

func (n *nodeMonitor) TaskDone(context.Context, string, *sparrowrpc.TFullTaskId, int32, []byte) error {
	n.finished.Add(1)
	return nil
}

// tasksFinishedFrame builds a framed tasksFinished call whose task list
// header claims claim elements but carries only the given ones.
func tasksFinishedFrame(t *testing.T, claim int, tasks []*sparrowrpc.TFullTaskId) []byte {
	t.Helper()
	ctx := context.Background()
	mem := thrift.NewTMemoryBuffer()
	p := thrift.NewTBinaryProtocolConf(mem, nil)
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(p.WriteMessageBegin(ctx, "tasksFinished", thrift.CALL, 1))
	must(p.WriteStructBegin(ctx, "tasksFinished_args"))
	must(p.WriteFieldBegin(ctx, "tasks", thrift.LIST, 1))
	must(p.WriteListBegin(ctx, thrift.STRUCT, claim))
	for _, task := range tasks {
		must(task.Write(ctx, p))
	}
	must(p.WriteListEnd(ctx))
	must(p.WriteFieldEnd(ctx))
	must(p.WriteFieldStop(ctx))
	must(p.WriteStructEnd(ctx))
	must(p.WriteMessageEnd(ctx))
	body := mem.Bytes()
	frame := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
	return append(frame, body...)
}

// readReply decodes one framed reply message and returns its type.
func readReply(t *testing.T, data []byte) (string, thrift.TMessageType) {
	t.Helper()
	if len(data) < 4 {
		t.Fatalf("short reply: %d bytes", len(data))
	}
	mem := thrift.NewTMemoryBuffer()
	mem.Write(data[4:])
	name, typ, _, err := thrift.NewTBinaryProtocolConf(mem, nil).ReadMessageBegin(context.Background())
	if err != nil {
		t.Fatalf("bad reply: %v", err)
	}
	return name, typ
}

func TestServerRefusesHugeListClaim(t *testing.T) {
	nm := &nodeMonitor{}
	// A short idle timeout only matters if a claim is wrongly accepted: the
	// server then waits for elements that never come, and the allocation
	// check below reports what it cost.
	srv := startServer(t, Config{IdleTimeout: time.Second}, sparrowrpc.NewNodeMonitorServiceProcessor(nm))
	two := []*sparrowrpc.TFullTaskId{{TaskId: "a", RequestId: "r"}, {TaskId: "b", RequestId: "r"}}

	// A well-formed frame sent by hand is served: the frames built here are
	// what a client sends.
	c := dialRaw(t, srv.Addr())
	if _, err := c.Write(tasksFinishedFrame(t, 2, two)); err != nil {
		t.Fatal(err)
	}
	var hdr [4]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		t.Fatalf("no reply to a good frame: %v", err)
	}
	reply := make([]byte, binary.BigEndian.Uint32(hdr[:]))
	if _, err := io.ReadFull(c, reply); err != nil {
		t.Fatal(err)
	}
	if _, typ := readReply(t, append(hdr[:], reply...)); typ != thrift.REPLY || nm.finished.Load() != 2 {
		t.Fatalf("good frame: reply type %v, %d tasks finished", typ, nm.finished.Load())
	}

	claims := []int{
		1 << 30, // over thrift's own message size check too
		8 << 20, // under MaxMessageSize: only the frame-remaining check stops it (64 MiB of pointers)
		1000,    // more elements than bytes left in the frame
	}
	for _, claim := range claims {
		t.Run(fmt.Sprint(claim), func(t *testing.T) {
			frame := tasksFinishedFrame(t, claim, two)
			var ms0, ms1 runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms0)
			c := dialRaw(t, srv.Addr())
			if _, err := c.Write(frame); err != nil {
				t.Fatal(err)
			}
			data := expectClosed(t, c)
			runtime.ReadMemStats(&ms1)
			if d := ms1.TotalAlloc - ms0.TotalAlloc; d > 16<<20 {
				t.Fatalf("a %d-byte frame claiming %d elements made the process allocate %d bytes", len(frame), claim, d)
			}
			if len(data) > 0 {
				if name, typ := readReply(t, data); name != "tasksFinished" || typ != thrift.EXCEPTION {
					t.Fatalf("reply %q type %v, want an exception for tasksFinished", name, typ)
				}
			}
		})
	}
	if got := nm.finished.Load(); got != 2 {
		t.Fatalf("handler saw %d tasks, want only the 2 of the good frame", got)
	}
	// The server still serves.
	p := NewPool(Config{}, sparrowrpc.NewNodeMonitorServiceClient)
	defer p.Close()
	err := p.Call(context.Background(), srv.Addr(), func(ctx context.Context, c *sparrowrpc.NodeMonitorServiceClient) error {
		return c.TasksFinished(ctx, two)
	})
	if err != nil || nm.finished.Load() != 4 {
		t.Fatalf("call after bad frames: %v (finished %d)", err, nm.finished.Load())
	}
}

func TestBoundedProtocol(t *testing.T) {
	ctx := context.Background()
	cfg := &thrift.TConfiguration{}
	const pad = 10 // bytes after the container header
	tests := []struct {
		kind   string
		claim  int
		refuse bool
	}{
		{"list", 0, false},
		{"list", pad, false},
		{"list", pad + 1, true},
		{"list", 1 << 20, true},
		{"set", pad, false},
		{"set", pad + 1, true},
		{"map", pad, false},
		{"map", pad + 1, true},
		{"map", 1 << 24, true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%d", tt.kind, tt.claim), func(t *testing.T) {
			mem := thrift.NewTMemoryBuffer()
			wf := thrift.NewTFramedTransportConf(mem, cfg)
			wp := thrift.NewTBinaryProtocolConf(wf, cfg)
			switch tt.kind {
			case "list":
				wp.WriteListBegin(ctx, thrift.BYTE, tt.claim)
			case "set":
				wp.WriteSetBegin(ctx, thrift.BYTE, tt.claim)
			case "map":
				wp.WriteMapBegin(ctx, thrift.BYTE, thrift.BYTE, tt.claim)
			}
			wf.Write(make([]byte, pad))
			if err := wf.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			rf := thrift.NewTFramedTransportConf(mem, cfg)
			rp := newProtocol(rf, cfg)
			var size int
			var err error
			switch tt.kind {
			case "list":
				_, size, err = rp.ReadListBegin(ctx)
			case "set":
				_, size, err = rp.ReadSetBegin(ctx)
			case "map":
				_, _, size, err = rp.ReadMapBegin(ctx)
			}
			if !tt.refuse {
				if err != nil || size != tt.claim {
					t.Fatalf("claim %d with %d bytes left: size %d, err %v", tt.claim, pad, size, err)
				}
				return
			}
			var pe thrift.TProtocolException
			if !errors.As(err, &pe) || pe.TypeId() != thrift.SIZE_LIMIT {
				t.Fatalf("claim %d with %d bytes left: err %v, want a SIZE_LIMIT protocol exception", tt.claim, pad, err)
			}
			if !strings.Contains(err.Error(), tt.kind) {
				t.Fatalf("error %q does not name the %s", err, tt.kind)
			}
		})
	}
}

func TestServerCloseClosesConnections(t *testing.T) {
	s, err := Listen("127.0.0.1:0", Config{}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(sparrowrpc.NewFrontendServiceProcessor(&frontend{})) }()
	ts := &testServer{Server: s}
	addr := s.Addr()
	p := newFrontendPool(t, Config{})
	if err := sendStatus(p, addr, 0); err != nil {
		t.Fatal(err)
	}
	a, b := dialRaw(t, addr), dialRaw(t, addr)
	waitFor(t, "three tracked connections", func() bool { return ts.tracked() == 3 })

	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	expectClosed(t, a)
	expectClosed(t, b)
	if ts.tracked() != 0 {
		t.Fatalf("%d connections still tracked after Close", ts.tracked())
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve returned %v after Close", err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("Serve did not return after Close")
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	// The pooled connection was closed by the server: the call fails
	// rather than hanging, and a fresh dial is refused.
	if err := sendStatus(p, addr, 0); err == nil {
		t.Fatal("call to a closed server succeeded")
	}
	if err := sendStatus(p, addr, 0); err == nil {
		t.Fatal("call to a closed server succeeded")
	}
}

func TestCloseBeforeServe(t *testing.T) {
	s, err := Listen("127.0.0.1:0", Config{}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(sparrowrpc.NewFrontendServiceProcessor(&frontend{})) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve on a closed server: %v", err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("Serve on a closed server did not return")
	}
}

func TestListenError(t *testing.T) {
	s, err := Listen("127.0.0.1:0", Config{}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = Listen(s.Addr(), Config{}, zerolog.Nop())
	if err == nil || !strings.Contains(err.Error(), s.Addr()) {
		t.Fatalf("Listen on a bound port: %v, want an error naming it", err)
	}
}

func TestConfigDefaults(t *testing.T) {
	got := Config{}.withDefaults()
	want := Config{
		MaxFrameBytes:    DefaultMaxFrameBytes,
		ConnectTimeout:   DefaultConnectTimeout,
		CallTimeout:      DefaultCallTimeout,
		IdleTimeout:      0, // idle connections stay open by default
		FrameTimeout:     DefaultFrameTimeout,
		HandshakeTimeout: DefaultHandshakeTimeout,
		MaxConns:         DefaultMaxConns,
		MaxConnsPerHost:  DefaultMaxConnsPerHost,
		MaxConnsPerPeer:  DefaultMaxConnsPerPeer,
		MemoryBudget:     DefaultMemoryBudget,
		BudgetWait:       DefaultBudgetWait,
	}
	if got != want {
		t.Fatalf("zero Config: %+v, want %+v", got, want)
	}
	if DefaultMaxFrameBytes < 16_384_000 {
		t.Fatalf("default frame cap %d is below the original Java transport's 16,384,000", DefaultMaxFrameBytes)
	}
	neg := Config{MaxFrameBytes: -1, ConnectTimeout: -1, CallTimeout: -1, IdleTimeout: -1, FrameTimeout: -1,
		HandshakeTimeout: -1, MaxConns: -1, MaxConnsPerHost: -1, MaxConnsPerPeer: -1, MemoryBudget: -1, BudgetWait: -1}.withDefaults()
	if neg != want {
		t.Fatalf("negative Config: %+v, want defaults", neg)
	}
	set := Config{MaxFrameBytes: 7, ConnectTimeout: 2, CallTimeout: 3, IdleTimeout: 4, FrameTimeout: 8,
		HandshakeTimeout: 9, MaxConns: 5, MaxConnsPerHost: 10, MaxConnsPerPeer: 6, MemoryBudget: 11, BudgetWait: 12}
	if set.withDefaults() != set {
		t.Fatalf("explicit Config changed: %+v", set.withDefaults())
	}
	tc := set.thrift(9)
	if tc.MaxFrameSize != 7 || tc.MaxMessageSize != 7 || tc.ConnectTimeout != 2 || tc.SocketTimeout != 9 {
		t.Fatalf("thrift config %+v", tc)
	}
}

func TestParseHostPort(t *testing.T) {
	tests := []struct {
		in       string
		host     string
		port     int32
		wantErr  string
		roundTrp string // HostPortString of the result; "" = same as in
	}{
		{in: "127.0.0.1:20503", host: "127.0.0.1", port: 20503},
		{in: "node-7.example:1", host: "node-7.example", port: 1},
		{in: "h:65535", host: "h", port: 65535},
		{in: "[::1]:80", host: "::1", port: 80},
		{in: "[fe80::1%eth0]:9", host: "fe80::1%eth0", port: 9},
		{in: "h:080", host: "h", port: 80, roundTrp: "h:80"},
		{in: "", wantErr: "not host:port"},
		{in: "h", wantErr: "not host:port"},
		{in: "::1:80", wantErr: "not host:port"},
		{in: ":80", wantErr: "no host"},
		{in: "h:", wantErr: "bad port"},
		{in: "h:0", wantErr: "bad port"},
		{in: "h:-1", wantErr: "bad port"},
		{in: "h:65536", wantErr: "bad port"},
		{in: "h:99999999999999999999", wantErr: "bad port"},
		{in: "h:http", wantErr: "bad port"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			hp, err := ParseHostPort(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), fmt.Sprintf("%q", tt.in)) {
					t.Fatalf("ParseHostPort(%q) = %v, %v; want error %q naming the input", tt.in, hp, err, tt.wantErr)
				}
				return
			}
			if err != nil || hp.Host != tt.host || hp.Port != tt.port {
				t.Fatalf("ParseHostPort(%q) = %+v, %v; want %s %d", tt.in, hp, err, tt.host, tt.port)
			}
			want := tt.roundTrp
			if want == "" {
				want = tt.in
			}
			if got := HostPortString(hp); got != want {
				t.Fatalf("HostPortString round trip = %q, want %q", got, want)
			}
		})
	}
}

func TestHostPortString(t *testing.T) {
	tests := []struct {
		hp   *sparrowrpc.THostPort
		want string
	}{
		{nil, ""},
		{&sparrowrpc.THostPort{Host: "10.0.0.1", Port: 20502}, "10.0.0.1:20502"},
		{&sparrowrpc.THostPort{Host: "::1", Port: 80}, "[::1]:80"},
		{&sparrowrpc.THostPort{Host: "", Port: 1}, ":1"},
		{&sparrowrpc.THostPort{}, ":0"},
	}
	for _, tt := range tests {
		if got := HostPortString(tt.hp); got != tt.want {
			t.Errorf("HostPortString(%+v) = %q, want %q", tt.hp, got, tt.want)
		}
	}
}

func TestAdvertised(t *testing.T) {
	tests := []struct {
		bound, host, want string
	}{
		{":20503", "10.0.0.5", "10.0.0.5:20503"},
		{"0.0.0.0:20503", "10.0.0.5", "10.0.0.5:20503"},
		{"[::]:20503", "10.0.0.5", "10.0.0.5:20503"},
		{"[::]:20503", "fd00::5", "[fd00::5]:20503"},
		{"127.0.0.1:20503", "10.0.0.5", "127.0.0.1:20503"},
		{"[::1]:7", "10.0.0.5", "[::1]:7"},
		{"node:1", "other", "node:1"},
		{"not-an-address", "10.0.0.5", "not-an-address"},
	}
	for _, tt := range tests {
		if got := Advertised(tt.bound, tt.host); got != tt.want {
			t.Errorf("Advertised(%q, %q) = %q, want %q", tt.bound, tt.host, got, tt.want)
		}
	}
}

// Regression: a server answers an unknown method (what an older peer says to
// an extension method) or unreadable arguments with an application
// exception and then closes the connection. The pool must not reuse that
// connection, or the next call to the peer fails on it; only a handler's
// own error (INTERNAL_ERROR) leaves the connection usable.
func TestPoolDropsConnectionClosedAfterUnknownMethod(t *testing.T) {
	srv, fe := startFrontend(t, Config{})
	// A raw client, so one pooled connection can call methods of two
	// services: registerBackend, which a FrontendService does not have, and
	// frontendMessage, which it does.
	p := NewPool(Config{}, func(c thrift.TClient) thrift.TClient { return c })
	defer p.Close()
	err := p.Call(context.Background(), srv.Addr(), func(ctx context.Context, c thrift.TClient) error {
		_, err := sparrowrpc.NewNodeMonitorServiceClient(c).RegisterBackend(ctx, "a", "127.0.0.1:1")
		return err
	})
	var ae thrift.TApplicationException
	if !errors.As(err, &ae) || ae.TypeId() != thrift.UNKNOWN_METHOD {
		t.Fatalf("unknown method: %v, want an UNKNOWN_METHOD application exception", err)
	}
	err = p.Call(context.Background(), srv.Addr(), func(ctx context.Context, c thrift.TClient) error {
		return sparrowrpc.NewFrontendServiceClient(c).FrontendMessage(ctx, &sparrowrpc.TFullTaskId{}, 0, nil)
	})
	if err != nil {
		t.Fatalf("a good call after an unknown-method call failed on the pooled connection the server had closed: %v", err)
	}
	if fe.count() != 1 {
		t.Fatalf("frontend saw %d calls, want 1", fe.count())
	}
}

// relayFrontend fails every call with an error that wraps a transport error
// from another connection, as a node monitor's relay to a dead scheduler
// does.
type relayFrontend struct{ originalFrontend }

func (relayFrontend) FrontendMessage(context.Context, *sparrowrpc.TFullTaskId, int32, []byte) error {
	return fmt.Errorf("relay: %w", thrift.NewTTransportException(thrift.NOT_OPEN, "connection refused"))
}

// Regression: a handler error that wraps a transport error is the handler's
// failure, answered to the caller; it must not close the caller's
// connection (that stranded executors' finished reports on a dead pooled
// connection, so slots never freed).
func TestHandlerTransportErrorKeepsTheConnection(t *testing.T) {
	srv := startServer(t, Config{}, sparrowrpc.NewFrontendServiceProcessor(relayFrontend{}))
	p := newFrontendPool(t, Config{})
	for i := 0; i < 3; i++ {
		err := sendStatus(p, srv.Addr(), 0)
		var ae thrift.TApplicationException
		if !errors.As(err, &ae) || ae.TypeId() != thrift.INTERNAL_ERROR || !strings.Contains(err.Error(), "connection refused") {
			t.Fatalf("call %d: %v, want the handler's error as INTERNAL_ERROR", i, err)
		}
	}
	if n := srv.ln.accepted.Load(); n != 1 {
		t.Errorf("%d connections accepted for 3 calls; the first was closed after a handler error", n)
	}
}
