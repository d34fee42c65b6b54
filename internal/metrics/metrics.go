package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

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
	return Series[S]{
		desc: prometheus.NewDesc(name, help, labels, nil),
		emit: func(s S, d *prometheus.Desc, ch chan<- prometheus.Metric) {
			for _, l := range values(s) {
				ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, l.Value, l.Labels...)
			}
		},
	}
}

// Histogram is a cumulative histogram over the upper bounds. value returns
// the observations' count and sum, and the cumulative count at each bound;
// a bound past the end of cumulative counts zero.
func Histogram[S any](name, help string, bounds []float64, value func(S) (count uint64, sum float64, cumulative []uint64)) Series[S] {
	return Series[S]{
		desc: prometheus.NewDesc(name, help, nil, nil),
		emit: func(s S, d *prometheus.Desc, ch chan<- prometheus.Metric) {
			count, sum, cum := value(s)
			buckets := make(map[float64]uint64, len(bounds))
			for i, b := range bounds {
				var n uint64
				if i < len(cum) {
					n = cum[i]
				}
				buckets[b] = n
			}
			ch <- prometheus.MustNewConstHistogram(d, count, sum, buckets)
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
