package integration

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/bench/fleet"
	"github.com/sparrowfleet/sparrow/client"
	"github.com/sparrowfleet/sparrow/internal/daemon"
	"github.com/sparrowfleet/sparrow/internal/httpapi"
	"github.com/sparrowfleet/sparrow/internal/metrics"
	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/nodemonitor"
	"github.com/sparrowfleet/sparrow/scheduler"
)

// TestMetricsReflectAFleet runs a small job through an in-process fleet
// and scrapes both daemons' metrics endpoints.
func TestMetricsReflectAFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a fleet")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f, err := fleet.Start(ctx, fleet.Config{Schedulers: 1, NodeMonitors: 1, Slots: 2, Apps: []string{"app"}, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sm, err := httpapi.Serve(httpapi.Config{Addr: "127.0.0.1:0", Collectors: append(daemon.MemberCollectors(f.Schedulers[0].Cluster),
		scheduler.Collector(f.Schedulers[0].Stats), metrics.RPCCollector(func() rpc.Stats { return f.Schedulers[0].RPCStats() }),
		metrics.CallsCollector(f.Schedulers[0].RPCCalls),
	)})
	if err != nil {
		t.Fatal(err)
	}
	defer sm.Close()
	nm, err := httpapi.Serve(httpapi.Config{Addr: "127.0.0.1:0", Collectors: []prometheus.Collector{
		nodemonitor.Collector(f.NodeMonitors[0].State), metrics.CallsCollector(f.NodeMonitors[0].RPCCalls),
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer nm.Close()

	done := make(chan struct{}, 3)
	fe, err := client.NewFrontend(ctx, client.FrontendConfig{
		App: "app", Schedulers: f.SchedulerAddrs(), Listen: "127.0.0.1:0", Timeout: 5 * time.Second,
		OnMessage: func(client.Message) { done <- struct{}{} }, Log: zerolog.Nop(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer fe.Close()
	job := client.Job{Tasks: []client.Task{{ID: "a"}, {ID: "b"}, {ID: "c"}}}
	if _, err := fe.Submit(ctx, job); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		select {
		case <-done:
		case <-ctx.Done():
			t.Fatal("job did not finish")
		}
	}
	for _, tc := range []struct {
		addr string
		want []string
	}{
		{sm.Addr(), []string{"sparrow_scheduler_jobs_submitted_total 1", `sparrow_scheduler_tasks_widened_total{cause="delay",level="rack"} 0`, "sparrow_scheduler_tasks_launched_total 3", "sparrow_rpc_connections_open", "go_goroutines",
			`sparrow_scheduler_scheduling_delay_seconds_bucket{le="1800"} 3`, "sparrow_scheduler_scheduling_delay_seconds_count 3",
			`sparrow_build_info{goversion=`, `role="scheduler"`, `sparrow_membership_members{role="nodemonitor"} 1`,
			`sparrow_rpc_calls_served_total{method="submitJob"} 1`, `sparrow_rpc_calls_made_total{method=`}},
		{nm.Addr(), []string{"sparrow_nodemonitor_slots 2", "sparrow_nodemonitor_launches_total 3", `sparrow_nodemonitor_tasks_ended_total{outcome="finished"} 3`,
			`sparrow_rpc_calls_served_total{method=`, `sparrow_rpc_calls_made_total{method=`}},
	} {
		resp, err := http.Get("http://" + tc.addr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, w := range tc.want {
			if !strings.Contains(string(body), w) {
				t.Errorf("metrics at %s lack %q", tc.addr, w)
			}
		}
	}
}
