package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sparrowfleet/sparrow/scheduler"
)

// schedulerHold exposes the submitJob calls a scheduler holds while its
// node monitors refuse reservations as full (scheduler/hold.go), and the
// jobs it refuses as saturated past the hold's bounds.
type schedulerHold struct {
	s                              *scheduler.Scheduler
	held, holds, refused, released *prometheus.Desc
	rounds, seconds                *prometheus.Desc
	admHolds, admRefused, reports  *prometheus.Desc
}

func newSchedulerHold(s *scheduler.Scheduler) *schedulerHold {
	return &schedulerHold{
		s: s,
		held: prometheus.NewDesc("sparrow_scheduler_held_calls",
			"submitJob calls held now: node monitors refused their reservations as full and they are being placed again.", nil, nil),
		holds: prometheus.NewDesc("sparrow_scheduler_holds_total",
			"submitJob calls that were held on a saturated fleet.", nil, nil),
		refused: prometheus.NewDesc("sparrow_scheduler_saturation_refusals_total",
			"Jobs refused as saturated past --max-held-jobs or --max-hold, with nothing launched.", nil, nil),
		released: prometheus.NewDesc("sparrow_scheduler_hold_released_total",
			"Partly launched jobs whose held call was answered at a bound, their unplaced remainder handed to re-placement.", nil, nil),
		rounds: prometheus.NewDesc("sparrow_scheduler_hold_rounds_total",
			"Rounds of re-placing reservations refused as full for held calls.", nil, nil),
		admHolds: prometheus.NewDesc("sparrow_scheduler_admission_holds_total",
			"Jobs whose expected queue wait exceeded --max-queue-wait at submission: held before placement, or refused at once past --max-held-jobs.", nil, nil),
		admRefused: prometheus.NewDesc("sparrow_scheduler_admission_refusals_total",
			"Jobs refused as saturated because their expected queue wait stayed above --max-queue-wait (also counted in sparrow_scheduler_saturation_refusals_total).", nil, nil),
		reports: prometheus.NewDesc("sparrow_scheduler_load_reports_total",
			"Node monitors' load reports taken for admission by expected queue wait (only with --max-queue-wait).", nil, nil),
		seconds: prometheus.NewDesc("sparrow_scheduler_hold_seconds",
			"How long held submitJob calls were held, from submission to answer.", nil, nil),
	}
}

func (c *schedulerHold) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.held, c.holds, c.refused, c.released, c.rounds, c.seconds, c.admHolds, c.admRefused, c.reports} {
		ch <- d
	}
}

func (c *schedulerHold) Collect(ch chan<- prometheus.Metric) {
	h := c.s.Stats().Hold
	ch <- prometheus.MustNewConstMetric(c.held, gauge, float64(h.Held))
	ch <- prometheus.MustNewConstMetric(c.holds, counter, float64(h.Holds))
	ch <- prometheus.MustNewConstMetric(c.refused, counter, float64(h.Refused))
	ch <- prometheus.MustNewConstMetric(c.released, counter, float64(h.Released))
	ch <- prometheus.MustNewConstMetric(c.rounds, counter, float64(h.Rounds))
	ch <- prometheus.MustNewConstMetric(c.admHolds, counter, float64(h.AdmissionHolds))
	ch <- prometheus.MustNewConstMetric(c.admRefused, counter, float64(h.AdmissionRefused))
	ch <- prometheus.MustNewConstMetric(c.reports, counter, float64(h.LoadReports))
	buckets := make(map[float64]uint64, len(scheduler.HoldBuckets))
	for i, b := range scheduler.HoldBuckets {
		var n uint64
		if i < len(h.Seconds.Buckets) {
			n = h.Seconds.Buckets[i]
		}
		buckets[b] = n
	}
	ch <- prometheus.MustNewConstHistogram(c.seconds, h.Seconds.Count, h.Seconds.Sum, buckets)
}
