package scheduler

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestCollector reads a Stats snapshot through a pedantic registry (every
// series described and consistent) and checks each kind of series
// against the field it reports, one scrape reading the snapshot once.
func TestCollector(t *testing.T) {
	st := Stats{JobsSubmitted: 4, TasksLaunched: 9, ActiveRequests: 2,
		Hold: HoldStats{Held: 1, Refused: 3, AdmissionRefused: 2,
			Seconds: HoldHistogram{Count: 2, Sum: 0.3, Buckets: []uint64{0, 1, 2}}},
		Frontend: FrontendStats{Delivered: 5, DroppedNoFrontend: 1, Down: 1},
		Locality: LocalityStats{WidenedClusterByPrices: 6, LaunchedRack: 7, PricesFresh: true}}
	reads := 0
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(Collector(func() Stats { reads++; return st }))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if reads != 1 {
		t.Errorf("one scrape read the snapshot %d times, want 1", reads)
	}
	// got maps a series, with its label values in the order of the label
	// names as name{v1,v2}, to its value; a
	// histogram to its count, and name_bucket{bound} to each bucket.
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetValue())
			}
			key := mf.GetName()
			if len(labels) > 0 {
				key += "{" + strings.Join(labels, ",") + "}"
			}
			got[key] = m.GetCounter().GetValue() + m.GetGauge().GetValue()
			if h := m.GetHistogram(); h != nil {
				got[key] = float64(h.GetSampleCount())
				if len(h.GetBucket()) != len(HoldBuckets) {
					t.Errorf("%s has %d buckets, want %d", key, len(h.GetBucket()), len(HoldBuckets))
				}
				for _, b := range h.GetBucket() {
					got[fmt.Sprintf("%s_bucket{%g}", key, b.GetUpperBound())] = float64(b.GetCumulativeCount())
				}
			}
		}
	}
	for _, tc := range []struct {
		series string
		want   float64
	}{
		{"sparrow_scheduler_jobs_submitted_total", 4},
		{"sparrow_scheduler_tasks_launched_total", 9},
		{"sparrow_scheduler_active_requests", 2},
		{"sparrow_scheduler_held_calls", 1},
		{"sparrow_scheduler_saturation_refusals_total", 3},
		{"sparrow_scheduler_admission_refusals_total", 2},
		{"sparrow_scheduler_hold_seconds", 2},
		{"sparrow_scheduler_hold_seconds_bucket{0.1}", 2},
		{"sparrow_scheduler_hold_seconds_bucket{60}", 0},
		{"sparrow_scheduler_frontend_messages_delivered_total", 5},
		{"sparrow_scheduler_frontend_messages_dropped_total{no_frontend}", 1},
		{"sparrow_scheduler_frontend_messages_dropped_total{failed}", 0},
		{"sparrow_scheduler_frontends_down", 1},
		{"sparrow_scheduler_tasks_widened_total{prices,cluster}", 6},
		{"sparrow_scheduler_tasks_widened_total{delay,rack}", 0},
		{"sparrow_scheduler_preferred_tasks_launched_total{rack}", 7},
		{"sparrow_scheduler_locality_prices_fresh", 1},
	} {
		if v, ok := got[tc.series]; !ok || v != tc.want {
			t.Errorf("%s = %v (exported: %v), want %v", tc.series, v, ok, tc.want)
		}
	}
}
