package integration

import (
	"runtime"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/bench/procs"
)

// TestBenchProcsSmallFleet runs the separate-process benchmark on the
// smallest fleet: every member a real process of the sparrow binary built
// with the race detector. It checks the harness's accounting, not speed:
// every task completed once, each role's processes counted, and every
// task's scheduling delay measured from the executors' launch times,
// merged over the two schedulers' drivers.
func TestBenchProcsSmallFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("starts separate processes")
	}
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	// A network of its own, free now: a fixed one may be held by another
	// process on the machine, and then the first member to bind exits.
	network, err := procs.FreeNet(2, 2, 2)
	if err != nil {
		t.Skipf("cannot bind 127.0.0.0/8 loopback addresses: %v", err)
	}
	bin := buildSparrowBinary(t)
	const jobs, tasks = 40, 3
	res, err := procs.Run(t.Context(), procs.Config{
		Binary: bin, Schedulers: 2, NodeMonitors: 2, Slots: 2,
		Jobs: jobs, Tasks: tasks, Rate: 40, GossipProfile: "local",
		Net: network, Dir: t.TempDir(), Idle: 200 * time.Millisecond,
		Deadline: time.Minute, ReadyTimeout: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.TasksCompleted != jobs*tasks || res.Drive.DuplicateOKReports != 0 {
		t.Fatalf("completed %d tasks (%d duplicates), want %d once each; late and duplicate OKs: %q; lost %d, failed %d, other %d reports",
			res.TasksCompleted, res.Drive.DuplicateOKReports, jobs*tasks, res.Drive.LateOK, res.Drive.LostReports, res.Drive.FailedReports, res.Drive.OtherReports)
	}
	if n := res.Drive.SchedDelayMs.N; n != jobs*tasks {
		t.Errorf("scheduling delay measured for %d tasks, want %d (executors report launch times)", n, jobs*tasks)
	}
	// One driver per scheduler, each with half the jobs.
	if len(res.Drives) != 2 || res.Drives[0].JobsSubmitted != jobs/2 || res.Drives[1].JobsSubmitted != jobs/2 {
		t.Errorf("drivers %d, want 2 of %d jobs each", len(res.Drives), jobs/2)
	}
	for i, d := range res.Drives {
		if len(d.Schedulers) != 2 || d.Schedulers[0] == res.Drives[1-i].Schedulers[0] {
			t.Errorf("driver %d's schedulers %v: want its own scheduler first", i+1, d.Schedulers)
		}
	}
	want := map[procs.Role]int{procs.Scheduler: 2, procs.NodeMonitor: 2, procs.Executor: 2, procs.Frontend: 2}
	if len(res.Roles) != len(want) {
		t.Fatalf("roles %+v, want %d", res.Roles, len(want))
	}
	for _, rc := range res.Roles {
		if rc.Processes != want[rc.Role] || rc.PeakRSSMiB <= 0 || rc.CPUSeconds < 0 {
			t.Errorf("role %+v: want %d processes, a peak RSS and non-negative CPU", rc, want[rc.Role])
		}
	}
	t.Logf("CPU µs per task: %+v", res.Roles)
}
