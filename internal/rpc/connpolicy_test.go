package rpc

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// quietWindow is how long a test watches a connection that must stay
// open. Nothing waits on it as synchronisation: the assertion is that
// nothing happens within it.
const quietWindow = 300 * time.Millisecond

// expectOpen fails if the server closes c within quietWindow.
func expectOpen(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(quietWindow))
	var b [1]byte
	n, err := c.Read(b[:])
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("server ended an idle connection: read %d bytes, err %v; want it kept open", n, err)
	}
	c.SetReadDeadline(time.Now().Add(waitTimeout))
}

// dialFrom opens a plain TCP connection from the loopback address local.
func dialFrom(t *testing.T, local, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{Timeout: waitTimeout, LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Skipf("cannot dial from %s (only Linux routes all of 127/8 to loopback): %v", local, err)
	}
	c.SetDeadline(time.Now().Add(waitTimeout))
	t.Cleanup(func() { c.Close() })
	return c
}

func TestIdleConnectionsStayOpenByDefault(t *testing.T) {
	// A short frame timeout: an idle connection must outlive it.
	srv, fe := startFrontend(t, Config{FrameTimeout: 50 * time.Millisecond})
	p := newFrontendPool(t, Config{})
	if err := sendStatus(p, srv.Addr(), 0); err != nil {
		t.Fatal(err)
	}
	silent := dialRaw(t, srv.Addr())
	expectOpen(t, silent)
	if got := srv.Stats(); got.Open != 2 || got.IdleClosed != 0 || got.FrameTimeouts != 0 {
		t.Fatalf("stats after a quiet spell: %+v, want both connections open", got)
	}
	// The pooled connection, quiet for longer than the frame timeout,
	// still carries a call: no new connection is opened.
	if err := sendStatus(p, srv.Addr(), 0); err != nil {
		t.Fatal(err)
	}
	if n := srv.ln.accepted.Load(); n != 2 {
		t.Fatalf("%d connections accepted, want 2 (the pooled one reused)", n)
	}
	if fe.count() != 2 {
		t.Fatalf("%d calls served, want 2", fe.count())
	}
}

func TestFrameTimeoutClosesSlowFrames(t *testing.T) {
	srv, _ := startFrontend(t, Config{FrameTimeout: 50 * time.Millisecond})
	tests := []struct {
		name string
		send []byte
	}{
		{"one byte of the header", []byte{0}},
		{"partial frame header", []byte{0, 0}},
		{"partial frame body", []byte{0, 0, 0, 100, 1, 2, 3}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dialRaw(t, srv.Addr())
			if _, err := c.Write(tt.send); err != nil {
				t.Fatal(err)
			}
			expectClosed(t, c)
			waitFor(t, "the frame timeout to be counted", func() bool { return srv.Stats().FrameTimeouts == int64(i+1) })
		})
	}
	waitFor(t, "slow connections to be released", func() bool { return srv.tracked() == 0 })
}

func TestOptInIdleTimeout(t *testing.T) {
	srv, _ := startFrontend(t, Config{IdleTimeout: 50 * time.Millisecond})
	expectClosed(t, dialRaw(t, srv.Addr()))
	waitFor(t, "the idle close to be counted", func() bool { return srv.Stats().IdleClosed == 1 })
	// Active clients are unaffected.
	p := newFrontendPool(t, Config{})
	if err := sendStatus(p, srv.Addr(), 0); err != nil {
		t.Fatal(err)
	}
}

// TestPoolReconnectsAfterServerIdleClose: a server that closes idle
// connections costs the caller a new connection, not a failed call.
func TestPoolReconnectsAfterServerIdleClose(t *testing.T) {
	// Longer than checkIdleAfter, as any realistic idle timeout is.
	srv, fe := startFrontend(t, Config{IdleTimeout: 2 * checkIdleAfter})
	p := newFrontendPool(t, Config{}) // the client does not know the server's timeout
	for i := range 3 {
		if err := sendStatus(p, srv.Addr(), 0); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		waitFor(t, "the server to close the idle connection", func() bool { return srv.Stats().IdleClosed == int64(i+1) })
	}
	if err := sendStatus(p, srv.Addr(), 0); err != nil {
		t.Fatalf("call after the server closed its connection: %v", err)
	}
	if fe.count() != 4 || srv.ln.accepted.Load() != 4 {
		t.Fatalf("%d calls served over %d connections, want 4 over 4", fe.count(), srv.ln.accepted.Load())
	}
}

// idleConns counts the server's connections waiting idle for a frame. A
// connection is counted open once accepted, but idle only once its
// goroutine waits for the next frame.
func idleConns(s *Server) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for c := range s.conns {
		if _, ok := c.idleSince(); ok {
			n++
		}
	}
	return n
}

func TestMaxConnsEvictsLongestIdle(t *testing.T) {
	srv, _ := startFrontend(t, Config{MaxConns: 2})
	c1 := dialRaw(t, srv.Addr())
	waitFor(t, "c1 to be idle", func() bool { return idleConns(srv.Server) == 1 })
	c2 := dialRaw(t, srv.Addr())
	waitFor(t, "c2 to be idle too", func() bool { return idleConns(srv.Server) == 2 })
	c3 := dialRaw(t, srv.Addr())
	expectClosed(t, c1) // the longest idle makes room
	waitFor(t, "the eviction to be counted", func() bool { return srv.Stats().Evicted == 1 })
	expectOpen(t, c2)
	expectOpen(t, c3)
	if got := srv.Stats(); got.Open != 2 {
		t.Fatalf("open %d, want 2", got.Open)
	}
}

func TestMaxConnsRefusesWhenNoneIdle(t *testing.T) {
	srv, _ := startFrontend(t, Config{MaxConns: 2, FrameTimeout: waitTimeout})
	for range 2 {
		c := dialRaw(t, srv.Addr())
		if _, err := c.Write([]byte{0}); err != nil { // a frame begun: busy
			t.Fatal(err)
		}
	}
	// Busy in a frame: gone idle once (since is set) and claimed again by
	// the byte sent. A connection just accepted is busy too, but goes
	// idle for a moment before it reads, and could be evicted then.
	waitFor(t, "two connections busy in a frame", func() bool {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		busy := 0
		for c := range srv.conns {
			if _, idle := c.idleSince(); !idle && c.since.Load() != 0 {
				busy++
			}
		}
		return busy == 2
	})
	expectClosed(t, dialRaw(t, srv.Addr()))
	if got := srv.Stats(); got.RefusedAtCap != 1 || got.Evicted != 0 || got.Open != 2 {
		t.Fatalf("stats %+v, want one refusal at the cap and nothing evicted", got)
	}
}

func TestMaxConnsPerHost(t *testing.T) {
	srv, _ := startFrontend(t, Config{MaxConnsPerHost: 2})
	dialFrom(t, "127.0.0.1", srv.Addr())
	dialFrom(t, "127.0.0.1", srv.Addr())
	waitFor(t, "two connections", func() bool { return srv.Stats().Open == 2 })
	expectClosed(t, dialFrom(t, "127.0.0.1", srv.Addr()))
	other := dialFrom(t, "127.0.0.2", srv.Addr())
	expectOpen(t, other)
	if got := srv.Stats(); got.RefusedPerHost != 1 || got.Open != 3 {
		t.Fatalf("stats %+v, want one per-host refusal and 3 open", got)
	}
}

func TestBudgetRefusalIsAnErrorAndKeepsTheStream(t *testing.T) {
	budget := NewBudget(1 << 10)
	srv, fe := startFrontend(t, Config{Budget: budget, BudgetWait: 20 * time.Millisecond})
	p := newFrontendPool(t, Config{})
	if err := sendStatus(p, srv.Addr(), 0); err != nil {
		t.Fatal(err)
	}
	// The server releases the call's charge after its reply is on the
	// wire, so the client can hear the reply first.
	waitFor(t, "the first call's budget released", func() bool { return budget.InUse() == 0 })
	held, ok := budget.Acquire(budget.Limit(), 0, nil)
	if !ok {
		t.Fatal("could not take the whole budget")
	}
	err := sendStatus(p, srv.Addr(), 0)
	var ae thrift.TApplicationException
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), "server busy") || !strings.Contains(err.Error(), "frontendMessage") {
		t.Fatalf("call with the budget taken: %v, want a 'server busy' application error naming the call", err)
	}
	budget.Release(held)
	if err := sendStatus(p, srv.Addr(), 0); err != nil {
		t.Fatalf("call after the budget freed: %v", err)
	}
	if got := srv.Stats(); got.BudgetRefused != 1 || srv.ln.accepted.Load() != 1 {
		t.Fatalf("stats %+v over %d connections, want one refusal on one kept connection", got, srv.ln.accepted.Load())
	}
	if fe.count() != 2 {
		t.Fatalf("%d calls served, want 2", fe.count())
	}
}

func TestBudgetWaitsThenAdmits(t *testing.T) {
	b := NewBudget(100)
	a, ok := b.Acquire(60, 0, nil)
	if !ok || a != 60 {
		t.Fatalf("first acquire: %d %v", a, ok)
	}
	got := make(chan bool, 1)
	go func() {
		n, ok := b.Acquire(60, waitTimeout, nil)
		got <- ok && n == 60
	}()
	waitFor(t, "the second acquire to wait", func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.waiters == 1
	})
	b.Release(a)
	if !<-got {
		t.Fatal("waiting acquire failed after a release")
	}
	if n, ok := b.Acquire(1000, 0, nil); ok {
		t.Fatalf("acquire past the limit with 60 in use succeeded (%d)", n)
	}
	b.Release(60)
	if n, ok := b.Acquire(1000, 0, nil); !ok || n != 100 {
		t.Fatalf("a lone charge over the limit: %d %v, want clamped to 100", n, ok)
	}
	cancel := make(chan struct{})
	close(cancel)
	if _, ok := b.Acquire(1, waitTimeout, cancel); ok {
		t.Fatal("acquire on a full budget succeeded despite cancel")
	}
}

func TestMessageType(t *testing.T) {
	strict := func(typ thrift.TMessageType) []byte {
		return []byte{0x80, 0x01, 0x00, byte(typ), 0, 0, 0, 1, 'x', 0, 0, 0, 7}
	}
	tests := []struct {
		name string
		head []byte
		want thrift.TMessageType
		ok   bool
	}{
		{"strict call", strict(thrift.CALL), thrift.CALL, true},
		{"strict oneway", strict(thrift.ONEWAY), thrift.ONEWAY, true},
		{"old form oneway", []byte{0, 0, 0, 2, 'a', 'b', byte(thrift.ONEWAY), 0, 0, 0, 1}, thrift.ONEWAY, true},
		{"old form cut short", []byte{0, 0, 0, 9, 'a'}, 0, false},
		{"bad version", []byte{0x80, 0x02, 0, 1}, 0, false},
		{"too short", []byte{0x80}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := messageType(tt.head)
			if got != tt.want || ok != tt.ok {
				t.Fatalf("messageType = %v, %v; want %v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestDecodeMeterRefusesAmplifyingFrames: a frame whose decoding would
// cost more than decodeFactor bytes per wire byte is refused, with an
// error the caller reads, so a frame's budget charge bounds its memory.
func TestDecodeMeterRefusesAmplifyingFrames(t *testing.T) {
	nm := &nodeMonitor{}
	srv := startServer(t, Config{}, sparrowrpc.NewNodeMonitorServiceProcessor(nm))
	// Empty TFullTaskIds, each only its field-stop byte: one wire byte
	// each, a 64-byte struct decoded.
	const n = 100_000
	frame := tasksFinishedFrame(t, n, nil)
	// The list's elements go before the args struct's closing stop byte.
	body := append([]byte{}, frame[4:len(frame)-1]...)
	body = append(body, make([]byte, n)...) // n field stops
	body = append(body, thrift.STOP)
	frame = binary.BigEndian.AppendUint32(nil, uint32(len(body)))
	frame = append(frame, body...)
	c := dialRaw(t, srv.Addr())
	if _, err := c.Write(frame); err != nil {
		t.Fatal(err)
	}
	reply := expectClosed(t, c)
	if _, typ := readReply(t, reply); typ != thrift.EXCEPTION || !strings.Contains(string(reply), "bytes of memory per wire byte") {
		t.Fatalf("reply type %v %q, want an exception naming the decoding limit", typ, reply)
	}
	if nm.finished.Load() != 0 {
		t.Fatalf("handler ran on a refused frame (%d tasks)", nm.finished.Load())
	}
}

// droppingListener's connections, while armed, close themselves when the
// next bytes arrive instead of handing them to the server: a server that
// closed an idle connection just as a call crossed the close on the wire.
type droppingListener struct {
	net.Listener
	armed atomic.Bool
}

func (l *droppingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &droppingConn{Conn: c, l: l}, nil
}

type droppingConn struct {
	net.Conn
	l *droppingListener
}

func (c *droppingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 && c.l.armed.CompareAndSwap(true, false) {
		c.Conn.Close()
		return 0, io.EOF
	}
	return n, err
}

// TestPoolResendsCallCrossingAnIdleClose: a call sent on a reused
// connection that the server closes unread, without a byte of reply, is
// sent once more on a new connection and served once. The same close on a
// connection dialed for the call is returned as an error, not resent: the
// retry covers only the idle-close race.
func TestPoolResendsCallCrossingAnIdleClose(t *testing.T) {
	fe := &frontend{}
	var dl *droppingListener
	srv := startServerOn(t, Config{}, sparrowrpc.NewFrontendServiceProcessor(fe), func(ln net.Listener) net.Listener {
		dl = &droppingListener{Listener: ln}
		return dl
	})
	p := newFrontendPool(t, Config{})
	if err := sendStatus(p, srv.Addr(), 0); err != nil {
		t.Fatal(err)
	}
	dl.armed.Store(true)
	if err := sendStatus(p, srv.Addr(), 1); err != nil {
		t.Fatalf("call crossing the server's close of a reused connection: %v", err)
	}
	if fe.count() != 2 || srv.ln.accepted.Load() != 2 {
		t.Fatalf("%d calls served over %d connections, want 2 over 2", fe.count(), srv.ln.accepted.Load())
	}

	fresh := newFrontendPool(t, Config{})
	dl.armed.Store(true)
	err := sendStatus(fresh, srv.Addr(), 2)
	if err == nil || !peerClosed(err) {
		t.Fatalf("call on a new connection the server closed: %v, want the close", err)
	}
	if fe.count() != 2 || srv.ln.accepted.Load() != 3 {
		t.Fatalf("%d calls served over %d connections, want 2 over 3 (no resend)", fe.count(), srv.ln.accepted.Load())
	}
}

// TestPoolResendThatCannotConnectIsInDoubt: when the resend after an idle
// close cannot even connect, the call is reported with the first error,
// not as a DialError: the first send may have been read by a server that
// then died, so the caller must not take it for a call never sent.
func TestPoolResendThatCannotConnectIsInDoubt(t *testing.T) {
	fe := &frontend{}
	var dl *droppingListener
	srv := startServerOn(t, Config{}, sparrowrpc.NewFrontendServiceProcessor(fe), func(ln net.Listener) net.Listener {
		dl = &droppingListener{Listener: ln}
		return dl
	})
	p := newFrontendPool(t, Config{ConnectTimeout: time.Second})
	if err := sendStatus(p, srv.Addr(), 0); err != nil {
		t.Fatal(err)
	}
	dl.armed.Store(true)
	srv.ln.Listener.Close() // no new connection can be made
	err := sendStatus(p, srv.Addr(), 1)
	var de *DialError
	if err == nil || errors.As(err, &de) || errors.Is(err, ErrBusy) || !peerClosed(err) {
		t.Fatalf("call = %v, want the first send's close, not a dial error", err)
	}
}
