package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/bench/fleet"
)

// TestOffersOverThrift: with offers on (the default), two schedulers place jobs on real
// node monitors over Thrift. Idle node monitors take offered tasks at
// once, the rest go by getTask; every task runs exactly once, every
// message arrives, and every slot is free at the end.
func TestOffersOverThrift(t *testing.T) {
	const jobs, tasks = 40, 4
	led := newLedger()
	f := startFleet(t, fleet.Config{
		Schedulers: 2, NodeMonitors: 4, Slots: 2, Apps: []string{"app"},
		Run: echoTask(2 * time.Millisecond), OnLaunch: led.launched,
	})
	ctx := context.Background()
	fe := ledgerFrontend(t, f, led, "127.0.3.11")
	for j := range jobs {
		if _, err := fe.Submit(ctx, newJob(fmt.Sprintf("offer-%d", j), tasks)); err != nil {
			t.Fatalf("job %d: %v", j, err)
		}
	}
	waitFor(t, "every task's message", 60*time.Second, func() bool {
		_, m := led.counts()
		return m == jobs*tasks
	})
	led.checkOnce(t, jobs*tasks)
	var made, taken uint64
	for _, s := range f.Schedulers {
		st := s.Stats()
		made += st.OffersMade
		taken += st.OffersTaken
	}
	if made == 0 || taken == 0 {
		t.Errorf("offers made %d, taken %d: want some of each", made, taken)
	}
	waitFor(t, "every slot free", 10*time.Second, func() bool {
		for _, nm := range f.NodeMonitors {
			if st := nm.State(); st.Free != st.Slots {
				return false
			}
		}
		return true
	})
	t.Logf("offers made %d, taken %d", made, taken)
}
