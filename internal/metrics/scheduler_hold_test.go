package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/core/placement"
	"github.com/sparrowfleet/sparrow/scheduler"
)

type noNodes struct{}

func (noNodes) Candidates(string) []placement.Node { return nil }
func (noNodes) Node(string) (placement.Node, bool) { return placement.Node{}, false }

// TestSchedulerHoldMetrics: the hold series are registered with the
// scheduler's others, with the histogram's buckets, before any hold.
func TestSchedulerHoldMetrics(t *testing.T) {
	s, err := scheduler.New(scheduler.Config{Address: "127.0.0.1:20503", MaxHeldJobs: 8, Log: zerolog.Nop()}, noNodes{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(SchedulerCollector(s)); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, mf := range mfs {
		got[mf.GetName()] = true
		if mf.GetName() == "sparrow_scheduler_hold_seconds" {
			h := mf.GetMetric()[0].GetHistogram()
			if len(h.GetBucket()) != len(scheduler.HoldBuckets) || h.GetSampleCount() != 0 {
				t.Errorf("hold histogram %v", h)
			}
		}
	}
	for _, name := range []string{
		"sparrow_scheduler_held_calls", "sparrow_scheduler_holds_total", "sparrow_scheduler_saturation_refusals_total",
		"sparrow_scheduler_hold_released_total", "sparrow_scheduler_hold_rounds_total", "sparrow_scheduler_hold_seconds",
		"sparrow_scheduler_admission_holds_total", "sparrow_scheduler_admission_refusals_total", "sparrow_scheduler_load_reports_total",
	} {
		if !got[name] {
			t.Errorf("metric %s not exported", name)
		}
	}
}
