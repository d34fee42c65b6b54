package fleet

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/client"
	"github.com/sparrowfleet/sparrow/core/placement"
	"github.com/sparrowfleet/sparrow/core/queue"
	"github.com/sparrowfleet/sparrow/core/shortjobs"
	"github.com/sparrowfleet/sparrow/internal/dashboard"
	"github.com/sparrowfleet/sparrow/internal/httpapi"
	"github.com/sparrowfleet/sparrow/internal/membership"
	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/nodemonitor"
	"github.com/sparrowfleet/sparrow/scheduler"
)

// Config shapes a fleet.
type Config struct {
	Schedulers   int
	NodeMonitors int
	Slots        int
	// Apps are the apps every node monitor hosts an executor for. Default:
	// one per scheduler ("app-0", "app-1", ...), because a scheduler routes
	// an app's messages to one frontend and each driver frontend has its
	// own scheduler.
	Apps []string
	// NodeApps, if set, picks the subset of Apps that node monitor i hosts
	// executors for; by default every node hosts every app.
	NodeApps func(i int) []string
	// NodeAttrs, if set, gives node monitor i's advertised attributes.
	NodeAttrs func(i int) map[string]string
	// Weights are the fair-share weights of users on every node monitor
	// (with Queue "fair" or "priority"); others get weight 1.
	Weights map[string]float64
	// Run executes tasks; default SleepTask.
	Run client.TaskFunc
	// OnLaunch sees every launch, on the executor's RPC goroutine.
	OnLaunch   func(node int, t client.LaunchedTask)
	ProbeRatio float64
	// ConstrainedProbeRatio is the schedulers' default d for constrained
	// jobs (0: ProbeRatio).
	ConstrainedProbeRatio float64
	NoCancel              bool
	// NoOffers turns off the schedulers' task offers
	// (scheduler.Config.NoOffers).
	NoOffers bool
	// SteerAfter is the schedulers' scheduler.Config.SteerAfter.
	SteerAfter time.Duration
	// Queue is the node monitors' discipline name (default "fifo").
	Queue string
	// ShortJobs runs the long-task-aware policy on every scheduler and
	// node monitor (scheduler.Config.ShortJobs, nodemonitor's
	// DaemonConfig.ShortJobs); nil: off.
	ShortJobs *shortjobs.Config
	// ShortPull, with ShortJobs, runs pulls: the schedulers'
	// scheduler.Config.PullAfter and the node monitors' retry delay
	// (nodemonitor's DaemonConfig.PullRetry); 0: off.
	ShortPull time.Duration
	// SingleHost puts every member on 127.0.0.1 instead of its own
	// 127.0.x.y address.
	SingleHost bool
	// GossipProfile is the members' gossip timing (default "local": fast
	// failure detection, which fault tests need; "lan" gossips far less,
	// which benchmarks prefer when a whole fleet shares two cores).
	GossipProfile string
	// Seed makes the schedulers' placement reproducible (0: random).
	Seed uint64
	// RPC bounds the daemons' Thrift servers and their own client pools
	// (zero: defaults). Executors and frontends keep their own defaults,
	// as when an operator tunes only the daemons.
	RPC rpc.Config
	// HTTP gives every scheduler and node monitor its operator endpoint
	// (/status, /readyz, /metrics and the dashboard at /ui/) on its own
	// host, port 0, advertised in gossip as a daemon's --http-listen is.
	HTTP bool
	// Coordination is how node monitors work with a fairness coordinator,
	// if one joins (the fleet starts none).
	Coordination nodemonitor.CoordinationConfig
	Log          zerolog.Logger
	// Progress, if set, is told how many node monitors have started,
	// every 50 and after the last, for fleets large enough that starting
	// them takes a while.
	Progress func(started, of int)
	// StartEvery, if positive, spaces the node monitors' starts: the k-th
	// starts no sooner than k times StartEvery after the first, so that a
	// large fleet on a small machine joins at a pace its gossip can relay.
	StartEvery time.Duration
	// Join, if set, makes this a slice of a fleet whose schedulers run
	// elsewhere: it starts no scheduler (Schedulers is ignored) and its node
	// monitors join the gossip cluster through these addresses.
	Join []string
	// FirstNodeMonitor numbers this fleet's node monitors from that index
	// (names and loopback addresses), so that slices of one fleet started
	// in different processes take disjoint ones.
	FirstNodeMonitor int
	// RemoteNodeMonitors are node monitors started elsewhere (slices with
	// Join, each hosting every app) that the schedulers here wait for and
	// place on, beside NodeMonitors of their own (which may then be 0).
	RemoteNodeMonitors int
}

// Fleet is a running in-process fleet.
type Fleet struct {
	cfg          Config
	Schedulers   []*scheduler.Daemon
	NodeMonitors []*nodemonitor.Daemon
	// Backends[i] are node monitor i's executors, one per app.
	Backends [][]*client.Backend
	// HTTP holds each member's operator endpoint (with Config.HTTP),
	// schedulers first.
	HTTP     []*httpapi.Server
	stopHTTP []func()
	hook     atomic.Pointer[func(node int, t client.LaunchedTask, at time.Time)]
	stopped  []bool
	killed   map[int]bool // node monitors killed by KillNodeMonitor
	// StartedAt is when the last member had started, before Start waited
	// for every scheduler to see every node monitor.
	StartedAt time.Time
}

func (c *Config) defaults() {
	switch {
	case len(c.Join) > 0:
		c.Schedulers = 0
	case c.Schedulers <= 0:
		c.Schedulers = 1
	}
	if c.NodeMonitors <= 0 && c.RemoteNodeMonitors <= 0 {
		c.NodeMonitors = 1
	}
	if c.NodeMonitors < 0 {
		c.NodeMonitors = 0
	}
	if c.Slots <= 0 {
		c.Slots = 1
	}
	if len(c.Apps) == 0 {
		for i := 0; i < c.Schedulers; i++ {
			c.Apps = append(c.Apps, fmt.Sprintf("app-%d", i))
		}
	}
	if c.Run == nil {
		c.Run = SleepTask
	}
	if c.Queue == "" {
		c.Queue = "fifo"
	}
	if c.GossipProfile == "" {
		c.GossipProfile = "local"
	}
}

// SleepTask is the default executor: the task message is a Go duration
// ("100ms"), and the task sleeps that long. An empty message is a no-op
// task.
func SleepTask(ctx context.Context, t client.LaunchedTask) ([]byte, error) {
	if len(t.Message) == 0 {
		return nil, nil
	}
	d, err := time.ParseDuration(string(t.Message))
	if err != nil {
		return nil, fmt.Errorf("sleep task %s: message %q is not a duration: %w", t.Ref.TaskID, t.Message, err)
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// host returns member i's loopback address within a role's block.
func (c *Config) host(block, i int) string {
	if c.SingleHost {
		return "127.0.0.1"
	}
	return fmt.Sprintf("127.0.%d.%d", block+i/250, i%250+1)
}

// Start launches the fleet and waits until every scheduler sees every node
// monitor hosting every app, or ctx ends.
func Start(ctx context.Context, cfg Config) (*Fleet, error) {
	f, err := Launch(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := f.WaitReady(ctx); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Launch starts the fleet's members without waiting for the schedulers to
// see them (WaitReady does), for a fleet whose remote node monitors start
// only once its schedulers' gossip addresses are known.
func Launch(ctx context.Context, cfg Config) (_ *Fleet, err error) {
	cfg.defaults()
	f := &Fleet{cfg: cfg, stopped: make([]bool, cfg.Schedulers), killed: map[int]bool{}}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	seeds := cfg.Join
	for i := 0; i < cfg.Schedulers; i++ {
		h := cfg.host(1, i)
		d, err := scheduler.StartDaemon(scheduler.DaemonConfig{
			Listen: h + ":0", GetTaskListen: h + ":0", Gossip: h + ":0", Join: seeds, JoinLater: true,
			GossipProfile: cfg.GossipProfile, Name: fmt.Sprintf("scheduler-%d", i),
			Scheduler: scheduler.Config{
				ProbeRatio: cfg.ProbeRatio, ConstrainedProbeRatio: cfg.ConstrainedProbeRatio,
				NoCancel: cfg.NoCancel, NoOffers: cfg.NoOffers, Seed: seedFor(cfg.Seed, i), SteerAfter: cfg.SteerAfter,
				ShortJobs: cfg.ShortJobs, PullAfter: cfg.ShortPull,
			},
			RPC: cfg.RPC, Log: cfg.Log,
		})
		if err != nil {
			return nil, fmt.Errorf("start scheduler %d: %w", i, err)
		}
		f.Schedulers = append(f.Schedulers, d)
		seeds = append(seeds, d.Cluster.Addr())
		if err := f.serveHTTP(h, d.Cluster, d.OperatorStatus, d.Serving); err != nil {
			return nil, fmt.Errorf("scheduler %d: %w", i, err)
		}
		d.Cluster.Join()
	}
	paceStart := time.Now()
	for i := 0; i < cfg.NodeMonitors; i++ {
		if err := waitTurn(ctx, paceStart, i, cfg.StartEvery); err != nil {
			return nil, err
		}
		h := cfg.host(10, cfg.FirstNodeMonitor+i)
		q, err := queue.New(cfg.Queue, 1, cfg.Weights)
		if err != nil {
			return nil, err
		}
		var attrs map[string]string
		if cfg.NodeAttrs != nil {
			attrs = cfg.NodeAttrs(i)
		}
		d, err := nodemonitor.StartDaemon(nodemonitor.DaemonConfig{
			Listen: h + ":0", InternalListen: h + ":0", Gossip: h + ":0", Join: seeds[:1], JoinLater: true,
			GossipProfile: cfg.GossipProfile, Name: fmt.Sprintf("nodemonitor-%d", cfg.FirstNodeMonitor+i),
			Slots: cfg.Slots, Queue: q, ShortJobs: cfg.ShortJobs, PullRetry: cfg.ShortPull, Attrs: attrs, Coordination: cfg.Coordination, RPC: cfg.RPC, Log: cfg.Log,
		})
		if err != nil {
			return nil, fmt.Errorf("start node monitor %d: %w", i, err)
		}
		f.NodeMonitors = append(f.NodeMonitors, d)
		if err := f.serveHTTP(h, d.Cluster, d.OperatorStatus, d.Serving); err != nil {
			return nil, fmt.Errorf("node monitor %d: %w", i, err)
		}
		var backends []*client.Backend
		for _, app := range cfg.appsOn(i) {
			node := i
			b, err := client.NewBackend(ctx, client.BackendConfig{
				App: app, NodeMonitor: d.ServiceAddr(), Listen: h + ":0", AdvertiseHost: h,
				RPC:      executorRPC,
				Run:      cfg.Run,
				OnLaunch: func(t client.LaunchedTask) { f.onLaunch(node, t) },
				Log:      cfg.Log,
			})
			if err != nil {
				return nil, fmt.Errorf("start executor for app %q on node monitor %d: %w", app, i, err)
			}
			backends = append(backends, b)
		}
		f.Backends = append(f.Backends, backends)
		// A machine's node monitor and executors start together; it joins
		// with its HTTP endpoint and apps advertised, one piece of news.
		d.Cluster.Join()
		if cfg.Progress != nil && ((i+1)%50 == 0 || i+1 == cfg.NodeMonitors) {
			cfg.Progress(i+1, cfg.NodeMonitors)
		}
	}
	f.StartedAt = time.Now()
	return f, nil
}

// waitTurn waits until the k-th start's turn, k times every after start,
// or until ctx ends. A non-positive every never waits.
func waitTurn(ctx context.Context, start time.Time, k int, every time.Duration) error {
	if every <= 0 || k == 0 {
		return nil
	}
	wait := time.Until(start.Add(time.Duration(k) * every))
	if wait <= 0 {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// executorRPC is the fleet's executors' Thrift client configuration:
// the defaults, but for a connect timeout long enough for a process that
// runs hundreds of members on a shared machine, whose goroutines can wait
// longer than the default second for a CPU; a loopback connect that does
// not answer in that time is not a dead node monitor here.
var executorRPC = client.RPCConfig{ConnectTimeout: 10 * time.Second}

// serveHTTP serves a member's operator endpoint on host, when the fleet
// has them, and advertises it in gossip.
func (f *Fleet) serveHTTP(host string, c *membership.Cluster, status func() httpapi.Status, serving func() bool) error {
	if !f.cfg.HTTP {
		return nil
	}
	dash, stop := dashboard.ForDaemon(c)
	srv, err := httpapi.Serve(httpapi.Config{
		Addr: host + ":0", Status: status, View: c, Ready: httpapi.Serving(serving), UI: dash.Handler("/ui/"),
	})
	if err != nil {
		stop()
		return err
	}
	f.HTTP, f.stopHTTP = append(f.HTTP, srv), append(f.stopHTTP, stop)
	return c.SetHTTPAddr(srv.Addr())
}

func (c *Config) appsOn(node int) []string {
	if c.NodeApps == nil {
		return c.Apps
	}
	return c.NodeApps(node)
}

func seedFor(seed uint64, i int) uint64 {
	if seed == 0 {
		return 0
	}
	return seed + uint64(i)*0x9e3779b97f4a7c15
}

func (f *Fleet) onLaunch(node int, t client.LaunchedTask) {
	if f.cfg.OnLaunch != nil {
		f.cfg.OnLaunch(node, t)
	}
	f.RecordLaunch(node, t, time.Now())
}

// RecordLaunch tells a running Drive that node monitor node launched t at
// at: the fleet's own executors do so themselves, and a caller whose
// remote node monitors' executors report their launches passes them on
// here.
func (f *Fleet) RecordLaunch(node int, t client.LaunchedTask, at time.Time) {
	if h := f.hook.Load(); h != nil {
		(*h)(node, t, at)
	}
}

// WaitReady waits until every running scheduler's gossip view shows every
// node monitor with every app.
func (f *Fleet) WaitReady(ctx context.Context) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		missing := f.notReady()
		if missing == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("fleet not ready (%s): %w", missing, ctx.Err())
		case <-tick.C:
		}
	}
}

func (f *Fleet) notReady() string {
	for i, s := range f.Schedulers {
		if f.stopped[i] {
			continue
		}
		view := scheduler.NewMembershipView(s.Cluster)
		for _, app := range f.cfg.Apps {
			if got, want := view.Candidates(app), f.hosting(app); len(got) != want {
				msg := fmt.Sprintf("scheduler %d sees %d of %d node monitors for app %q", i, len(got), want, app)
				if unseen := f.unseen(s.Cluster, got, app); unseen != "" {
					msg += "; " + unseen
				}
				if f.cfg.RemoteNodeMonitors > 0 {
					msg += fmt.Sprintf("; %d of them run in other processes", f.cfg.RemoteNodeMonitors)
				}
				return msg
			}
		}
	}
	return ""
}

// unseen says, for each node monitor hosting app that a scheduler's view
// (members, its gossip) does not list among got, what that view holds of
// it and what the node monitor advertises itself, so that a fleet that
// never gets ready says which side is behind.
func (f *Fleet) unseen(members *membership.Cluster, got []placement.Node, app string) string {
	var out []string
	for j, d := range f.NodeMonitors {
		if !slices.Contains(f.cfg.appsOn(j), app) {
			continue
		}
		name := d.Cluster.Name()
		if slices.ContainsFunc(got, func(n placement.Node) bool { return n.Name == name }) {
			continue
		}
		seen := "not a live member"
		for _, m := range members.Members(membership.RoleNodeMonitor) {
			if m.Name == name {
				seen = fmt.Sprintf("a member with apps %v", m.Meta.Apps)
			}
		}
		own := "no node monitor seen by itself"
		for _, m := range d.Cluster.Members(membership.RoleNodeMonitor) {
			if m.Name == name {
				own = fmt.Sprintf("its own view: apps %v", m.Meta.Apps)
			}
		}
		out = append(out, fmt.Sprintf("%s: %s; %s", name, seen, own))
	}
	return strings.Join(out, "; ")
}

// hosting counts the node monitors that host app.
func (f *Fleet) hosting(app string) int {
	n := f.cfg.RemoteNodeMonitors
	for i := range f.NodeMonitors {
		if slices.Contains(f.cfg.appsOn(i), app) {
			n++
		}
	}
	return n
}

// Apps returns the apps the executors serve.
func (f *Fleet) Apps() []string { return f.cfg.Apps }

// TotalSlots returns the fleet's slot count.
func (f *Fleet) TotalSlots() int {
	return (f.cfg.NodeMonitors + f.cfg.RemoteNodeMonitors) * f.cfg.Slots
}

// Seeds returns the schedulers' gossip addresses, for remote node
// monitors to join through.
func (f *Fleet) Seeds() []string {
	out := make([]string, len(f.Schedulers))
	for i, s := range f.Schedulers {
		out[i] = s.Cluster.Addr()
	}
	return out
}

// SchedulerAddrs returns the schedulers' SchedulerService addresses.
func (f *Fleet) SchedulerAddrs() []string {
	out := make([]string, len(f.Schedulers))
	for i, s := range f.Schedulers {
		out[i] = s.ServiceAddr()
	}
	return out
}

// StopScheduler shuts scheduler i down (leaving gossip), as a failure.
func (f *Fleet) StopScheduler(i int) error {
	if f.stopped[i] {
		return nil
	}
	f.stopped[i] = true
	return f.Schedulers[i].Close()
}

// KillNodeMonitor crashes node monitor i and its executors: nothing is
// said to the gossip cluster, so schedulers learn of it from failure
// detection.
func (f *Fleet) KillNodeMonitor(i int) {
	if f.killed[i] {
		return
	}
	f.killed[i] = true
	f.NodeMonitors[i].Kill()
	for _, b := range f.Backends[i] {
		b.Close()
	}
}

// Close stops every member: node monitors first (so none mistakes its
// executors' shutdown for a failure), then executors, then schedulers;
// members of a kind leave the gossip cluster in parallel, since each waits
// for its leave message to spread.
func (f *Fleet) Close() error {
	var mu sync.Mutex
	var errs []error
	parallel := func(n int, stop func(i int) error) {
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := stop(i); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
	}
	parallel(len(f.NodeMonitors), func(i int) error {
		if f.killed[i] {
			return nil
		}
		return f.NodeMonitors[i].Close()
	})
	parallel(len(f.Backends), func(i int) error {
		if f.killed[i] {
			return nil
		}
		var errs []error
		for _, b := range f.Backends[i] {
			errs = append(errs, b.Close())
		}
		return errors.Join(errs...)
	})
	parallel(len(f.Schedulers), f.StopScheduler)
	for i, srv := range f.HTTP {
		f.stopHTTP[i]()
		srv.Close()
	}
	return errors.Join(errs...)
}

// Describe is a one-line summary of the fleet's shape.
func (f *Fleet) Describe() string {
	return fmt.Sprintf("%d schedulers, %d node monitors x %d slots, apps %s",
		len(f.Schedulers), len(f.NodeMonitors), f.cfg.Slots, strings.Join(f.cfg.Apps, ","))
}
