package integration

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/bench/fleet"
	"github.com/sparrowfleet/sparrow/client"
	"github.com/sparrowfleet/sparrow/nodemonitor"
)

// The Choosy paper's motivating case, shared by the fairness tests: 4 node
// monitors x 4 slots, node 0 high-memory; spark may run only there, hadoop
// anywhere. CMMF gives spark the whole high-memory node (4 of 16 slots);
// per-node fair queues split it 2/2.

// constrainedFleet starts that fleet with the given queue discipline and
// coordination settings (report period; cmmfWeights for fair queues that
// take the coordinator's CMMF weights).
func constrainedFleet(t *testing.T, queue string, period time.Duration, cmmfWeights bool) *fleet.Fleet {
	t.Helper()
	return startFleet(t, fleet.Config{
		Schedulers: 1, NodeMonitors: 4, Slots: 4, Apps: []string{"app"}, Queue: queue,
		NodeAttrs: func(i int) map[string]string {
			if i == 0 {
				return map[string]string{"mem": "high"}
			}
			return map[string]string{"mem": "std"}
		},
		Coordination: nodemonitor.CoordinationConfig{ReportEvery: period, Stale: 10 * period, Weights: cmmfWeights},
		Run:          echoTask(100 * time.Millisecond),
	})
}

// submitBacklog keeps both users backlogged for longer than a
// measurement: a frontend on 127.0.3.host submits, for each user, 160 jobs
// of 8 100 ms tasks from 4 goroutines (16 slots run 160 tasks/s; each user
// queues 1,280), with request ids starting with prefix. Several
// submitters and large jobs, so that submission outpaces the fleet even
// on a loaded machine under the race detector: the measurement needs
// hadoop queued on the high-memory node. The returned stop cancels the
// submitters and waits for them.
func submitBacklog(t *testing.T, f *fleet.Fleet, host int, prefix string) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	fe, err := client.NewFrontend(ctx, client.FrontendConfig{
		App: "app", Schedulers: f.SchedulerAddrs(), Listen: fmt.Sprintf("127.0.3.%d:0", host), AdvertiseHost: fmt.Sprintf("127.0.3.%d", host),
		OnMessage: func(client.Message) {}, Log: testLogger(t), Timeout: 5 * time.Second,
	})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, user := range []string{"spark", "hadoop"} {
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				submitJobs(ctx, t, fe, user, fmt.Sprintf("%s-%s-%d", prefix, user, g))
			}()
		}
	}
	return func() {
		cancel()
		wg.Wait()
		fe.Close()
	}
}

// submitJobs submits 40 jobs of 8 tasks for user (spark constrained to
// mem=high) until ctx ends.
func submitJobs(ctx context.Context, t *testing.T, fe *client.Frontend, user, prefix string) {
	for j := range 40 {
		job := newJob(fmt.Sprintf("%s-%d", prefix, j), 8)
		job.User = client.User{Name: user}
		if user == "spark" {
			job.Constraints = []client.Constraint{{Key: "mem", Op: "=", Values: []string{"high"}}}
		}
		if _, err := fe.Submit(ctx, job); err != nil {
			if ctx.Err() == nil {
				t.Errorf("submit: %v", err)
			}
			return
		}
	}
}

// sparkSlotsOnHigh samples the high-memory node every 20 ms for 2 s,
// counting only the instants when both users are backlogged there, and
// returns spark's mean share of the node's running tasks, in slots (its
// share times the node's slots). A share, not spark's raw running count:
// on a starved machine every slot spends longer fetching its next task
// (a getTask round trip), which lowers both users' running counts alike
// and says nothing of how the queue divides the node; the raw mean is
// logged beside it.
func sparkSlotsOnHigh(t *testing.T, f *fleet.Fleet, label string) float64 {
	t.Helper()
	high := f.NodeMonitors[0]
	waitFor(t, "both users running, hadoop queued on the high-memory node", 30*time.Second, func() bool {
		u := high.Usage()
		return u["spark"].Running > 0 && u["hadoop"].Queued > 0
	})
	slots := float64(high.State().Slots)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var share float64
	raw, n := 0, 0
	for range 100 {
		<-tick.C
		u := high.Usage()
		running := u["spark"].Running + u["hadoop"].Running
		if u["spark"].Queued == 0 || u["hadoop"].Queued == 0 || running == 0 {
			continue // not both backlogged at this instant
		}
		share += float64(u["spark"].Running) / float64(running)
		raw += u["spark"].Running
		n++
	}
	if n < 50 {
		t.Fatalf("%s: both users backlogged in only %d of 100 samples", label, n)
	}
	t.Logf("%s: spark ran %.2f tasks on the high-memory node on average, %.2f of its running tasks", label, float64(raw)/float64(n), share/float64(n))
	return slots * share / float64(n)
}
