package integration

import (
	"context"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/scheduler"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// countingFrontend is a FrontendService that counts its messages.
type countingFrontend struct {
	got atomic.Int64
}

func (f *countingFrontend) FrontendMessage(context.Context, *sparrowrpc.TFullTaskId, int32, []byte) error {
	f.got.Add(1)
	return nil
}

func serveFrontend(t *testing.T, addr string, fe *countingFrontend) *rpc.Server {
	t.Helper()
	srv, err := rpc.Listen(addr, rpc.Config{}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(sparrowrpc.NewFrontendServiceProcessor(fe))
	t.Cleanup(func() { srv.Close() })
	return srv
}

// logLines returns the lines logged to b that contain every one of
// substrs.
func logLines(b *lockedBuffer, substrs ...string) []string {
	var out []string
next:
	for _, line := range strings.Split(b.String(), "\n") {
		for _, s := range substrs {
			if !strings.Contains(line, s) {
				continue next
			}
		}
		if line != "" {
			out = append(out, line)
		}
	}
	return out
}

// TestFrontendGoneCostsBoundedDialsAndLogs: after a frontend exits, its
// scheduler must neither log "frontend message not delivered" nor dial
// the gone frontend once per message. Over real Thrift on loopback: a frontend registers, receives
// messages, and goes away; its address then accepts connections and hangs
// up at once, so that every dial the scheduler makes is counted here.
// 20,000 messages pushed at it cost a bounded number of dials and log
// lines; the frontend is deregistered after --frontend-dead-after; the
// scheduler's goroutines come back down; and a healthy frontend of
// another app gets every one of its messages throughout.
func TestFrontendGoneCostsBoundedDialsAndLogs(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test; skipped with -short")
	}
	const (
		gone, healthy = "gone-app", "healthy-app"
		flood         = 20_000
		healthyMsgs   = 2_000
		callers       = 16
		deadAfter     = time.Second
	)
	logs := &lockedBuffer{}
	d, err := scheduler.StartDaemon(scheduler.DaemonConfig{
		Listen: "127.0.0.1:0", GetTaskListen: "127.0.0.1:0", Gossip: "127.0.0.1:0",
		GossipProfile: "local", Name: "scheduler",
		Scheduler: scheduler.Config{FrontendDeadAfter: deadAfter, Seed: 7},
		Log:       zerolog.New(logs).Level(zerolog.InfoLevel),
	})
	if err != nil {
		t.Fatalf("start scheduler: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	ctx := context.Background()
	sched := rpc.NewPool(rpc.Config{}, sparrowrpc.NewSchedulerServiceClient)
	t.Cleanup(sched.Close)
	call := func(fn func(c *sparrowrpc.SchedulerServiceClient) error) error {
		return sched.Call(ctx, d.ServiceAddr(), func(ctx context.Context, c *sparrowrpc.SchedulerServiceClient) error { return fn(c) })
	}
	register := func(app, addr string) {
		t.Helper()
		var ok bool
		if err := call(func(c *sparrowrpc.SchedulerServiceClient) (err error) {
			ok, err = c.RegisterFrontend(ctx, app, addr)
			return err
		}); err != nil || !ok {
			t.Fatalf("registerFrontend(%s, %s) = %v, %v", app, addr, ok, err)
		}
	}
	send := func(app string) error {
		id := &sparrowrpc.TFullTaskId{AppId: app, RequestId: "r", TaskId: "t"}
		return call(func(c *sparrowrpc.SchedulerServiceClient) error {
			return c.SendFrontendMessage(ctx, app, id, 0, []byte("x"))
		})
	}

	good := &countingFrontend{}
	register(healthy, serveFrontend(t, "127.0.0.1:0", good).Addr())
	doomed := &countingFrontend{}
	doomedSrv := serveFrontend(t, "127.0.0.1:0", doomed)
	addr := doomedSrv.Addr()
	register(gone, addr)
	for i := range 10 {
		if err := send(gone); err != nil {
			t.Fatalf("message %d to the frontend while it lived: %v", i, err)
		}
	}
	if n := doomed.got.Load(); n != 10 {
		t.Fatalf("the frontend got %d of 10 messages while it lived", n)
	}

	// The frontend goes away; its address now accepts and hangs up.
	doomedSrv.Close()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("rebind %s: %v", addr, err)
	}
	t.Cleanup(func() { ln.Close() })
	var dials atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			dials.Add(1)
			c.Close()
		}
	}()

	// Warm up: open the connections the flood will use (callers to the
	// scheduler, and the scheduler's to the healthy frontend), so that the
	// goroutine count before is comparable with the count after.
	var warm sync.WaitGroup
	for range callers {
		warm.Add(1)
		go func() {
			defer warm.Done()
			for range 20 {
				if err := send(healthy); err != nil {
					t.Errorf("warm-up: %v", err)
					return
				}
			}
		}()
	}
	warm.Wait()
	warmed := good.got.Load()

	runtime.GC()
	goroutinesBefore := runtime.NumGoroutine()
	var heapBefore runtime.MemStats
	runtime.ReadMemStats(&heapBefore)
	start := time.Now()

	var next atomic.Int64
	var goneErrs, healthyErrs atomic.Int64
	var firstHealthyErr atomic.Value
	var wg sync.WaitGroup
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= flood {
					return
				}
				if send(gone) != nil {
					goneErrs.Add(1)
				}
				if i%(flood/healthyMsgs) == 0 {
					if err := send(healthy); err != nil {
						healthyErrs.Add(1)
						firstHealthyErr.CompareAndSwap(nil, err)
					}
				}
			}
		}()
	}
	wg.Wait()
	floodTook := time.Since(start)
	if n := goneErrs.Load(); n != flood {
		t.Errorf("%d of %d messages to the gone frontend failed; want all, so that the sender knows", n, flood)
	}
	if n := healthyErrs.Load(); n != 0 {
		t.Errorf("%d messages to the healthy frontend failed, first: %v", n, firstHealthyErr.Load())
	}

	// Deregistered once unreachable for deadAfter (the daemon sweeps every
	// second); later messages fail at once as having no frontend.
	waitFor(t, "the gone frontend to be deregistered", 20*time.Second, func() bool {
		return d.Stats().Frontend.Deregistered == 1
	})
	dialsAtDeregistration := dials.Load()
	var last error
	for range 1000 {
		if last = send(gone); last == nil {
			t.Fatal("a message for a deregistered frontend was accepted")
		}
	}
	if !strings.Contains(last.Error(), "no frontend registered") {
		t.Errorf("message after deregistration: %v, want no frontend registered", last)
	}
	if n := dials.Load(); n != dialsAtDeregistration {
		t.Errorf("%d dials after deregistration", n-dialsAtDeregistration)
	}
	// The healthy frontend got every message, and is still registered.
	if n := good.got.Load() - warmed; n != healthyMsgs {
		t.Errorf("the healthy frontend got %d of %d messages", n, healthyMsgs)
	}
	if err := send(healthy); err != nil {
		t.Errorf("the healthy frontend after the deregistration: %v", err)
	}

	// Dials: the messages in flight when it went away (at most one per
	// caller), then one probe per backoff (100 ms doubling) until
	// deregistration.
	st := d.Stats().Frontend
	if n := dials.Load(); n > callers+10 {
		t.Errorf("%d dials to the gone frontend for %d messages, want at most %d", n, flood, callers+10)
	}
	// Log lines: at most one summary per 10 s about the frontend, one
	// deregistration line, and one summary of messages without a frontend
	// per 10 s. None per message.
	about := logLines(logs, `"frontend":"`+addr+`"`)
	warned := logLines(logs, `"level":"warn"`)
	if per := logLines(logs, "frontend message not delivered"); len(per) != 0 {
		t.Errorf("%d per-message lines, e.g. %s", len(per), per[0])
	}
	// The flood's length only widens the bound by one summary per 10 s.
	if limit := 3 + int(floodTook/(10*time.Second)); len(warned) > limit {
		t.Errorf("%d warnings for %d lost messages, want at most %d:\n%s", len(warned), flood+1000, limit, strings.Join(warned, "\n"))
	}
	// Memory: the goroutines of the flood are gone and the links
	// forgotten; the heap is reported, not asserted (it is shared with the
	// test's own client).
	ok := waitUntil(10*time.Second, func() bool { return runtime.NumGoroutine() <= goroutinesBefore+callers })
	if !ok {
		buf := make([]byte, 1<<20)
		t.Fatalf("goroutines %d before, %d after:\n%s", goroutinesBefore, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
	}
	if st.Inflight != 0 || st.Waiting != 0 || st.Links > 1 {
		t.Errorf("after the flood: %+v, want nothing in flight or waiting and at most the healthy link", st)
	}
	runtime.GC()
	var heapAfter runtime.MemStats
	runtime.ReadMemStats(&heapAfter)
	t.Logf("%d messages to a gone frontend in %v from %d callers: %d dials (%d by deregistration), %d log lines naming it, %d warnings in all; "+
		"stats %+v; goroutines %d before, %d after; heap in use %d KiB before, %d KiB after",
		flood+1000, floodTook.Round(time.Millisecond), callers, dials.Load(), dialsAtDeregistration, len(about), len(warned),
		st, goroutinesBefore, runtime.NumGoroutine(), heapBefore.HeapInuse>>10, heapAfter.HeapInuse>>10)
	for _, l := range warned {
		t.Log(l)
	}
}
