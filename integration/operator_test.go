package integration

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOperatorSurface runs the built binary as an operator would: a
// scheduler configured by a YAML file, a node monitor by a TOML file that
// still uses the old --metrics-listen name, both taking the gossip profile
// from $SPARROW_GOSSIP_PROFILE, and an executor. It follows /readyz from
// "no node monitor" and "no executor" to ready, then runs `sparrow status
// --json` and checks that it lists both daemons, ready, with the node
// monitor's configured slots.
func TestOperatorSurface(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: builds and runs the daemons")
	}
	bin := buildSparrowBinary(t)
	schedHost, nmHost := "127.0.0.41", "127.0.0.42"
	if !interopCanBind(schedHost) || !interopCanBind(nmHost) {
		schedHost, nmHost = "127.0.0.1", "127.0.0.1"
	}
	// Children inherit the environment: this is the variable a container
	// spec would set.
	t.Setenv("SPARROW_GOSSIP_PROFILE", "local")
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}

	schedHTTP := interopFreePort(t, schedHost)
	sched := startProc(t, bin, procSpec{role: "scheduler", host: schedHost, secondFlag: "--gettask-listen", extra: []string{
		"--config", write("scheduler.yaml", "http-listen: "+schedHTTP+"\nlog-level: warn\nprobe-ratio: 2\n"),
	}})
	waitForReadyz(t, schedHTTP, 503, "not ready: no live node monitor in the gossip view")

	nmHTTP := interopFreePort(t, nmHost)
	nm := startProc(t, bin, procSpec{role: "nodemonitor", host: nmHost, secondFlag: "--internal-listen", extra: []string{
		"--config", write("nodemonitor.toml", "metrics-listen = \""+nmHTTP+"\"\nslots = 3\nlog-level = \"warn\"\njoin = [\""+sched.gossip+"\"]\n"),
	}})
	waitForReadyz(t, nmHTTP, 503, "not ready: no executor registered")
	waitForReadyz(t, schedHTTP, 200, "ready")

	exec1 := exec.Command(bin, "executor", "--app", "app", "--node-monitor", nm.service,
		"--listen", interopFreePort(t, nmHost), "--advertise-host", nmHost, "--log-level", "warn")
	exOut := &lockedBuffer{}
	exec1.Stdout, exec1.Stderr = exOut, exOut
	if err := exec1.Start(); err != nil {
		t.Fatal(err)
	}
	exDone := make(chan error, 1)
	go func() { exDone <- exec1.Wait() }()
	t.Cleanup(func() {
		exec1.Process.Signal(syscall.SIGTERM)
		select {
		case <-exDone:
		case <-time.After(interopStopTimeout):
			exec1.Process.Kill()
			<-exDone
		}
		if t.Failed() {
			t.Logf("executor output:\n%s", exOut.String())
		}
	})
	waitForReadyz(t, nmHTTP, 200, "ready")

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "status", "--join", sched.gossip, "--json", "--gossip-profile", "local").Output()
	if err != nil {
		t.Fatalf("sparrow status: %v\n%s", err, out)
	}
	var view struct {
		Members []struct {
			Role, Service, Health string
			Slots                 int
			HTTP                  string
		}
	}
	if err := json.Unmarshal(out, &view); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	byRole := map[string]int{}
	for _, m := range view.Members {
		byRole[m.Role]++
		if m.Health != "ready" {
			t.Errorf("%s %s is %q, want ready", m.Role, m.Service, m.Health)
		}
		if m.Role == "nodemonitor" && (m.Slots != 3 || m.Service != nm.service || m.HTTP != nmHTTP) {
			t.Errorf("node monitor = %+v, want 3 slots from its TOML file, service %s, HTTP %s", m, nm.service, nmHTTP)
		}
	}
	if byRole["scheduler"] != 1 || byRole["nodemonitor"] != 1 || len(view.Members) != 2 {
		t.Errorf("status lists %v, want one scheduler and one node monitor:\n%s", byRole, out)
	}

	nm.stop(t)
	sched.stop(t)
}

// waitForReadyz polls http://addr/readyz until it answers code and line.
func waitForReadyz(t *testing.T, addr string, code int, line string) {
	t.Helper()
	var got string
	ok := waitUntil(interopReadyTimeout, func() bool {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			got = err.Error()
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		got = resp.Status + " " + strings.TrimSpace(string(b))
		return resp.StatusCode == code && strings.TrimSpace(string(b)) == line
	})
	if !ok {
		t.Fatalf("/readyz at %s: %q after %v, want %d %q", addr, got, interopReadyTimeout, code, line)
	}
}
