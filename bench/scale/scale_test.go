package scale

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// TestRunSmallFleetEndToEnd runs the harness on a tiny fleet and checks
// that every number is there and consistent with the others; it asserts
// no speed.
func TestRunSmallFleetEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real fleets")
	}
	dir := t.TempDir()
	var out, progress bytes.Buffer
	o := Options{
		SizeList: "4,5", Out: dir, JSON: true, Profile: true,
		Config: Config{
			Schedulers: 2, Slots: 1, GossipProfile: "local", Idle: 500 * time.Millisecond,
			JobsPerSec: 20, Tasks: 2, TaskDuration: time.Millisecond, Drive: 500 * time.Millisecond,
			ReadyTimeout: time.Minute, KillTimeout: time.Minute, Log: zerolog.Nop(),
		},
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := o.Run(ctx, &out, &progress); err != nil {
		t.Fatalf("run: %v\n%s", err, progress.String())
	}
	var rs Results
	if err := json.Unmarshal(out.Bytes(), &rs); err != nil {
		t.Fatalf("output is not the results' JSON: %v\n%s", err, out.String())
	}
	if len(rs) != 2 {
		t.Fatalf("%d points, want 2", len(rs))
	}
	for i, p := range rs {
		if want := []int{4, 5}[i]; p.NodeMonitors != want || p.Schedulers != 2 || p.Processes != 1 {
			t.Errorf("point %d: %d node monitors and %d schedulers in %d processes, want %d and 2 in 1", i, p.NodeMonitors, p.Schedulers, p.Processes, want)
		}
		checkPoint(t, i, p)
	}
	for _, f := range []string{"results.json", "scale-times.svg", "scale-idle.png", "idle-4.pprof", "idle-5.pprof"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	if !strings.Contains(progress.String(), "[2/2, 5 node monitors]") {
		t.Errorf("progress names no second point:\n%s", progress.String())
	}
}

// checkPoint checks that every number of point i is there and consistent
// with the others; it asserts no speed.
func checkPoint(t *testing.T, i int, p Point) {
	t.Helper()
	if p.FormationS < 0 || p.StartS <= 0 {
		t.Errorf("point %d: start %v s, formation %v s", i, p.StartS, p.FormationS)
	}
	if len(p.KillToDroppedS) != 2 || p.KillToDroppedMaxS <= 0 || p.KillToDroppedMaxS > 60 {
		t.Errorf("point %d: kill to dropped %v (max %v s), want one positive wait per scheduler within the timeout", i, p.KillToDroppedS, p.KillToDroppedMaxS)
	}
	if len(p.KillToLastFailedS) != 2 || p.KillToLastFailedMaxS < 0 || p.KillToLastFailedMaxS > p.KillToDroppedMaxS+reachLinger.Seconds() {
		t.Errorf("point %d: last failed call %v (max %v s), want one per scheduler, none after the drop and its linger (%v s)",
			i, p.KillToLastFailedS, p.KillToLastFailedMaxS, p.KillToDroppedMaxS)
	}
	if p.UDPPacketsPerMemberS <= 0 || p.GossipBytesPerMemberS < p.UDPBytesPerMemberS || p.IdleCPUMsPerMemberS <= 0 {
		t.Errorf("point %d: idle gossip %v B/s (UDP %v B/s, %v packets/s), CPU %v ms/s", i,
			p.GossipBytesPerMemberS, p.UDPBytesPerMemberS, p.UDPPacketsPerMemberS, p.IdleCPUMsPerMemberS)
	}
	if p.TasksCompleted <= 0 || p.TasksCompleted > p.TasksSubmitted || p.SchedDelayMs.N != p.TasksCompleted {
		t.Errorf("point %d: %d of %d tasks completed, %d delays", i, p.TasksCompleted, p.TasksSubmitted, p.SchedDelayMs.N)
	}
	if p.SchedDelayMs.P50 > p.SchedDelayMs.P99 {
		t.Errorf("point %d: delay p50 %v above p99 %v", i, p.SchedDelayMs.P50, p.SchedDelayMs.P99)
	}
	if want := p.NodeMonitors + p.Schedulers; p.StatusMembers != want || p.StatusMs <= 0 {
		t.Errorf("point %d: status listed %d members in %v ms, want %d", i, p.StatusMembers, p.StatusMs, want)
	}
	if p.DashboardBytes == 0 || p.DashboardMs <= 0 {
		t.Errorf("point %d: dashboard %d bytes in %v ms", i, p.DashboardBytes, p.DashboardMs)
	}
}

// TestRunAcrossTwoChildProcesses runs the harness with the node monitors
// in two child processes (this test binary again, see TestMain).
func TestRunAcrossTwoChildProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real fleets in child processes")
	}
	var out, progress bytes.Buffer
	o := Options{
		SizeList: "4", Out: t.TempDir(), JSON: true, Profile: true,
		Config: Config{
			Schedulers: 2, Slots: 1, GossipProfile: "local", Idle: 500 * time.Millisecond,
			JobsPerSec: 20, Tasks: 2, TaskDuration: time.Millisecond, Drive: 500 * time.Millisecond,
			ReadyTimeout: time.Minute, KillTimeout: time.Minute, Log: zerolog.Nop(),
			Procs: 2, ChildCommand: testChildCommand,
		},
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := o.Run(ctx, &out, &progress); err != nil {
		t.Fatalf("run: %v\n%s", err, progress.String())
	}
	var rs Results
	if err := json.Unmarshal(out.Bytes(), &rs); err != nil || len(rs) != 1 {
		t.Fatalf("output is not one point: %v\n%s", err, out.String())
	}
	if p := rs[0]; p.NodeMonitors != 4 || p.Processes != 2 {
		t.Errorf("%d node monitors in %d processes, want 4 in 2", p.NodeMonitors, p.Processes)
	}
	checkPoint(t, 0, rs[0])
	for _, name := range []string{"idle-4.pprof", "idle-4-child-0.pprof", "idle-4-child-1.pprof"} {
		if fi, err := os.Stat(filepath.Join(o.Out, name)); err != nil || fi.Size() == 0 {
			t.Errorf("idle profile %s: %v (want a written profile of each process)", name, err)
		}
	}
	for _, want := range []string{"child 0 (node monitors 0-1): 2 of 2 node monitors started", "child 1 (node monitors 2-3)"} {
		if !strings.Contains(progress.String(), want) {
			t.Errorf("progress does not say %q:\n%s", want, progress.String())
		}
	}
}

// childEnv marks this test binary, started again by testChildCommand, as a
// scale child process.
const childEnv = "SPARROW_TEST_SCALE_CHILD"

func testChildCommand() *exec.Cmd {
	c := exec.Command(os.Args[0], "-test.run=^$")
	c.Env = append(os.Environ(), childEnv+"=1")
	return c
}

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		if err := ServeChild(context.Background(), os.Stdin, os.Stdout, zerolog.Nop()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestValidateNamesTheProblem(t *testing.T) {
	good := Options{SizeList: "10", Config: Config{Schedulers: 1, Slots: 1, Idle: time.Second, Drive: time.Second, JobsPerSec: 1, Tasks: 1}}
	for _, tc := range []struct {
		name, want string
		edit       func(*Options)
	}{
		{"fractional size", "whole numbers", func(o *Options) { o.SizeList = "10.5" }},
		{"one node monitor", "at least 2", func(o *Options) { o.SizeList = "1" }},
		{"beyond the address plan", "at most 2500", func(o *Options) { o.SizeList = "3000" }},
		{"no schedulers", "schedulers 0", func(o *Options) { o.Schedulers = 0 }},
		{"no drive", "positive", func(o *Options) { o.Drive = 0 }},
		{"negative procs", "procs -1", func(o *Options) { o.Procs = -1 }},
		{"not a list", "--nodes", func(o *Options) { o.SizeList = "ten" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := good
			tc.edit(&o)
			err := o.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate() = %v, want an error containing %q", err, tc.want)
			}
		})
	}
	if err := good.Validate(); err != nil {
		t.Errorf("good options: %v", err)
	}
}
