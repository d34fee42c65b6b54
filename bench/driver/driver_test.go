package driver

import (
	"context"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/bench/fleet"
	"github.com/sparrowfleet/sparrow/client"
)

// startFleet starts an in-process loopback fleet serving app "app".
func startFleet(t *testing.T, cfg fleet.Config) *fleet.Fleet {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a loopback fleet; skipped with -short")
	}
	cfg.Apps = []string{"app"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f, err := fleet.Start(ctx, cfg)
	if err != nil {
		t.Fatalf("start fleet: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func baseConfig(f *fleet.Fleet, host string) Config {
	return Config{
		App: "app", Schedulers: f.SchedulerAddrs(), Listen: host + ":0", AdvertiseHost: host,
		Tasks: 3, TaskDuration: 50 * time.Millisecond, Deadline: 60 * time.Second,
		// A loaded, race-detected test machine must not look like a dead
		// scheduler unless the test kills one.
		Timeout: 2 * time.Second, Heartbeat: 50 * time.Millisecond,
		Log: zerolog.Nop(), Progress: io.Discard,
	}
}

// runAsync runs the driver; the summary arrives on the channel.
func runAsync(t *testing.T, cfg Config) <-chan Summary {
	out := make(chan Summary, 1)
	go func() {
		s, err := Run(context.Background(), cfg)
		if err != nil {
			t.Errorf("run: %v", err)
		}
		out <- s
	}()
	return out
}

func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(5 * time.Millisecond) // polling, bounded by the deadline
	}
}

func TestRunCompletesEveryJob(t *testing.T) {
	f := startFleet(t, fleet.Config{Schedulers: 1, NodeMonitors: 2, Slots: 2})
	cfg := baseConfig(f, "127.0.4.1")
	cfg.Jobs, cfg.Rate = 20, 40
	s := <-runAsync(t, cfg)
	if !s.OK {
		t.Fatalf("run not ok: %s", s.Error)
	}
	if s.JobsSubmitted != 20 || s.JobsCompleted != 20 || s.TasksCompleted != 60 || s.OKReports != 60 {
		t.Errorf("submitted %d, completed %d jobs, %d tasks, %d OK reports; want 20, 20, 60, 60",
			s.JobsSubmitted, s.JobsCompleted, s.TasksCompleted, s.OKReports)
	}
	if s.ResubmittedJobs != 0 || s.LostReports != 0 || s.LateOKReports != 0 || len(s.Failovers) != 0 {
		t.Errorf("a fault-free run resubmitted %d jobs, %d lost, %d late, %d failovers",
			s.ResubmittedJobs, s.LostReports, s.LateOKReports, len(s.Failovers))
	}
	if s.ResponseMs.N != 20 || s.ResponseMs.P50 < 50 {
		t.Errorf("response times %+v: want 20 samples of at least the 50 ms task", s.ResponseMs)
	}
}

// A node monitor crash: its running tasks are reported lost, and the
// driver resubmits them as new jobs, so every job still completes.
func TestRunResubmitsLostTasks(t *testing.T) {
	var mu sync.Mutex
	launches := map[string]int{}
	f := startFleet(t, fleet.Config{Schedulers: 1, NodeMonitors: 3, Slots: 2,
		OnLaunch: func(node int, lt client.LaunchedTask) {
			mu.Lock()
			launches[lt.Ref.RequestID+"/"+lt.Ref.TaskID]++
			mu.Unlock()
		}})
	cfg := baseConfig(f, "127.0.4.2")
	cfg.Jobs, cfg.Rate, cfg.TaskDuration = 24, 15, 200*time.Millisecond // 1.5x the 6 slots
	done := runAsync(t, cfg)
	waitFor(t, "node monitor 0 to run tasks", 20*time.Second, func() bool { return f.NodeMonitors[0].State().Running > 0 })
	f.KillNodeMonitor(0)
	s := <-done
	if !s.OK {
		t.Fatalf("run not ok: %s (incomplete %v)", s.Error, s.IncompleteTasks)
	}
	if s.LostReports == 0 || s.ResubmittedTasks < s.LostReports-s.StaleReports || s.ResubmittedBy["lost"] == 0 {
		t.Errorf("%d lost reports, %d resubmitted tasks (%v): want lost tasks resubmitted",
			s.LostReports, s.ResubmittedTasks, s.ResubmittedBy)
	}
	if s.FirstLostAt == "" || s.AffectedJobs == 0 || s.LastAffectedDoneAt == "" {
		t.Errorf("first lost %q, %d affected jobs, last done %q", s.FirstLostAt, s.AffectedJobs, s.LastAffectedDoneAt)
	}
	mu.Lock()
	defer mu.Unlock()
	for k, n := range launches {
		if n > 1 {
			t.Errorf("%s launched %d times", k, n)
		}
	}
}

// A scheduler stops: the frontend fails over and the driver resubmits the
// jobs that were in flight there.
func TestRunResubmitsAtFailover(t *testing.T) {
	f := startFleet(t, fleet.Config{Schedulers: 2, NodeMonitors: 2, Slots: 2})
	cfg := baseConfig(f, "127.0.4.3")
	cfg.Jobs, cfg.Rate, cfg.TaskDuration = 20, 15, 200*time.Millisecond
	cfg.Timeout = 200 * time.Millisecond
	marks := make(chan struct{}, 1)
	cfg.Marks = marks
	done := runAsync(t, cfg)
	waitFor(t, "scheduler 0 to hold requests", 20*time.Second, func() bool { return f.Schedulers[0].Stats().ActiveRequests > 0 })
	marks <- struct{}{}
	if err := f.StopScheduler(0); err != nil {
		t.Fatal(err)
	}
	s := <-done
	if !s.OK {
		t.Fatalf("run not ok: %s (incomplete %v)", s.Error, s.IncompleteTasks)
	}
	if len(s.Failovers) == 0 {
		t.Fatal("no failover recorded")
	}
	fo := s.Failovers[0]
	if fo.From != f.SchedulerAddrs()[0] || fo.DetectedAt == "" || fo.ReconnectedAt == "" {
		t.Errorf("failover %+v: want from scheduler 0 with its times", fo)
	}
	if fo.InFlightTasks > 0 && s.ResubmittedBy["failover"]+s.ResubmittedBy["in_doubt"] == 0 {
		t.Errorf("%d tasks in flight at the failover, none resubmitted (%v)", fo.InFlightTasks, s.ResubmittedBy)
	}
	if len(s.Marks) != 1 || s.Marks[0].JobsInFlight == 0 {
		t.Errorf("marks %+v: want one with jobs in flight", s.Marks)
	}
}

func TestConfigValidation(t *testing.T) {
	ok := Config{App: "a", Schedulers: []string{"127.0.0.1:1"}, Jobs: 1, Tasks: 1, Rate: 1, Deadline: time.Second}
	if err := ok.validate(); err != nil {
		t.Fatalf("valid config refused: %v", err)
	}
	for name, mut := range map[string]func(*Config){
		"no app":        func(c *Config) { c.App = "" },
		"no schedulers": func(c *Config) { c.Schedulers = nil },
		"no jobs":       func(c *Config) { c.Jobs = 0 },
		"no rate":       func(c *Config) { c.Rate = 0 },
		"no deadline":   func(c *Config) { c.Deadline = 0 },
	} {
		c := ok
		mut(&c)
		if err := c.validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	c := ok
	c.Rate, c.Load, c.Slots, c.Tasks, c.TaskDuration = 0, 1, 10, 5, 100*time.Millisecond
	if err := c.validate(); err != nil || c.rate() != 20 {
		t.Errorf("load 1 of 10 slots, 5 x 100 ms tasks: rate %v, err %v; want 20 jobs/s", c.rate(), err)
	}
}
