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
	"github.com/sparrowfleet/sparrow/nodemonitor"
)

// TestCoordinatorGracefulHandover stops the active coordinator as SIGTERM
// does (Close: it leaves gossip) while node monitors follow its guidance:
// the standby takes over, and no node monitor goes without guidance for
// its fallback delay (Stale), so none falls back to local weights during
// the handover.
func TestCoordinatorGracefulHandover(t *testing.T) {
	const period = 200 * time.Millisecond
	const stale = 5 * period
	led := newLedger()
	f := startFleet(t, fleet.Config{
		Schedulers: 1, NodeMonitors: 3, Slots: 2, Apps: []string{"app"}, Queue: "choosy",
		Coordination: nodemonitor.CoordinationConfig{ReportEvery: period, Stale: stale},
		Run:          echoTask(100 * time.Millisecond), OnLaunch: led.launched,
	})
	seed := f.Schedulers[0].Cluster.Addr()
	a := startCoordinator(t, "coord-a", "127.0.6.1", seed, period)
	b := startCoordinator(t, "coord-b", "127.0.6.2", seed, period)
	aClosed := false
	t.Cleanup(func() {
		if !aClosed {
			a.Close()
		}
		b.Close()
	})
	fe := ledgerFrontend(t, f, led, "127.0.6.20")

	// One user keeps a task running on the fleet until stopped, so that
	// node monitors have work to report.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sub := newSubmitter(t, ctx, fe, 50*time.Millisecond)
	sub.run(2000, func(j int) client.Job { return newJob(fmt.Sprintf("h-%d", j), 1) })

	allGuided := func() bool {
		for _, nm := range f.NodeMonitors {
			if _, ok := nm.GuidanceVersion(); !ok {
				return false
			}
		}
		return true
	}
	waitFor(t, "every node monitor to follow coordinator-a", 20*time.Second, allGuided)
	if !a.Stats().Active || b.Stats().Active {
		t.Fatalf("active: a %v, b %v; want a only", a.Stats().Active, b.Stats().Active)
	}
	versionA := make([]uint64, len(f.NodeMonitors))
	for i, nm := range f.NodeMonitors {
		versionA[i], _ = nm.GuidanceVersion()
	}

	stopped := time.Now()
	if err := a.Close(); err != nil {
		t.Fatalf("close coordinator-a: %v", err)
	}
	aClosed = true
	// Until every node monitor follows coordinator-b, none may be
	// without guidance: that would be a fall back to local weights.
	fellBack := -1
	waitFor(t, "node monitors to follow coordinator-b", 20*time.Second, func() bool {
		following := 0
		for i, nm := range f.NodeMonitors {
			v, ok := nm.GuidanceVersion()
			if !ok && fellBack < 0 {
				fellBack = i
			}
			if ok && v > versionA[i] && b.Stats().Active {
				following++
			}
		}
		return fellBack >= 0 || following == len(f.NodeMonitors)
	})
	if fellBack >= 0 {
		t.Fatalf("node monitor %d fell back to local weights %v after the active coordinator left (fallback delay %v)",
			fellBack, time.Since(stopped).Round(time.Millisecond), stale)
	}
	t.Logf("every node monitor followed the standby %v after the active coordinator was stopped (fallback delay %v)",
		time.Since(stopped).Round(time.Millisecond), stale)

	sub.stop()
	want := sub.wait()
	waitFor(t, "every task's message", 60*time.Second, func() bool {
		_, m := led.counts()
		return m == want
	})
	led.checkOnce(t, want)
}

// startCoordinator starts a coordinator named name, gossiping on host,
// joined to seed, publishing every period.
func startCoordinator(t *testing.T, name, host, seed string, period time.Duration) *coordinator.Daemon {
	t.Helper()
	d, err := coordinator.Start(coordinator.Config{
		Name: name, Gossip: host + ":0", Join: []string{seed}, GossipProfile: "local",
		Period: period, Log: testLogger(t),
	})
	if err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	return d
}

// submitter keeps submitting one-at-a-time jobs through a frontend, each
// loop one job every pace, until stopped or its jobs are all submitted.
// A submission error fails the test and ends that loop.
type submitter struct {
	t    *testing.T
	ctx  context.Context
	fe   *client.Frontend
	pace time.Duration
	done chan struct{}
	once sync.Once
	wg   sync.WaitGroup
	mu   sync.Mutex
	n    int // jobs submitted
}

func newSubmitter(t *testing.T, ctx context.Context, fe *client.Frontend, pace time.Duration) *submitter {
	s := &submitter{t: t, ctx: ctx, fe: fe, pace: pace, done: make(chan struct{})}
	t.Cleanup(s.stop)
	return s
}

// run starts a loop submitting job(0) … job(jobs-1).
func (s *submitter) run(jobs int, job func(j int) client.Job) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		tick := time.NewTicker(s.pace)
		defer tick.Stop()
		for j := range jobs {
			select {
			case <-s.done:
				return
			case <-tick.C:
			}
			jb := job(j)
			if _, err := s.fe.Submit(s.ctx, jb); err != nil {
				s.t.Errorf("submit %s: %v", jb.RequestID, err)
				return
			}
			s.mu.Lock()
			s.n++
			s.mu.Unlock()
		}
	}()
}

// stop ends every loop; it may be called more than once.
func (s *submitter) stop() { s.once.Do(func() { close(s.done) }) }

// total returns how many jobs were submitted so far.
func (s *submitter) total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// wait waits for every loop to end and returns the jobs submitted.
func (s *submitter) wait() int {
	s.wg.Wait()
	return s.total()
}
