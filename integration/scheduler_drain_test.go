package integration

import (
	"context"
	"errors"
	"fmt"
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
