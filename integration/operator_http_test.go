package integration

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/bench/fleet"
	"github.com/sparrowfleet/sparrow/client"
	"github.com/sparrowfleet/sparrow/core/queue"
	"github.com/sparrowfleet/sparrow/internal/daemon"
	"github.com/sparrowfleet/sparrow/internal/logging"
	"github.com/sparrowfleet/sparrow/nodemonitor"
	"github.com/sparrowfleet/sparrow/scheduler"
)

// loopback hands out 127.0.0.x addresses, one per daemon, as separate
// machines would have; where only 127.0.0.1 binds (not Linux) all share
// it.
type loopback struct {
	mu   sync.Mutex
	next int
}

var loopbackHosts = &loopback{next: 60}

func (l *loopback) host() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.next++
	h := fmt.Sprintf("127.0.0.%d", l.next)
	if ln, err := net.Listen("tcp", h+":0"); err == nil {
		ln.Close()
		return h
	}
	return "127.0.0.1"
}

// newLogBuffer keeps a test daemon's log lines for the test to search,
// and shows them if the test fails. Daemons log a moment after a test
// ends, too (teardown errors), which testing would not allow in the test
// log.
func newLogBuffer(t *testing.T, name string) (*lockedBuffer, zerolog.Logger) {
	b := &lockedBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s log:\n%s", name, b.String())
		}
	})
	l, err := logging.New(b, "info")
	if err != nil {
		t.Fatal(err)
	}
	return b, l
}

// testScheduler is a scheduler daemon with its HTTP surface, as `sparrow
// scheduler --http-listen` runs it.
type testScheduler struct {
	*scheduler.Daemon
	http *daemon.HTTPServer
	log  *lockedBuffer
	stop func()
}

func startTestScheduler(t *testing.T, name string, seeds ...string) *testScheduler {
	t.Helper()
	if testing.Short() {
		t.Skip("starts daemons")
	}
	lb, log := newLogBuffer(t, name)
	h := loopbackHosts.host()
	d, err := scheduler.StartDaemon(scheduler.DaemonConfig{
		Listen: h + ":0", GetTaskListen: h + ":0", Gossip: h + ":0", Join: seeds, GossipProfile: "local", Name: name,
		// No extra reservations while a test holds slots busy, so that
		// queued counts stay put.
		Scheduler: scheduler.Config{ReservationTimeout: -1},
		Log:       log,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := daemon.ServeHTTP(daemon.HTTPFlags{Addr: h + ":0"}, log, d.Surface(seeds))
	if err != nil {
		d.Close()
		t.Fatal(err)
	}
	s := &testScheduler{Daemon: d, http: srv, log: lb}
	s.stop = sync.OnceFunc(func() {
		srv.ShuttingDown()
		d.Close()
		srv.Close()
	})
	t.Cleanup(s.stop)
	return s
}

func (s *testScheduler) url(path string) string { return "http://" + s.http.Addr() + path }

// testNodeMonitor is a node monitor daemon with its HTTP surface, unless
// started without.
type testNodeMonitor struct {
	*nodemonitor.Daemon
	http *daemon.HTTPServer
	host string
	stop func()
}

func startTestNodeMonitor(t *testing.T, name string, slots int, withHTTP bool, seeds ...string) *testNodeMonitor {
	t.Helper()
	if testing.Short() {
		t.Skip("starts daemons")
	}
	_, log := newLogBuffer(t, name)
	h := loopbackHosts.host()
	d, err := nodemonitor.StartDaemon(nodemonitor.DaemonConfig{
		Listen: h + ":0", InternalListen: h + ":0", Gossip: h + ":0", Join: seeds, GossipProfile: "local", Name: name,
		Slots: slots, Queue: queue.NewFIFO(), Log: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	hf := daemon.HTTPFlags{}
	if withHTTP {
		hf.Addr = h + ":0"
	}
	srv, err := daemon.ServeHTTP(hf, log, d.Surface(seeds))
	if err != nil {
		d.Close()
		t.Fatal(err)
	}
	n := &testNodeMonitor{Daemon: d, http: srv, host: h}
	n.stop = sync.OnceFunc(func() {
		srv.ShuttingDown()
		d.Close()
		srv.Close()
	})
	t.Cleanup(n.stop)
	return n
}

func (n *testNodeMonitor) url(path string) string { return "http://" + n.http.Addr() + path }

// startTestExecutor registers a sleep executor for app with n.
func startTestExecutor(t *testing.T, n *testNodeMonitor, app string) *client.Backend {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := client.NewBackend(ctx, client.BackendConfig{
		App: app, NodeMonitor: n.ServiceAddr(), Listen: n.host + ":0", AdvertiseHost: n.host,
		Run: fleet.SleepTask, Log: zerolog.Nop(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// waitForProbe waits until GET url answers code with body.
func waitForProbe(t *testing.T, url string, code int, body string) {
	t.Helper()
	var lastCode int
	var lastBody string
	waitFor(t, fmt.Sprintf("%s to answer %d %q", url, code, body), 15*time.Second, func() bool {
		lastCode, lastBody = httpGet(t, url)
		return lastCode == code && lastBody == body
	})
}

// TestSchedulerReadiness: a scheduler is live at once, ready only while a
// node monitor is in its view, and not ready once it is shutting down.
func TestSchedulerReadiness(t *testing.T) {
	s := startTestScheduler(t, "scheduler-0")
	if code, body := httpGet(t, s.url("/livez")); code != 200 || body != "ok" {
		t.Errorf("/livez = %d %q, want 200 ok", code, body)
	}
	waitForProbe(t, s.url("/readyz"), 503, "not ready: no live node monitor in the gossip view")

	nm := startTestNodeMonitor(t, "nodemonitor-0", 2, false, s.Cluster.Addr())
	waitForProbe(t, s.url("/readyz"), 200, "ready")

	nm.stop()
	waitForProbe(t, s.url("/readyz"), 503, "not ready: no live node monitor in the gossip view")

	s.http.ShuttingDown()
	waitForProbe(t, s.url("/readyz"), 503, "not ready: shutting down")
	if code, _ := httpGet(t, s.url("/livez")); code != 200 {
		t.Errorf("/livez while shutting down = %d, want 200", code)
	}
}

// TestNodeMonitorReadiness: a node monitor is ready only once an executor
// has registered, and, when given a seed, only once it has joined.
func TestNodeMonitorReadiness(t *testing.T) {
	s := startTestScheduler(t, "scheduler-0")
	nm := startTestNodeMonitor(t, "nodemonitor-0", 2, true, s.Cluster.Addr())
	if code, body := httpGet(t, nm.url("/livez")); code != 200 || body != "ok" {
		t.Errorf("/livez = %d %q, want 200 ok", code, body)
	}
	waitForProbe(t, nm.url("/readyz"), 503, "not ready: no executor registered")

	startTestExecutor(t, nm, "app")
	waitForProbe(t, nm.url("/readyz"), 200, "ready")

	// A node monitor whose seed is not there has not joined: that is its
	// reason, before the missing executor.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	lonely := startTestNodeMonitor(t, "nodemonitor-1", 1, true, dead)
	waitForProbe(t, lonely.url("/readyz"), 503, "not ready: not joined to gossip: no other member in view (seeds "+dead+")")
}
