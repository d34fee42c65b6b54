package scheduler

import (
	"context"
	"fmt"
	"math"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/sparrowfleet/sparrow/internal/metrics"
)

// TestCollector reads a Stats snapshot through a pedantic registry (every
// series described and consistent) and checks each kind of series
// against the field it reports, one scrape reading the snapshot once.
func TestCollector(t *testing.T) {
	st := Stats{JobsSubmitted: 4, TasksLaunched: 9, ActiveRequests: 2,
		LaunchDelay:     metrics.Distribution{Count: 9, Sum: 0.05, Buckets: []uint64{4, 9}},
		ResponseSeconds: metrics.Distribution{Count: 3, Sum: 7.5, Buckets: []uint64{0, 0, 0, 0, 0, 0, 1}},
		Hold: HoldStats{Held: 1, Refused: 3, AdmissionRefused: 2,
			Seconds: metrics.Distribution{Count: 2, Sum: 0.3, Buckets: []uint64{0, 1, 2}}},
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
	bounds := map[string][]float64{
		"sparrow_scheduler_hold_seconds":             HoldBuckets,
		"sparrow_scheduler_scheduling_delay_seconds": DelayBuckets,
		"sparrow_scheduler_task_response_seconds":    ResponseBuckets,
	}
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
				if want := len(bounds[key]); len(h.GetBucket()) != want {
					t.Errorf("%s has %d buckets, want %d", key, len(h.GetBucket()), want)
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
		{"sparrow_scheduler_scheduling_delay_seconds", 9},
		{"sparrow_scheduler_scheduling_delay_seconds_bucket{0.001}", 4},
		{"sparrow_scheduler_scheduling_delay_seconds_bucket{0.0025}", 9},
		{"sparrow_scheduler_scheduling_delay_seconds_bucket{1800}", 0},
		{"sparrow_scheduler_task_response_seconds", 3},
		{"sparrow_scheduler_task_response_seconds_bucket{1}", 1},
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

// TestScrapeHasSchedulingDelayQuantiles scrapes a scheduler's collector
// through the Prometheus HTTP handler, in memory, after tasks launched
// 30 ms (fake clock) after their job's submission and finished 2 s
// after it, and checks that the delay and response histograms carry
// _bucket series with le labels from which histogram_quantile(0.99, ...)
// finds the bucket holding those times.
func TestScrapeHasSchedulingDelayQuantiles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 3, Config{NoOffers: true})
		if err := c.s.SubmitJob(context.Background(), job("r", 1, freeTasks(3)...)); err != nil {
			t.Fatal(err)
		}
		c.waitAccepted(t, "r", 3)
		// The fake clock moves only when every goroutine of the bubble
		// waits: the sleeps set the delays measured, they wait for nothing.
		time.Sleep(30 * time.Millisecond)
		launched := c.launchAll(t, "r")
		time.Sleep(2*time.Second - 30*time.Millisecond)
		for nm, ids := range launched {
			if err := c.s.TasksFinished(context.Background(), nm.hp, ids); err != nil {
				t.Fatal(err)
			}
		}

		reg := prometheus.NewPedanticRegistry()
		reg.MustRegister(Collector(c.s.Stats))
		rec := httptest.NewRecorder()
		promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		body := rec.Body.String()
		if !strings.Contains(body, `sparrow_scheduler_scheduling_delay_seconds_bucket{le="0.05"} 3`) {
			t.Errorf("scrape has no le-labelled bucket counting the 3 launches at 30 ms:\n%s", grepLines(body, "scheduling_delay"))
		}
		parser := expfmt.NewTextParser(model.UTF8Validation)
		mfs, err := parser.TextToMetricFamilies(strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name   string
			lo, hi float64 // the bucket the times measured fall in
		}{
			{"sparrow_scheduler_scheduling_delay_seconds", 0.025, 0.05},
			{"sparrow_scheduler_task_response_seconds", 1, 2.5},
		} {
			mf := mfs[tc.name]
			if mf == nil || mf.GetType() != dto.MetricType_HISTOGRAM || len(mf.GetMetric()) != 1 {
				t.Fatalf("%s: scraped %v, want one histogram", tc.name, mf)
			}
			h := mf.GetMetric()[0].GetHistogram()
			if h.GetSampleCount() != 3 {
				t.Errorf("%s counts %d tasks, want 3", tc.name, h.GetSampleCount())
			}
			q := histogramQuantile(0.99, h.GetBucket(), h.GetSampleCount())
			if !(q > tc.lo && q <= tc.hi) {
				t.Errorf("%s: p99 %g, want in (%g, %g]", tc.name, q, tc.lo, tc.hi)
			}
		}
	})
}

// histogramQuantile is PromQL's histogram_quantile over one scrape's
// cumulative buckets: the rank's bucket, interpolated linearly within it.
func histogramQuantile(q float64, buckets []*dto.Bucket, count uint64) float64 {
	rank := q * float64(count)
	lower, below := 0.0, 0.0
	for _, b := range buckets {
		n := float64(b.GetCumulativeCount())
		if n >= rank {
			return lower + (b.GetUpperBound()-lower)*(rank-below)/(n-below)
		}
		lower, below = b.GetUpperBound(), n
	}
	return math.Inf(1)
}

func grepLines(s, substr string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
