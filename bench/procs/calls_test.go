package procs

import (
	"bytes"
	"maps"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/sparrowfleet/sparrow/internal/metrics"
	"github.com/sparrowfleet/sparrow/internal/rpc"
)

// exposition is what a daemon's /metrics says of stats, through the
// daemons' own collector.
func exposition(t *testing.T, stats rpc.CallStats) string {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(metrics.CallsCollector(func() rpc.CallStats { return stats }))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

func TestParseCalls(t *testing.T) {
	for _, tt := range []struct {
		name string
		text string
		want Calls
		err  bool
	}{
		{name: "the daemons' own exposition",
			text: exposition(t, rpc.CallStats{Served: map[string]int64{"getTask": 7, "other": 1}, Made: map[string]int64{"launchTask": 3}}),
			want: Calls{Served: map[string]float64{"getTask": 7, "other": 1}, Made: map[string]float64{"launchTask": 3}}},
		{name: "no call counters", text: "go_goroutines 12\n",
			want: Calls{Served: map[string]float64{}, Made: map[string]float64{}}},
		{name: "other metrics beside them",
			text: "sparrow_rpc_connections_open 3\nsparrow_rpc_calls_made_total{method=\"getTask\"} 2\n",
			want: Calls{Served: map[string]float64{}, Made: map[string]float64{"getTask": 2}}},
		{name: "not an exposition", text: "sparrow_rpc_calls_made_total{method=\"getTask\" 2\n", err: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseCalls(strings.NewReader(tt.text))
			if tt.err {
				if err == nil {
					t.Fatalf("parsed %+v, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got.Served, tt.want.Served) || !maps.Equal(got.Made, tt.want.Made) {
				t.Fatalf("parsed %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestCallCosts(t *testing.T) {
	calls := func(served, made map[string]float64) Calls { return Calls{Served: served, Made: made} }
	type m = map[string]float64
	roles := []Role{Scheduler, NodeMonitor, NodeMonitor, Executor, Executor}
	before := []Calls{
		calls(m{"submitJob": 1}, m{"enqueueTaskReservations": 2}),
		calls(m{"registerBackend": 1}, m{}),
		calls(m{}, m{}),
		{}, {},
	}
	after := []Calls{
		calls(m{"submitJob": 11, "getTask": 40}, m{"enqueueTaskReservations": 82, "frontendMessage": 40}),
		calls(m{"registerBackend": 1, "enqueueTaskReservations": 40, "tasksFinished": 10}, m{"getTask": 20, "launchTask": 20, "tasksFinished": 4}),
		calls(m{"enqueueTaskReservations": 40, "sendFrontendMessage": 20}, m{"getTask": 20, "launchTaskAndWait": 20}),
		{}, {},
	}
	got := callCosts(roles, before, after, 40)
	want := map[Role]Calls{
		Scheduler:   calls(m{"submitJob": 0.25, "getTask": 1}, m{"enqueueTaskReservations": 2, "frontendMessage": 1}),
		NodeMonitor: calls(m{"enqueueTaskReservations": 2, "tasksFinished": 0.25, "sendFrontendMessage": 0.5}, m{"getTask": 1, "launchTask": 0.5, "launchTaskAndWait": 0.5, "tasksFinished": 0.1}),
		// An executor serves its node monitor's launches and makes the
		// NodeMonitorService calls its node monitor serves.
		Executor: calls(m{"launchTask": 0.5, "launchTaskAndWait": 0.5}, m{"tasksFinished": 0.25, "sendFrontendMessage": 0.5}),
	}
	for role, w := range want {
		g := got[role]
		if !maps.Equal(g.Served, w.Served) || !maps.Equal(g.Made, w.Made) {
			t.Errorf("%s: %+v, want %+v", role, g, w)
		}
	}
	if c := callCosts(roles, before, after, 0); len(c[Scheduler].Served) != 0 {
		t.Errorf("with no tasks: %+v, want nothing", c)
	}

	costs := []RoleCost{{Role: Scheduler}, {Role: Executor}, {Role: Frontend}}
	addCalls(costs, got)
	if costs[0].CallsServedPerTask != 1.25 || costs[0].CallsMadePerTask != 3 || costs[1].CallsServedPerTask != 1 || costs[1].CallsMadePerTask != 0.75 {
		t.Errorf("totals %+v", costs)
	}
	if costs[2].CallsPerTask != nil {
		t.Errorf("the frontend got calls %+v; the driver's are not counted", costs[2].CallsPerTask)
	}
}

func TestWriteTableListsCallsByMethod(t *testing.T) {
	rs := Results{{RateJobsPerSec: 50, TasksPerJob: 4, TasksPerSec: 199, Roles: []RoleCost{{Role: Scheduler, Processes: 1,
		CallsServedPerTask: 1.5, CallsMadePerTask: 2,
		CallsPerTask: &Calls{Served: map[string]float64{"submitJob": 0.25, "getTask": 1.25}, Made: map[string]float64{"enqueueTaskReservations": 2}}}}}}
	var b bytes.Buffer
	if err := rs.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"calls served/task", "1.50", "scheduler calls per task, served: getTask 1.25, submitJob 0.25; made: enqueueTaskReservations 2.00"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}
