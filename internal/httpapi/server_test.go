package httpapi

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sparrowfleet/sparrow/internal/buildinfo"
	"github.com/sparrowfleet/sparrow/internal/membership"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode, string(b)
}

func serve(t *testing.T, cfg Config) *Server {
	t.Helper()
	cfg.Addr = "127.0.0.1:0"
	s, err := Serve(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestProbesFollowTheCheck flips a readiness check and watches /readyz
// follow it with a one-line reason, while /livez stays 200 throughout,
// shutdown included.
func TestProbesFollowTheCheck(t *testing.T) {
	var reason atomic.Value
	reason.Store("no live node monitor in the gossip view")
	s := serve(t, Config{Ready: func() string { return reason.Load().(string) }})
	base := "http://" + s.Addr()

	for _, step := range []struct {
		name      string
		set       func()
		readyCode int
		readyBody string
	}{
		{"not ready", func() {}, 503, "not ready: no live node monitor in the gossip view\n"},
		{"ready", func() { reason.Store("") }, 200, "ready\n"},
		{"shutting down", s.ShuttingDown, 503, "not ready: shutting down\n"},
	} {
		step.set()
		if code, body := get(t, base+"/readyz"); code != step.readyCode || body != step.readyBody {
			t.Errorf("%s: /readyz = %d %q, want %d %q", step.name, code, body, step.readyCode, step.readyBody)
		}
		if code, body := get(t, base+"/livez"); code != 200 || body != "ok\n" {
			t.Errorf("%s: /livez = %d %q, want 200 \"ok\\n\"", step.name, code, body)
		}
	}
}

// TestPprofIsOptIn checks that the profiler is served only when asked for.
func TestPprofIsOptIn(t *testing.T) {
	for _, on := range []bool{false, true} {
		s := serve(t, Config{Pprof: on})
		code, body := get(t, "http://"+s.Addr()+"/debug/pprof/")
		if want := map[bool]int{false: 404, true: 200}[on]; code != want {
			t.Errorf("pprof %v: /debug/pprof/ = %d, want %d", on, code, want)
		}
		if on && !strings.Contains(body, "goroutine") {
			t.Errorf("pprof index lacks the goroutine profile:\n%s", body)
		}
		if code, _ := get(t, "http://"+s.Addr()+"/metrics"); code != 200 {
			t.Errorf("pprof %v: /metrics = %d, want 200", on, code)
		}
	}
}

// TestStatusCarriesReadiness checks that /status embeds what /readyz
// says, so that `sparrow status` needs one request per member.
func TestStatusCarriesReadiness(t *testing.T) {
	s := serve(t, Config{
		Ready: func() string { return "no executor registered" },
		Status: func() Status {
			return Status{Name: "nm", Role: membership.RoleNodeMonitor, NodeMonitor: &NodeMonitorStatus{Slots: 4, Users: map[string]UserCounts{"alice": {Queued: 2, Running: 1}}}}
		},
	})
	code, body := get(t, "http://"+s.Addr()+"/status")
	if code != 200 {
		t.Fatalf("/status = %d %s", code, body)
	}
	var st Status
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("/status is not JSON: %v\n%s", err, body)
	}
	if st.Ready || st.Reason != "no executor registered" || st.NodeMonitor == nil || st.NodeMonitor.Slots != 4 || st.NodeMonitor.Users["alice"] != (UserCounts{Queued: 2, Running: 1}) {
		t.Errorf("/status = %+v", st)
	}
	if want := buildinfo.Read().Short(); st.Version != want {
		t.Errorf("/status version = %q, want this build's %q", st.Version, want)
	}
	if code, _ := get(t, "http://"+serve(t, Config{}).Addr()+"/status"); code != 404 {
		t.Errorf("/status without a Status func = %d, want 404", code)
	}
}

// TestUIAndBuildInStatus mounts a dashboard handler and checks /status
// carries the build and start time the daemon left empty.
func TestUIAndBuildInStatus(t *testing.T) {
	ui := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "page "+r.URL.Path) })
	s := serve(t, Config{UI: ui, Status: func() Status { return Status{Name: "n"} }})
	base := "http://" + s.Addr()
	if code, body := get(t, base+"/ui/node"); code != 200 || body != "page /ui/node" {
		t.Errorf("/ui/node: %d %q", code, body)
	}
	if code, body := get(t, base+"/"); code != 200 || body != "page /ui/" {
		t.Errorf("/ redirects to the dashboard: got %d %q", code, body)
	}
	_, body := get(t, base+"/status")
	var st Status
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatal(err)
	}
	if st.Version == "" || st.Started == "" {
		t.Errorf("/status version %q, started %q", st.Version, st.Started)
	}
}

// TestDrainEndpoint: POST /drain fails /readyz and starts the drain once,
// however often it is called; without a drain hook there is no endpoint,
// and GET never drains.
func TestDrainEndpoint(t *testing.T) {
	noHook := serve(t, Config{})
	resp, err := http.Post("http://"+noHook.Addr()+"/drain", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("POST /drain without a hook: %d, want 404", resp.StatusCode)
	}
	started := make(chan struct{}, 3)
	s := serve(t, Config{Drain: func() { started <- struct{}{} }})
	base := "http://" + s.Addr()
	if code, _ := get(t, base+"/drain"); code != http.StatusMethodNotAllowed {
		t.Errorf("GET /drain: %d, want 405", code)
	}
	for range 2 {
		resp, err := http.Post(base+"/drain", "text/plain", nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted || string(b) != "draining\n" {
			t.Errorf("POST /drain: %d %q, want 202 \"draining\\n\"", resp.StatusCode, b)
		}
	}
	<-started
	if code, body := get(t, base+"/readyz"); code != 503 || body != "not ready: shutting down\n" {
		t.Errorf("/readyz while draining: %d %q", code, body)
	}
	if len(started) != 0 {
		t.Errorf("the drain started %d more times", len(started))
	}
}

// TestStatusViewSize checks that /status counts the daemons in the gossip
// view, itself included and observers aside, and leaves the count out
// without a view.
func TestStatusViewSize(t *testing.T) {
	status := func() Status { return Status{Name: "s", Role: membership.RoleScheduler} }
	for _, tc := range []struct {
		name string
		view GossipView
		want int
	}{
		{"no view", nil, 0},
		{"alone", &fakeView{members: []membership.Member{member("s", membership.RoleScheduler)}}, 1},
		{"fleet and an observer", &fakeView{members: []membership.Member{
			member("s", membership.RoleScheduler), member("nm-1", membership.RoleNodeMonitor),
			member("nm-2", membership.RoleNodeMonitor), member("status-x", membership.RoleObserver),
		}}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := serve(t, Config{Status: status, View: tc.view})
			_, body := get(t, "http://"+s.Addr()+"/status")
			var st Status
			if err := json.Unmarshal([]byte(body), &st); err != nil {
				t.Fatalf("/status is not JSON: %v\n%s", err, body)
			}
			if st.ViewSize != tc.want {
				t.Errorf("view_size = %d, want %d", st.ViewSize, tc.want)
			}
		})
	}
}
