package dashboard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sparrowfleet/sparrow/internal/httpapi"
	"github.com/sparrowfleet/sparrow/internal/membership"
)

// fakeFleet is a gossip view and the /status answers of its members,
// changed by the test between polls.
type fakeFleet struct {
	mu      sync.Mutex
	members []membership.Member
	status  map[string]httpapi.Status // by HTTP address
	fail    map[string]error
}

func (f *fakeFleet) Members(role membership.Role) []membership.Member {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []membership.Member
	for _, m := range f.members {
		if role == "" || m.Meta.Role == role {
			out = append(out, m)
		}
	}
	return out
}

func (f *fakeFleet) Status(_ context.Context, addr string) (httpapi.Status, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.fail[addr]; err != nil {
		return httpapi.Status{}, err
	}
	st, ok := f.status[addr]
	if !ok {
		return st, errors.New("connection refused")
	}
	return st, nil
}

func (f *fakeFleet) add(name string, role membership.Role, st httpapi.Status) {
	f.mu.Lock()
	defer f.mu.Unlock()
	addr := name + ":8080"
	f.members = append(f.members, membership.Member{Name: name, Gossip: name + ":7946",
		Meta: membership.Meta{Role: role, HTTP: addr, Slots: 4, Apps: []string{"sleep"}}})
	if f.status == nil {
		f.status, f.fail = map[string]httpapi.Status{}, map[string]error{}
	}
	st.Name, st.Role, st.Ready = name, role, true
	f.status[addr] = st
}

func (f *fakeFleet) remove(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, m := range f.members {
		if m.Name == name {
			f.members = append(f.members[:i], f.members[i+1:]...)
			return
		}
	}
}

func nodeStatus(running, queued int, users map[string]httpapi.UserCounts) httpapi.Status {
	return httpapi.Status{NodeMonitor: &httpapi.NodeMonitorStatus{Slots: 4, Free: 4 - running, Running: running, Queued: queued, Users: users}}
}

func TestPollHealthAndDeath(t *testing.T) {
	f := &fakeFleet{}
	f.add("sched0", membership.RoleScheduler, httpapi.Status{Version: "v1.2.0", Scheduler: &httpapi.SchedulerStatus{}})
	f.add("nm0", membership.RoleNodeMonitor, nodeStatus(1, 0, nil))
	f.add("nm1", membership.RoleNodeMonitor, nodeStatus(0, 0, nil))
	f.fail["nm1:8080"] = errors.New("connection refused")
	d := New(Config{Source: f, Fetcher: f, ForgetDead: time.Minute})
	t0 := time.Unix(1000, 0)
	d.Poll(context.Background(), t0)

	want := map[string]Health{"sched0": Ready, "nm0": Ready, "nm1": Unreachable}
	for name, h := range want {
		if got := d.members[name].Health; got != h {
			t.Errorf("%s: health %q, want %q", name, got, h)
		}
	}
	f.remove("nm0")
	d.Poll(context.Background(), t0.Add(2*time.Second))
	if got := d.members["nm0"].Health; got != Dead {
		t.Fatalf("nm0 gone from gossip: health %q, want dead", got)
	}
	d.Poll(context.Background(), t0.Add(2*time.Minute))
	if _, ok := d.members["nm0"]; ok {
		t.Fatal("nm0 still kept past ForgetDead")
	}
}

func TestUsersSummedAndBounded(t *testing.T) {
	f := &fakeFleet{}
	users := map[string]httpapi.UserCounts{}
	for i := range 50 {
		users[fmt.Sprintf("u%02d", i)] = httpapi.UserCounts{Queued: 1}
	}
	f.add("nm0", membership.RoleNodeMonitor, nodeStatus(2, 1, map[string]httpapi.UserCounts{"alice": {Running: 2, Queued: 1}}))
	f.add("nm1", membership.RoleNodeMonitor, nodeStatus(3, 0, map[string]httpapi.UserCounts{"alice": {Running: 1}, "bob": {Running: 2}}))
	f.add("nm2", membership.RoleNodeMonitor, nodeStatus(4, 0, users))
	d := New(Config{Source: f, Fetcher: f, MaxUsers: 5, History: 10})
	t0 := time.Unix(1000, 0)
	for i := range 100 {
		d.Poll(context.Background(), t0.Add(time.Duration(i)*time.Second))
	}
	if len(d.users) != 6 { // five users and the sum of the rest
		t.Fatalf("kept %d user series, want 5 and %q", len(d.users), otherUsers)
	}
	alice, _ := d.users["alice"].last()
	if alice.Running != 3 || alice.Queued != 1 {
		t.Errorf("alice summed to %d running, %d queued; want 3, 1", alice.Running, alice.Queued)
	}
	other, _ := d.users[otherUsers].last()
	if other.Queued == 0 {
		t.Errorf("the users past the bound are not summed: %+v", other)
	}
	for u, r := range d.users {
		if r.len() > 10 {
			t.Errorf("series %s holds %d points, over History 10", u, r.len())
		}
	}
}

func TestSchedulerRates(t *testing.T) {
	f := &fakeFleet{}
	st := httpapi.Status{Scheduler: &httpapi.SchedulerStatus{TasksLaunched: 100, JobsSubmitted: 10, LaunchDelays: 100, LaunchDelaySeconds: 1}}
	f.add("sched0", membership.RoleScheduler, st)
	d := New(Config{Source: f, Fetcher: f})
	t0 := time.Unix(1000, 0)
	d.Poll(context.Background(), t0)
	tests := []struct {
		name          string
		tasks, delays uint64
		delaySum      float64
		wantTasksPerS float64
		wantDelay     float64
		wantHasDelay  bool
	}{
		{"steady", 300, 300, 5, 100, 0.02, true},
		{"no launches", 300, 300, 5, 0, 0, false},
		{"restarted: no rate", 10, 10, 0.1, 0, 0, false},
	}
	for i, tc := range tests {
		f.mu.Lock()
		s := *f.status["sched0:8080"].Scheduler
		s.TasksLaunched, s.LaunchDelays, s.LaunchDelaySeconds = tc.tasks, tc.delays, tc.delaySum
		st := f.status["sched0:8080"]
		st.Scheduler = &s
		f.status["sched0:8080"] = st
		f.mu.Unlock()
		d.Poll(context.Background(), t0.Add(time.Duration(2*(i+1))*time.Second))
		p, _ := d.scheds["sched0"].last()
		if p.TasksPerSec != tc.wantTasksPerS || p.HasDelay != tc.wantHasDelay || (tc.wantHasDelay && fmt.Sprintf("%.4f", p.DelaySeconds) != fmt.Sprintf("%.4f", tc.wantDelay)) {
			t.Errorf("%s: %+v; want %v tasks/s, delay %v (%v)", tc.name, p, tc.wantTasksPerS, tc.wantDelay, tc.wantHasDelay)
		}
	}
}

// TestHostileStatus serves /status answers no member should give and
// checks each marks only that member unreachable, with a reason.
func TestHostileStatus(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	handlers := map[string]http.HandlerFunc{
		"wrong JSON": func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, `{"name": [1,2`) },
		"huge body": func(w http.ResponseWriter, _ *http.Request) {
			io.WriteString(w, `{"name":"`)
			chunk := strings.Repeat("x", 64<<10)
			for range 40 { // 2.5 MiB
				io.WriteString(w, chunk)
			}
			io.WriteString(w, `"}`)
		},
		"slow": func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		},
		"error code": func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "boom", http.StatusInternalServerError) },
	}
	fetch := HTTPFetcher{Client: &http.Client{}}
	for name, h := range handlers {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(h)
			defer srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			_, err := fetch.Status(ctx, strings.TrimPrefix(srv.URL, "http://"))
			if err == nil {
				t.Fatal("a hostile /status was accepted")
			}
			ms := memberFrom(membership.Member{Name: "nm", Meta: membership.Meta{Role: membership.RoleNodeMonitor, HTTP: "x"}}, fetched{err: err})
			if ms.Health != Unreachable || ms.Reason == "" || len(ms.Reason) > maxReasonBytes+len("…") {
				t.Fatalf("member state %q %q", ms.Health, ms.Reason)
			}
		})
	}
}

func TestStatusBounded(t *testing.T) {
	users := map[string]httpapi.UserCounts{}
	for i := range 5000 {
		users[fmt.Sprint("user", i)] = httpapi.UserCounts{Running: 1}
	}
	st := nodeStatus(1, 0, users)
	st.Ready = true
	st.Reason = strings.Repeat("r", 10000)
	st.NodeMonitor.Apps = make([]string, 1000)
	ms := memberFrom(membership.Member{Name: "nm", Meta: membership.Meta{Role: membership.RoleNodeMonitor, HTTP: "x"}}, fetched{st: st})
	if len(ms.NodeMonitor.Users) != maxUsersPerNode || len(ms.NodeMonitor.Apps) != maxAppsPerNode {
		t.Fatalf("kept %d users and %d apps of one node, want %d and %d", len(ms.NodeMonitor.Users), len(ms.NodeMonitor.Apps), maxUsersPerNode, maxAppsPerNode)
	}
}

func TestPages(t *testing.T) {
	f := &fakeFleet{}
	f.add("sched0", membership.RoleScheduler, httpapi.Status{Scheduler: &httpapi.SchedulerStatus{Held: 3}})
	f.add("nm0", membership.RoleNodeMonitor, nodeStatus(2, 5, map[string]httpapi.UserCounts{"alice": {Running: 2, Queued: 5}}))
	f.add("coord0", membership.RoleCoordinator, httpapi.Status{Coordinator: &httpapi.CoordinatorStatus{Active: true, Version: 7,
		Users: map[string]httpapi.UserShare{"alice": {Running: 2, Target: 3.5}}}})
	d := New(Config{Source: f, Fetcher: f})
	d.Poll(context.Background(), time.Unix(1000, 0))
	d.Poll(context.Background(), time.Unix(1002, 0))
	srv := httptest.NewServer(d.Handler("/ui/"))
	defer srv.Close()
	tests := []struct {
		method, path string
		code         int
		contains     []string
	}{
		{"GET", "/ui/", 200, []string{`data-name="sched0"`, `data-name="nm0"`, `data-user="alice"`, "3.5", "3 submit calls held", `id="coordinator"`}},
		{"GET", "/ui/node?name=nm0", 200, []string{"alice", "queued"}},
		{"GET", "/ui/node?name=nobody", 404, []string{"No such member"}},
		{"GET", "/ui/chart/users.svg", 200, []string{"<svg"}},
		{"GET", "/ui/chart/throughput.svg", 200, []string{"<svg"}},
		{"GET", "/ui/chart/delay.svg", 200, []string{"<svg"}},
		{"GET", "/ui/chart/held.svg", 200, []string{"<svg"}},
		{"GET", "/ui/chart/nothing.svg", 404, nil},
		{"POST", "/ui/", 405, []string{"read-only"}},
	}
	for _, tc := range tests {
		req, _ := http.NewRequest(tc.method, srv.URL+tc.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, resp.StatusCode, tc.code)
		}
		for _, s := range tc.contains {
			if !strings.Contains(string(body), s) {
				t.Errorf("%s %s: no %q in the answer", tc.method, tc.path, s)
			}
		}
	}
}

// TestIdleDashboardStopsPolling runs Run on synctest's fake clock: with
// IdleAfter set it polls while pages are viewed and stops after.
func TestIdleDashboardStopsPolling(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeFleet{}
		f.add("nm0", membership.RoleNodeMonitor, nodeStatus(1, 0, nil))
		d := New(Config{Source: f, Fetcher: f, Interval: time.Second, IdleAfter: 10 * time.Second})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		d.Viewed(time.Now())
		go d.Run(ctx)
		polls := func() uint64 { return settledPolls(d) }
		time.Sleep(30 * time.Second)
		idle := polls()
		if idle < 10 || idle > 13 {
			t.Fatalf("%d polls in the 30 s after one view with IdleAfter 10 s; want about 11", idle)
		}
		time.Sleep(time.Minute)
		if got := polls(); got != idle {
			t.Fatalf("polled %d times while nobody looked", got-idle)
		}
		d.Viewed(time.Now())
		time.Sleep(5 * time.Second)
		if got := polls(); got < idle+5 {
			t.Fatalf("a page view did not resume polling: %d polls after it", got-idle)
		}
	})
}

// TestFirstViewShowsTheFleet: a dashboard that has not polled yet, idle
// as a daemon's is until someone looks, answers its first page views with
// the fleet, polled for them once, not with an empty page; the Run it
// wakes does not poll again at once; and after a sleep the next view
// polls again rather than show the fleet as it was.
func TestFirstViewShowsTheFleet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeFleet{}
		f.add("nm0", membership.RoleNodeMonitor, nodeStatus(1, 0, nil))
		d := New(Config{Source: f, Fetcher: f, Interval: time.Second, IdleAfter: time.Minute})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go d.Run(ctx)
		polls := func() uint64 { return settledPolls(d) }
		if n := polls(); n != 0 {
			t.Fatalf("%d polls before any view", n)
		}
		view := func() string {
			rec := httptest.NewRecorder()
			d.Handler("/ui/").ServeHTTP(rec, httptest.NewRequest("GET", "/ui/", nil))
			return rec.Body.String()
		}
		var wg sync.WaitGroup
		pages := make([]string, 2)
		for i := range pages {
			wg.Go(func() { pages[i] = view() })
		}
		wg.Wait()
		for i, page := range pages {
			if strings.Contains(page, "no member seen yet") || !strings.Contains(page, `data-name="nm0"`) {
				t.Errorf("first view %d does not show the fleet:\n%s", i, page)
			}
		}
		if n := polls(); n != 1 {
			t.Errorf("%d polls for two first views and the Run they woke, want 1", n)
		}
		f.add("nm1", membership.RoleNodeMonitor, nodeStatus(0, 0, nil))
		time.Sleep(10 * time.Minute) // Run idles: nobody looks
		if page := view(); !strings.Contains(page, `data-name="nm1"`) {
			t.Errorf("the view after a sleep shows the fleet as it was:\n%s", page)
		}
	})
}

// settledPolls waits for the bubble's goroutines to block and returns how
// many polls d has taken.
func settledPolls(d *Dashboard) uint64 {
	synctest.Wait()
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.polls
}

// slowFleet is a fakeFleet whose /status answers wait for release.
type slowFleet struct {
	*fakeFleet
	release chan struct{}
}

func (s slowFleet) Status(ctx context.Context, addr string) (httpapi.Status, error) {
	select {
	case <-s.release:
	case <-ctx.Done():
		return httpapi.Status{}, ctx.Err()
	}
	return s.fakeFleet.Status(ctx, addr)
}

// TestFirstViewDoesNotWaitForSlowMembers: a first view whose poll is slow
// (a large fleet's /status takes a while to read) answers after ViewWait
// with every member gossip knows, marked as not read yet; the poll goes on
// and the next view shows what it read.
func TestFirstViewDoesNotWaitForSlowMembers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeFleet{}
		f.add("nm0", membership.RoleNodeMonitor, nodeStatus(1, 0, nil))
		f.add("sched0", membership.RoleScheduler, httpapi.Status{})
		slow := slowFleet{f, make(chan struct{})}
		d := New(Config{Source: f, Fetcher: slow, Interval: 10 * time.Second, ViewWait: 300 * time.Millisecond})
		view := func() string {
			rec := httptest.NewRecorder()
			d.Handler("/ui/").ServeHTTP(rec, httptest.NewRequest("GET", "/ui/", nil))
			return rec.Body.String()
		}
		start := time.Now()
		page := view()
		if waited := time.Since(start); waited != 300*time.Millisecond {
			t.Errorf("the first view waited %v, want ViewWait, 300ms", waited)
		}
		for _, name := range []string{"nm0", "sched0"} {
			if !strings.Contains(page, name) {
				t.Errorf("the first view does not show %s from gossip:\n%s", name, page)
			}
		}
		if !strings.Contains(page, "status not read yet") {
			t.Errorf("the first view does not say the members' status is not read yet:\n%s", page)
		}
		close(slow.release)
		synctest.Wait()
		if page := view(); strings.Contains(page, "status not read yet") || !strings.Contains(page, string(Ready)) {
			t.Errorf("the view after the poll does not show what it read:\n%s", page)
		}
	})
}
