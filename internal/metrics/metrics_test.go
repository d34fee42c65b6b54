package metrics

import (
	"maps"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sparrowfleet/sparrow/internal/buildinfo"
	"github.com/sparrowfleet/sparrow/internal/metrics/metricstest"
	"github.com/sparrowfleet/sparrow/internal/rpc"
)

type snap struct {
	n     uint64
	up    bool
	split [2]uint64
	hist  Distribution
}

// gather gathers c through a pedantic registry (metricstest.Gather) and
// returns each series' values by name: counters and gauges by label
// values joined with ",", histograms as their count then their cumulative
// bucket counts.
func gather(t *testing.T, c prometheus.Collector) map[string][]float64 {
	t.Helper()
	out := map[string][]float64{}
	for _, mf := range metricstest.Gather(t, c) {
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
	s := snap{n: 7, up: true, split: [2]uint64{3, 4}, hist: Distribution{Count: 2, Sum: 0.6, Buckets: []uint64{1, 2}}}
	c := NewCollector(func() snap { reads++; return s },
		Counter("x_total", "a counter", func(s snap) float64 { return float64(s.n) }),
		Gauge("x_up", "a flag", func(s snap) float64 { return Bool(s.up) }),
		CounterVec("x_split_total", "split by side", []string{"side"}, func(s snap) []Labelled {
			return []Labelled{{Labels: []string{"left"}, Value: float64(s.split[0])}, {Labels: []string{"right"}, Value: float64(s.split[1])}}
		}),
		Histogram("x_seconds", "a histogram", []float64{0.1, 1, 10}, func(s snap) Distribution { return s.hist }),
		GaugeVec("x_by_side", "a gauge split by side", []string{"side"}, func(s snap) []Labelled {
			return []Labelled{{Labels: []string{"left"}, Value: 5}}
		}),
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
		{"x_by_side", []float64{5}},
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

// TestDistributionIsCumulative checks each bucket against the
// observations at or below its bound, edges included, and that a clone
// does not change with the original.
func TestDistributionIsCumulative(t *testing.T) {
	bounds := []float64{0.01, 0.1, 1, 10}
	for _, tc := range []struct {
		name string
		obs  []float64
		want []uint64
	}{
		{"none", nil, nil},
		{"below the first bound", []float64{0.001}, []uint64{1, 1, 1, 1}},
		{"on a bound", []float64{0.1}, []uint64{0, 1, 1, 1}},
		{"above the last bound", []float64{100}, []uint64{0, 0, 0, 0}},
		{"spread", []float64{0.005, 0.3, 4, 100, 1}, []uint64{1, 1, 3, 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d Distribution
			sum := 0.0
			for _, v := range tc.obs {
				d.Observe(bounds, v)
				sum += v
			}
			if d.Count != uint64(len(tc.obs)) || d.Sum != sum || !slices.Equal(d.Buckets, tc.want) {
				t.Fatalf("distribution %+v, want count %d, sum %g, buckets %v", d, len(tc.obs), sum, tc.want)
			}
			c := d.Clone()
			d.Observe(bounds, 0)
			if c.Count != uint64(len(tc.obs)) || !slices.Equal(c.Buckets, tc.want) {
				t.Fatalf("clone %+v changed with the original", c)
			}
		})
	}
}

func TestBuildInfo(t *testing.T) {
	mfs := metricstest.Gather(t, BuildInfo(buildinfo.Info{Version: "v1.2.3", Revision: "abc", Go: "go1.26.8"}, "scheduler"))
	if len(mfs) != 1 || mfs[0].GetName() != "sparrow_build_info" || len(mfs[0].GetMetric()) != 1 {
		t.Fatalf("gathered %v, want one sparrow_build_info sample", mfs)
	}
	m := mfs[0].GetMetric()[0]
	got := map[string]string{}
	for _, l := range m.GetLabel() {
		got[l.GetName()] = l.GetValue()
	}
	want := map[string]string{"version": "v1.2.3", "revision": "abc", "goversion": "go1.26.8", "role": "scheduler"}
	if !maps.Equal(got, want) || m.GetGauge().GetValue() != 1 {
		t.Fatalf("labels %v value %v, want %v and 1", got, m.GetGauge().GetValue(), want)
	}
}
