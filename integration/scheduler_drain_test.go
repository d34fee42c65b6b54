package integration

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/bench/fleet"
	"github.com/sparrowfleet/sparrow/client"
	"github.com/sparrowfleet/sparrow/scheduler"
)

// TestSchedulerDrain drains a scheduler over loopback Thrift while its
// jobs run: a job submitted during the drain is refused, and the client
// library types the refusal as a retryable SaturatedError with the
// scheduler's suggested delay; the drain returns once every accepted task
// has run and been reported finished, each exactly once.
func TestSchedulerDrain(t *testing.T) {
	led := newLedger()
	f := startFleet(t, fleet.Config{
		Schedulers: 1, NodeMonitors: 2, Slots: 2, Apps: []string{"app"},
		Run: echoTask(300 * time.Millisecond), OnLaunch: led.launched,
	})
	fe := ledgerFrontend(t, f, led, "127.0.3.78")
	ctx := context.Background()
	const jobs, tasks = 3, 4 // 12 tasks on 4 slots: some wait in queues
	for j := range jobs {
		if _, err := fe.Submit(ctx, newJob(fmt.Sprintf("j%d", j), tasks)); err != nil {
			t.Fatal(err)
		}
	}
	s := f.Schedulers[0]
	done := make(chan scheduler.DrainResult, 1)
	go func() { done <- s.Drain(30 * time.Second) }()
	waitFor(t, "the drain to begin", 5*time.Second, s.Draining)
	if s.Serving() {
		t.Error("a draining scheduler still says it serves (its /readyz would pass)")
	}
	_, err := fe.Submit(ctx, newJob("late", 1))
	var sat *client.SaturatedError
	if !errors.As(err, &sat) || sat.RetryAfter <= 0 {
		t.Fatalf("submit during the drain: %v (%T), want a SaturatedError with a retry delay", err, err)
	}
	var res scheduler.DrainResult
	select {
	case res = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the drain did not return")
	}
	if res.Unlaunched != 0 || res.Running != 0 {
		t.Fatalf("drain result %+v, want every accepted task launched and finished", res)
	}
	total := jobs * tasks
	waitFor(t, "every task's message", 10*time.Second, func() bool {
		_, m := led.counts()
		return m == total
	})
	led.checkOnce(t, total)
}

// TestFrontendMovesOffADrainingScheduler: with two schedulers, a job
// submitted while the current one drains is refused there and accepted by
// the other within the same Submit, with no failover reported (the
// draining scheduler still finishes what it accepted); every task of both
// runs exactly once.
func TestFrontendMovesOffADrainingScheduler(t *testing.T) {
	led := newLedger()
	f := startFleet(t, fleet.Config{
		Schedulers: 2, NodeMonitors: 2, Slots: 2, Apps: []string{"app"},
		Run: echoTask(300 * time.Millisecond), OnLaunch: led.launched,
	})
	var failovers []client.Failover
	fe, err := client.NewFrontend(context.Background(), client.FrontendConfig{
		App: "app", Schedulers: f.SchedulerAddrs(),
		Listen: "127.0.3.79:0", AdvertiseHost: "127.0.3.79",
		OnMessage: led.message, Log: testLogger(t), Timeout: 5 * time.Second, Heartbeat: -1,
		OnFailover: func(ev client.Failover) { failovers = append(failovers, ev) },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fe.Close() })
	ctx := context.Background()
	const tasks = 4
	if _, err := fe.Submit(ctx, newJob("early", tasks)); err != nil {
		t.Fatal(err)
	}
	first := fe.Scheduler()
	var draining *scheduler.Daemon
	for i, addr := range f.SchedulerAddrs() {
		if addr == first {
			draining = f.Schedulers[i]
		}
	}
	if draining == nil {
		t.Fatalf("the frontend's scheduler %s is none of the fleet's %v", first, f.SchedulerAddrs())
	}
	done := make(chan scheduler.DrainResult, 1)
	go func() { done <- draining.Drain(30 * time.Second) }()
	waitFor(t, "the drain to begin", 5*time.Second, draining.Draining)
	if _, err := fe.Submit(ctx, newJob("late", tasks)); err != nil {
		t.Fatalf("submit during one scheduler's drain: %v, want it accepted by the other", err)
	}
	if got := fe.Scheduler(); got == first {
		t.Fatalf("the frontend still submits to the draining scheduler %s", got)
	}
	select {
	case res := <-done:
		if res.Unlaunched != 0 || res.Running != 0 {
			t.Fatalf("drain result %+v, want every accepted task launched and finished", res)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the drain did not return")
	}
	waitFor(t, "every task's message", 10*time.Second, func() bool {
		_, m := led.counts()
		return m == 2*tasks
	})
	led.checkOnce(t, 2*tasks)
	if len(failovers) != 0 {
		t.Fatalf("failovers %+v, want none: a draining scheduler is not a failed one", failovers)
	}
}

// TestDrainedSchedulerLeavingWithJobsIsReported: a frontend moved off a
// draining scheduler whose drain times out with a job still running; once
// the scheduler stops answering, the frontend's heartbeat reports that job
// through OnFailover, as it would a failed scheduler's, rather than keeping
// it in flight forever.
func TestDrainedSchedulerLeavingWithJobsIsReported(t *testing.T) {
	gate, _ := taskGate(t)
	f := startFleet(t, fleet.Config{
		Schedulers: 2, NodeMonitors: 2, Slots: 2, Apps: []string{"app"}, Run: gatedRun(gate),
	})
	failovers := make(chan client.Failover, 4)
	fe, err := client.NewFrontend(context.Background(), client.FrontendConfig{
		App: "app", Schedulers: f.SchedulerAddrs(),
		Listen: "127.0.3.80:0", AdvertiseHost: "127.0.3.80",
		OnMessage: func(client.Message) {}, Log: testLogger(t), Timeout: 5 * time.Second,
		Heartbeat:  20 * time.Millisecond,
		OnFailover: func(ev client.Failover) { failovers <- ev },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fe.Close() })
	ctx := context.Background()
	if _, err := fe.Submit(ctx, newJob("stuck", 1)); err != nil {
		t.Fatal(err)
	}
	first := fe.Scheduler()
	idx := -1
	for i, addr := range f.SchedulerAddrs() {
		if addr == first {
			idx = i
		}
	}
	if idx < 0 {
		t.Fatalf("the frontend's scheduler %s is none of the fleet's %v", first, f.SchedulerAddrs())
	}
	s := f.Schedulers[idx]
	done := make(chan scheduler.DrainResult, 1)
	go func() { done <- s.Drain(200 * time.Millisecond) }()
	waitFor(t, "the drain to begin", 5*time.Second, s.Draining)
	if _, err := fe.Submit(ctx, newJob("moved", 1)); err != nil {
		t.Fatalf("submit during the drain: %v, want it accepted by the other scheduler", err)
	}
	select {
	case ev := <-failovers:
		t.Fatalf("failover %+v while the draining scheduler still answers", ev)
	case res := <-done:
		if res.Running == 0 && res.Unlaunched == 0 {
			t.Fatalf("drain result %+v: the gated task finished, want the drain to time out", res)
		}
	}
	if err := f.StopScheduler(idx); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-failovers:
		if ev.From != first || len(ev.InFlight) != 1 || ev.InFlight[0].RequestID != "stuck" {
			t.Fatalf("failover %+v, want one from %s reporting job stuck alone", ev, first)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the drained scheduler's unfinished job was never reported")
	}
	if ids := fe.InFlight(); !slices.Equal(ids, []string{"moved"}) {
		t.Fatalf("in flight %v, want the moved job only", ids)
	}
}
