package metrics

import (
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sparrowfleet/sparrow/internal/rpc"
)

type snap struct {
	n     uint64
	up    bool
	split [2]uint64
	hist  []uint64
}

// gather registers c with a pedantic registry, which checks that every
// collected metric was described and is consistent, and returns each
// series' values by name: counters and gauges by label values joined with
// ",", histograms as their count then their cumulative bucket counts.
func gather(t *testing.T, c prometheus.Collector) map[string][]float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(c); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			v := m.GetCounter().GetValue() + m.GetGauge().GetValue()
			if h := m.GetHistogram(); h != nil {
				out[mf.GetName()] = append(out[mf.GetName()], float64(h.GetSampleCount()))
				for _, b := range h.GetBucket() {
					out[mf.GetName()] = append(out[mf.GetName()], float64(b.GetCumulativeCount()))
				}
				continue
			}
			out[mf.GetName()] = append(out[mf.GetName()], v)
		}
	}
	return out
}

// TestNewCollectorReadsOneSnapshotPerScrape checks every kind of series
// against the snapshot it was read from, and that a scrape reads the
// snapshot once however many series it has.
func TestNewCollectorReadsOneSnapshotPerScrape(t *testing.T) {
	reads := 0
	s := snap{n: 7, up: true, split: [2]uint64{3, 4}, hist: []uint64{1, 2}}
	c := NewCollector(func() snap { reads++; return s },
		Counter("x_total", "a counter", func(s snap) float64 { return float64(s.n) }),
		Gauge("x_up", "a flag", func(s snap) float64 { return Bool(s.up) }),
		CounterVec("x_split_total", "split by side", []string{"side"}, func(s snap) []Labelled {
			return []Labelled{{Labels: []string{"left"}, Value: float64(s.split[0])}, {Labels: []string{"right"}, Value: float64(s.split[1])}}
		}),
		Histogram("x_seconds", "a histogram", []float64{0.1, 1, 10}, func(s snap) (uint64, float64, []uint64) { return 2, 0.6, s.hist }),
	)
	got := gather(t, c)
	if reads != 1 {
		t.Errorf("one scrape read the snapshot %d times, want 1", reads)
	}
	for _, tc := range []struct {
		name string
		want []float64
	}{
		{"x_total", []float64{7}},
		{"x_up", []float64{1}},
		{"x_split_total", []float64{3, 4}},
		// Count, then the buckets: a bound past the end of the
		// cumulative counts counts zero.
		{"x_seconds", []float64{2, 1, 2, 0}},
	} {
		if g := got[tc.name]; !slices.Equal(g, tc.want) {
			t.Errorf("%s = %v, want %v", tc.name, g, tc.want)
		}
	}
}

func TestRPCCollector(t *testing.T) {
	got := gather(t, RPCCollector(func() rpc.Stats { return rpc.Stats{Open: 3, Evicted: 2} }))
	for _, tc := range []struct {
		name string
		want float64
	}{
		{"sparrow_rpc_connections_open", 3},
		{"sparrow_rpc_connections_evicted_total", 2},
		{"sparrow_rpc_budget_refused_total", 0},
	} {
		if g := got[tc.name]; !slices.Equal(g, []float64{tc.want}) {
			t.Errorf("%s = %v, want %v", tc.name, g, tc.want)
		}
	}
}
