package scheduler

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// hangUp is a frontend that has gone away but whose address still accepts
// connections (closing each at once), so that every dial is counted.
type hangUp struct {
	net  *memNet
	addr string
}

func (c *cluster) startHangUp() *hangUp {
	h := &hangUp{net: c.net, addr: c.net.addr()}
	c.net.hangUpAt(h.addr)
	return h
}

// dials returns how many connections the address accepted.
func (h *hangUp) dials() int { return h.net.dials(h.addr) }

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// lines counts the logged lines at level that contain substr.
func (s *syncBuffer) lines(level, substr string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, l := range strings.Split(s.b.String(), "\n") {
		if strings.Contains(l, `"level":"`+level+`"`) && strings.Contains(l, substr) {
			n++
		}
	}
	return n
}

// A frontend that goes away costs one dial per backoff, not one per
// message, and one log line per interval; after FrontendDeadAfter its app
// is deregistered, and a new registration is served normally.
func TestFrontendGoneIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 0, Config{FrontendDeadAfter: time.Second})
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		clk := &clock{t: t0}
		c.s.now = clk.now
		logs := &syncBuffer{}
		c.s.log = zerolog.New(logs)
		gone := c.startHangUp()
		ctx := context.Background()
		if _, err := c.s.RegisterFrontend(ctx, app, gone.addr); err != nil {
			t.Fatal(err)
		}
		id := &sparrowrpc.TFullTaskId{TaskId: "t", RequestId: "r", AppId: app}
		send := func(n int) (errs int, last error) {
			for range n {
				if err := c.s.SendFrontendMessage(ctx, app, id, 0, nil); err != nil {
					errs++
					last = err
				}
			}
			return errs, last
		}

		if errs, last := send(1000); errs != 1000 || !strings.Contains(last.Error(), "unreachable") {
			t.Fatalf("%d of 1000 messages failed, last error %v; want all, dropped as unreachable", errs, last)
		}
		st := c.s.Stats().Frontend
		if st.Failed != 1 || st.DroppedUnreachable != 999 || gone.dials() != 1 {
			t.Fatalf("after 1000 messages within the backoff: %d dials, stats %+v; want 1 dial, 1 failed, 999 dropped", gone.dials(), st)
		}
		// Past the first backoff (at most frontendBackoffMin), one probe.
		clk.set(t0.Add(frontendBackoffMin))
		send(1000)
		if st := c.s.Stats().Frontend; st.Failed != 2 || gone.dials() != 2 {
			t.Fatalf("after the backoff: %d dials, stats %+v; want one probe", gone.dials(), st)
		}
		// The sweep logs one line for all of it, and none in the next second.
		c.s.Sweep(t0.Add(500 * time.Millisecond))
		c.s.Sweep(t0.Add(900 * time.Millisecond))
		if n := logs.lines("warn", "not delivered"); n != 1 {
			t.Fatalf("%d summary lines, want 1:\n%s", n, logs.b.String())
		}
		// Unreachable for FrontendDeadAfter: deregistered, with one line.
		clk.set(t0.Add(time.Second))
		c.s.Sweep(t0.Add(time.Second))
		if st := c.s.Stats().Frontend; st.Deregistered != 1 || st.Links != 0 {
			t.Fatalf("after FrontendDeadAfter: stats %+v, want the frontend deregistered and its link forgotten", st)
		}
		if n := logs.lines("warn", "deregistered"); n != 1 {
			t.Fatalf("%d deregistration lines, want 1", n)
		}
		if errs, last := send(1000); errs != 1000 || !strings.Contains(last.Error(), "no frontend registered") {
			t.Fatalf("after deregistration %d of 1000 failed, last %v", errs, last)
		}
		for i := 2; i < 5; i++ {
			c.s.Sweep(t0.Add(time.Duration(i) * time.Second))
		}
		if n := logs.lines("warn", "no frontend registered"); n != 1 {
			t.Fatalf("%d lines about apps without a frontend, want 1", n)
		}
		if n := logs.lines("warn", ""); n != 3 {
			t.Fatalf("%d warning lines for 3000 lost messages, want 3:\n%s", n, logs.b.String())
		}
		if d := gone.dials(); d != 2 {
			t.Fatalf("%d dials to the gone frontend, want 2", d)
		}

		// The frontend comes back (elsewhere) and registers: served normally.
		fe := c.startFrontendRecorder(t)
		if err := c.s.SendFrontendMessage(ctx, app, id, 0, nil); err != nil {
			t.Fatalf("message after re-registration: %v", err)
		}
		if fe.count() != 1 {
			t.Fatalf("re-registered frontend got %d messages, want 1", fe.count())
		}
	})
}

// blockingFrontend holds each message until release is closed.
type blockingFrontend struct {
	originalFrontend
	mu         sync.Mutex
	inCall, hi int // calls in the handler now, and at most
	release    chan struct{}
	got        atomic.Int32
}

func (f *blockingFrontend) FrontendMessage(context.Context, *sparrowrpc.TFullTaskId, int32, []byte) error {
	f.mu.Lock()
	f.inCall++
	f.hi = max(f.hi, f.inCall)
	f.mu.Unlock()
	<-f.release
	f.mu.Lock()
	f.inCall--
	f.mu.Unlock()
	f.got.Add(1)
	return nil
}

func (f *blockingFrontend) calls() (now, most int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.inCall, f.hi
}

// At most FrontendMaxInflight messages are in flight to one frontend; the
// next waits for a slot and is delivered when one frees, or is dropped
// and counted when its caller gives up first.
func TestFrontendInflightBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 0, Config{FrontendMaxInflight: 2})
		fe := &blockingFrontend{release: make(chan struct{})}
		addr := c.net.addr()
		c.net.serveFrontend(addr, fe)
		ctx := context.Background()
		if _, err := c.s.RegisterFrontend(ctx, app, addr); err != nil {
			t.Fatal(err)
		}
		id := &sparrowrpc.TFullTaskId{TaskId: "t", RequestId: "r", AppId: app}
		errs := make(chan error, 3)
		for range 2 {
			go func() { errs <- c.s.SendFrontendMessage(ctx, app, id, 0, nil) }()
		}
		c.hub.waitUntil(t, "two messages in the frontend", func() bool { n, _ := fe.calls(); return n == 2 })

		gaveUp, cancel := context.WithCancel(ctx)
		cancel()
		err := c.s.SendFrontendMessage(gaveUp, app, id, 0, nil)
		if err == nil || !strings.Contains(err.Error(), "in flight") {
			t.Fatalf("third message with both slots taken and its caller gone: %v, want dropped at the in-flight bound", err)
		}
		go func() { errs <- c.s.SendFrontendMessage(ctx, app, id, 0, nil) }()
		c.hub.waitUntil(t, "the fourth message to wait for a slot", func() bool { return c.s.Stats().Frontend.Waiting == 1 })
		close(fe.release)
		for range 3 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		_, most := fe.calls()
		if st := c.s.Stats().Frontend; st.Delivered != 3 || st.DroppedInflight != 1 || st.Inflight != 0 || st.Waiting != 0 || fe.got.Load() != 3 || most != 2 {
			t.Fatalf("stats %+v, frontend got %d, at most %d at once; want 3 delivered, 1 dropped, 2 at once", st, fe.got.Load(), most)
		}
	})
}

// A lost node's reports to a gone frontend cost one goroutine and a
// dial per backoff, not a goroutine and a dial per task.
func TestNodeLostToGoneFrontendIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 0, Config{})
		gone := c.startHangUp()
		if _, err := c.s.RegisterFrontend(context.Background(), app, gone.addr); err != nil {
			t.Fatal(err)
		}
		const tasks = 5000
		c.s.mu.Lock()
		for i := range tasks {
			c.s.running.track("10.0.0.1:20502", runningTask{app: app, request: "r", task: fmt.Sprint("t", i)}, 0, time.Time{})
		}
		c.s.mu.Unlock()
		c.s.NodeLost("10.0.0.1:20502")
		c.hub.waitUntil(t, "every lost report to be dropped", func() bool {
			st := c.s.Stats().Frontend
			return st.Failed+st.DroppedUnreachable == tasks
		})
		// One dial, then one probe per backoff while the reports drain: the
		// first backoffs are short (100 ms, doubling), so allow a few.
		if d := gone.dials(); d > 10 {
			t.Fatalf("%d dials for %d lost reports", d, tasks)
		}
	})
}
