package integration

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// jvmSaturatedScenario is one run of TestJVMInteropSaturated: a fresh
// fleet of one scheduler and two one-slot node monitors with short queues,
// and an original-style Java frontend submitting far more than it can run.
type jvmSaturatedScenario struct {
	name       string
	schedFlags []string // beyond the defaults
	maxQueued  int      // each node monitor's --max-queued
	taskMillis int      // how long each task runs in the Java backend
	jobs       int      // jobs of jvmJobSize tasks
	refusals   bool     // jobs may be refused as saturated (past the hold bounds)
}

// TestJVMInteropSaturated runs the original-style Java frontend
// (scripts/interop/java) against a saturated fleet: two node
// monitors of one slot whose queues hold 30 reservations each, so that
// three 10-task jobs fill them, and 8 submitting threads over the
// frontend's fixed pool of 8 connections.
//
//   - held: the scheduler's default hold bounds (1,024 calls, 30 s). Every
//     submitJob is answered, slowly: the frontend keeps submitting at the
//     fleet's pace, never loses a pooled connection, and every task runs
//     once.
//   - refused: --max-held-jobs 2 --max-hold 500ms. Past the bounds, jobs
//     are refused synchronously with an IncompleteRequestException saying
//     the fleet is saturated and when to retry. The original client would
//     log it and go on; so does this one, with its connection back in the
//     pool. No task of a refused job ever launches or sends a message,
//     and every accepted task runs once.
//
// In both, the fleet is idle at the end. It runs with TestJVMInterop
// (`make interop-java`), under the same environment switches.
func TestJVMInteropSaturated(t *testing.T) {
	if os.Getenv(jvmInteropEnv) != "1" {
		t.Skipf("needs the JVM toolchain: set %s=1 or run `make interop-java`", jvmInteropEnv)
	}
	if testing.Short() {
		t.Skip("integration test: builds and runs the daemons")
	}
	tc := javaToolchain(t)
	classes := buildJavaClients(t, tc)
	bin := buildSparrowBinary(t)
	for i, sc := range []jvmSaturatedScenario{
		{name: "held", maxQueued: 30, taskMillis: 20, jobs: 80},
		{name: "refused", schedFlags: []string{"--max-held-jobs", "2", "--max-hold", "500ms"},
			maxQueued: 30, taskMillis: 100, jobs: 40, refusals: true},
	} {
		t.Run(sc.name, func(t *testing.T) { runJVMSaturated(t, tc, classes, bin, sc, 50+6*i) })
	}
}

// runJVMSaturated runs one scenario, its members on 127.0.0.<firstHost>
// and the five addresses after it.
func runJVMSaturated(t *testing.T, tc jvmToolchain, classes, bin string, sc jvmSaturatedScenario, firstHost int) {
	hosts := make([]string, 6)
	for i := range hosts {
		hosts[i] = fmt.Sprintf("127.0.0.%d", firstHost+i)
		if !interopCanBind(hosts[i]) {
			for j := range hosts {
				hosts[j] = "127.0.0.1"
			}
			break
		}
	}
	schedHost, nmHosts, frontendHost, backendHosts := hosts[0], hosts[1:3], hosts[3], hosts[4:6]
	common := []string{"--gossip-profile", "local", "--log-level", "warn"}
	sched, schedMetrics := startWithMetrics(t, bin, procSpec{
		role: "scheduler", host: schedHost, secondFlag: "--gettask-listen", extra: append(common, sc.schedFlags...),
	})
	var nms []*sparrowProc
	var nmMetrics []string
	for i := range jvmNodeMonitors {
		nm, m := startWithMetrics(t, bin, procSpec{
			role: "nodemonitor", host: nmHosts[i], secondFlag: "--internal-listen",
			extra: append([]string{"--join", sched.gossip, "--slots", "1", "--max-queued", strconv.Itoa(sc.maxQueued)}, common...),
		})
		nms, nmMetrics = append(nms, nm), append(nmMetrics, m)
	}
	var backends []*javaProc
	for i, nm := range nms {
		name := fmt.Sprintf("backend%d", i+1)
		backends = append(backends, startJava(t, tc, classes, name, "sparrowfleet.interop.InteropBackend",
			"--nodemonitor", nm.service, "--listen-host", backendHosts[i], "--app", jvmApp, "--name", name,
			"--task-millis", strconv.Itoa(sc.taskMillis), "--rpc-timeout-ms", strconv.Itoa(int(jvmRPCTimeout.Milliseconds()))))
	}
	for _, b := range backends {
		b.waitLine(t, "registered ", jvmRegisterTimeout)
	}

	// The phase's bound is far above the work (80 jobs of 10 tasks of
	// 20 ms on 2 slots is 8 s): a frontend that hangs fails here.
	const phaseLimit = 90 * time.Second
	s := runJavaFrontendArgs(t, tc, classes, phaseLimit+jvmReadyTimeout+15*time.Second,
		"--scheduler", sched.service, "--listen-host", frontendHost, "--app", jvmApp,
		"--pool", strconv.Itoa(jvmPool), "--tasks", "0", "--idle-seconds", "0", "--big-tasks", "0",
		"--job-size", strconv.Itoa(jvmJobSize), "--saturated-jobs", strconv.Itoa(sc.jobs),
		"--saturated-timeout-seconds", strconv.Itoa(int(phaseLimit.Seconds())),
		"--refusals-ok", strconv.FormatBool(sc.refusals),
		"--ready-timeout-seconds", strconv.Itoa(int(jvmReadyTimeout.Seconds())),
		"--rpc-timeout-ms", strconv.Itoa(int(jvmRPCTimeout.Milliseconds())))

	reportsIn, slotsFree, lastState := settleJVMFleet(backends, schedMetrics, nmMetrics)
	sm, err := scrapeMetrics(schedMetrics)
	if err != nil {
		t.Fatalf("scheduler metrics: %v", err)
	}

	checkSaturatedSummary(t, sc, s, sm)
	checkBackendReports(t, backends, s, reportsIn)
	if !slotsFree {
		t.Errorf("fleet not idle %v after the frontend finished: %s", jvmSettleTimeout, lastState)
	}
	for _, b := range backends {
		b.stop(t)
	}
	for _, nm := range nms {
		nm.stop(t)
	}
	sched.stop(t)
}

// checkSaturatedSummary asserts what a saturated fleet owes an
// original-style frontend: no pooled connection lost, no submitJob failing
// at the transport, every accepted task answered exactly once, and
// refusals only where the scenario allows them, each saying why and when
// to retry. sm is the scheduler's metrics at the end.
func checkSaturatedSummary(t *testing.T, sc jvmSaturatedScenario, s jvmFrontendSummary, sm map[string]float64) {
	t.Helper()
	if len(s.Phases) != 1 || s.Phases[0].Name != "saturated" {
		t.Fatalf("frontend ran phases %+v, want only \"saturated\"", s.Phases)
	}
	p := s.Phases[0]
	t.Logf("%d jobs: %d accepted, %d refused, %d failed; longest submitJob %d ms; %.1f s; scheduler: %v calls held, %v refused as saturated",
		p.Jobs, p.JobsAccepted, p.Refusals, p.SubmitFailures, p.MaxSubmitMs, p.Seconds,
		sm["sparrow_scheduler_holds_total"], sm["sparrow_scheduler_saturation_refusals_total"])
	if p.Jobs != sc.jobs {
		t.Errorf("frontend submitted %d jobs, want %d", p.Jobs, sc.jobs)
	}
	if p.SubmitFailures > 0 {
		t.Errorf("%d of %d submitJob calls failed, first: %s; want none (a transport failure costs an original frontend a pooled connection for good)",
			p.SubmitFailures, p.Jobs, p.FirstFailure)
	}
	if s.PoolLeft != jvmPool {
		t.Errorf("frontend pool has %d of %d connections left, want all", s.PoolLeft, jvmPool)
	}
	if p.Missing > 0 || s.Messages != s.TasksAccepted || s.Duplicates != 0 || s.Unexpected != 0 || s.BadMessages != 0 {
		t.Errorf("frontend got messages for %d of %d accepted tasks (%d missing), %d duplicates, %d unknown, %d bad; want each accepted task's exactly once",
			s.Messages, s.TasksAccepted, p.Missing, s.Duplicates, s.Unexpected, s.BadMessages)
	}
	if !s.OK && s.FailureCount > 0 {
		t.Errorf("frontend reported %d failures, first ones:\n  %s", s.FailureCount, strings.Join(s.Failures[:min(5, len(s.Failures))], "\n  "))
	}
	if held := sm["sparrow_scheduler_holds_total"]; held == 0 {
		t.Errorf("the scheduler held no submitJob call: the fleet was not saturated, so the test shows nothing")
	}
	refused := sm["sparrow_scheduler_saturation_refusals_total"]
	if !sc.refusals {
		if p.Refusals > 0 || refused > 0 || p.JobsAccepted != sc.jobs {
			t.Errorf("%d of %d jobs accepted, %d refused (scheduler counted %v); want every job held and accepted within the default bounds",
				p.JobsAccepted, sc.jobs, p.Refusals, refused)
		}
		return
	}
	if p.Refusals == 0 || p.JobsAccepted == 0 {
		t.Errorf("%d jobs accepted and %d refused; want some of each past the tiny hold bounds", p.JobsAccepted, p.Refusals)
	}
	if float64(p.Refusals) != refused {
		t.Errorf("frontend saw %d refusals, the scheduler counted %v", p.Refusals, refused)
	}
	if !strings.Contains(p.FirstRefusal, "fleet saturated") || !strings.Contains(p.FirstRefusal, "retry after") {
		t.Errorf("first refusal %q; want it to say the fleet is saturated and when to retry", p.FirstRefusal)
	}
}
