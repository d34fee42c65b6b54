package coordinator

import (
	"fmt"
	"sync"
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
	Log     zerolog.Logger
}

// Stats describes the coordinator's last period.
type Stats struct {
	// Active is whether this coordinator publishes (the others stand by).
	Active bool
	// Version is the last published guidance version.
	Version uint64
	// Reports, Users and Types are what the last solve covered.
	Reports, Users, Types int
	// Solve is the last computation's duration; Chunks and Bytes the size
	// of the guidance it published.
	Solve         time.Duration
	Chunks, Bytes int
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

	start := time.Now()
	g, err := fairshare.Compute(reports, func(u string) float64 {
		if w, ok := weights[u]; ok {
			return w
		}
		return 1
	})
	solve := time.Since(start)
	if err != nil {
		d.log.Error().Err(err).Msg("guidance not computed")
		return
	}
	var users []fairgossip.UserShare
	for u, target := range g.Target {
		users = append(users, fairgossip.UserShare{User: u, Running: uint64(g.Running[u]), Target: float32(target)})
	}
	var tws []fairgossip.TypeWeight
	for typ, ws := range g.TypeWeights {
		for u, w := range ws {
			tws = append(tws, fairgossip.TypeWeight{Type: typ, User: u, Weight: float32(w)})
		}
	}
	// Wall-clock versions keep growing across a takeover, so node
	// monitors take a new coordinator's guidance as newer.
	version := uint64(now.UnixNano())
	chunks, err := fairgossip.EncodeGuidance(version, users, tws)
	if err != nil {
		d.log.Error().Err(err).Msg("guidance not encoded")
		return
	}
	bytes := 0
	for i, c := range chunks {
		d.Cluster.Broadcast(fmt.Sprintf("guidance/%d", i), c)
		bytes += len(c)
	}
	d.mu.Lock()
	d.stats = Stats{Active: true, Version: version, Reports: len(reports), Users: g.Users, Types: g.Types,
		Solve: solve, Chunks: len(chunks), Bytes: bytes, Published: d.stats.Published + 1}
	d.mu.Unlock()
}
