package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The JVM interop test's shape. The idle pause is longer than any timer the
// daemons apply to a connection by default (the old server closed idle
// connections after 60 s), and it is what the test is about: it is not
// configurable here.
const (
	jvmInteropEnv = "SPARROW_JVM_INTEROP"
	jvmApp        = "jvminterop"
	jvmIdle       = 70 * time.Second
	jvmPool       = 8 // SparrowFrontendClient's pool size
	jvmTasks      = 300
	jvmJobSize    = 10
	// jvmBigTasks tasks of jvmBigMessageBytes make one submitJob of about
	// 10 MiB: more than the old 4 MiB frame cap, less than the original
	// Java transport's own 16,384,000-byte limit.
	jvmBigTasks        = 10_000
	jvmBigMessageBytes = 1024
	jvmNodeMonitors    = 2

	// Bounds on each step; together well under four minutes beyond the
	// builds, which are usually cached.
	jvmBuildTimeout    = 90 * time.Second
	jvmRegisterTimeout = 30 * time.Second
	jvmReadyTimeout    = 20 * time.Second // scheduler learning the node monitors by gossip
	jvmPhaseTimeout    = 20 * time.Second // each small phase, submit to last message
	jvmBigTimeout      = 60 * time.Second // the 10,000-task job, submit to last message
	jvmRPCTimeout      = 20 * time.Second // the Java clients' socket timeout
	jvmSettleTimeout   = 30 * time.Second // reports and slots catching up after the frontend exits
	jvmFrontendLimit   = jvmReadyTimeout + 2*jvmPhaseTimeout + jvmIdle + jvmBigTimeout + 15*time.Second

	jvmJavaSources = "../scripts/interop/java"
	jvmDebianJars  = "/usr/share/java"
)

// TestJVMInterop runs clients written in Java the way the original 2013
// Sparrow Java library is written (scripts/interop/java) against a
// `sparrow scheduler` and two `sparrow nodemonitor` processes started with
// default flags: a frontend with a fixed pool of 8 framed connections it
// never reopens, and one backend per node monitor that keeps the single
// connection it registered on for life. They submit and run 300 tasks, stay
// idle for 70 s, run 300 more over the same connections, then send one
// ~10 MiB submitJob of 10,000 tasks. Every task must launch exactly once,
// finish and send its frontend message, and every slot must be free at the
// end, as the node monitors' and scheduler's metrics report.
//
// The test takes about two minutes, most of it the idle pause, so it runs
// only when SPARROW_JVM_INTEROP=1 (`make interop-java`). It skips when java,
// javac, thrift or Debian's libthrift-java jars are missing, unless
// SPARROW_INTEROP_REQUIRE=1; SPARROW_INTEROP_JAVA_CLASSPATH replaces the
// Debian jars. SPARROW_INTEROP_RACE=0 builds the daemons without the race
// detector, as for TestPythonInterop.
func TestJVMInterop(t *testing.T) {
	if os.Getenv(jvmInteropEnv) != "1" {
		t.Skipf("slow (%v idle pause): set %s=1 or run `make interop-java`", jvmIdle, jvmInteropEnv)
	}
	if testing.Short() {
		t.Skip("integration test: builds and runs the daemons")
	}
	tc := javaToolchain(t)
	classes := buildJavaClients(t, tc)
	bin := buildSparrowBinary(t)

	hosts := []string{"127.0.0.41", "127.0.0.42", "127.0.0.43", "127.0.0.44", "127.0.0.45", "127.0.0.46"}
	for _, h := range hosts {
		if !interopCanBind(h) {
			// Only Linux routes all of 127/8 to loopback by default.
			hosts = []string{"127.0.0.1", "127.0.0.1", "127.0.0.1", "127.0.0.1", "127.0.0.1", "127.0.0.1"}
			break
		}
	}
	schedHost, nmHosts, frontendHost, backendHosts := hosts[0], hosts[1:3], hosts[3], hosts[4:6]

	// Default flags apart from addresses, joins, log level, gossip timing and
	// metrics, which the test reads to see every slot free.
	common := []string{"--gossip-profile", "local", "--log-level", "warn"}
	sched, schedMetrics := startWithMetrics(t, bin, procSpec{
		role: "scheduler", host: schedHost, secondFlag: "--gettask-listen", extra: common,
	})
	var nms []*sparrowProc
	var nmMetrics []string
	for i := range jvmNodeMonitors {
		nm, m := startWithMetrics(t, bin, procSpec{
			role: "nodemonitor", host: nmHosts[i], secondFlag: "--internal-listen",
			extra: append([]string{"--join", sched.gossip}, common...),
		})
		nms, nmMetrics = append(nms, nm), append(nmMetrics, m)
	}

	var backends []*javaProc
	for i, nm := range nms {
		backends = append(backends, startJava(t, tc, classes, fmt.Sprintf("backend%d", i+1),
			"sparrowfleet.interop.InteropBackend",
			"--nodemonitor", nm.service, "--listen-host", backendHosts[i], "--app", jvmApp,
			"--name", fmt.Sprintf("backend%d", i+1), "--rpc-timeout-ms", strconv.Itoa(int(jvmRPCTimeout.Milliseconds()))))
	}
	for _, b := range backends {
		b.waitLine(t, "registered ", jvmRegisterTimeout)
	}

	summary := runJavaFrontend(t, tc, classes, sched.service, frontendHost)

	// The frontend has every message; wait for the backends' last
	// tasksFinished calls to return and the daemons to settle.
	reportsIn, slotsFree, lastState := settleJVMFleet(backends, schedMetrics, nmMetrics)

	checkFrontendSummary(t, summary)
	checkBackendReports(t, backends, summary, reportsIn)
	if !slotsFree {
		t.Errorf("fleet not idle %v after the frontend finished: %s; want every slot free, nothing running, queued or fetching, and no active request (a backend whose tasksFinished failed leaves its slot taken for good)",
			jvmSettleTimeout, lastState)
	} else {
		t.Logf("fleet idle at the end: %s", lastState)
	}

	for _, b := range backends {
		b.stop(t)
	}
	for _, nm := range nms {
		nm.stop(t)
	}
	sched.stop(t)
}

// settleJVMFleet waits, for at most jvmSettleTimeout each, until every
// backend has reported each task it launched (reportsIn) and then until
// the fleet is idle (slotsFree); state is what fleetIdle last saw.
func settleJVMFleet(backends []*javaProc, schedMetrics string, nmMetrics []string) (reportsIn, slotsFree bool, state string) {
	reportsIn = waitUntil(jvmSettleTimeout, func() bool {
		for _, b := range backends {
			if r := b.reports(); r.finished+r.failed < r.launches {
				return false
			}
		}
		return true
	})
	slotsFree = waitUntil(jvmSettleTimeout, func() bool {
		var ok bool
		ok, state = fleetIdle(schedMetrics, nmMetrics)
		return ok
	})
	return reportsIn, slotsFree, state
}

// startWithMetrics starts a daemon as startProc does, with --metrics-listen
// on a free port of its host, and waits until /metrics answers. The port
// is only known free when chosen, and the daemon binds it after its Thrift
// and gossip ports (startProc has already returned by then), so a daemon
// that lost the port exits and is started again on another.
func startWithMetrics(t *testing.T, bin string, spec procSpec) (*sparrowProc, string) {
	t.Helper()
	const attempts = 3
	base := spec.extra
	for attempt := 1; ; attempt++ {
		m := interopFreePort(t, spec.host)
		spec.extra = append([]string{"--metrics-listen", m}, base...)
		d := startProc(t, bin, spec)
		up := waitUntil(interopReadyTimeout, func() bool {
			select {
			case <-d.done:
				return true
			default:
			}
			_, err := scrapeMetrics(m)
			return err == nil
		})
		select {
		case <-d.done:
			if attempt < attempts && strings.Contains(d.out.String(), "metrics listen") {
				t.Logf("%s: metrics port %s was taken meanwhile; retrying", spec.role, m)
				continue
			}
			t.Fatalf("%s exited: %v\noutput:\n%s", spec.role, d.waitErr, d.out.String())
		default:
		}
		if !up {
			t.Fatalf("%s: no metrics at http://%s/metrics within %v", spec.role, m, interopReadyTimeout)
		}
		return d, m
	}
}

// jvmToolchain is what building and running the Java clients takes.
type jvmToolchain struct {
	java, javac, thrift string
	classpath           string // libthrift-java and its logging dependency
}

// javaToolchain finds java, javac, thrift and the libthrift-java jars,
// skipping the test if any is missing (failing with SPARROW_INTEROP_REQUIRE).
func javaToolchain(t *testing.T) jvmToolchain {
	t.Helper()
	var tc jvmToolchain
	var missing []string
	for _, tool := range []struct {
		dst  *string
		name string
		pkg  string
	}{{&tc.java, "java", "default-jdk-headless"}, {&tc.javac, "javac", "default-jdk-headless"}, {&tc.thrift, "thrift", "thrift-compiler"}} {
		p, err := exec.LookPath(tool.name)
		if err != nil {
			missing = append(missing, fmt.Sprintf("%s (Debian package %s)", tool.name, tool.pkg))
		}
		*tool.dst = p
	}
	if cp := os.Getenv("SPARROW_INTEROP_JAVA_CLASSPATH"); cp != "" {
		tc.classpath = cp
	} else {
		// thrift.jar is libthrift-java; it needs slf4j-api (libslf4j-java, a
		// dependency), and slf4j-simple routes its warnings to stderr.
		var jars []string
		for _, j := range []string{"thrift.jar", "slf4j-api.jar", "slf4j-simple.jar"} {
			p := filepath.Join(jvmDebianJars, j)
			if _, err := os.Stat(p); err != nil {
				missing = append(missing, fmt.Sprintf("%s (Debian package libthrift-java; or set SPARROW_INTEROP_JAVA_CLASSPATH)", p))
				continue
			}
			jars = append(jars, p)
		}
		tc.classpath = strings.Join(jars, string(os.PathListSeparator))
	}
	if len(missing) > 0 {
		msg := "JVM interop needs " + strings.Join(missing, ", ")
		if os.Getenv("SPARROW_INTEROP_REQUIRE") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return tc
}

// buildJavaClients generates the Java code for thrift/sparrow.thrift and
// compiles it with the clients in scripts/interop/java into a temporary
// directory, which it returns; nothing generated lands in the tree. The
// generated code is compiled without warnings, the clients with every lint
// warning an error.
func buildJavaClients(t *testing.T, tc jvmToolchain) string {
	t.Helper()
	dir := t.TempDir()
	gen, classes := filepath.Join(dir, "gen"), filepath.Join(dir, "classes")
	for _, d := range []string{gen, classes} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), jvmBuildTimeout)
	defer cancel()
	run := func(name string, args ...string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, name, args...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v (context: %v)\n%s", name, strings.Join(args, " "), err, ctx.Err(), out)
		}
	}
	start := time.Now()
	run(tc.thrift, "--gen", "java:generated_annotations=suppress", "-out", gen, "../thrift/sparrow.thrift")
	generated := javaFiles(t, gen)
	run(tc.javac, append([]string{"-nowarn", "-encoding", "UTF-8", "-d", classes, "-cp", tc.classpath}, generated...)...)
	ours := javaFiles(t, jvmJavaSources)
	run(tc.javac, append([]string{"-Xlint:all,-path", "-Werror", "-encoding", "UTF-8", "-d", classes,
		"-cp", tc.classpath + string(os.PathListSeparator) + classes}, ours...)...)
	t.Logf("built the Java clients (%d generated files, %d ours) in %v",
		len(generated), len(ours), time.Since(start).Round(time.Millisecond))
	return classes
}

func javaFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".java") {
			files = append(files, p)
		}
		return err
	})
	if err != nil || len(files) == 0 {
		t.Fatalf("no Java sources under %s: %v", root, err)
	}
	return files
}

// args are java's arguments to run class from classes with args.
func (tc jvmToolchain) args(classes, class string, args ...string) []string {
	return append([]string{
		"-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
		"-cp", tc.classpath + string(os.PathListSeparator) + classes, class,
	}, args...)
}

// jvmFrontendSummary is InteropFrontend's JSON line.
type jvmFrontendSummary struct {
	OK             bool     `json:"ok"`
	Pool           int      `json:"pool"`
	PoolLeft       int      `json:"pool_left"`
	IdleSeconds    int      `json:"idle_seconds"`
	TasksSubmitted int      `json:"tasks_submitted"`
	TasksAccepted  int      `json:"tasks_accepted"`
	Messages       int      `json:"messages"`
	Missing        int      `json:"missing"`
	Duplicates     int      `json:"duplicates"`
	Unexpected     int      `json:"unexpected"`
	BadMessages    int      `json:"bad_messages"`
	SubmitFailures int      `json:"submit_failures"`
	Refusals       int      `json:"refusals"`
	BigJobAccepted bool     `json:"big_job_accepted"`
	BigJobBytes    int      `json:"big_job_bytes"`
	FailureCount   int      `json:"failure_count"`
	Failures       []string `json:"failures"`
	Phases         []struct {
		Name           string  `json:"name"`
		Jobs           int     `json:"jobs"`
		JobsAccepted   int     `json:"jobs_accepted"`
		Tasks          int     `json:"tasks"`
		TasksAccepted  int     `json:"tasks_accepted"`
		Messages       int     `json:"messages"`
		Missing        int     `json:"missing"`
		SubmitFailures int     `json:"submit_failures"`
		FirstFailure   string  `json:"first_failure"`
		Refusals       int     `json:"refusals"`
		FirstRefusal   string  `json:"first_refusal"`
		MaxSubmitMs    int64   `json:"max_submit_ms"`
		Seconds        float64 `json:"seconds"`
	} `json:"phases"`
}

// runJavaFrontend runs InteropFrontend to completion with TestJVMInterop's
// phases and returns its summary.
func runJavaFrontend(t *testing.T, tc jvmToolchain, classes, schedAddr, host string) jvmFrontendSummary {
	t.Helper()
	secs := func(d time.Duration) string { return strconv.Itoa(int(d.Seconds())) }
	t.Logf("running the Java frontend (%v idle pause; up to %v)", jvmIdle, jvmFrontendLimit)
	return runJavaFrontendArgs(t, tc, classes, jvmFrontendLimit,
		"--scheduler", schedAddr, "--listen-host", host, "--app", jvmApp,
		"--pool", strconv.Itoa(jvmPool), "--tasks", strconv.Itoa(jvmTasks), "--job-size", strconv.Itoa(jvmJobSize),
		"--idle-seconds", secs(jvmIdle),
		"--big-tasks", strconv.Itoa(jvmBigTasks), "--big-message-bytes", strconv.Itoa(jvmBigMessageBytes),
		"--phase-timeout-seconds", secs(jvmPhaseTimeout), "--big-timeout-seconds", secs(jvmBigTimeout),
		"--ready-timeout-seconds", secs(jvmReadyTimeout), "--rpc-timeout-ms", strconv.Itoa(int(jvmRPCTimeout.Milliseconds())))
}

// runJavaFrontendArgs runs InteropFrontend with args, for at most limit,
// and returns its summary. It exits 1 when a check failed; the summary says
// which, and the caller asserts on it, so only a missing summary is fatal
// here.
func runJavaFrontendArgs(t *testing.T, tc jvmToolchain, classes string, limit time.Duration, args ...string) jvmFrontendSummary {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, tc.java, tc.args(classes, "sparrowfleet.interop.InteropFrontend", args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	runErr := cmd.Run()
	t.Logf("java frontend ran for %v (exit: %v); stderr:\n%s", time.Since(start).Round(time.Millisecond), runErr, stderr.String())
	var exit *exec.ExitError
	if runErr != nil && (!errors.As(runErr, &exit) || ctx.Err() != nil) {
		t.Fatalf("java frontend: %v (context: %v)\nstdout:\n%s", runErr, ctx.Err(), stdout.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	last := lines[len(lines)-1]
	var s jvmFrontendSummary
	if err := json.Unmarshal([]byte(last), &s); err != nil {
		t.Fatalf("java frontend exited with %v and printed %q, not a JSON summary: %v", runErr, stdout.String(), err)
	}
	t.Logf("java frontend summary: %s", last)
	return s
}

// checkFrontendSummary asserts that every job was accepted over the
// original-style pool and every task answered exactly once.
func checkFrontendSummary(t *testing.T, s jvmFrontendSummary) {
	t.Helper()
	wantTasks := 2*jvmTasks + jvmBigTasks
	for _, p := range s.Phases {
		if p.SubmitFailures > 0 {
			hint := ""
			switch p.Name {
			case "after-idle":
				hint = fmt.Sprintf(" (after %v idle: original frontends never reopen a pooled connection, so the scheduler must keep idle connections open)", jvmIdle)
			case "big-job":
				hint = " (an original Java frontend sends frames up to 16,384,000 bytes; the scheduler must accept them by default)"
			}
			t.Errorf("phase %s: %d of %d submitJob calls failed%s; first: %s", p.Name, p.SubmitFailures, p.Jobs, hint, p.FirstFailure)
		}
		if p.Missing > 0 {
			t.Errorf("phase %s: %d of %d accepted tasks sent no frontend message", p.Name, p.Missing, p.TasksAccepted)
		}
	}
	if s.TasksSubmitted != wantTasks || s.TasksAccepted != wantTasks {
		t.Errorf("frontend submitted %d tasks and had %d accepted, want %d of %d", s.TasksSubmitted, s.TasksAccepted, wantTasks, wantTasks)
	}
	if s.Messages != s.TasksAccepted || s.Duplicates != 0 || s.Unexpected != 0 || s.BadMessages != 0 {
		t.Errorf("frontend got messages for %d of %d accepted tasks, %d duplicates, %d for unknown tasks, %d with the wrong body or status; want each task's exactly once, intact",
			s.Messages, s.TasksAccepted, s.Duplicates, s.Unexpected, s.BadMessages)
	}
	if !s.BigJobAccepted {
		t.Errorf("the %d-byte submitJob of %d tasks of %d bytes was not accepted, want it accepted with default flags",
			s.BigJobBytes, jvmBigTasks, jvmBigMessageBytes)
	} else {
		t.Logf("the %d-byte submitJob of %d tasks was accepted", s.BigJobBytes, jvmBigTasks)
	}
	if s.PoolLeft != s.Pool || s.Pool != jvmPool {
		t.Errorf("frontend pool has %d of %d connections left, want all %d: each failed call loses one for good", s.PoolLeft, s.Pool, jvmPool)
	}
	if !s.OK && s.FailureCount > 0 {
		t.Errorf("frontend reported %d failures, first ones:\n  %s", s.FailureCount, strings.Join(s.Failures[:min(5, len(s.Failures))], "\n  "))
	}
}

// checkBackendReports asserts that across all backends every accepted task
// launched exactly once and was reported finished over the backend's one
// node monitor connection.
func checkBackendReports(t *testing.T, backends []*javaProc, s jvmFrontendSummary, reportsIn bool) {
	t.Helper()
	launches := map[string]int{}
	var dup []string
	for _, b := range backends {
		r := b.reports()
		t.Logf("%s: %d launches, %d finished, %d failed reports", b.name, r.launches, r.finished, r.failed)
		for _, id := range r.ids {
			if launches[id]++; launches[id] == 2 {
				dup = append(dup, id)
			}
		}
		if r.failed > 0 {
			t.Errorf("%s: %d of %d tasks failed to report over its node monitor connection, first: %s (original backends keep the connection they registered on for life, so the node monitor must keep idle connections open)",
				b.name, r.failed, r.launches, r.firstFailure)
		}
		if !reportsIn {
			t.Errorf("%s: only %d of %d launched tasks reported after %v", b.name, r.finished+r.failed, r.launches, jvmSettleTimeout)
		}
	}
	if len(dup) > 0 {
		t.Errorf("%d tasks launched more than once, e.g. %s; want each exactly once", len(dup), strings.Join(dup[:min(5, len(dup))], ", "))
	}
	if len(launches) != s.TasksAccepted {
		t.Errorf("backends launched %d distinct tasks, want the %d accepted ones", len(launches), s.TasksAccepted)
	}
}

// waitUntil polls cond until it holds (true) or timeout passes (false).
func waitUntil(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		<-tick.C
	}
	return true
}

// fleetIdle reads the daemons' /metrics and reports whether every slot is
// free with nothing running, fetching or queued, and the scheduler has no
// active request nor launched task it has not heard finished; the string
// describes what it saw.
func fleetIdle(schedMetrics string, nmMetrics []string) (bool, string) {
	ok := true
	var desc []string
	sm, err := scrapeMetrics(schedMetrics)
	if err != nil {
		return false, err.Error()
	}
	active, tracked := sm["sparrow_scheduler_active_requests"], sm["sparrow_scheduler_running_tracked"]
	desc = append(desc, fmt.Sprintf("scheduler: %v active requests, %v running tasks tracked", active, tracked))
	ok = ok && active == 0 && tracked == 0
	for i, addr := range nmMetrics {
		m, err := scrapeMetrics(addr)
		if err != nil {
			return false, err.Error()
		}
		slots, free := m["sparrow_nodemonitor_slots"], m["sparrow_nodemonitor_slots_free"]
		running, fetching := m["sparrow_nodemonitor_tasks_running"], m["sparrow_nodemonitor_slots_fetching"]
		queued := m["sparrow_nodemonitor_reservations_queued"]
		desc = append(desc, fmt.Sprintf("nodemonitor%d: %v of %v slots free, %v running, %v fetching, %v queued, %v launches",
			i+1, free, slots, running, fetching, queued, m["sparrow_nodemonitor_launches_total"]))
		ok = ok && slots > 0 && free == slots && running == 0 && fetching == 0 && queued == 0
	}
	return ok, strings.Join(desc, "; ")
}

// scrapeMetrics reads the sparrow_ series of a daemon's /metrics.
func scrapeMetrics(addr string) (map[string]float64, error) {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, fmt.Errorf("metrics at %s: %w", addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("metrics at %s: %s", addr, resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 4<<20))
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		if !ok || !strings.HasPrefix(name, "sparrow_") {
			continue
		}
		if v, err := strconv.ParseFloat(val, 64); err == nil {
			out[name] = v
		}
	}
	return out, sc.Err()
}

// javaProc is a running Java client that stays up until stopped.
type javaProc struct {
	name        string
	cmd         *exec.Cmd
	out, errOut *lockedBuffer
	done        chan struct{} // closed once Wait has returned
	waitErr     error         // Wait's result; read after done
}

func startJava(t *testing.T, tc jvmToolchain, classes, name, class string, args ...string) *javaProc {
	t.Helper()
	p := &javaProc{name: name, out: &lockedBuffer{}, errOut: &lockedBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(tc.java, tc.args(classes, class, args...)...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.errOut
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			r := p.reports()
			t.Logf("%s stderr:\n%s\n%s stdout: %d launches, %d finished, %d failed; its last lines:\n%s",
				name, p.errOut.String(), name, r.launches, r.finished, r.failed, lastLines(p.out.String(), 10))
		}
	})
	return p
}

// waitLine waits for a stdout line starting with prefix, failing the test
// if the process exits or timeout passes first.
func (p *javaProc) waitLine(t *testing.T, prefix string, timeout time.Duration) {
	t.Helper()
	found := waitUntil(timeout, func() bool {
		select {
		case <-p.done:
			return true
		default:
		}
		return strings.HasPrefix(p.out.String(), prefix) || strings.Contains(p.out.String(), "\n"+prefix)
	})
	select {
	case <-p.done:
		t.Fatalf("%s exited (%v) before printing %q; stderr:\n%s", p.name, p.waitErr, prefix, p.errOut.String())
	default:
	}
	if !found {
		t.Fatalf("%s printed no %q line within %v; stderr:\n%s", p.name, prefix, timeout, p.errOut.String())
	}
}

// backendReports is what an InteropBackend's stdout says so far.
type backendReports struct {
	launches, finished, failed int
	ids                        []string // task ids launched, in order
	firstFailure               string
}

func (p *javaProc) reports() backendReports {
	var r backendReports
	for _, line := range strings.Split(p.out.String(), "\n") {
		word, rest, _ := strings.Cut(line, " ")
		switch word {
		case "launch":
			r.launches++
			id, _, _ := strings.Cut(rest, " ")
			r.ids = append(r.ids, id)
		case "finished":
			r.finished++
		case "failed":
			r.failed++
			if r.firstFailure == "" {
				r.firstFailure = rest
			}
		}
	}
	return r
}

// stop sends SIGTERM, on which a backend prints its JSON summary and
// exits; the summary must agree with the lines it printed.
func (p *javaProc) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Errorf("SIGTERM %s: %v", p.name, err)
		return
	}
	select {
	case <-p.done:
	case <-time.After(interopStopTimeout):
		t.Errorf("%s still running %v after SIGTERM; killing it", p.name, interopStopTimeout)
		p.cmd.Process.Kill()
		<-p.done
		return
	}
	var s struct {
		Launched int `json:"launched"`
		Reported int `json:"reported"`
		Failures int `json:"failures"`
	}
	last := lastLines(p.out.String(), 1)
	if err := json.Unmarshal([]byte(last), &s); err != nil {
		t.Errorf("%s printed %q last, not its JSON summary: %v", p.name, last, err)
		return
	}
	r := p.reports()
	if s.Launched != r.launches || s.Reported != r.finished+r.failed || s.Failures != r.failed {
		t.Errorf("%s summary %s disagrees with its lines: %d launches, %d finished, %d failed", p.name, last, r.launches, r.finished, r.failed)
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
