package integration

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/bench/fleet"
	"github.com/sparrowfleet/sparrow/client"
	"github.com/sparrowfleet/sparrow/coordinator"
	"github.com/sparrowfleet/sparrow/core/locality"
	"github.com/sparrowfleet/sparrow/internal/membership"
	"github.com/sparrowfleet/sparrow/internal/pricegossip"
	"github.com/sparrowfleet/sparrow/nodemonitor"
)

// TestLocalityPricesReachSchedulers runs six node monitors in two racks,
// one of them hot (a job whose tasks all insist on it queues there), a
// coordinator with locality prices on, and a bare gossip member that
// advertises itself as a scheduler. Over real gossip on loopback, the
// node monitors' reports (rack, queued and running work, task run time)
// reach the coordinator, which solves the flow every period and sends the
// prices to the member directly: it must decode prices that cover every
// node and both racks, with the hot node dearer than its rack.
func TestLocalityPricesReachSchedulers(t *testing.T) {
	const period = 200 * time.Millisecond
	f := startFleet(t, fleet.Config{
		Schedulers: 1, NodeMonitors: 6, Slots: 1, Apps: []string{"app"},
		NodeAttrs: func(i int) map[string]string {
			return map[string]string{"rack": fmt.Sprintf("r%d", 1+i/3)}
		},
		Coordination: nodemonitor.CoordinationConfig{ReportEvery: period, Stale: 10 * period},
		Run:          echoTask(300 * time.Millisecond),
	})
	seed := f.Schedulers[0].Cluster.Addr()

	// The probe: a scheduler member that only decodes prices.
	var mu sync.Mutex
	var last locality.Prices
	var received, malformed int
	probe, err := membership.Start(membership.Config{
		Name: "prices-probe", Bind: "127.0.5.32:0", Seeds: []string{seed}, Profile: "local",
		Meta: membership.Meta{Role: membership.RoleScheduler}, Log: testLogger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { probe.Shutdown() })
	probe.OnMessage(func(b []byte) {
		if !pricegossip.IsPrices(b) {
			return
		}
		p, err := pricegossip.Decode(b)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			malformed++
			return
		}
		if p.Version > last.Version {
			last = p
		}
		received++
	})

	d, err := coordinator.Start(coordinator.Config{
		Name: "coord", Gossip: "127.0.5.31:0", Join: []string{seed}, GossipProfile: "local",
		Period: period, Locality: true, Log: testLogger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })

	// Twelve 300 ms tasks that must run on node monitor 0 (one slot):
	// eleven wait in its queue for seconds while its rack-mates idle.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fe, err := client.NewFrontend(ctx, client.FrontendConfig{
		App: "app", Schedulers: f.SchedulerAddrs(), Listen: "127.0.3.51:0", AdvertiseHost: "127.0.3.51",
		OnMessage: func(client.Message) {}, Log: testLogger(t), Timeout: 10 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fe.Close() })
	hotHost := "127.0.10.1"
	job := newJob("hot", 12)
	job.User = client.User{Name: "alice"}
	for i := range job.Tasks {
		job.Tasks[i].Nodes = []string{hotHost}
	}
	done := make(chan error, 1)
	go func() {
		_, err := fe.Submit(ctx, job)
		done <- err
	}()

	names := make([]string, len(f.NodeMonitors))
	for i, nm := range f.NodeMonitors {
		names[i] = nm.Cluster.Name()
	}
	hot := names[0]
	var seen locality.Prices
	waitFor(t, "prices covering every node monitor and both racks, with the hot node dearer than its rack", 20*time.Second, func() bool {
		mu.Lock()
		p := last
		mu.Unlock()
		for _, n := range names {
			if _, ok := p.Node[n]; !ok {
				return false
			}
		}
		if _, ok := p.Rack["r1"]; !ok {
			return false
		}
		if _, ok := p.Rack["r2"]; !ok {
			return false
		}
		if p.Node[hot] <= p.Rack["r1"] {
			return false
		}
		seen = p
		return true
	})
	t.Logf("prices v%d: nodes %v racks %v cluster %d", seen.Version, seen.Node, seen.Rack, seen.Cluster)
	if gap := seen.Node[hot] - seen.Rack["r1"]; gap > locality.DefaultParams().RackCost() {
		t.Errorf("hot node %d above its rack by %d, over the rack transfer %d", seen.Node[hot], gap, locality.DefaultParams().RackCost())
	}
	if seen.RackPerGB != locality.DefaultParams().RackPerGB || seen.CorePerGB != locality.DefaultParams().CorePerGB {
		t.Errorf("transfer prices %d/%d, want the defaults", seen.RackPerGB, seen.CorePerGB)
	}
	mu.Lock()
	if malformed > 0 {
		t.Errorf("%d malformed prices messages", malformed)
	}
	mu.Unlock()
	st := d.Stats().Locality
	if st.Sent == 0 || st.Nodes != len(names) || st.Bytes == 0 || st.Version == 0 {
		t.Errorf("coordinator locality stats %+v: want sends covering %d nodes", st, len(names))
	}
	if g := d.Guidance().Locality; g == nil || g.Nodes != len(names) || len(g.Racks) != 2 {
		t.Errorf("status locality %+v: want %d nodes in 2 racks", g, len(names))
	}
	// The hot node's 300 ms tasks finish one by one; its reports carry the
	// run time it measured, which the coordinator shows.
	waitFor(t, "the coordinator to see the hot node's measured task run time", 20*time.Second, func() bool {
		g := d.Guidance().Locality
		return g != nil && g.TaskMillis >= 250
	})
	// Early estimates run high: a window that ends mid-task counts the
	// running task's time so far against the tasks finished.
	t.Logf("measured task run time: %d ms (tasks sleep 300 ms)", d.Guidance().Locality.TaskMillis)
	if err := <-done; err != nil {
		t.Fatalf("hot job: %v", err)
	}
}
