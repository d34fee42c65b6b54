package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const (
	// interopDefaultPython is Debian's interpreter, which has the
	// python3-thrift module; a pyenv or venv python3 on PATH usually does
	// not.
	interopDefaultPython = "/usr/bin/python3"
	// interopScript is the Python client, relative to this package.
	interopScript = "../scripts/interop/sparrow_interop.py"
	// interopTasks is more than the node monitor's slots, so that all but
	// the first task launch only after the Python executor's tasksFinished
	// has freed the slot.
	interopTasks = 5
	interopSlots = 1

	interopReadyTimeout = 15 * time.Second
	interopStopTimeout  = 10 * time.Second
	interopPythonLimit  = 90 * time.Second
)

// TestPythonInterop checks wire compatibility with another language's
// Thrift: a Python client generated from thrift/sparrow.thrift, in its own
// process, acts as frontend and executor of one app against a `sparrow
// scheduler` and a `sparrow nodemonitor` started as separate processes. It
// registers a backend and a frontend, submits a job, serves launchTask,
// reports tasksFinished, sends frontend messages and receives them back.
// Stopping the daemons with SIGTERM then checks that they shut down cleanly.
//
// It skips unless the Python interpreter (SPARROW_INTEROP_PYTHON, default
// /usr/bin/python3) can import thrift; set SPARROW_INTEROP_REQUIRE=1 to
// fail instead, as CI does. The daemons are built with the race detector;
// SPARROW_INTEROP_RACE=0 builds them as `make build` does instead.
func TestPythonInterop(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: builds and runs the daemons")
	}
	python := pythonWithThrift(t)
	bin := buildSparrowBinary(t)

	schedHost, nmHost := "127.0.0.21", "127.0.0.22"
	if !interopCanBind(schedHost) || !interopCanBind(nmHost) {
		// Only Linux routes all of 127/8 to loopback by default.
		schedHost, nmHost = "127.0.0.1", "127.0.0.1"
	}
	common := []string{"--gossip-profile", "local", "--log-level", "warn"}

	sched := startProc(t, bin, procSpec{
		role: "scheduler", host: schedHost, secondFlag: "--gettask-listen", extra: common,
	})
	nm := startProc(t, bin, procSpec{
		role: "nodemonitor", host: nmHost, secondFlag: "--internal-listen",
		extra: append([]string{"--join", sched.gossip, "--slots", strconv.Itoa(interopSlots)}, common...),
	})

	summary := runPythonInterop(t, python, sched.service, nm.service)
	if !summary.OK || summary.Launched != interopTasks || summary.Messages != interopTasks {
		t.Errorf("interop summary = %+v, want ok with %d tasks launched and %d messages", summary, interopTasks, interopTasks)
	}

	// Node monitor first, as an operator drains workers before the
	// scheduler; each must leave the cluster and exit 0.
	nm.stop(t)
	sched.stop(t)
}

// interopSummary is the Python script's JSON line.
type interopSummary struct {
	Launched       int    `json:"launched"`
	Messages       int    `json:"messages"`
	OK             bool   `json:"ok"`
	Error          string `json:"error"`
	SubmitAttempts int    `json:"submit_attempts"`
}

func runPythonInterop(t *testing.T, python, schedAddr, nmAddr string) interopSummary {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), interopPythonLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, interopScript,
		"--scheduler", schedAddr, "--nodemonitor", nmAddr,
		"--app", "pyinterop", "--tasks", strconv.Itoa(interopTasks),
		"--timeout", "30", "--verbose")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	t.Logf("python client ran for %v; stderr:\n%s", time.Since(start).Round(time.Millisecond), stderr.String())
	if err != nil {
		t.Fatalf("python client: %v (context: %v)\nstdout:\n%s", err, ctx.Err(), stdout.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	last := lines[len(lines)-1]
	var s interopSummary
	if err := json.Unmarshal([]byte(last), &s); err != nil {
		t.Fatalf("python client printed %q, not a JSON summary: %v", stdout.String(), err)
	}
	t.Logf("python client summary: %s", last)
	return s
}

// pythonWithThrift returns the interpreter to use, skipping the test if it
// cannot import thrift (unless SPARROW_INTEROP_REQUIRE is set).
func pythonWithThrift(t *testing.T) string {
	t.Helper()
	python := os.Getenv("SPARROW_INTEROP_PYTHON")
	if python == "" {
		python = interopDefaultPython
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, python, "-c", "import thrift").CombinedOutput()
	if err != nil {
		msg := fmt.Sprintf("%s cannot import thrift (install python3-thrift): %v %s", python, err, bytes.TrimSpace(out))
		if os.Getenv("SPARROW_INTEROP_REQUIRE") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return python
}

// buildSparrowBinary builds the sparrow binary into a temporary directory
// with the race detector (cgo needed), so that a data race in the daemons
// makes them exit 66 and fails the test. SPARROW_INTEROP_RACE=0 builds it
// as `make build` does instead.
func buildSparrowBinary(t *testing.T) string {
	t.Helper()
	return buildSparrow(t, os.Getenv("SPARROW_INTEROP_RACE") != "0")
}

// buildSparrow builds the sparrow binary into a temporary directory, with
// the race detector or as `make build` does.
func buildSparrow(t *testing.T, race bool) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "sparrow")
	args := []string{"build", "-o", bin}
	env := os.Environ()
	if race {
		t.Log("building the daemons with -race")
		args = append(args, "-race")
	} else {
		args = append(args, "-trimpath")
		env = append(env, "CGO_ENABLED=0")
	}
	args = append(args, "github.com/sparrowfleet/sparrow/cmd/sparrow")
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go tool not found: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goTool, args...)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return bin
}

func interopCanBind(host string) bool {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return false
	}
	ln.Close()
	return true
}

// handedOut holds every address interopFreePort has returned in this test
// process. A port is free again once its probe listener closes, and the
// kernel may pick it for the next probe: without this, one test could get
// the same port for two of a daemon's listeners (seen: a node monitor's
// --internal-listen and its --http-listen).
var handedOut struct {
	sync.Mutex
	addrs map[string]bool
}

// interopFreePort returns a port free for both TCP and UDP on host (gossip
// uses both), and not returned before in this test process. Another
// process may still take it before the daemon binds it; startProc retries
// with new ports if so.
func interopFreePort(t *testing.T, host string) string {
	t.Helper()
	handedOut.Lock()
	defer handedOut.Unlock()
	if handedOut.addrs == nil {
		handedOut.addrs = make(map[string]bool)
	}
	for range 100 {
		ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			t.Fatalf("find a free port on %s: %v", host, err)
		}
		addr := ln.Addr().String()
		if handedOut.addrs[addr] {
			ln.Close()
			continue
		}
		pc, err := net.ListenPacket("udp", addr)
		ln.Close()
		if err != nil {
			continue // taken for UDP; try another
		}
		pc.Close()
		handedOut.addrs[addr] = true
		return addr
	}
	t.Fatalf("no port on %s is free for both TCP and UDP", host)
	return ""
}

// procSpec says how to start one daemon: its service is on --listen, its
// second Thrift service on secondFlag, gossip on --gossip, all on host.
type procSpec struct {
	role       string
	host       string
	secondFlag string
	extra      []string
}

// sparrowProc is a running sparrow daemon process.
type sparrowProc struct {
	role                    string
	service, second, gossip string
	cmd                     *exec.Cmd
	out                     *lockedBuffer
	done                    chan struct{} // closed once Wait has returned
	waitErr                 error         // Wait's result; read after done
}

func startProc(t *testing.T, bin string, spec procSpec) *sparrowProc {
	t.Helper()
	const attempts = 3
	for attempt := 1; ; attempt++ {
		d := &sparrowProc{
			role:    spec.role,
			service: interopFreePort(t, spec.host),
			second:  interopFreePort(t, spec.host),
			gossip:  interopFreePort(t, spec.host),
		}
		args := append([]string{spec.role,
			"--listen", d.service, spec.secondFlag, d.second, "--gossip", d.gossip,
		}, spec.extra...)
		d.launch(t, exec.Command(bin, args...))
		err := d.waitReady()
		if err == nil {
			return d
		}
		if attempt < attempts && strings.Contains(d.out.String(), "address already in use") {
			t.Logf("%s: a chosen port was taken meanwhile; retrying with new ports", spec.role)
			continue
		}
		t.Fatalf("%s did not come up: %v\noutput:\n%s", spec.role, err, d.out.String())
	}
}

// launch starts cmd as d's process, its output in d.out, and kills it at
// the end of the test if it still runs, logging its output if the test
// failed.
func (d *sparrowProc) launch(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	d.cmd, d.out, d.done = cmd, &lockedBuffer{}, make(chan struct{})
	d.cmd.Stdout, d.cmd.Stderr = d.out, d.out
	if err := d.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", d.role, err)
	}
	go func() {
		d.waitErr = d.cmd.Wait()
		close(d.done)
	}()
	t.Cleanup(func() {
		select {
		case <-d.done:
		default:
			d.cmd.Process.Kill()
			<-d.done
		}
		if t.Failed() && d.out.Len() > 0 {
			t.Logf("%s (%s) output:\n%s", d.role, strings.Join(d.cmd.Args, " "), d.out.String())
		}
	})
}

// exited reports whether d's process has ended.
func (d *sparrowProc) exited() bool {
	select {
	case <-d.done:
		return true
	default:
		return false
	}
}

// waitReady polls until all of the daemon's ports accept TCP connections.
// Gossip binds after the Thrift listeners, so this also means the daemon
// can be joined.
func (d *sparrowProc) waitReady() error {
	deadline := time.Now().Add(interopReadyTimeout)
	pending := []string{d.service, d.second, d.gossip}
	for {
		select {
		case <-d.done:
			return fmt.Errorf("exited early: %v", d.waitErr)
		default:
		}
		for len(pending) > 0 {
			c, err := net.DialTimeout("tcp", pending[0], 200*time.Millisecond)
			if err != nil {
				break
			}
			c.Close()
			pending = pending[1:]
		}
		if len(pending) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not accepting connections after %v", pending[0], interopReadyTimeout)
		}
		time.Sleep(20 * time.Millisecond) // poll interval
	}
}

// stop sends SIGTERM and checks that the daemon exits 0 within
// interopStopTimeout.
func (d *sparrowProc) stop(t *testing.T) {
	t.Helper()
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Errorf("SIGTERM %s: %v", d.role, err)
		return
	}
	start := time.Now()
	select {
	case <-d.done:
	case <-time.After(interopStopTimeout):
		t.Errorf("%s still running %v after SIGTERM; killing it", d.role, interopStopTimeout)
		d.cmd.Process.Kill()
		<-d.done
		return
	}
	var exit *exec.ExitError
	switch {
	case d.waitErr == nil:
		t.Logf("%s exited 0 %v after SIGTERM", d.role, time.Since(start).Round(time.Millisecond))
	case errors.As(d.waitErr, &exit):
		t.Errorf("%s exited with code %d after SIGTERM, want 0 (66 is a data race)", d.role, exit.ExitCode())
	default:
		t.Errorf("%s: %v", d.role, d.waitErr)
	}
}

// lockedBuffer is a bytes.Buffer safe for the process's output copier and
// the test to use at once.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *lockedBuffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Len()
}
