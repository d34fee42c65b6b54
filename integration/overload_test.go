package integration

import (
	"runtime"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/bench/overload"
	"github.com/sparrowfleet/sparrow/bench/procs"
)

// TestBenchOverloadSmallFleet runs the saturation benchmark for one short
// point at twice the capacity of the smallest fleet, every member a real
// process of the sparrow binary built with the race detector. It checks
// the harness's accounting, not speed: the timeline was sampled, every
// role's processes counted with a resident set, the driver's summary
// read, the schedulers' views and the members' logs scanned, and the
// goals judged.
func TestBenchOverloadSmallFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("starts separate processes")
	}
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	// A network of its own, free now: a fixed one may be held by another
	// process on the machine, and then the first member to bind exits.
	network, err := procs.FreeNet(1, 2, 1)
	if err != nil {
		t.Skipf("cannot bind 127.0.0.0/8 loopback addresses: %v", err)
	}
	bin := buildSparrowBinary(t)
	points, err := overload.Run(t.Context(), overload.Config{
		Binary: bin, Schedulers: 1, NodeMonitors: 2, Slots: 1, Tasks: 2, TaskDuration: 100 * time.Millisecond,
		Multiples: []float64{2}, Duration: 4 * time.Second, Settle: time.Second, Drain: time.Second,
		MaxQueued: 4, GossipProfile: "lan", Net: network, LogLevel: "info", Dir: t.TempDir(),
		FrontendTimeout: time.Second, SampleEvery: 500 * time.Millisecond, ReadyTimeout: time.Minute,
		Say: func(s string) { t.Log(s) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(points) != 1 {
		t.Fatalf("%d points, want 1", len(points))
	}
	p := points[0]
	if p.CapacityTasksPerS != 20 || p.OfferedTasksPerS != 40 {
		t.Errorf("capacity %v, offered %v tasks/s: want 20 and 40", p.CapacityTasksPerS, p.OfferedTasksPerS)
	}
	if len(p.Samples) < 3 || p.Samples[len(p.Samples)-1].T < 4 {
		t.Errorf("%d samples, last at %v s: want the window sampled to its end", len(p.Samples), p.Samples[len(p.Samples)-1].T)
	}
	if p.JobsSubmitted == 0 || p.Drive.TasksSubmitted != 2*p.JobsSubmitted || p.AttemptsPerTask < 1 {
		t.Errorf("driver summary not read: %d jobs, %d tasks, %v attempts per task", p.JobsSubmitted, p.Drive.TasksSubmitted, p.AttemptsPerTask)
	}
	if p.GoodputTasksPerS <= 0 {
		t.Errorf("no task completed in the window: goodput %v", p.GoodputTasksPerS)
	}
	want := map[procs.Role]int{procs.Scheduler: 1, procs.NodeMonitor: 2, procs.Executor: 2, procs.Frontend: 1}
	if len(p.Roles) != len(want) {
		t.Fatalf("roles %+v, want %d", p.Roles, len(want))
	}
	for _, r := range p.Roles {
		if r.Processes != want[r.Role] || r.PeakRSSMiB <= 0 || r.EndRSSMiB <= 0 {
			t.Errorf("role %+v: want %d processes with a resident set", r, want[r.Role])
		}
	}
	if p.Gossip.MinView < 0 || p.Gossip.DeclaredDead == nil {
		t.Errorf("gossip %+v: the scheduler's view was never read", p.Gossip)
	}
	if vs := overload.Judge(points); len(vs) != 4 {
		t.Errorf("verdicts %+v", vs)
	}
	t.Logf("goodput %.1f tasks/s (%.0f%%), %d submit errors, %d refusals, roles %+v, gossip %+v",
		p.GoodputTasksPerS, p.GoodputPct, p.SubmitErrors, p.Refusals, p.Roles, p.Gossip)
}
