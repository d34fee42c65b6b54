package nodemonitor

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestCollector checks each series against the State field it reports.
func TestCollector(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(Collector(func() State {
		return State{Slots: 4, Free: 1, Fetching: 1, Running: 2, Queued: 5, Launches: 11, Apps: []string{"a", "b"}, PullTasks: 3, PullsEmpty: 7}
	}))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			name := mf.GetName()
			for _, l := range m.GetLabel() {
				name += "{" + l.GetValue() + "}"
			}
			got[name] = m.GetGauge().GetValue() + m.GetCounter().GetValue()
		}
	}
	for _, tc := range []struct {
		name string
		want float64
	}{
		{"sparrow_nodemonitor_slots", 4},
		{"sparrow_nodemonitor_slots_free", 1},
		{"sparrow_nodemonitor_slots_fetching", 1},
		{"sparrow_nodemonitor_tasks_running", 2},
		{"sparrow_nodemonitor_reservations_queued", 5},
		{"sparrow_nodemonitor_launches_total", 11},
		{"sparrow_nodemonitor_apps", 2},
		{"sparrow_nodemonitor_pulls_total{task}", 3},
		{"sparrow_nodemonitor_pulls_total{empty}", 7},
	} {
		if v, ok := got[tc.name]; !ok || v != tc.want {
			t.Errorf("%s = %v (exported: %v), want %v", tc.name, v, ok, tc.want)
		}
	}
}
