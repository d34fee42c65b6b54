package metrics

import (
	"maps"
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sparrowfleet/sparrow/internal/buildinfo"
	"github.com/sparrowfleet/sparrow/internal/rpc"
)

// Series is one metric family read from a snapshot S. Build it with
// Counter, Gauge, CounterVec or Histogram.
type Series[S any] struct {
	desc *prometheus.Desc
	emit func(s S, d *prometheus.Desc, ch chan<- prometheus.Metric)
}

// Counter is a series whose value only grows.
func Counter[S any](name, help string, value func(S) float64) Series[S] {
	return scalar(name, help, prometheus.CounterValue, value)
}

// Gauge is a series whose value goes up and down.
func Gauge[S any](name, help string, value func(S) float64) Series[S] {
	return scalar(name, help, prometheus.GaugeValue, value)
}

func scalar[S any](name, help string, kind prometheus.ValueType, value func(S) float64) Series[S] {
	return Series[S]{
		desc: prometheus.NewDesc(name, help, nil, nil),
		emit: func(s S, d *prometheus.Desc, ch chan<- prometheus.Metric) {
			ch <- prometheus.MustNewConstMetric(d, kind, value(s))
		},
	}
}

// Labelled is one sample of a CounterVec: its label values, in the order
// of the series' label names, and its value.
type Labelled struct {
	Labels []string
	Value  float64
}

// CounterVec is a counter split by labels; values returns one sample per
// combination of label values, every one on every scrape.
func CounterVec[S any](name, help string, labels []string, values func(S) []Labelled) Series[S] {
	return vec(name, help, prometheus.CounterValue, labels, values)
}

// GaugeVec is a gauge split by labels, as CounterVec is a counter.
func GaugeVec[S any](name, help string, labels []string, values func(S) []Labelled) Series[S] {
	return vec(name, help, prometheus.GaugeValue, labels, values)
}

func vec[S any](name, help string, kind prometheus.ValueType, labels []string, values func(S) []Labelled) Series[S] {
	return Series[S]{
		desc: prometheus.NewDesc(name, help, labels, nil),
		emit: func(s S, d *prometheus.Desc, ch chan<- prometheus.Metric) {
			for _, l := range values(s) {
				ch <- prometheus.MustNewConstMetric(d, kind, l.Value, l.Labels...)
			}
		},
	}
}

// Distribution is a histogram its owner keeps: how many observations
// were made, their sum, and at each upper bound of the series' bounds the
// cumulative count of observations at or below it. The zero value is
// empty. It has no lock: its owner serialises Observe and copies it with
// Clone for a snapshot.
type Distribution struct {
	Count   uint64
	Sum     float64
	Buckets []uint64 // Buckets[i] counts observations <= bounds[i]
}

// Observe records v against bounds, which must be the same ascending
// bounds on every call.
func (d *Distribution) Observe(bounds []float64, v float64) {
	if d.Buckets == nil {
		d.Buckets = make([]uint64, len(bounds))
	}
	d.Count++
	d.Sum += v
	// Bounds are ascending: v falls in every bucket from the first bound
	// at or above it.
	for i := len(bounds) - 1; i >= 0 && v <= bounds[i]; i-- {
		d.Buckets[i]++
	}
}

// Clone is a copy of d that shares nothing with it.
func (d Distribution) Clone() Distribution {
	d.Buckets = slices.Clone(d.Buckets)
	return d
}

// Histogram is a cumulative histogram over the upper bounds, read from a
// Distribution kept over the same bounds; a bound past the end of its
// buckets counts zero.
func Histogram[S any](name, help string, bounds []float64, value func(S) Distribution) Series[S] {
	return Series[S]{
		desc: prometheus.NewDesc(name, help, nil, nil),
		emit: func(s S, d *prometheus.Desc, ch chan<- prometheus.Metric) {
			v := value(s)
			buckets := make(map[float64]uint64, len(bounds))
			for i, b := range bounds {
				var n uint64
				if i < len(v.Buckets) {
					n = v.Buckets[i]
				}
				buckets[b] = n
			}
			ch <- prometheus.MustNewConstHistogram(d, v.Count, v.Sum, buckets)
		},
	}
}

// Bool is 1 for true and 0 for false, for gauges of a flag.
func Bool(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// collector emits every series from one snapshot per scrape. It is safe
// for concurrent scrapes if snapshot is.
type collector[S any] struct {
	snapshot func() S
	series   []Series[S]
}

// NewCollector returns a collector that calls snapshot once per scrape and
// emits every series from its result.
func NewCollector[S any](snapshot func() S, series ...Series[S]) prometheus.Collector {
	return &collector[S]{snapshot: snapshot, series: series}
}

func (c *collector[S]) Describe(ch chan<- *prometheus.Desc) {
	for _, s := range c.series {
		ch <- s.desc
	}
}

func (c *collector[S]) Collect(ch chan<- prometheus.Metric) {
	s := c.snapshot()
	for _, x := range c.series {
		x.emit(s, x.desc, ch)
	}
}

// RPCCollector exposes a daemon's Thrift connection counters.
func RPCCollector(stats func() rpc.Stats) prometheus.Collector {
	type st = rpc.Stats
	return NewCollector(stats,
		Gauge("sparrow_rpc_connections_open", "Thrift connections being served.", func(s st) float64 { return float64(s.Open) }),
		Counter("sparrow_rpc_connections_refused_per_host_total", "Connections refused at the per-host cap.", func(s st) float64 { return float64(s.RefusedPerHost) }),
		Counter("sparrow_rpc_connections_refused_at_cap_total", "Connections refused at the global cap with none idle.", func(s st) float64 { return float64(s.RefusedAtCap) }),
		Counter("sparrow_rpc_connections_evicted_total", "Idle connections closed at the global cap to admit new ones.", func(s st) float64 { return float64(s.Evicted) }),
		Counter("sparrow_rpc_connections_idle_closed_total", "Connections closed by the opt-in idle timeout.", func(s st) float64 { return float64(s.IdleClosed) }),
		Counter("sparrow_rpc_frame_timeouts_total", "Connections closed for not finishing a frame in time.", func(s st) float64 { return float64(s.FrameTimeouts) }),
		Counter("sparrow_rpc_budget_refused_total", "Requests refused because decode memory stayed taken.", func(s st) float64 { return float64(s.BudgetRefused) }),
	)
}

// CallsCollector exposes a daemon's Thrift calls per method: those its
// servers served and those its client pools made.
func CallsCollector(calls func() rpc.CallStats) prometheus.Collector {
	byMethod := func(counts map[string]int64) []Labelled {
		out := make([]Labelled, 0, len(counts))
		for _, m := range slices.Sorted(maps.Keys(counts)) {
			out = append(out, Labelled{Labels: []string{m}, Value: float64(counts[m])})
		}
		return out
	}
	return NewCollector(calls,
		CounterVec("sparrow_rpc_calls_served_total",
			"Thrift calls served, by method; calls of a method the service lacks count as method \"other\".",
			[]string{"method"}, func(s rpc.CallStats) []Labelled { return byMethod(s.Served) }),
		CounterVec("sparrow_rpc_calls_made_total",
			"Thrift calls made to peers, by method, a call sent again counting twice.",
			[]string{"method"}, func(s rpc.CallStats) []Labelled { return byMethod(s.Made) }),
	)
}

// BuildInfo exposes sparrow_build_info, 1, labelled with the running
// build and the daemon's role, so that a query can count a fleet's members
// by version (a rolling upgrade, or one left behind).
func BuildInfo(info buildinfo.Info, role string) prometheus.Collector {
	return NewCollector(func() buildinfo.Info { return info },
		GaugeVec("sparrow_build_info",
			"Always 1, labelled with the daemon's build: version (the module version, or devel+revision for an untagged build), revision (the VCS commit, empty if the binary records none), goversion (the toolchain) and role (scheduler, nodemonitor, coordinator).",
			[]string{"version", "revision", "goversion", "role"}, func(i buildinfo.Info) []Labelled {
				return []Labelled{{Labels: []string{i.Short(), i.Revision, i.Go, role}, Value: 1}}
			}),
	)
}
