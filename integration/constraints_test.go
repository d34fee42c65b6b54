package integration

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/bench/fleet"
	"github.com/sparrowfleet/sparrow/client"
)

// TestConstraintsEndToEnd runs jobs with job-level constraints, task-level
// node and rack preferences, and a mix of constrained and free tasks, on a
// fleet whose node monitors advertise attributes, and checks that every
// task runs only where it is allowed. An unsatisfiable job is refused with
// a message naming the constraint.
func TestConstraintsEndToEnd(t *testing.T) {
	// Nodes 0-1 have a GPU; nodes 0-2 are rack r0 and 3-5 rack r1.
	attrs := func(i int) map[string]string {
		a := map[string]string{"rack": fmt.Sprintf("r%d", i/3)}
		if i < 2 {
			a["gpu"] = "yes"
		}
		return a
	}
	led := newLedger()
	f := startFleet(t, fleet.Config{
		Schedulers: 1, NodeMonitors: 6, Slots: 2, Apps: []string{"app"}, NodeAttrs: attrs,
		Run: echoTask(time.Millisecond), OnLaunch: led.launched,
	})
	host := func(i int) string {
		h, _, _ := net.SplitHostPort(f.NodeMonitors[i].InternalAddr())
		return h
	}
	ctx := context.Background()
	fe, err := client.NewFrontend(ctx, client.FrontendConfig{
		App: "app", Schedulers: f.SchedulerAddrs(), Listen: "127.0.3.40:0", AdvertiseHost: "127.0.3.40",
		OnMessage: led.message, Timeout: 5 * time.Second, Log: testLogger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fe.Close() })

	type rule struct {
		job     client.Job
		allowed func(task string, node int) bool
	}
	var rules []rule
	for j := 0; j < 10; j++ {
		gpu := newJob(fmt.Sprintf("gpu-%d", j), 4)
		gpu.Constraints = []client.Constraint{{Key: "gpu", Op: "=", Values: []string{"yes"}}}
		rules = append(rules, rule{gpu, func(_ string, n int) bool { return n < 2 }})

		notR0 := newJob(fmt.Sprintf("not-r0-%d", j), 4)
		notR0.Constraints = []client.Constraint{{Key: "rack", Op: "!=", Values: []string{"r0"}}}
		rules = append(rules, rule{notR0, func(_ string, n int) bool { return n >= 3 }})

		// Tasks 0-1 prefer rack r1, task 2 prefers node 4's host, task 3 is free.
		mixed := newJob(fmt.Sprintf("mixed-%d", j), 4)
		mixed.Tasks[0].Racks = []string{"r1"}
		mixed.Tasks[1].Racks = []string{"r1"}
		mixed.Tasks[2].Nodes = []string{host(4)}
		rules = append(rules, rule{mixed, func(task string, n int) bool {
			switch task {
			case "0", "1":
				return n >= 3
			case "2":
				return n == 4
			}
			return true
		}})
	}
	total := 0
	for _, r := range rules {
		if _, err := fe.Submit(ctx, r.job); err != nil {
			t.Fatalf("submit %s: %v", r.job.RequestID, err)
		}
		total += len(r.job.Tasks)
	}
	waitFor(t, "every constrained task to finish", 30*time.Second, func() bool {
		_, m := led.counts()
		return m == total
	})
	led.mu.Lock()
	for _, r := range rules {
		for _, task := range r.job.Tasks {
			ls := led.launches[key(r.job.RequestID, task.ID)]
			if len(ls) != 1 {
				t.Errorf("%s/%s launched %d times", r.job.RequestID, task.ID, len(ls))
				continue
			}
			if !r.allowed(task.ID, ls[0].node) {
				t.Errorf("%s/%s ran on node monitor %d (attrs %v), which it does not allow",
					r.job.RequestID, task.ID, ls[0].node, attrs(ls[0].node))
			}
		}
	}
	led.mu.Unlock()

	for _, tc := range []struct {
		cons []client.Constraint
		want string
	}{
		{[]client.Constraint{{Key: "tpu", Op: "exists"}}, `no live node monitor satisfies constraint "tpu exists"`},
		{[]client.Constraint{{Key: "gpu", Op: "=", Values: []string{"no"}}}, `"gpu = no"`},
		{[]client.Constraint{{Key: "gpu", Op: "exists"}, {Key: "rack", Op: "=", Values: []string{"r1"}}}, "together"},
		{[]client.Constraint{{Key: "gpu", Op: "~"}}, "unknown operator"},
	} {
		job := newJob("refused", 1)
		job.Constraints = tc.cons
		_, err := fe.Submit(ctx, job)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("unsatisfiable job %v: got %v, want an error containing %q", tc.cons, err, tc.want)
		}
	}
}
