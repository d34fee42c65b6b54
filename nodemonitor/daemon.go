package nodemonitor

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/core/queue"
	"github.com/sparrowfleet/sparrow/core/shortjobs"
	"github.com/sparrowfleet/sparrow/internal/membership"
	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// Default listen addresses, the original Sparrow ports.
const (
	DefaultListen         = ":20501"
	DefaultInternalListen = ":20502"
)

// DaemonConfig configures a node monitor process.
type DaemonConfig struct {
	// Listen is the NodeMonitorService address (for executors);
	// InternalListen the InternalService address (for schedulers).
	Listen, InternalListen string
	Gossip                 string
	Join                   []string
	// JoinLater defers joining the seeds to Cluster.Join
	// (membership.Config.JoinLater), so that the node monitor joins with
	// its HTTP endpoint and its executors' apps already advertised.
	JoinLater     bool
	GossipProfile string
	Keyring       *memberlist.Keyring
	// AdvertiseHost replaces a wildcard host in advertised addresses; it
	// defaults to the gossip host.
	AdvertiseHost string
	Name          string
	Slots         int
	Queue         queue.Discipline
	// ShortJobs runs the long-task-aware policy (Config.ShortJobs) and
	// gossips the node's long-work advert (membership.Meta.LongWork).
	ShortJobs *shortjobs.Config
	// PullRetry runs pulls (Config.PullRetry) for the schedulers whose
	// gossip advertises a short backlog (membership.Meta.Backlog) of an
	// app this node hosts (Meta.BacklogApps).
	PullRetry time.Duration
	Attrs     map[string]string
	// GetTaskTimeout bounds getTask calls (default 1s). ExecutorCheck
	// paces the executor liveness watch (default 1s; negative disables
	// it): each executor is watched through a connection held open to it,
	// and one whose connection ended or whose connect failed is connected
	// to again after ExecutorCheck.
	GetTaskTimeout time.Duration
	// FetchRetryFor bounds asking a scheduler again about a getTask whose
	// call failed after it was sent (Config.FetchRetryFor; default 10s).
	FetchRetryFor time.Duration
	ExecutorCheck time.Duration
	MaxQueued     int
	// LeaveGrace is how long Close, after a drain, keeps answering calls
	// once it has left the gossip cluster, refusing new work: a scheduler
	// that has not yet heard of the leave gets a refusal, and knows its
	// offered task did not launch, instead of a dropped connection that
	// leaves the task in doubt (and reported lost). 0: stop at once.
	LeaveGrace time.Duration
	// Coordination configures work with the optional fairness coordinator.
	Coordination CoordinationConfig
	RPC          rpc.Config
	Log          zerolog.Logger
}

// DefaultLeaveGrace is the command's default DaemonConfig.LeaveGrace:
// five rounds of the default gossip profile (200 ms each), in which a
// leave spreads to a fleet's schedulers.
const DefaultLeaveGrace = time.Second

// Daemon is a running node monitor: its two Thrift services and its gossip
// membership.
type Daemon struct {
	*NodeMonitor
	Cluster       *membership.Cluster
	svc, internal *rpc.Server
	calls         *rpc.Calls // counts the calls its services serve and its pools make
	log           zerolog.Logger
	stop, done    chan struct{}
	coord         *coordination
	// execWatch watches executors' liveness (liveness.go); nil when
	// checks are off or the executors' client cannot hold connections.
	execWatch     *executorWatch
	stopExecWatch context.CancelFunc
	draining      atomic.Bool
	leaveGrace    time.Duration
	closeOnce     sync.Once
	closeErr      error

	metaMu sync.Mutex
	meta   membership.Meta
}

// StartDaemon binds the node monitor's ports, joins the gossip cluster and
// starts serving.
func StartDaemon(cfg DaemonConfig) (*Daemon, error) {
	if cfg.Listen == "" {
		cfg.Listen = DefaultListen
	}
	if cfg.InternalListen == "" {
		cfg.InternalListen = DefaultInternalListen
	}
	host, err := rpc.AdvertiseHost(cfg.AdvertiseHost, cfg.Gossip)
	if err != nil {
		return nil, err
	}
	if cfg.RPC.Calls == nil {
		cfg.RPC.Calls = new(rpc.Calls)
	}
	servers, err := rpc.ListenAll(cfg.RPC, cfg.Log, cfg.Listen, cfg.InternalListen)
	if err != nil {
		return nil, err
	}
	svc, internal := servers[0], servers[1]
	d := &Daemon{svc: svc, internal: internal, calls: cfg.RPC.Calls, stop: make(chan struct{}), done: make(chan struct{}), leaveGrace: cfg.LeaveGrace}
	d.meta = membership.Meta{
		Role: membership.RoleNodeMonitor, Slots: cfg.Slots, Attrs: cfg.Attrs,
		Service: rpc.Advertised(svc.Addr(), host), Internal: rpc.Advertised(internal.Addr(), host),
		Boot: strconv.FormatInt(time.Now().UnixNano(), 36),
	}
	cluster, err := membership.Start(membership.Config{
		Name: cfg.Name, Bind: cfg.Gossip, Seeds: cfg.Join, JoinLater: cfg.JoinLater, Profile: cfg.GossipProfile, Keyring: cfg.Keyring,
		Meta: d.meta, Log: cfg.Log,
	})
	if err != nil {
		svc.Close()
		internal.Close()
		return nil, err
	}
	d.Cluster = cluster
	nm, err := New(Config{
		Slots: cfg.Slots, Queue: cfg.Queue, Internal: d.meta.Internal, GetTaskTimeout: cfg.GetTaskTimeout, FetchRetryFor: cfg.FetchRetryFor, MaxQueued: cfg.MaxQueued,
		OnAppsChanged: d.advertiseApps, ShortJobs: cfg.ShortJobs, PullRetry: cfg.PullRetry, OnLongWork: d.advertiseLongWork, RPC: cfg.RPC, Log: cfg.Log,
	}, &membershipDirectory{cluster: cluster})
	if err != nil {
		svc.Close()
		internal.Close()
		cluster.Leave(0)
		return nil, err
	}
	d.NodeMonitor, d.log = nm, nm.log
	cluster.Watch(func(ev membership.Event) {
		if ev.Member.Meta.Role != membership.RoleScheduler {
			return
		}
		if ev.Kind == membership.Left {
			nm.SchedulerGone(ev.Member.Meta.Service)
			nm.PullGone(ev.Member.Meta.Service)
		} else {
			nm.SchedulerBack(ev.Member.Meta.Service)
			nm.PullHeard(ev.Member.Meta.Service, ev.Member.Meta.Backlog, ev.Member.Meta.BacklogApps)
		}
	})
	if cfg.ExecutorCheck == 0 {
		cfg.ExecutorCheck = DefaultExecutorCheck
	}
	d.coord = startCoordination(cfg.Coordination, nm, cluster, cfg.Attrs, cfg.Slots, cfg.Log)
	if hold, ok := nm.executors.(connHolder); ok && cfg.ExecutorCheck > 0 {
		var ctx context.Context
		ctx, d.stopExecWatch = context.WithCancel(context.Background())
		d.metaMu.Lock()
		d.execWatch = newExecutorWatch(ctx, nm, hold, cfg.ExecutorCheck)
		d.metaMu.Unlock()
	}
	go d.watchExecutors(cfg.ExecutorCheck)
	go svc.Serve(sparrowrpc.NewNodeMonitorServiceProcessor(nm))
	go internal.Serve(sparrowrpc.NewInternalServiceProcessor(nm))
	d.log.Info().Str("service", d.meta.Service).Str("internal", d.meta.Internal).
		Str("gossip", cluster.Addr()).Int("slots", cfg.Slots).Msg("node monitor started")
	return d, nil
}

// watchExecutors keeps executors' liveness watched until Close: through
// held connections (executorWatch) when the executors' client can hold
// them, otherwise by checking each one every interval.
func (d *Daemon) watchExecutors(interval time.Duration) {
	defer close(d.done)
	if d.execWatch != nil {
		<-d.stop
		d.stopExecWatch()
		d.execWatch.wait()
		return
	}
	if interval < 0 {
		<-d.stop
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-d.stop:
			return
		case <-t.C:
			d.checkExecutors(interval)
		}
	}
}

// advertiseApps gossips the node's new app list, so that schedulers start
// sampling it for those apps, and has the executors' watch follow the
// registered executors. An unchanged list (an executor registering again)
// is not gossiped again: every metadata update spreads to the whole fleet.
func (d *Daemon) advertiseApps(apps []string) {
	d.metaMu.Lock()
	defer d.metaMu.Unlock()
	if d.execWatch != nil {
		d.execWatch.sync()
	}
	if slices.Equal(apps, d.meta.Apps) {
		return
	}
	d.meta.Apps = apps
	if err := d.Cluster.SetMeta(d.meta); err != nil {
		d.log.Error().Err(err).Strs("apps", apps).Msg("could not advertise apps")
	}
}

// advertiseLongWork gossips the node's long-work advert, so that schedulers
// with the long-task-aware policy steer short jobs elsewhere while it is
// not zero.
func (d *Daemon) advertiseLongWork(advert [2]byte) {
	d.metaMu.Lock()
	defer d.metaMu.Unlock()
	d.meta = d.meta.WithLongWork(advert)
	if err := d.Cluster.SetMeta(d.meta); err != nil {
		d.log.Error().Err(err).Uint8("long_work", advert[0]).Uint8("long_level", advert[1]).Msg("could not advertise long work")
	}
}

// Serving reports whether the daemon's Thrift services are up: from
// StartDaemon, which returns only once they are bound and serving, until
// Close (or Kill) begins. Readiness probes read it.
func (d *Daemon) Serving() bool {
	select {
	case <-d.stop:
		return false
	default:
		return true
	}
}

// Drain takes the node monitor out of service without losing work
// (NodeMonitor.Drain): Draining reports true from the start, for
// readiness probes; queued reservations go back to their schedulers,
// which stop sampling this node; running tasks finish, up to timeout.
// Close should follow: it leaves gossip, and schedulers then report the
// tasks still unfinished lost, after their grace for a lost node.
func (d *Daemon) Drain(timeout time.Duration) DrainResult {
	d.draining.Store(true)
	return d.NodeMonitor.Drain(timeout)
}

// Draining reports whether a drain has begun.
func (d *Daemon) Draining() bool { return d.draining.Load() }

// ServiceAddr returns the advertised NodeMonitorService address.
func (d *Daemon) ServiceAddr() string { return d.meta.Service }

// InternalAddr returns the advertised InternalService address.
func (d *Daemon) InternalAddr() string { return d.meta.Internal }

// Close leaves the gossip cluster, so schedulers stop sampling this node,
// then stops serving; after a drain, it first keeps refusing new work for
// DaemonConfig.LeaveGrace. Later calls, and Kill after it, do nothing.
func (d *Daemon) Close() error {
	d.closeOnce.Do(func() {
		close(d.stop)
		<-d.done
		d.coord.close()
		d.closeErr = d.Cluster.Leave(time.Second)
		if d.draining.Load() && d.leaveGrace > 0 {
			d.log.Info().Dur("grace", d.leaveGrace).Msg("left the cluster; refusing new work until the leave has spread")
			time.Sleep(d.leaveGrace)
		}
		d.svc.Close()
		d.internal.Close()
		d.NodeMonitor.Close()
		d.log.Info().Msg("node monitor stopped")
	})
	return d.closeErr
}

// Kill stops the node monitor abruptly, as a crash would: it does not leave
// the gossip cluster, so peers find out only when their failure detector
// declares it dead. For fault tests. Later calls, and Close after it, do
// nothing.
func (d *Daemon) Kill() {
	d.closeOnce.Do(func() {
		close(d.stop)
		<-d.done
		d.coord.close()
		d.Cluster.Shutdown()
		d.svc.Close()
		d.internal.Close()
		d.NodeMonitor.Close()
	})
}

// membershipDirectory finds schedulers' getTask addresses in the gossip
// view, caching the table until membership changes.
type membershipDirectory struct {
	cluster *membership.Cluster

	mu      sync.Mutex
	version uint64
	built   bool
	table   map[string]string
}

func (m *membershipDirectory) GetTaskAddr(service string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if v := m.cluster.Version(); !m.built || v != m.version {
		m.version, m.built = v, true
		m.table = make(map[string]string)
		for _, s := range m.cluster.Members(membership.RoleScheduler) {
			m.table[s.Meta.Service] = s.Meta.Internal
		}
	}
	a, ok := m.table[service]
	return a, ok
}

// RPCStats sums the connection counters of the node monitor's two
// services.
func (d *Daemon) RPCStats() rpc.Stats { return d.svc.Stats().Add(d.internal.Stats()) }

// RPCCalls counts the Thrift calls the node monitor served and made, per
// method.
func (d *Daemon) RPCCalls() rpc.CallStats { return d.calls.Stats() }
