package metrics

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/scheduler"
)

// TestSchedulerFrontendMetrics: the frontend message series are registered
// with the scheduler's others, one dropped series per reason, and count a
// message for an app without a frontend.
func TestSchedulerFrontendMetrics(t *testing.T) {
	s, err := scheduler.New(scheduler.Config{Address: "127.0.0.1:20503", Log: zerolog.Nop()}, noNodes{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.SendFrontendMessage(context.Background(), "nobody", nil, 0, nil); err == nil {
		t.Fatal("a message for an app without a frontend was accepted")
	}
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
		if mf.GetName() != "sparrow_scheduler_frontend_messages_dropped_total" {
			continue
		}
		reasons := map[string]float64{}
		for _, m := range mf.GetMetric() {
			reasons[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
		}
		if len(reasons) != 4 || reasons["no_frontend"] != 1 || reasons["failed"] != 0 {
			t.Errorf("dropped by reason %v, want 4 reasons and no_frontend 1", reasons)
		}
	}
	for _, name := range []string{
		"sparrow_scheduler_frontend_messages_delivered_total", "sparrow_scheduler_frontend_messages_dropped_total",
		"sparrow_scheduler_frontends_deregistered_total", "sparrow_scheduler_frontend_apps", "sparrow_scheduler_frontend_messages_inflight",
		"sparrow_scheduler_frontend_messages_waiting", "sparrow_scheduler_frontend_links", "sparrow_scheduler_frontends_down",
	} {
		if !got[name] {
			t.Errorf("metric %s not exported", name)
		}
	}
}
