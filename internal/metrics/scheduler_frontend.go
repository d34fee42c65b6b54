package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sparrowfleet/sparrow/scheduler"
)

// schedulerFrontend exposes the scheduler's messages to frontends: those
// delivered, those dropped by reason, the frontends deregistered as
// unreachable, and the links' state (scheduler/frontendlink.go).
type schedulerFrontend struct {
	s                                *scheduler.Scheduler
	delivered, dropped, deregistered *prometheus.Desc
	apps, inflight, waiting          *prometheus.Desc
	links, down                      *prometheus.Desc
}

func newSchedulerFrontend(s *scheduler.Scheduler) *schedulerFrontend {
	return &schedulerFrontend{
		s: s,
		delivered: prometheus.NewDesc("sparrow_scheduler_frontend_messages_delivered_total",
			"Task messages a frontend accepted.", nil, nil),
		dropped: prometheus.NewDesc("sparrow_scheduler_frontend_messages_dropped_total",
			"Task messages not delivered, by reason: failed (the call was made and failed), unreachable (not sent: the frontend is down and no probe was due, or it was deregistered), inflight (no in-flight slot freed within the call timeout, see --frontend-max-inflight), no_frontend (no frontend registered for the app).",
			[]string{"reason"}, nil),
		deregistered: prometheus.NewDesc("sparrow_scheduler_frontends_deregistered_total",
			"Frontend addresses whose apps were deregistered after --frontend-dead-after unreachable.", nil, nil),
		apps: prometheus.NewDesc("sparrow_scheduler_frontend_apps",
			"Apps with a registered frontend (at most 65,536).", nil, nil),
		inflight: prometheus.NewDesc("sparrow_scheduler_frontend_messages_inflight",
			"Task messages being delivered to frontends now.", nil, nil),
		waiting: prometheus.NewDesc("sparrow_scheduler_frontend_messages_waiting",
			"Task messages waiting for an in-flight slot to their frontend.", nil, nil),
		links: prometheus.NewDesc("sparrow_scheduler_frontend_links",
			"Frontend links kept: with messages in flight, down, or with drops not yet logged.", nil, nil),
		down: prometheus.NewDesc("sparrow_scheduler_frontends_down",
			"Frontends whose last delivery failed: their messages are dropped but for one probe per backoff.", nil, nil),
	}
}

func (c *schedulerFrontend) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.delivered, c.dropped, c.deregistered, c.apps, c.inflight, c.waiting, c.links, c.down} {
		ch <- d
	}
}

func (c *schedulerFrontend) Collect(ch chan<- prometheus.Metric) {
	f := c.s.Stats().Frontend
	ch <- prometheus.MustNewConstMetric(c.delivered, counter, float64(f.Delivered))
	for _, d := range []struct {
		reason string
		n      uint64
	}{
		{"failed", f.Failed}, {"unreachable", f.DroppedUnreachable}, {"inflight", f.DroppedInflight}, {"no_frontend", f.DroppedNoFrontend},
	} {
		ch <- prometheus.MustNewConstMetric(c.dropped, counter, float64(d.n), d.reason)
	}
	ch <- prometheus.MustNewConstMetric(c.deregistered, counter, float64(f.Deregistered))
	ch <- prometheus.MustNewConstMetric(c.apps, gauge, float64(f.Apps))
	ch <- prometheus.MustNewConstMetric(c.inflight, gauge, float64(f.Inflight))
	ch <- prometheus.MustNewConstMetric(c.waiting, gauge, float64(f.Waiting))
	ch <- prometheus.MustNewConstMetric(c.links, gauge, float64(f.Links))
	ch <- prometheus.MustNewConstMetric(c.down, gauge, float64(f.Down))
}
