package coordinator

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/core/fairshare"
	"github.com/sparrowfleet/sparrow/core/queue"
	"github.com/sparrowfleet/sparrow/internal/fairgossip"
	"github.com/sparrowfleet/sparrow/internal/membership"
)

// DefaultPeriod is how often the active coordinator publishes guidance.
const DefaultPeriod = time.Second

// reportsKept is how many periods a node's report stays in the
// computation without a newer one.
const reportsKept = 3

// Config configures a coordinator process.
type Config struct {
	// Gossip is the gossip "host:port" to bind and advertise; Join lists
	// seed members; GossipProfile is "lan", "local" or "wan".
	Gossip        string
	Join          []string
	GossipProfile string
	Keyring       *memberlist.Keyring
	// Name is the member name; coordinators with lower names take
	// precedence.
	Name string
	// Period is how often guidance is computed and published.
	Period time.Duration
	// Weights are users' base weights (others get 1), as in a node
	// monitor's --weights-file; SetWeights replaces them.
	Weights map[string]float64
	// SnapshotEvery and TableEvery are how many periods apart full
	// snapshots and resends of the name table go out (zero: the
	// fairgossip defaults); in between, deltas against the last snapshot.
	// They bound how long a node monitor that joined or missed a message
	// waits for guidance.
	SnapshotEvery, TableEvery int
	Log                       zerolog.Logger
}

// Stats describes the coordinator's last period.
type Stats struct {
	// Active is whether this coordinator publishes (the others stand by).
	Active bool
	// Version is the last published guidance version.
	Version uint64
	// Reports, Users and Types are what the last solve covered.
	Reports, Users, Types int
	// Solve is how long the last period's computation took (CMMF solve
	// and encoding); Chunks and Bytes the size of the guidance it
	// published (name table included), TableChunks the name table's share
	// of Chunks.
	Solve         time.Duration
	Chunks, Bytes int
	TableChunks   int
	// Delta is whether the last guidance was a delta against the last
	// snapshot rather than a snapshot.
	Delta bool
	// GossipLoad estimates the bytes per second each member sends to
	// spread the last period's guidance (fairgossip's GossipLoad with
	// RetransmitMult 4, the lan and local profiles'); above
	// fairgossip.LANGossipBudget members cannot keep up.
	GossipLoad float64
	// Published counts guidance versions published.
	Published uint64
}

// Daemon is a running coordinator.
type Daemon struct {
	cfg     Config
	Cluster *membership.Cluster
	log     zerolog.Logger
	stop    chan struct{}
	done    chan struct{}

	// pub encodes guidance; a fresh one each time this coordinator becomes
	// active. Used by the loop goroutine only.
	pub        *fairgossip.Publisher
	overBudget bool // last period's GossipLoad was over the LAN budget
	// rewarm is set when a member joins (or returns from a partition):
	// the next periods resend the name table and a snapshot, which it
	// lacks. Set on memberlist's goroutines, taken by the loop.
	rewarm atomic.Bool

	mu      sync.Mutex
	weights map[string]float64
	reports map[string]received
	stats   Stats
}

// received is a node's latest report and when it came.
type received struct {
	r  fairgossip.Report
	at time.Time
}

// Start joins the gossip cluster as a coordinator and starts publishing
// when it is the active one.
func Start(cfg Config) (*Daemon, error) {
	if cfg.Period <= 0 {
		cfg.Period = DefaultPeriod
	}
	if err := checkWeights(cfg.Weights); err != nil {
		return nil, err
	}
	cluster, err := membership.Start(membership.Config{
		Name: cfg.Name, Bind: cfg.Gossip, Seeds: cfg.Join, Profile: cfg.GossipProfile, Keyring: cfg.Keyring,
		Meta: membership.Meta{Role: membership.RoleCoordinator}, Log: cfg.Log,
	})
	if err != nil {
		return nil, err
	}
	d := &Daemon{
		cfg: cfg, Cluster: cluster, log: cfg.Log.With().Str("component", "coordinator").Logger(),
		stop: make(chan struct{}), done: make(chan struct{}),
		weights: copyWeights(cfg.Weights), reports: map[string]received{},
	}
	cluster.OnMessage(d.onMessage)
	cluster.Watch(func(e membership.Event) {
		if e.Kind == membership.Joined {
			d.rewarm.Store(true)
		}
	})
	go d.loop()
	d.log.Info().Str("gossip", cluster.Addr()).Str("name", cluster.Name()).Dur("period", cfg.Period).Msg("coordinator started")
	return d, nil
}

func checkWeights(w map[string]float64) error {
	for u, x := range w {
		if err := queue.CheckWeight(x); err != nil {
			return fmt.Errorf("weight of user %q: %w", u, err)
		}
	}
	return nil
}

func copyWeights(w map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(w))
	for u, x := range w {
		out[u] = x
	}
	return out
}

// SetWeights replaces users' base weights, all or nothing (on SIGHUP).
func (d *Daemon) SetWeights(w map[string]float64) error {
	if err := checkWeights(w); err != nil {
		return err
	}
	d.mu.Lock()
	d.weights = copyWeights(w)
	d.mu.Unlock()
	return nil
}

// Stats returns a snapshot of the last period.
func (d *Daemon) Stats() Stats {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stats
}

// Close leaves the gossip cluster, so a standby takes over at once.
func (d *Daemon) Close() error {
	close(d.stop)
	<-d.done
	err := d.Cluster.Leave(time.Second)
	d.log.Info().Msg("coordinator stopped")
	return err
}

// Kill stops abruptly, as a crash would, for fault tests.
func (d *Daemon) Kill() {
	close(d.stop)
	<-d.done
	d.Cluster.Shutdown()
}

func (d *Daemon) onMessage(b []byte) {
	if fairgossip.Kind(b) != "report" {
		return
	}
	r, err := fairgossip.DecodeReport(b)
	if err != nil {
		d.log.Debug().Err(err).Msg("malformed report ignored")
		return
	}
	now := time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	old, ok := d.reports[r.Node]
	// A restarted node numbers its reports afresh; a report older than a
	// period is replaced whatever its number.
	if ok && r.Seq <= old.r.Seq && now.Sub(old.at) < d.cfg.Period {
		return
	}
	d.reports[r.Node] = received{r: r, at: now}
}

func (d *Daemon) loop() {
	defer close(d.done)
	t := time.NewTicker(d.cfg.Period)
	defer t.Stop()
	wasActive := false
	for {
		select {
		case <-d.stop:
			return
		case now := <-t.C:
			active, _ := d.Cluster.ActiveCoordinator()
			isActive := active == d.Cluster.Name()
			if isActive && !wasActive {
				d.pub = &fairgossip.Publisher{SnapshotEvery: d.cfg.SnapshotEvery, TableEvery: d.cfg.TableEvery}
			}
			if d.rewarm.Swap(false) && d.pub != nil {
				d.pub.Rewarm()
			}
			if isActive != wasActive {
				d.log.Info().Bool("active", isActive).Str("active_coordinator", active).Msg("coordinator role changed")
				wasActive = isActive
			}
			d.mu.Lock()
			d.stats.Active = isActive
			d.mu.Unlock()
			if isActive {
				d.publish(now)
			}
		}
	}
}

// publish computes this period's guidance from fresh reports of live node
// monitors and broadcasts it.
func (d *Daemon) publish(now time.Time) {
	live := map[string]bool{}
	for _, m := range d.Cluster.Members(membership.RoleNodeMonitor) {
		live[m.Name] = true
	}
	d.mu.Lock()
	var reports []fairshare.NodeReport
	for node, rc := range d.reports {
		if !live[node] || now.Sub(rc.at) > reportsKept*d.cfg.Period {
			delete(d.reports, node)
			continue
		}
		nr := fairshare.NodeReport{Node: node, Type: rc.r.Type, Slots: int(rc.r.Slots), Users: map[string]fairshare.Usage{}}
		for _, u := range rc.r.Users {
			nr.Users[u.User] = fairshare.Usage{Queued: int(u.Queued), Running: int(u.Running)}
		}
		reports = append(reports, nr)
	}
	weights := d.weights
	d.mu.Unlock()

	// Wall-clock versions keep growing across a takeover, so node
	// monitors take a new coordinator's guidance as newer.
	// A clock stepped back must not stall publishing.
	version := max(uint64(now.UnixNano()), d.Stats().Version+1)
	start := time.Now()
	g, pub, err := Guide(reports, func(u string) float64 {
		if w, ok := weights[u]; ok {
			return w
		}
		return 1
	}, d.pub, version)
	solve := time.Since(start)
	if err != nil {
		d.log.Error().Err(err).Msg("guidance not published")
		return
	}
	for _, m := range pub.Table {
		d.Cluster.Broadcast(m.Key, m.Bytes)
	}
	for _, m := range pub.Guidance {
		d.Cluster.Broadcast(m.Key, m.Bytes)
	}
	load := pub.GossipLoad(len(d.Cluster.Members("")), 4, d.cfg.Period.Seconds())
	if over := load > fairgossip.LANGossipBudget; over != d.overBudget {
		d.overBudget = over
		ev := d.log.Info()
		if over {
			ev = d.log.Warn()
		}
		ev.Float64("bytes_per_s_per_member", load).Int("budget", fairgossip.LANGossipBudget).Bool("over", over).
			Msg("guidance gossip load against memberlist's LAN budget (over: members cannot keep up; lengthen --period)")
	}
	d.recordGuidance(version, now, len(reports), g) // for /status (status.go)
	d.mu.Lock()
	d.stats = Stats{Active: true, Version: version, Reports: len(reports), Users: g.Users, Types: g.Types,
		Solve: solve, Chunks: len(pub.Table) + len(pub.Guidance), Bytes: pub.Bytes(), TableChunks: len(pub.Table),
		Delta: pub.Base != 0, GossipLoad: load, Published: d.stats.Published + 1}
	d.mu.Unlock()
}

// Guide is one period's work of the active coordinator: solve CMMF over
// the node monitors' reports (weight gives users' base weights) and
// encode the result as version of the guidance with pub. It is the
// publish path without the gossip, for benchmarks.
func Guide(reports []fairshare.NodeReport, weight func(user string) float64, pub *fairgossip.Publisher, version uint64) (fairshare.Guidance, fairgossip.Publication, error) {
	g, err := fairshare.Compute(reports, weight)
	if err != nil {
		return fairshare.Guidance{}, fairgossip.Publication{}, fmt.Errorf("computing guidance: %w", err)
	}
	running := make(map[string]uint64, len(g.Running))
	for u, n := range g.Running {
		running[u] = uint64(n)
	}
	p, err := pub.Publish(version, running, g.TypeWeights)
	if err != nil {
		return fairshare.Guidance{}, fairgossip.Publication{}, fmt.Errorf("encoding guidance: %w", err)
	}
	return g, p, nil
}
