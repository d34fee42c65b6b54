package scheduler

import (
	"slices"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/internal/membership"
	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// Default listen addresses, the original Sparrow ports.
const (
	DefaultListen        = ":20503"
	DefaultGetTaskListen = ":20507"
)

// DaemonConfig configures a scheduler process.
type DaemonConfig struct {
	// Listen is the SchedulerService address; GetTaskListen the
	// GetTaskService address.
	Listen, GetTaskListen string
	// Gossip is the gossip "host:port" to bind and advertise; Join lists
	// seed members; GossipProfile is "lan", "local" or "wan".
	Gossip string
	Join   []string
	// JoinLater defers joining the seeds to Cluster.Join
	// (membership.Config.JoinLater), so that the scheduler joins with its
	// HTTP endpoint already advertised.
	JoinLater     bool
	GossipProfile string
	Keyring       *memberlist.Keyring
	// AdvertiseHost replaces a wildcard host in the advertised Thrift
	// addresses; it defaults to the gossip host.
	AdvertiseHost string
	Name          string
	Scheduler     Config
	RPC           rpc.Config
	Log           zerolog.Logger
}

// Daemon is a running scheduler: its two Thrift services and its gossip
// membership.
type Daemon struct {
	*Scheduler
	Cluster *membership.Cluster
	svc, gt *rpc.Server
	calls   *rpc.Calls // counts the calls its services serve and its pools make
	log     zerolog.Logger
	stop    chan struct{}
	done    chan struct{}
	names   nodeNames // node monitors' member names to addresses (admission.go)
	meta    membership.Meta
	watch   *nodeWatch // a held connection to every node monitor in the view
}

// StartDaemon binds the scheduler's ports, joins the gossip cluster and
// starts serving.
func StartDaemon(cfg DaemonConfig) (*Daemon, error) {
	if cfg.Listen == "" {
		cfg.Listen = DefaultListen
	}
	if cfg.GetTaskListen == "" {
		cfg.GetTaskListen = DefaultGetTaskListen
	}
	host, err := rpc.AdvertiseHost(cfg.AdvertiseHost, cfg.Gossip)
	if err != nil {
		return nil, err
	}
	if cfg.RPC.Calls == nil {
		cfg.RPC.Calls = new(rpc.Calls)
	}
	servers, err := rpc.ListenAll(cfg.RPC, cfg.Log, cfg.Listen, cfg.GetTaskListen)
	if err != nil {
		return nil, err
	}
	svc, gt := servers[0], servers[1]
	svcAddr, gtAddr := rpc.Advertised(svc.Addr(), host), rpc.Advertised(gt.Addr(), host)
	cluster, err := membership.Start(membership.Config{
		Name: cfg.Name, Bind: cfg.Gossip, Seeds: cfg.Join, JoinLater: cfg.JoinLater, Profile: cfg.GossipProfile, Keyring: cfg.Keyring,
		Meta: schedulerMeta(svcAddr, gtAddr, cfg.Scheduler.MaxQueueWait > 0),
		Log:  cfg.Log,
	})
	if err != nil {
		svc.Close()
		gt.Close()
		return nil, err
	}
	scfg := cfg.Scheduler
	scfg.Address, scfg.RPC, scfg.Log = svcAddr, cfg.RPC, cfg.Log
	view, nodes, watch := reachableView(cluster, scfg)
	s, err := newWith(scfg, view, nodes, nil)
	if err != nil {
		watch.close()
		svc.Close()
		gt.Close()
		cluster.Leave(0)
		return nil, err
	}
	d := &Daemon{Scheduler: s, Cluster: cluster, svc: svc, gt: gt, calls: cfg.RPC.Calls, log: s.log, watch: watch,
		stop: make(chan struct{}), done: make(chan struct{}),
		meta: schedulerMeta(svcAddr, gtAddr, cfg.Scheduler.MaxQueueWait > 0)}
	// A node monitor that dies or leaves takes its reservations and,
	// unless it was a false death, its running tasks with it (nodeloss.go).
	cluster.Watch(func(ev membership.Event) {
		if ev.Member.Meta.Role != membership.RoleNodeMonitor {
			return
		}
		// News of a node monitor, or its departure, ends any doubt about
		// reaching it that this scheduler's failed calls raised.
		view.reach.reached(ev.Member.Meta.Internal)
		if ev.Kind == membership.Left {
			watch.unwatch(ev.Member.Meta.Internal)
		} else {
			watch.watch(ev.Member.Meta.Internal)
		}
		switch {
		case ev.Kind == membership.Left:
			go d.nodeLeft(ev.Member)
		case ev.Kind == membership.Updated && len(ev.Member.Meta.Apps) == 0:
			// A node monitor that offers no app any more (draining, or
			// its last executor lost) dropped its queued reservations:
			// they are placed elsewhere at once; its running tasks stay
			// tracked.
			go d.NodeGone(ev.Member.Meta.Internal)
		}
	})
	// Node monitors that joined before the watcher above was registered.
	for _, m := range cluster.Members(membership.RoleNodeMonitor) {
		watch.watch(m.Meta.Internal)
	}
	// The coordinator's locality prices arrive as direct gossip messages.
	cluster.OnMessage(s.onGossip)
	if scfg.MaxQueueWait > 0 {
		// Node monitors' load reports, for admission by expected wait.
		cluster.OnMessage(d.onLoadReport)
	}
	go d.sweep()
	go svc.Serve(sparrowrpc.NewSchedulerServiceProcessor(s))
	go gt.Serve(sparrowrpc.NewGetTaskServiceProcessor(s))
	d.log.Info().Str("service", svcAddr).Str("gettask", gtAddr).Str("gossip", cluster.Addr()).Msg("scheduler started")
	return d, nil
}

// sweep runs the reservation-deadline check every second, the pull
// backlog's and the overrun rule's sweeps on their ticks, and the
// relaxation of placement preferences when one is due, until Close. The
// relaxation timer is armed only while a relaxable task is pending, for
// the earliest step, and at most once per relaxMinGap.
func (d *Daemon) sweep() {
	defer close(d.done)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	relax := time.NewTimer(time.Hour)
	relax.Stop()
	defer relax.Stop()
	var last time.Time
	// With pulls, the backlog is swept and its changed advert (work or
	// apps) gossiped every DefaultPullTick, so the metadata changes at
	// most that often.
	var pullC <-chan time.Time
	if d.pull != nil {
		pt := time.NewTicker(DefaultPullTick)
		defer pt.Stop()
		pullC = pt.C
	}
	var overrunC <-chan time.Time
	if tick := d.OverrunTick(); tick > 0 {
		ot := time.NewTicker(tick)
		defer ot.Stop()
		overrunC = ot.C
	}
	for {
		if at, ok := d.NextRelax(); ok {
			wait := max(time.Until(at), time.Until(last.Add(relaxMinGap)), 0)
			relax.Reset(wait)
		} else {
			relax.Stop()
		}
		select {
		case <-d.stop:
			return
		case now := <-t.C:
			d.Sweep(now)
		case now := <-pullC:
			if adv, changed := d.PullSweep(now); changed {
				d.advertiseBacklog(adv)
			}
		case now := <-overrunC:
			d.OverrunSweep(now)
		case <-d.RelaxWake():
		case now := <-relax.C:
			last = now
			d.Relax(now)
		}
	}
}

// Serving reports whether the daemon takes jobs: from StartDaemon, which
// returns only once its Thrift services are bound and serving, until a
// drain (Scheduler.Drain) or Close begins. Readiness probes read it.
func (d *Daemon) Serving() bool {
	if d.Draining() {
		return false
	}
	select {
	case <-d.stop:
		return false
	default:
		return true
	}
}

// ServiceAddr returns the advertised SchedulerService address.
func (d *Daemon) ServiceAddr() string { return d.cfg.Address }

// GetTaskAddr returns the bound GetTaskService address.
func (d *Daemon) GetTaskAddr() string { return d.gt.Addr() }

// Close leaves the gossip cluster, so peers stop sampling it at once, then
// stops serving.
func (d *Daemon) Close() error {
	close(d.stop)
	<-d.done
	d.watch.close()
	err := d.Cluster.Leave(time.Second)
	d.svc.Close()
	d.gt.Close()
	d.Scheduler.Close()
	d.log.Info().Msg("scheduler stopped")
	return err
}

// RPCStats sums the connection counters of the scheduler's two services.
func (d *Daemon) RPCStats() rpc.Stats { return d.svc.Stats().Add(d.gt.Stats()) }

// RPCCalls counts the Thrift calls the scheduler served and made, per
// method.
func (d *Daemon) RPCCalls() rpc.CallStats { return d.calls.Stats() }

// advertiseBacklog gossips the scheduler's backlog advert, so that node
// monitors hosting one of its apps queue pulls for it while its work is
// not zero (membership.Meta.WithBacklog: past MaxBacklogApps apps, the
// advert is for any app). An advert that reads as the last one gossiped,
// such as a change among more apps than that, is not gossiped again.
// Only the sweep goroutine calls it.
func (d *Daemon) advertiseBacklog(adv PullAdvert) {
	m := d.meta.WithBacklog(adv.Work, adv.Apps)
	if m.Backlog == d.meta.Backlog && slices.Equal(m.BacklogApps, d.meta.BacklogApps) {
		return
	}
	d.meta = m
	if err := d.Cluster.SetMeta(d.meta); err != nil {
		d.log.Error().Err(err).Float64("backlog", adv.Work).Strs("apps", m.BacklogApps).Msg("could not advertise the short backlog")
	}
}

// schedulerMeta is a scheduler's gossip metadata; loadReports asks node
// monitors for their load reports (admission by expected wait).
func schedulerMeta(service, getTask string, loadReports bool) membership.Meta {
	m := membership.Meta{Role: membership.RoleScheduler, Service: service, Internal: getTask}
	if loadReports {
		m.Attrs = map[string]string{membership.AttrLoadReports: "1"}
	}
	return m
}
