package integration

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/bench/fleet"
	"github.com/sparrowfleet/sparrow/client"
	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// rrBalancer is a round-robin TCP balancer, as kube-proxy, IPVS or any L4
// balancer may be: each accepted connection is proxied to the next
// backend in turn, whether that backend is up or not (one that refuses
// the connection has the client's closed). It holds at most
// maxBalancedConns connections at once (past them a new one is closed at
// once), and Close ends every connection and waits for its goroutines.
type rrBalancer struct {
	ln       net.Listener
	backends []string

	mu     sync.Mutex
	next   int
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

const maxBalancedConns = 512

func startBalancer(t *testing.T, host string, backends []string) *rrBalancer {
	t.Helper()
	ln, err := net.Listen("tcp", host+":0")
	if err != nil {
		t.Fatal(err)
	}
	b := &rrBalancer{ln: ln, backends: backends, conns: make(map[net.Conn]struct{})}
	b.wg.Add(1)
	go b.serve()
	t.Cleanup(b.Close)
	return b
}

func (b *rrBalancer) Addr() string { return b.ln.Addr().String() }

func (b *rrBalancer) serve() {
	defer b.wg.Done()
	for {
		c, err := b.ln.Accept()
		if err != nil {
			return
		}
		b.mu.Lock()
		if b.closed || len(b.conns) >= maxBalancedConns {
			b.mu.Unlock()
			c.Close()
			continue
		}
		backend := b.backends[b.next%len(b.backends)]
		b.next++
		b.conns[c] = struct{}{}
		b.wg.Add(1)
		b.mu.Unlock()
		go b.proxy(c, backend)
	}
}

// track adds c to the connections Close ends; false if closed already.
func (b *rrBalancer) track(c net.Conn) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	b.conns[c] = struct{}{}
	return true
}

func (b *rrBalancer) untrack(cs ...net.Conn) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range cs {
		delete(b.conns, c)
		c.Close()
	}
}

// proxy copies between client and a new connection to backend until
// either side ends, then closes both.
func (b *rrBalancer) proxy(client net.Conn, backend string) {
	defer b.wg.Done()
	server, err := net.DialTimeout("tcp", backend, time.Second)
	if err != nil {
		b.untrack(client)
		return
	}
	if !b.track(server) {
		server.Close()
		b.untrack(client)
		return
	}
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(server, client)
	go pipe(client, server)
	<-done
	b.untrack(client, server) // ends the other copy
	<-done
}

// Close stops accepting, ends every connection and waits.
func (b *rrBalancer) Close() {
	b.mu.Lock()
	b.closed = true
	b.ln.Close()
	for c := range b.conns {
		c.Close()
	}
	b.mu.Unlock()
	b.wg.Wait()
}

// balancedFleet starts two schedulers and four node monitors of four
// slots running echoTask(taskTime), a balancer in front of the
// schedulers on host .1 of prefix, and a frontend on host .2 given only
// the balancer's address; its messages go to the returned ledger.
func balancedFleet(t *testing.T, prefix string, taskTime time.Duration, onFailover func(client.Failover)) (*fleet.Fleet, *client.Frontend, *ledger) {
	t.Helper()
	led := newLedger()
	f := startFleet(t, fleet.Config{
		Schedulers: 2, NodeMonitors: 4, Slots: 4, Apps: []string{"app"},
		Run: echoTask(taskTime), OnLaunch: led.launched,
	})
	bal := startBalancer(t, prefix+".1", f.SchedulerAddrs())
	return f, balancedFrontend(t, bal, prefix+".2", led, onFailover), led
}

// balancedFrontend starts a frontend for "app" on host whose only
// scheduler address is bal's.
func balancedFrontend(t *testing.T, bal *rrBalancer, host string, led *ledger, onFailover func(client.Failover)) *client.Frontend {
	t.Helper()
	fe, err := client.NewFrontend(context.Background(), client.FrontendConfig{
		App: "app", Schedulers: []string{bal.Addr()},
		Listen: host + ":0", AdvertiseHost: host,
		OnMessage: led.message, OnFailover: onFailover, Log: testLogger(t),
		// Failure detection is not what a slow race-detector run should
		// trip: a closed connection is noticed at once anyway.
		Timeout: 2 * time.Second, Heartbeat: 50 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fe.Close() })
	return fe
}

// submitAll submits n jobs of tasks tasks each, all at once, and returns
// the ids of those in flight afterwards: accepted, or in doubt (which
// OnFailover reports); and of those accepted. Others are refused and
// logged.
func submitAll(t *testing.T, fe *client.Frontend, prefix string, n, tasks int) (inFlight, accepted []string) {
	t.Helper()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for j := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("%s-%d", prefix, j)
			_, err := fe.Submit(context.Background(), newJob(id, tasks))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				accepted = append(accepted, id)
				inFlight = append(inFlight, id)
			case errors.Is(err, client.ErrInDoubt):
				inFlight = append(inFlight, id)
			default:
				t.Logf("job %s not submitted: %v", id, err)
			}
		}()
	}
	wg.Wait()
	return inFlight, accepted
}

// TestFrontendBehindBalancer: a frontend given one address, a round-robin
// balancer in front of two schedulers, gets every task message of 40
// jobs of 10 tasks, each task run and reported exactly once, with both
// schedulers taking jobs.
func TestFrontendBehindBalancer(t *testing.T) {
	const jobs, tasks = 40, 10
	f, fe, led := balancedFleet(t, "127.0.5", 5*time.Millisecond, func(ev client.Failover) {
		t.Errorf("failover %+v with every scheduler up", ev)
	})
	if _, ids := submitAll(t, fe, "job", jobs, tasks); len(ids) != jobs {
		t.Fatalf("%d of %d jobs accepted", len(ids), jobs)
	}
	total := jobs * tasks
	waitFor(t, "every task message", 60*time.Second, func() bool {
		_, m := led.counts()
		return m == total
	})
	led.checkOnce(t, total)
	led.mu.Lock()
	for k, ms := range led.messages {
		if len(ms) != 1 {
			t.Errorf("task %s: %d messages, want 1", k, len(ms))
		}
	}
	led.mu.Unlock()
	for i, s := range f.Schedulers {
		if n := s.Stats().JobsSubmitted; n == 0 {
			t.Errorf("scheduler %d took no job: the balancer did not spread the connections", i)
		}
	}
	waitFor(t, "no job in flight", 10*time.Second, func() bool { return len(fe.InFlight()) == 0 })
}

// TestFrontendBehindBalancerSchedulerKilled: one of the two schedulers
// behind the balancer is stopped while jobs run; every job in flight then
// either completes (each task's message arrives) or is reported through
// OnFailover, and every job accepted after the stop, by the surviving
// scheduler, completes.
func TestFrontendBehindBalancerSchedulerKilled(t *testing.T) {
	const tasks = 10
	var mu sync.Mutex
	reported := map[string]bool{}
	failovers := 0
	f, fe, led := balancedFleet(t, "127.0.7", 200*time.Millisecond, func(ev client.Failover) {
		mu.Lock()
		defer mu.Unlock()
		failovers++
		for _, j := range ev.InFlight {
			reported[j.RequestID] = true
		}
	})
	inFlight, _ := submitAll(t, fe, "before", 20, tasks)
	waitFor(t, "the first launches", 10*time.Second, func() bool {
		l, _ := led.counts()
		return l >= 20
	})
	for i, s := range f.Schedulers {
		if s.Stats().JobsSubmitted == 0 {
			t.Fatalf("scheduler %d took no job before the kill: the balancer did not spread the connections", i)
		}
	}
	if err := f.StopScheduler(0); err != nil {
		t.Fatal(err)
	}
	afterInFlight, afterAccepted := submitAll(t, fe, "after", 20, tasks)
	inFlight = append(inFlight, afterInFlight...)

	complete := func(id string) bool {
		led.mu.Lock()
		defer led.mu.Unlock()
		for k := range tasks {
			if len(led.messages[key(id, fmt.Sprint(k))]) == 0 {
				return false
			}
		}
		return true
	}
	var open []string
	waitFor(t, "every job in flight to complete or be reported", 60*time.Second, func() bool {
		open = open[:0]
		mu.Lock()
		defer mu.Unlock()
		for _, id := range inFlight {
			if !reported[id] && !complete(id) {
				open = append(open, id)
			}
		}
		return len(open) == 0
	})
	waitFor(t, "every job the surviving scheduler accepted after the stop to complete", 30*time.Second, func() bool {
		for _, id := range afterAccepted {
			if !complete(id) {
				return false
			}
		}
		return true
	})
	mu.Lock()
	defer mu.Unlock()
	done, both := 0, 0
	for _, id := range inFlight {
		if complete(id) {
			done++
			if reported[id] {
				both++
			}
		}
	}
	t.Logf("%d jobs in flight: %d completed, %d reported in %d failovers (%d of them completed too)",
		len(inFlight), done, len(reported), failovers, both)
	if len(afterAccepted) == 0 {
		t.Error("no job accepted after the stop: the surviving scheduler was never reached")
	}
	if len(reported) == 0 {
		t.Error("no job reported: the stopped scheduler had none in flight, so the test proved nothing")
	}
}

// TestFrontendBehindBalancerSchedulerDrains: one of the two schedulers
// behind the balancer drains while jobs run; jobs submitted during the
// drain are accepted by the other (the refusing connection is set aside),
// nothing is reported through OnFailover, and every task of every job
// runs and reports exactly once.
func TestFrontendBehindBalancerSchedulerDrains(t *testing.T) {
	const jobs, tasks = 20, 4
	f, fe, led := balancedFleet(t, "127.0.9", 100*time.Millisecond, func(ev client.Failover) {
		t.Errorf("failover %+v: a draining scheduler is not a failed one", ev)
	})
	if _, ids := submitAll(t, fe, "before", jobs, tasks); len(ids) != jobs {
		t.Fatalf("%d of %d jobs accepted before the drain", len(ids), jobs)
	}
	s := f.Schedulers[0]
	if s.Stats().JobsSubmitted == 0 {
		t.Fatal("scheduler 0 took no job: the balancer did not spread the connections")
	}
	done := make(chan struct{})
	go func() { s.Drain(30 * time.Second); close(done) }()
	waitFor(t, "the drain to begin", 5*time.Second, s.Draining)
	if _, ids := submitAll(t, fe, "during", jobs, tasks); len(ids) != jobs {
		t.Fatalf("%d of %d jobs accepted during one scheduler's drain, want all by the other", len(ids), jobs)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the drain did not return")
	}
	total := 2 * jobs * tasks
	waitFor(t, "every task message", 30*time.Second, func() bool {
		_, m := led.counts()
		return m == total
	})
	led.checkOnce(t, total)
}

// olderScheduler is a SchedulerService of a build that ignores a job's
// frontend address: it knows a frontend only by its registration. It
// counts the jobs it was given before any registration.
type olderScheduler struct {
	mu                       sync.Mutex
	registered               bool
	jobs, beforeRegistration int
}

func (s *olderScheduler) RegisterFrontend(context.Context, string, string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.registered = true
	return true, nil
}

func (s *olderScheduler) SubmitJob(_ context.Context, req *sparrowrpc.TSchedulingRequest) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(req.Tasks) > 0 {
		s.jobs++
		if !s.registered {
			s.beforeRegistration++
		}
	}
	return nil
}

func (s *olderScheduler) SendFrontendMessage(context.Context, string, *sparrowrpc.TFullTaskId, int32, []byte) error {
	return nil
}

func (s *olderScheduler) TaskDone(context.Context, string, *sparrowrpc.TFullTaskId, int32, []byte, *sparrowrpc.THostPort) error {
	return nil
}

func (s *olderScheduler) TasksDone(context.Context, []*sparrowrpc.TTaskDone, *sparrowrpc.THostPort) error {
	return nil
}

// TestFrontendBehindBalancerRegistersOnEveryConnection: behind a balancer
// in front of schedulers that ignore a job's frontend address (an older
// release, during a rolling update), every scheduler given a job had the
// frontend registered with it first: the frontend registers on each new
// connection before submitting on it.
func TestFrontendBehindBalancerRegistersOnEveryConnection(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test; skipped with -short")
	}
	const backends, jobs = 8, 40
	scheds := make([]*olderScheduler, backends)
	var addrs []string
	for i := range scheds {
		scheds[i] = &olderScheduler{}
		srv, err := rpc.Listen("127.0.8.1:0", rpc.Config{}, testLogger(t))
		if err != nil {
			t.Fatal(err)
		}
		go srv.Serve(sparrowrpc.NewSchedulerServiceProcessor(scheds[i]))
		t.Cleanup(func() { srv.Close() })
		addrs = append(addrs, srv.Addr())
	}
	bal := startBalancer(t, "127.0.8.2", addrs)
	fe := balancedFrontend(t, bal, "127.0.8.3", newLedger(), nil)
	if _, ids := submitAll(t, fe, "job", jobs, 1); len(ids) != jobs {
		t.Fatalf("%d of %d jobs accepted", len(ids), jobs)
	}
	given := 0
	for i, s := range scheds {
		s.mu.Lock()
		if s.jobs > 0 {
			given++
		}
		if s.beforeRegistration > 0 {
			t.Errorf("scheduler %d got %d of its %d jobs before the frontend registered with it", i, s.beforeRegistration, s.jobs)
		}
		s.mu.Unlock()
	}
	if given < 2 {
		t.Fatalf("%d of %d schedulers got jobs: the balancer did not spread the connections", given, backends)
	}
}
