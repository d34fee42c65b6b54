package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sparrowfleet/sparrow/scheduler"
)

// collectors reports several collectors as one.
type collectors []prometheus.Collector

func (cs collectors) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range cs {
		c.Describe(ch)
	}
}

func (cs collectors) Collect(ch chan<- prometheus.Metric) {
	for _, c := range cs {
		c.Collect(ch)
	}
}

// schedulerLocality exposes a scheduler's relaxation of placement
// preferences and the locality of its launches, with labels so that one
// query sums or splits them.
type schedulerLocality struct {
	s                          *scheduler.Scheduler
	widened, launched, relaxed *prometheus.Desc
	version, fresh, accepted   *prometheus.Desc
}

func newSchedulerLocality(s *scheduler.Scheduler) *schedulerLocality {
	return &schedulerLocality{
		s: s,
		widened: prometheus.NewDesc("sparrow_scheduler_tasks_widened_total",
			"Tasks whose placement preferences were relaxed, by the level reached (rack, cluster) and the cause (delay, prices).",
			[]string{"level", "cause"}, nil),
		launched: prometheus.NewDesc("sparrow_scheduler_preferred_tasks_launched_total",
			"Launches of tasks with placement preferences, by locality: node (where the client allowed), rack (a preferred node's rack), cluster (elsewhere).",
			[]string{"level"}, nil),
		relaxed: prometheus.NewDesc("sparrow_scheduler_relaxing_requests",
			"Requests with a task that may still relax its preferences.", nil, nil),
		version: prometheus.NewDesc("sparrow_scheduler_locality_prices_version",
			"Version of the coordinator's locality prices held.", nil, nil),
		fresh: prometheus.NewDesc("sparrow_scheduler_locality_prices_fresh",
			"1 while the held locality prices are fresh enough to guide placement.", nil, nil),
		accepted: prometheus.NewDesc("sparrow_scheduler_locality_prices_accepted_total",
			"Locality price sets installed.", nil, nil),
	}
}

func (c *schedulerLocality) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.widened, c.launched, c.relaxed, c.version, c.fresh, c.accepted} {
		ch <- d
	}
}

func (c *schedulerLocality) Collect(ch chan<- prometheus.Metric) {
	l := c.s.Stats().Locality
	for _, w := range []struct {
		level, cause string
		n            uint64
	}{
		{"rack", "delay", l.WidenedRackByDelay}, {"rack", "prices", l.WidenedRackByPrices},
		{"cluster", "delay", l.WidenedClusterByDelay}, {"cluster", "prices", l.WidenedClusterByPrices},
	} {
		ch <- prometheus.MustNewConstMetric(c.widened, counter, float64(w.n), w.level, w.cause)
	}
	for _, x := range []struct {
		level string
		n     uint64
	}{{"node", l.LaunchedNode}, {"rack", l.LaunchedRack}, {"cluster", l.LaunchedCluster}} {
		ch <- prometheus.MustNewConstMetric(c.launched, counter, float64(x.n), x.level)
	}
	fresh := 0.0
	if l.PricesFresh {
		fresh = 1
	}
	ch <- prometheus.MustNewConstMetric(c.relaxed, gauge, float64(l.Relaxing))
	ch <- prometheus.MustNewConstMetric(c.version, gauge, float64(l.PricesVersion))
	ch <- prometheus.MustNewConstMetric(c.fresh, gauge, fresh)
	ch <- prometheus.MustNewConstMetric(c.accepted, counter, float64(l.PricesAccepted))
}
