package graphrun

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/core/planner"
)

// TestMeasureCarriesBothSchedulesOut runs the Join on Frank live, tiny in
// time, and checks what the harness promises: each schedule ran every
// task, each machine in its schedule's order, and a makespan was measured
// for every run. It asserts no timing: the numbers are the command's.
func TestMeasureCarriesBothSchedulesOut(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a loopback fleet")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p := planner.JoinOnFrank([2]string{"F2", "F3"}, "F1")
	var mu sync.Mutex
	var progress []string
	res, err := Measure(ctx, Config{Problem: p, Scale: 0.001, Runs: 1, PlanTime: 2 * time.Second, Progress: func(s string) {
		mu.Lock()
		defer mu.Unlock()
		progress = append(progress, s)
	}})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if want := fmt.Sprintf("live: %d node monitors with the problem's profiles, 1 runs per schedule, scale 0.001 s per model s", len(p.Machines)); len(progress) == 0 || progress[0] != want {
		t.Errorf("progress %q, want it to start with %q", progress, want)
	}
	mu.Unlock()
	greedy, err := planner.Greedy(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range []Run{res.Plan, res.Greedy} {
		if len(run.Measured) != 1 || !(run.Measured[0] > 0) {
			t.Errorf("%s: measured %v, want one positive makespan", run.Schedule, run.Measured)
		}
		n := 0
		for _, ts := range run.Order {
			n += len(ts)
		}
		if n != len(p.Graph.Tasks) {
			t.Errorf("%s: %d launches recorded, want %d: %v", run.Schedule, n, len(p.Graph.Tasks), run.Order)
		}
	}
	for m, ts := range greedy.Order {
		var want []string
		for _, ti := range ts {
			want = append(want, p.Graph.Tasks[ti].Name)
		}
		if got := res.Greedy.Order[p.Machines[m].Name]; !slices.Equal(got, want) && len(want) > 0 {
			t.Errorf("greedy on %s ran %v, greedy's order is %v", p.Machines[m].Name, got, want)
		}
	}
	if res.Greedy.Predicted != greedy.Makespan {
		t.Errorf("greedy predicted %v, planner.Greedy says %v", res.Greedy.Predicted, greedy.Makespan)
	}
}
