package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/client"
	"github.com/sparrowfleet/sparrow/client/fleetstatus"
	"github.com/sparrowfleet/sparrow/internal/membership"
	"github.com/sparrowfleet/sparrow/scheduler"
)

// statusOnce prints the fleet once, as `sparrow status` does, joining
// through the gossip address join.
func statusOnce(t *testing.T, join string, asJSON bool) string {
	t.Helper()
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := fleetstatus.Config{Join: join, Profile: "local", Timeout: 5 * time.Second, Log: zerolog.Nop()}
	if err := fleetstatus.Print(ctx, cfg, &out, asJSON, 0); err != nil {
		t.Fatalf("status: %v", err)
	}
	return out.String()
}

// submit sends one job of n sleep tasks for user through a frontend of
// app.
func submit(t *testing.T, fe *client.Frontend, user string, n int, d time.Duration) {
	t.Helper()
	job := client.Job{User: client.User{Name: user}}
	for i := 0; i < n; i++ {
		job.Tasks = append(job.Tasks, client.Task{ID: fmt.Sprint(i), Message: []byte(d.String())})
	}
	if _, err := fe.Submit(context.Background(), job); err != nil {
		t.Fatal(err)
	}
}

// TestStatusShowsTheFleet runs status against a loopback fleet — a
// scheduler, two node monitors serving HTTP with every slot busy and
// reservations queued, and one without HTTP — and checks the table and
// the JSON: every member, its slots, live counts, apps and per-user
// queues.
func TestStatusShowsTheFleet(t *testing.T) {
	s := startTestScheduler(t, "scheduler-0")
	seed := s.Cluster.Addr()
	nm0 := startTestNodeMonitor(t, "nodemonitor-0", 1, true, seed)
	nm1 := startTestNodeMonitor(t, "nodemonitor-1", 2, true, seed)
	nm2 := startTestNodeMonitor(t, "nodemonitor-2", 3, false, seed)
	// The frontend outlives the executors (cleanups run last first), so
	// that the tasks they cancel at the end are reported to it.
	h := loopbackHosts.host()
	fe, err := client.NewFrontend(context.Background(), client.FrontendConfig{
		App: "app", Schedulers: []string{s.ServiceAddr()}, Listen: h + ":0", AdvertiseHost: h,
		Timeout: 5 * time.Second, OnMessage: func(client.Message) {}, Log: zerolog.Nop(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fe.Close() })
	startTestExecutor(t, nm0, "app")
	startTestExecutor(t, nm1, "app")
	startTestExecutor(t, nm2, "other")
	view := scheduler.NewMembershipView(s.Cluster)
	waitFor(t, "the scheduler to see every node monitor's apps", 15*time.Second, func() bool {
		return len(view.Candidates("app")) == 2 && len(view.Candidates("other")) == 1
	})

	// alice's three long tasks take all three slots of "app"; her
	// leftover reservations are cancelled once they launch, and bob's
	// four (two tasks at probe ratio 2) then wait in the queues.
	busy := func() (running, queued int) {
		for _, n := range []*testNodeMonitor{nm0, nm1} {
			st := n.State()
			running, queued = running+st.Running, queued+st.Queued
		}
		return
	}
	submit(t, fe, "alice", 3, time.Minute)
	waitFor(t, "alice's tasks to run and her leftovers to be cancelled", 15*time.Second, func() bool {
		r, q := busy()
		return r == 3 && q == 0
	})
	submit(t, fe, "bob", 2, time.Minute)
	waitFor(t, "bob's reservations to queue", 15*time.Second, func() bool {
		r, q := busy()
		return r == 3 && q == 4
	})

	text := statusOnce(t, seed, false)
	rows := map[string][]string{}
	for _, line := range strings.Split(text, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			rows[f[0]] = f
		}
	}
	for _, want := range []struct {
		name  string
		cells map[int]string // column -> cell
	}{
		// NAME SERVICE GOSSIP NODE-MONITORS ACTIVE-REQUESTS RUNNING HEALTH
		{"scheduler-0", map[int]string{1: s.ServiceAddr(), 3: "3", 6: "ready"}},
		// NAME INTERNAL SLOTS FREE RUNNING QUEUED APPS HEALTH
		{"nodemonitor-0", map[int]string{1: nm0.InternalAddr(), 2: "1", 3: "0", 4: "1", 6: "app", 7: "ready"}},
		{"nodemonitor-1", map[int]string{1: nm1.InternalAddr(), 2: "2", 3: "0", 4: "2", 6: "app", 7: "ready"}},
		{"nodemonitor-2", map[int]string{1: nm2.InternalAddr(), 2: "3", 3: "-", 4: "-", 5: "-", 6: "other", 7: "alive"}},
		{"alice", map[int]string{1: "0", 2: "3"}},
		{"bob", map[int]string{1: "4", 2: "0"}},
	} {
		row := rows[want.name]
		for col, cell := range want.cells {
			if col >= len(row) || row[col] != cell {
				t.Errorf("row %s = %q; want column %d = %q", want.name, row, col, cell)
			}
		}
	}
	queued := 0
	for _, n := range []*testNodeMonitor{nm0, nm1} {
		queued += n.State().Queued
		if row := rows[n.Cluster.Name()]; len(row) > 5 && row[5] != fmt.Sprint(n.State().Queued) {
			t.Errorf("%s QUEUED = %s, want %d", n.Cluster.Name(), row[5], n.State().Queued)
		}
	}
	if t.Failed() {
		t.Logf("status output:\n%s", text)
	}

	// The first observer's leave reaches the seed by gossip, possibly
	// through another member; until then the next observer would list it.
	waitFor(t, "the first observer to leave the seed's view", 10*time.Second, func() bool {
		return len(s.Cluster.Members(membership.RoleObserver)) == 0
	})
	var v fleetstatus.View
	out := statusOnce(t, seed, true)
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("--json output does not parse: %v\n%s", err, out)
	}
	wantSlots := map[string]int{"nodemonitor-0": 1, "nodemonitor-1": 2, "nodemonitor-2": 3}
	if len(v.Members) != 4 {
		t.Errorf("--json lists %d members, want the scheduler and 3 node monitors: %+v", len(v.Members), v.Members)
	}
	for _, m := range v.Members {
		if m.Role == membership.RoleNodeMonitor && m.Slots != wantSlots[m.Name] {
			t.Errorf("%s: %d slots, want %d", m.Name, m.Slots, wantSlots[m.Name])
		}
		if m.Name == "nodemonitor-2" && (m.NodeMonitor != nil || m.Health != "alive") {
			t.Errorf("%s has no HTTP endpoint, yet: %+v", m.Name, m)
		}
	}
	want := fleetstatus.Totals{Schedulers: 1, NodeMonitors: 3, Slots: 6, Reporting: 2, Free: 0, Running: 3, Queued: queued}
	if v.Totals != want {
		t.Errorf("totals = %+v, want %+v", v.Totals, want)
	}
	wantUsers := []fleetstatus.User{{User: "alice", Running: 3}, {User: "bob", Queued: 4}}
	if fmt.Sprint(v.Users) != fmt.Sprint(wantUsers) {
		t.Errorf("users = %+v, want %+v", v.Users, wantUsers)
	}
	wantApps := []fleetstatus.App{{App: "app", NodeMonitors: 2, Slots: 3}, {App: "other", NodeMonitors: 1, Slots: 3}}
	if fmt.Sprint(v.Apps) != fmt.Sprint(wantApps) {
		t.Errorf("apps = %+v, want %+v", v.Apps, wantApps)
	}
}

// TestStatusObserverIsNeverSampledAndLeaves keeps a --watch status joined
// and checks that the scheduler sees it as an observer, never as a node
// monitor it could sample; then interrupts it and checks that it left
// cleanly: gone from the view without the failure detector suspecting it.
func TestStatusObserverIsNeverSampledAndLeaves(t *testing.T) {
	s := startTestScheduler(t, "scheduler-0")
	nm := startTestNodeMonitor(t, "nodemonitor-0", 2, true, s.Cluster.Addr())
	startTestExecutor(t, nm, "app")
	view := scheduler.NewMembershipView(s.Cluster)
	waitFor(t, "the node monitor in the scheduler's view", 15*time.Second, func() bool { return len(view.Candidates("app")) == 1 })

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out lockedBuffer
	done := make(chan error, 1)
	go func() {
		cfg := fleetstatus.Config{Join: s.Cluster.Addr(), Profile: "local", Timeout: 5 * time.Second, Log: zerolog.Nop()}
		done <- fleetstatus.Print(ctx, cfg, &out, true, 20*time.Millisecond)
	}()
	var first fleetstatus.View
	waitFor(t, "two refreshes", 15*time.Second, func() bool {
		lines := strings.Split(out.String(), "\n")
		return len(lines) > 2 && json.Unmarshal([]byte(lines[0]), &first) == nil
	})
	observer := first.Observer
	var seen membership.Member
	for _, m := range s.Cluster.Members("") {
		if m.Name == observer {
			seen = m
		}
	}
	if seen.Meta.Role != membership.RoleObserver {
		t.Errorf("the scheduler sees the observer %q as %+v", observer, seen)
	}
	if c := view.Candidates("app"); len(c) != 1 || c[0].Name != "nodemonitor-0" {
		t.Errorf("candidates with an observer joined: %+v", c)
	}
	if nms := s.Cluster.Members(membership.RoleNodeMonitor); len(nms) != 1 {
		t.Errorf("node monitors in view with an observer joined: %+v", nms)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("status: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("status did not return after its context ended")
	}
	waitFor(t, "the observer to leave the scheduler's view", 10*time.Second, func() bool {
		for _, m := range s.Cluster.Members("") {
			if m.Name == observer {
				return false
			}
		}
		return true
	})
	log := s.log.String()
	for _, bad := range []string{"Suspect " + observer, "Marking " + observer + " as failed"} {
		if strings.Contains(log, bad) {
			t.Errorf("the scheduler's failure detector caught the observer (%q): it did not leave cleanly", bad)
		}
	}
}

// TestStatusFailsWithoutAFleet checks the error when nothing answers at
// --join.
func TestStatusFailsWithoutAFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("binds gossip")
	}
	cfg := fleetstatus.Config{Join: "127.0.0.1:1", Profile: "local", Timeout: 300 * time.Millisecond, Log: zerolog.Nop()}
	err := fleetstatus.Print(context.Background(), cfg, &bytes.Buffer{}, false, 0)
	if err == nil || !strings.Contains(err.Error(), "no member answered") || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("err = %v, want no member answered via 127.0.0.1:1", err)
	}
}
