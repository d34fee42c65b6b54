package integration

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/sparrowfleet/sparrow/bench/fleet"
	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

const (
	// lorisConns is how many trickling connections the attacking host
	// tries to hold: more than the server's whole connection cap.
	lorisConns = 4200
	// lorisTrickle is the attacker's pace: one byte per connection this
	// often, slower than any frame could legitimately arrive.
	lorisTrickle = 10 * time.Second
	// lorisHold is how long into the flood the second check runs.
	lorisHold = 40 * time.Second
	// lorisAnswerWithin is the bound on a legitimate call during the flood.
	lorisAnswerWithin = 2 * time.Second
	// Each side of the test has its own loopback address, so the server
	// sees the attacker and the legitimate frontend as different hosts.
	lorisAttacker   = "127.0.0.41"
	lorisLegitimate = "127.0.0.42"
)

// TestSlowLorisCannotLockOutClients: one host opens 4,200 connections to
// SchedulerService, sends one byte of a frame header on each and then one
// byte every 10 s, reconnecting whenever the server closes one. With
// default limits a legitimate registerFrontend from another host is
// answered within 2 s at the start of the flood and 40 s into it.
func TestSlowLorisCannotLockOutClients(t *testing.T) {
	f := startFleet(t, fleet.Config{
		Schedulers: 1, NodeMonitors: 1, Slots: 1, Apps: []string{"app"},
		Run: echoTask(time.Millisecond),
	})
	if !interopCanBind(lorisAttacker) || !interopCanBind(lorisLegitimate) {
		t.Skip("needs 127.0.0.41 and .42 on loopback (Linux routes all of 127/8 there)")
	}
	sched := f.Schedulers[0]
	addr := f.SchedulerAddrs()[0]

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var dials, refused atomic.Int64
	t.Cleanup(func() {
		close(stop)
		wg.Wait()
	})
	for range lorisConns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			loris(addr, stop, &dials, &refused)
		}()
	}
	waitFor(t, "the flood to reach the per-host cap", 30*time.Second, func() bool {
		return sched.RPCStats().RefusedPerHost > 0
	})
	legitimateCall(t, addr, "at the start of the flood")

	deadline := time.NewTimer(lorisHold)
	defer deadline.Stop()
	select {
	case <-deadline.C: // the flood runs this long; nothing else to wait on
	case <-stop:
	}
	legitimateCall(t, addr, "40 s into the flood")

	st := sched.RPCStats()
	t.Logf("attacker: %d dials; server: %+v", dials.Load(), st)
	if st.FrameTimeouts == 0 {
		t.Errorf("no trickling connection was closed at the frame timeout: %+v", st)
	}
	if st.Open > rpc.DefaultMaxConnsPerHost+16 {
		t.Errorf("%d connections open: the attacker holds more than its host's cap", st.Open)
	}
}

// loris is one attacking connection slot: dial, send a byte of a frame
// header, then a byte every lorisTrickle until the server closes it;
// redial. Bounded by stop.
func loris(addr string, stop <-chan struct{}, dials, refused *atomic.Int64) {
	d := net.Dialer{Timeout: time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(lorisAttacker)}}
	for {
		select {
		case <-stop:
			return
		default:
		}
		dials.Add(1)
		c, err := d.Dial("tcp", addr)
		if err != nil {
			refused.Add(1)
			if pause(stop, 2*time.Second) {
				return
			}
			continue
		}
		closed := make(chan struct{})
		go func() { // notices the server closing the connection
			var b [1]byte
			c.Read(b[:])
			close(closed)
		}()
		tick := time.NewTicker(lorisTrickle)
		for alive := true; alive; {
			if _, err := c.Write([]byte{0}); err != nil {
				break
			}
			select {
			case <-stop:
				alive = false
			case <-closed:
				alive = false
			case <-tick.C:
			}
		}
		tick.Stop()
		c.Close()
		<-closed
		// A refused connection is closed at once; redial at a pace that
		// keeps the flood at the cap without burning the test machine.
		if pause(stop, 2*time.Second) {
			return
		}
	}
}

// pause waits d unless stop closes first; it reports whether it did.
func pause(stop <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-stop:
		return true
	case <-t.C:
		return false
	}
}

// legitimateCall registers a frontend from another host over a fresh
// connection and fails unless it is answered within lorisAnswerWithin.
func legitimateCall(t *testing.T, addr, when string) {
	t.Helper()
	start := time.Now()
	d := net.Dialer{Timeout: lorisAnswerWithin, LocalAddr: &net.TCPAddr{IP: net.ParseIP(lorisLegitimate)}}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("%s: legitimate connect refused: %v", when, err)
	}
	defer conn.Close()
	conn.SetDeadline(start.Add(lorisAnswerWithin))
	client := sparrowrpc.NewSchedulerServiceClient(rawThriftClient(conn))
	ok, err := client.RegisterFrontend(context.Background(), "app", lorisLegitimate+":50201")
	elapsed := time.Since(start)
	if err != nil || !ok {
		t.Fatalf("%s: registerFrontend = %v, %v after %v; want it answered within %v", when, ok, err, elapsed, lorisAnswerWithin)
	}
	t.Logf("%s: registerFrontend answered in %v", when, elapsed)
}

// rawThriftClient speaks the Sparrow wire format (framed, binary) on conn,
// as any other-language client would, without the rpc package's pool.
func rawThriftClient(conn net.Conn) thrift.TClient {
	cfg := &thrift.TConfiguration{}
	trans := thrift.NewTFramedTransportConf(thrift.NewTSocketFromConnConf(conn, cfg), cfg)
	prot := thrift.NewTBinaryProtocolConf(trans, cfg)
	return thrift.NewTStandardClient(prot, prot)
}
