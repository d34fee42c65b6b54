package rpc

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// Statuses the gated frontend treats specially.
const (
	holdStatus = 7 // held until the gate opens
	slowStatus = 9 // answered after slowFor
)

const slowFor = 300 * time.Millisecond

// sessionFrontend records statuses; holdStatus waits for gate, slowStatus
// answers after slowFor.
type sessionFrontend struct {
	originalFrontend
	mu      sync.Mutex
	calls   []int32
	holding int
	gate    chan struct{}
}

func (f *sessionFrontend) FrontendMessage(_ context.Context, _ *sparrowrpc.TFullTaskId, status int32, _ []byte) error {
	f.mu.Lock()
	f.calls = append(f.calls, status)
	if status == holdStatus {
		f.holding++
	}
	f.mu.Unlock()
	switch status {
	case holdStatus:
		<-f.gate
	case slowStatus:
		time.Sleep(slowFor) // the handler's own slowness, not synchronisation
	}
	return nil
}

func (f *sessionFrontend) seen() ([]int32, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls), f.holding
}

func startSessionServer(t *testing.T) (*testServer, *sessionFrontend) {
	f := &sessionFrontend{gate: make(chan struct{})}
	t.Cleanup(func() { close(f.gate) })
	return startServer(t, Config{}, sparrowrpc.NewFrontendServiceProcessor(f)), f
}

func statusCall(status int32, ids *[]ConnID) func(context.Context, ConnID, *sparrowrpc.FrontendServiceClient) error {
	return func(ctx context.Context, id ConnID, c *sparrowrpc.FrontendServiceClient) error {
		if ids != nil {
			*ids = append(*ids, id)
		}
		return c.FrontendMessage(ctx, &sparrowrpc.TFullTaskId{TaskId: "t", RequestId: "r"}, status, nil)
	}
}

// TestPoolOnOpen: the hook runs once on each new connection, before the
// call it was opened for; a hook that fails closes the connection and
// fails the call as never sent.
func TestPoolOnOpen(t *testing.T) {
	srv, fe := startSessionServer(t)
	p := newFrontendPool(t, Config{})
	opened := 0
	p.OnOpen(func(ctx context.Context, _ string, c *sparrowrpc.FrontendServiceClient) error {
		opened++
		return c.FrontendMessage(ctx, &sparrowrpc.TFullTaskId{}, 100, nil)
	})
	ctx := context.Background()
	for _, status := range []int32{1, 2} {
		if err := p.CallWith(ctx, srv.Addr(), CallOptions{}, statusCall(status, nil)); err != nil {
			t.Fatal(err)
		}
	}
	if calls, _ := fe.seen(); !slices.Equal(calls, []int32{100, 1, 2}) || opened != 1 {
		t.Fatalf("server saw %v with the hook run %d times; want [100 1 2], once", calls, opened)
	}

	refusing := newFrontendPool(t, Config{})
	refusing.OnOpen(func(context.Context, string, *sparrowrpc.FrontendServiceClient) error {
		return errors.New("registration refused")
	})
	err := refusing.Call(ctx, srv.Addr(), func(ctx context.Context, c *sparrowrpc.FrontendServiceClient) error {
		return c.FrontendMessage(ctx, &sparrowrpc.TFullTaskId{}, 3, nil)
	})
	var de *DialError
	if !errors.As(err, &de) {
		t.Fatalf("call after a failed hook: %v, want a DialError (never sent)", err)
	}
	waitFor(t, "the refused connection to close", func() bool { return srv.tracked() == 1 })
	if calls, _ := fe.seen(); len(calls) != 3 {
		t.Fatalf("server saw %v; the call after a failed hook must not be sent", calls)
	}
}

// TestPoolCallOnConnection: a call naming a connection runs on it; it
// fails with ErrConnBusy while another call holds it, and with
// ErrConnGone once it is closed (after the failed call that found its
// server gone) or for an ID the pool never gave.
func TestPoolCallOnConnection(t *testing.T) {
	srv, fe := startSessionServer(t)
	p := newFrontendPool(t, Config{})
	ctx := context.Background()
	var ids []ConnID
	if err := p.CallWith(ctx, srv.Addr(), CallOptions{}, statusCall(1, &ids)); err != nil {
		t.Fatal(err)
	}
	first := ids[0]
	// A second connection, so that the named one is not merely the only one.
	held := make(chan error, 1)
	go func() { held <- p.CallWith(ctx, srv.Addr(), CallOptions{Conn: first}, statusCall(holdStatus, &ids)) }()
	waitFor(t, "the held call", func() bool { _, h := fe.seen(); return h == 1 })
	var other []ConnID
	if err := p.CallWith(ctx, srv.Addr(), CallOptions{}, statusCall(2, &other)); err != nil {
		t.Fatal(err)
	}
	if other[0] == first {
		t.Fatalf("a call while connection %d was held ran on it", first)
	}
	err := p.CallWith(ctx, srv.Addr(), CallOptions{Conn: first, Timeout: 20 * time.Millisecond}, statusCall(3, nil))
	if !errors.Is(err, ErrConnBusy) {
		t.Fatalf("call on a held connection: %v, want ErrConnBusy", err)
	}
	fe.gate <- struct{}{}
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if ids[1] != first {
		t.Fatalf("the call naming connection %d ran on %d", first, ids[1])
	}

	srv.Close()
	if err := p.CallWith(ctx, srv.Addr(), CallOptions{Conn: first}, statusCall(4, nil)); err == nil {
		t.Fatal("call on a connection whose server closed succeeded")
	}
	for _, id := range []ConnID{first, 999} {
		if err := p.CallWith(ctx, srv.Addr(), CallOptions{Conn: id}, statusCall(5, nil)); !errors.Is(err, ErrConnGone) {
			t.Fatalf("call on connection %d: %v, want ErrConnGone", id, err)
		}
	}
}

// TestPoolCallTimeout: a call's own timeout replaces the pool's, longer
// or shorter, for that call only.
func TestPoolCallTimeout(t *testing.T) {
	srv, _ := startSessionServer(t)
	p := newFrontendPool(t, Config{CallTimeout: slowFor / 3})
	ctx := context.Background()
	if err := p.CallWith(ctx, srv.Addr(), CallOptions{Timeout: waitTimeout}, statusCall(slowStatus, nil)); err != nil {
		t.Fatalf("slow call with a long timeout of its own: %v", err)
	}
	if err := p.CallWith(ctx, srv.Addr(), CallOptions{}, statusCall(slowStatus, nil)); err == nil {
		t.Fatal("slow call past the pool's timeout succeeded; the longer timeout outlived its call")
	}
	long := newFrontendPool(t, Config{CallTimeout: waitTimeout})
	if err := long.CallWith(ctx, srv.Addr(), CallOptions{Timeout: slowFor / 3}, statusCall(slowStatus, nil)); err == nil {
		t.Fatal("slow call past its own short timeout succeeded")
	}
}

// TestRouteHost: the local address routing to a loopback peer is a
// loopback address; a malformed one is refused by name.
func TestRouteHost(t *testing.T) {
	h, err := RouteHost(context.Background(), "127.0.0.1:9")
	if err != nil || !net.ParseIP(h).IsLoopback() {
		t.Fatalf("RouteHost(127.0.0.1:9) = %q, %v; want a loopback address", h, err)
	}
	if _, err := RouteHost(context.Background(), "no-port"); err == nil || !strings.Contains(err.Error(), "no-port") {
		t.Fatalf("RouteHost of a malformed address: %v, want an error naming it", err)
	}
}

// TestPoolPark: a parked connection carries only the calls that name it;
// other calls go on another connection, and a parked connection whose
// peer closed it is dropped.
func TestPoolPark(t *testing.T) {
	srv, _ := startSessionServer(t)
	p := newFrontendPool(t, Config{})
	ctx := context.Background()
	var ids []ConnID
	if err := p.CallWith(ctx, srv.Addr(), CallOptions{}, statusCall(1, &ids)); err != nil {
		t.Fatal(err)
	}
	parked := ids[0]
	p.Park(srv.Addr(), parked)
	for range 2 {
		if err := p.CallWith(ctx, srv.Addr(), CallOptions{}, statusCall(2, &ids)); err != nil {
			t.Fatal(err)
		}
	}
	if ids[1] == parked || ids[2] != ids[1] {
		t.Fatalf("calls after parking %d ran on %v; want another connection, reused", parked, ids[1:])
	}
	if err := p.CallWith(ctx, srv.Addr(), CallOptions{Conn: parked}, statusCall(3, &ids)); err != nil || ids[3] != parked {
		t.Fatalf("call naming the parked connection: %v on %d, want it run there", err, ids[3])
	}
	p.Forget(srv.Addr())
	if err := p.CallWith(ctx, srv.Addr(), CallOptions{Conn: parked}, statusCall(4, nil)); !errors.Is(err, ErrConnGone) {
		t.Fatalf("call naming a parked connection the pool forgot: %v, want ErrConnGone", err)
	}
}
