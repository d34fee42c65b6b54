package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/bench/fleet"
	"github.com/sparrowfleet/sparrow/internal/rpc"
)

// TestClientsRecoverFromServerIdleClose: an operator turns on the opt-in
// --idle-timeout on the daemons only. The client library's executors and
// frontends, which do not know it, find their idle connections closed by
// the servers; their next calls reconnect, every job completes and no task
// is launched twice.
func TestClientsRecoverFromServerIdleClose(t *testing.T) {
	const (
		idle        = 500 * time.Millisecond
		jobsPerWave = 20
		tasksPerJob = 5
	)
	led := newLedger()
	f := startFleet(t, fleet.Config{
		Schedulers: 1, NodeMonitors: 3, Slots: 2, Apps: []string{"app"},
		Run: echoTask(time.Millisecond), OnLaunch: led.launched,
		RPC: rpc.Config{IdleTimeout: idle},
	})
	ctx := context.Background()
	fe := ledgerFrontend(t, f, led, "127.0.3.9")

	idleClosed := func() int64 {
		var n int64
		for _, s := range f.Schedulers {
			n += s.RPCStats().IdleClosed
		}
		for _, nm := range f.NodeMonitors {
			n += nm.RPCStats().IdleClosed
		}
		return n
	}
	for wave := range 3 {
		before := idleClosed()
		for j := range jobsPerWave {
			if _, err := fe.Submit(ctx, newJob(fmt.Sprintf("w%d-%d", wave, j), tasksPerJob)); err != nil {
				t.Fatalf("wave %d job %d: %v", wave, j, err)
			}
		}
		want := (wave + 1) * jobsPerWave * tasksPerJob
		waitFor(t, fmt.Sprintf("wave %d's messages", wave), 60*time.Second, func() bool {
			_, m := led.counts()
			return m == want
		})
		// Every node monitor's executor connection goes quiet and is
		// closed by the server before the next wave.
		waitFor(t, "servers to close the idle connections", 30*time.Second, func() bool {
			for _, nm := range f.NodeMonitors {
				if nm.RPCStats().Open != 0 {
					return false
				}
			}
			return idleClosed() > before
		})
	}

	led.checkOnce(t, 3*jobsPerWave*tasksPerJob)
	for _, nm := range f.NodeMonitors {
		if st := nm.State(); st.Free != st.Slots {
			t.Errorf("node monitor slots %d free of %d after all waves", st.Free, st.Slots)
		}
	}
	t.Logf("connections closed idle by the servers: %d", idleClosed())
}
