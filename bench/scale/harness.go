package scale

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/sparrowfleet/sparrow/bench/fleet"
	"github.com/sparrowfleet/sparrow/client"
)

// maxPerProcess is how many node monitors one process hosts when the
// number of processes is left to the harness: about two thirds of what a
// 20,000 file descriptor limit holds, so that a slice starts well within it.
const maxPerProcess = 200

// processesFor is how many processes host n node monitors: procs if set
// (at most one per node monitor), else enough that none holds more than
// maxPerProcess.
func processesFor(n, procs int) int {
	if procs > 0 {
		return min(procs, n)
	}
	return max(1, (n+maxPerProcess-1)/maxPerProcess)
}

// splitSlices cuts n node monitors into k contiguous slices whose sizes
// differ by at most one, in order.
func splitSlices(n, k int) []SliceSpec {
	out := make([]SliceSpec, 0, k)
	first := 0
	for i := 0; i < k; i++ {
		count := n / k
		if i < n%k {
			count++
		}
		out = append(out, SliceSpec{First: first, Count: count})
		first += count
	}
	return out
}

// largestSlice is the most node monitors any one process hosts for a
// fleet of n in procs processes (Config.Procs).
func largestSlice(n, procs int) int {
	return splitSlices(n, processesFor(n, procs))[0].Count
}

// startEvery is how far apart each of procs processes starts its node
// monitors for the fleet to start rate of them per second (0: no pacing).
func startEvery(rate float64, procs int) time.Duration {
	if rate <= 0 {
		return 0
	}
	return time.Duration(float64(procs) / rate * float64(time.Second))
}

// fleetUnderTest is the fleet a point measures: the schedulers in this
// process, the node monitors here too or in child processes.
type fleetUnderTest struct {
	*fleet.Fleet
	counter  *GossipCounter
	children []*childProc
}

// startFleet starts the schedulers and n node monitors, in this process
// or across cfg.Procs children, and waits until the fleet has formed.
// StartedAt is when the last node monitor had started.
func startFleet(ctx context.Context, cfg Config, n int, counter *GossipCounter) (*fleetUnderTest, error) {
	fc := fleet.Config{
		Schedulers: cfg.Schedulers, NodeMonitors: n, Slots: cfg.Slots,
		GossipProfile: cfg.GossipProfile, HTTP: true, Log: cfg.Log,
		Progress:   func(started, of int) { cfg.say("%d of %d node monitors started", started, of) },
		StartEvery: startEvery(cfg.StartRate, 1),
	}
	procs := processesFor(n, cfg.Procs)
	if procs == 1 {
		f, err := fleet.Start(ctx, fc)
		if err != nil {
			return nil, err
		}
		return &fleetUnderTest{Fleet: f, counter: counter}, nil
	}
	if cfg.ChildCommand == nil {
		return nil, fmt.Errorf("%d processes: no command to start a child process", procs)
	}
	fc.NodeMonitors, fc.RemoteNodeMonitors = 0, n
	f, err := fleet.Launch(ctx, fc)
	if err != nil {
		return nil, err
	}
	u := &fleetUnderTest{Fleet: f, counter: counter}
	if err := u.startChildren(ctx, cfg, splitSlices(n, procs)); err != nil {
		u.Close()
		return nil, err
	}
	if err := f.WaitReady(ctx); err != nil {
		u.Close()
		return nil, err
	}
	return u, nil
}

// startChildren spawns a child per slice and starts the slices at once.
func (u *fleetUnderTest) startChildren(ctx context.Context, cfg Config, plan []SliceSpec) error {
	hooks := func(name string) childHooks {
		return childHooks{
			progress: func(started, of int) { cfg.say("%s: %d of %d node monitors started", name, started, of) },
			launch: func(l Launch) {
				u.RecordLaunch(l.Node, client.LaunchedTask{Ref: client.TaskRef{RequestID: l.RequestID, TaskID: l.TaskID}}, time.Unix(0, l.AtUnixNano))
			},
		}
	}
	for k, sl := range plan {
		name := fmt.Sprintf("child %d (node monitors %d-%d)", k, sl.First, sl.First+sl.Count-1)
		c, err := spawnChild(name, cfg.ChildCommand, hooks(name))
		if err != nil {
			return err
		}
		c.slice = sl
		u.children = append(u.children, c)
	}
	cfg.say("starting %d child processes", len(plan))
	var wg sync.WaitGroup
	errs := make([]error, len(plan))
	var last time.Time
	var mu sync.Mutex
	for k, sl := range plan {
		sl.Slots, sl.Apps, sl.Join, sl.GossipProfile, sl.HTTP = cfg.Slots, u.Apps(), u.Seeds(), cfg.GossipProfile, true
		sl.StartEvery = startEvery(cfg.StartRate, len(plan))
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[k] = u.children[k].call(ctx, Command{Op: opStart, Slice: &sl}, evReady)
			mu.Lock()
			if now := time.Now(); now.After(last) {
				last = now
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	u.StartedAt = last
	return errors.Join(errs...)
}

// usage is the gossip every member has sent so far and the CPU time of
// every process of the fleet.
func (u *fleetUnderTest) usage(ctx context.Context) (GossipTotals, time.Duration, error) {
	g, cpu := u.counter.Totals(), processCPU()
	type reading struct {
		g   GossipTotals
		cpu time.Duration
		err error
	}
	rs := make([]reading, len(u.children))
	var wg sync.WaitGroup
	for k, c := range u.children {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rs[k].g, rs[k].cpu, rs[k].err = c.counters(ctx)
		}()
	}
	wg.Wait()
	for _, r := range rs {
		if r.err != nil {
			return GossipTotals{}, 0, r.err
		}
		g, cpu = g.Add(r.g), cpu+r.cpu
	}
	return g, cpu, nil
}

// profileChildren starts a CPU profile in every child, child k's beside
// path as its name with "-child-k" before the extension, or, with path
// empty, stops and writes them.
func (u *fleetUnderTest) profileChildren(ctx context.Context, path string) error {
	if path != "" {
		abs, err := filepath.Abs(path)
		if err != nil {
			return err
		}
		path = abs
	}
	var errs []error
	for k, c := range u.children {
		p := ""
		if path != "" {
			p = childProfilePath(path, k)
		}
		if _, err := c.call(ctx, Command{Op: opProfile, Profile: p}, evProfiled); err != nil {
			errs = append(errs, fmt.Errorf("child %d profile: %w", k, err))
		}
	}
	return errors.Join(errs...)
}

// childProfilePath is where child k writes the profile named path.
func childProfilePath(path string, k int) string {
	ext := filepath.Ext(path)
	return fmt.Sprintf("%s-child-%d%s", strings.TrimSuffix(path, ext), k, ext)
}

// killLast crashes the fleet's last node monitor (no leave) and names it.
func (u *fleetUnderTest) killLast(ctx context.Context) (Victim, error) {
	if len(u.children) == 0 {
		i := len(u.NodeMonitors) - 1
		d := u.NodeMonitors[i]
		v := Victim{Name: d.Cluster.Name(), Addr: d.InternalAddr()}
		u.KillNodeMonitor(i)
		return v, nil
	}
	c := u.children[len(u.children)-1]
	e, err := c.call(ctx, Command{Op: opKill, Kill: c.slice.Count - 1}, evKilled)
	if err != nil {
		return Victim{}, err
	}
	return *e.Victim, nil
}

// Close stops the children (their node monitors leave), then the
// schedulers.
func (u *fleetUnderTest) Close() error {
	errs := make([]error, len(u.children)+1)
	var wg sync.WaitGroup
	for k, c := range u.children {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[k] = c.stop()
		}()
	}
	wg.Wait()
	errs[len(u.children)] = u.Fleet.Close()
	return errors.Join(errs...)
}
