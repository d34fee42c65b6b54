package integration

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/bench/fleet"
	"github.com/sparrowfleet/sparrow/client"
)

// TestNodeMonitorDrain drains a node monitor over loopback Thrift and
// gossip while it runs tasks and holds queued reservations: its running
// tasks finish, its queued reservations are placed elsewhere while it is
// still a gossip member (well before the scheduler's 30 s reservation
// timeout could give them company), every task completes once, and none
// is reported lost.
func TestNodeMonitorDrain(t *testing.T) {
	led := newLedger()
	f := startFleet(t, fleet.Config{
		Schedulers: 1, NodeMonitors: 3, Slots: 2, Apps: []string{"app"},
		// One reservation per task: none of those on the drained node
		// monitor has a spare elsewhere.
		ProbeRatio: 1,
		Run:        echoTask(400 * time.Millisecond), OnLaunch: led.launched,
	})
	fe := ledgerFrontend(t, f, led, "127.0.3.77")
	ctx := context.Background()
	const jobs, tasks = 6, 4 // 24 tasks on 6 slots: every node has a queue
	for j := range jobs {
		if _, err := fe.Submit(ctx, newJob(fmt.Sprintf("j%d", j), tasks)); err != nil {
			t.Fatal(err)
		}
	}
	victim := f.NodeMonitors[0]
	waitFor(t, "node monitor 0 to run tasks with reservations queued", 10*time.Second, func() bool {
		st := victim.State()
		return st.Running == 2 && st.Queued > 0
	})
	res := victim.Drain(10 * time.Second)
	if !victim.Draining() || res.Handed == 0 || res.Unfinished != 0 {
		t.Fatalf("drain %+v (draining %v): want reservations handed back and every task finished", res, victim.Draining())
	}
	if st := victim.State(); st.Running != 0 || st.Queued != 0 || len(st.Apps) != 0 {
		t.Fatalf("drained node monitor's state %+v", st)
	}
	total := jobs * tasks
	waitFor(t, "every task to finish while the drained node monitor is still a member", 15*time.Second, func() bool {
		_, m := led.counts()
		return m == total
	})
	led.checkOnce(t, total)
	led.mu.Lock()
	defer led.mu.Unlock()
	for id, ms := range led.messages {
		if len(ms) != 1 || ms[0].Status != client.StatusOK {
			t.Errorf("task %s got messages %+v, want one, done", id, ms)
		}
	}
	t.Logf("drained a node monitor: %d reservations handed back, waited %v for its running tasks", res.Handed, res.Waited.Round(time.Millisecond))
}

// TestNodeMonitorDrainTimeoutReportsLost drains a node monitor whose
// tasks outlast the drain's timeout: once it leaves, its scheduler reports
// those tasks lost, each once, and never launches a task twice; every
// other task completes.
func TestNodeMonitorDrainTimeoutReportsLost(t *testing.T) {
	led := newLedger()
	f := startFleet(t, fleet.Config{
		Schedulers: 1, NodeMonitors: 3, Slots: 2, Apps: []string{"app"}, ProbeRatio: 1,
		Run: echoTask(3 * time.Second), OnLaunch: led.launched,
	})
	fe := ledgerFrontend(t, f, led, "127.0.3.78")
	ctx := context.Background()
	const jobs, tasks = 3, 4 // 12 tasks on 6 slots
	for j := range jobs {
		if _, err := fe.Submit(ctx, newJob(fmt.Sprintf("j%d", j), tasks)); err != nil {
			t.Fatal(err)
		}
	}
	victim := f.NodeMonitors[0]
	waitFor(t, "node monitor 0 to run tasks with reservations queued", 10*time.Second, func() bool {
		st := victim.State()
		return st.Running == 2 && st.Queued > 0
	})
	if res := victim.Drain(100 * time.Millisecond); res.Unfinished != 2 {
		t.Fatalf("drain %+v: want the 2 running tasks unfinished", res)
	}
	led.mu.Lock()
	onVictim := map[string]bool{}
	for id, ls := range led.launches {
		if ls[0].node == 0 {
			onVictim[id] = true
		}
	}
	led.mu.Unlock()
	if err := victim.Close(); err != nil {
		t.Fatal(err)
	}
	total := jobs * tasks
	waitFor(t, "every task to finish or be reported lost", 30*time.Second, func() bool {
		_, m := led.counts()
		return m == total
	})
	led.checkOnce(t, total)
	led.mu.Lock()
	defer led.mu.Unlock()
	for id, ms := range led.messages {
		want := client.StatusOK
		if onVictim[id] {
			want = client.StatusLost
		}
		if len(ms) != 1 || ms[0].Status != want {
			t.Errorf("task %s (on the drained node %v) got %+v, want one message with status %d", id, onVictim[id], ms, want)
		}
	}
	if len(onVictim) != 2 {
		t.Errorf("%d tasks ran on the drained node monitor, want the 2 running when it drained", len(onVictim))
	}
}

// TestNodeMonitorDrainOverHTTP runs the built binary: POST /drain on a node
// monitor's operator endpoint answers 202 to a loopback caller without a
// token, even with --http-admin-token-file set, fails its /readyz, and the
// node monitor drains, leaves the gossip cluster (its scheduler then has no
// node monitor to sample) and exits 0.
func TestNodeMonitorDrainOverHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: builds and runs the daemons")
	}
	bin := buildSparrowBinary(t)
	host := "127.0.0.43"
	if !interopCanBind(host) {
		host = "127.0.0.1"
	}
	schedHTTP, nmHTTP := interopFreePort(t, host), interopFreePort(t, host)
	tokenFile := filepath.Join(t.TempDir(), "admin.token")
	if err := os.WriteFile(tokenFile, []byte("drain-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sched := startProc(t, bin, procSpec{role: "scheduler", host: host, secondFlag: "--gettask-listen", extra: []string{
		"--http-listen", schedHTTP, "--log-level", "warn", "--gossip-profile", "local",
	}})
	nm := startProc(t, bin, procSpec{role: "nodemonitor", host: host, secondFlag: "--internal-listen", extra: []string{
		"--http-listen", nmHTTP, "--log-level", "info", "--gossip-profile", "local", "--join", sched.gossip, "--drain-timeout", "5s",
		"--http-admin-token-file", tokenFile,
	}})
	ex := exec.Command(bin, "executor", "--app", "app", "--node-monitor", nm.service,
		"--listen", interopFreePort(t, host), "--advertise-host", host, "--log-level", "warn")
	if err := ex.Start(); err != nil {
		t.Fatal(err)
	}
	exDone := make(chan struct{})
	go func() { ex.Wait(); close(exDone) }()
	t.Cleanup(func() {
		ex.Process.Signal(syscall.SIGTERM)
		select {
		case <-exDone:
		case <-time.After(interopStopTimeout):
			ex.Process.Kill()
			<-exDone
		}
	})
	waitForReadyz(t, nmHTTP, 200, "ready")
	waitForReadyz(t, schedHTTP, 200, "ready")

	resp, err := http.Post("http://"+nmHTTP+"/drain", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted || string(body) != "draining\n" {
		t.Fatalf("POST /drain: %d %q, want 202 \"draining\\n\"", resp.StatusCode, body)
	}
	select {
	case <-nm.done:
	case <-time.After(interopStopTimeout):
		t.Fatalf("node monitor still running %v after POST /drain", interopStopTimeout)
	}
	if nm.waitErr != nil {
		t.Errorf("node monitor exited with %v after draining", nm.waitErr)
	}
	if out := nm.out.String(); !strings.Contains(out, "bearer token of --http-admin-token-file") {
		t.Errorf("node monitor's log does not say who may call POST /drain:\n%s", out)
	}
	if out := nm.out.String(); !strings.Contains(out, "drained") {
		t.Errorf("node monitor's log does not say it drained:\n%s", out)
	}
	waitForReadyz(t, schedHTTP, 503, "not ready: no live node monitor in the gossip view")
	sched.stop(t)
}
