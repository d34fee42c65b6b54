package coordinator

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/core/fairshare"
	"github.com/sparrowfleet/sparrow/core/locality"
	"github.com/sparrowfleet/sparrow/core/queue"
	"github.com/sparrowfleet/sparrow/internal/fairgossip"
	"github.com/sparrowfleet/sparrow/internal/membership"
)

// DefaultPeriod is how often the active coordinator publishes guidance.
const DefaultPeriod = time.Second

// Delivery modes: how the active coordinator's guidance reaches node
// monitors (Config.Delivery).
const (
	// DeliveryGossip spreads the whole guidance to every member by gossip
	// (fairgossip's name table, snapshots and deltas, relayed by node
	// monitors). Every member carries every user's counts and every
	// type's weights, so its cost per member grows with users x types:
	// it fits memberlist's LAN budget up to about a thousand nodes and a
	// few hundred users at a 1 s period.
	DeliveryGossip = "gossip"
	// DeliveryDirect answers each node monitor that reported, point to
	// point over best-effort UDP, with only its users' running counts and
	// its type's weights for them (fairgossip.EncodeReply). Nothing is
	// relayed; a node receives a reply the size of its own report.
	DeliveryDirect = "direct"
	// DeliveryBoth does both (for a migration, or to compare).
	DeliveryBoth = "both"
)

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
	// Delivery is DeliveryGossip (the default, ""), DeliveryDirect or
	// DeliveryBoth.
	Delivery string
	// Locality turns on the locality prices: every period the
	// active coordinator solves Quincy's flow over the node monitors'
	// reports and sends the prices to every scheduler (locality.go).
	// LocalityParams are the flow's weights; the zero value means
	// locality.DefaultParams.
	Locality       bool
	LocalityParams locality.Params
	Log            zerolog.Logger

	// price replaces the locality loop's own Pricer in tests (a solve
	// that takes as long as the test wants); nil in production.
	price func([]locality.NodeLoad, locality.Params, uint64) (locality.Outcome, []byte, error)
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
	// Replies and ReplyBytes are the direct replies (messages, all parts)
	// the last period sent and their bytes, ReplyFailed those that could
	// not be sent (node gone, or too many users for one reply), and
	// ReplyEncode the time encoding them took; zero unless Delivery is
	// direct or both.
	Replies, ReplyBytes, ReplyFailed int
	ReplyEncode                      time.Duration
	// Locality describes the locality prices (zero unless
	// Config.Locality).
	Locality LocalityStats
}

// Daemon is a running coordinator.
type Daemon struct {
	cfg     Config
	Cluster *membership.Cluster
	log     zerolog.Logger
	stop    chan struct{}
	// loops counts the running period loops: the guidance loop and, with
	// Config.Locality, the locality loop.
	loops sync.WaitGroup

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
	// loc are the locality prices' stats, kept apart from stats (which
	// publish replaces each period); sending marks the schedulers with a
	// prices send under way, and sends waits for those goroutines.
	loc     LocalityStats
	sending map[string]bool
	sends   sync.WaitGroup
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
	switch cfg.Delivery {
	case "":
		cfg.Delivery = DeliveryGossip
	case DeliveryGossip, DeliveryDirect, DeliveryBoth:
	default:
		return nil, fmt.Errorf("coordinator: delivery %q: want %q, %q or %q", cfg.Delivery, DeliveryGossip, DeliveryDirect, DeliveryBoth)
	}
	if cfg.Locality {
		if cfg.LocalityParams == (locality.Params{}) {
			cfg.LocalityParams = locality.DefaultParams()
		}
		if err := cfg.LocalityParams.Validate(); err != nil {
			return nil, fmt.Errorf("coordinator: %w", err)
		}
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
		stop:    make(chan struct{}),
		weights: copyWeights(cfg.Weights), reports: map[string]received{}, sending: map[string]bool{},
	}
	cluster.OnMessage(d.onMessage)
	cluster.Watch(func(e membership.Event) {
		if e.Kind == membership.Joined {
			d.rewarm.Store(true)
		}
	})
	d.loops.Add(1)
	go d.loop()
	if cfg.Locality {
		d.loops.Add(1)
		go d.localityLoop()
	}
	d.log.Info().Str("gossip", cluster.Addr()).Str("name", cluster.Name()).Dur("period", cfg.Period).Str("delivery", cfg.Delivery).
		Bool("locality", cfg.Locality).Msg("coordinator started")
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
	s := d.stats
	s.Locality = d.loc
	return s
}

// Close leaves the gossip cluster, so a standby takes over at once.
func (d *Daemon) Close() error {
	close(d.stop)
	d.loops.Wait()
	err := d.Cluster.Leave(time.Second)
	d.sends.Wait()
	d.log.Info().Msg("coordinator stopped")
	return err
}

// Kill stops abruptly, as a crash would, for fault tests.
func (d *Daemon) Kill() {
	close(d.stop)
	d.loops.Wait()
	d.Cluster.Shutdown()
	d.sends.Wait()
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

// loop publishes fair-share guidance every period while this coordinator
// is the active one. Locality prices run on their own loop
// (localityLoop), so a long flow solve never delays guidance.
func (d *Daemon) loop() {
	defer d.loops.Done()
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
// monitors and delivers it: by gossip, by direct replies, or both
// (Config.Delivery).
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
	weight := func(u string) float64 {
		if w, ok := weights[u]; ok {
			return w
		}
		return 1
	}
	gossips := d.cfg.Delivery != DeliveryDirect
	start := time.Now()
	var (
		g   fairshare.Guidance
		pub fairgossip.Publication
		err error
	)
	if gossips {
		g, pub, err = Guide(reports, weight, d.pub, version)
	} else {
		g, err = Solve(reports, weight)
	}
	solve := time.Since(start)
	if err != nil {
		d.log.Error().Err(err).Msg("guidance not published")
		return
	}
	st := Stats{Active: true, Version: version, Reports: len(reports), Users: g.Users, Types: g.Types,
		Solve: solve, Published: d.Stats().Published + 1}
	if gossips {
		d.broadcast(pub, &st)
	}
	if d.cfg.Delivery != DeliveryGossip {
		d.reply(reports, g, version, &st)
	}
	d.recordGuidance(version, now, len(reports), g) // for /status (status.go)
	d.mu.Lock()
	d.stats = st
	d.mu.Unlock()
}

// broadcast spreads a period's guidance by gossip and records its size
// and load in st.
func (d *Daemon) broadcast(pub fairgossip.Publication, st *Stats) {
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
			Msg("guidance gossip load against memberlist's LAN budget (over: members cannot keep up; lengthen --period or use --delivery direct)")
	}
	st.Chunks, st.Bytes, st.TableChunks = len(pub.Table)+len(pub.Guidance), pub.Bytes(), len(pub.Table)
	st.Delta, st.GossipLoad = pub.Base != 0, load
}

// reply sends each reporting node its direct reply, best effort (a lost
// one leaves the node on its previous guidance for a period), and records
// the counts in st.
func (d *Daemon) reply(reports []fairshare.NodeReport, g fairshare.Guidance, version uint64, st *Stats) {
	start := time.Now()
	replies, err := Replies(reports, g, version)
	st.ReplyEncode = time.Since(start)
	if err != nil {
		st.ReplyFailed += len(reports) - len(replies)
		d.log.Warn().Err(err).Msg("some direct replies not encoded")
	}
	var failed []error
	for _, r := range replies {
		for _, m := range r.Msgs {
			if err := d.Cluster.SendBestEffortTo(r.Node, m); err != nil {
				st.ReplyFailed++
				if len(failed) < 3 {
					failed = append(failed, err)
				}
				continue
			}
			st.Replies++
			st.ReplyBytes += len(m)
		}
	}
	if len(failed) > 0 {
		d.log.Debug().Err(errors.Join(failed...)).Int("failed", st.ReplyFailed).Msg("direct replies not sent")
	}
}

// NodeReply is one node's direct reply: its messages, all parts.
type NodeReply struct {
	Node string
	Msgs [][]byte
}

// Replies encodes version of the guidance g as direct replies, one per
// report: each node gets, for the users of its report (by name), their
// cluster-wide running counts and their CMMF weights on its machine type.
// Every reply carries the weights (the coordinator does not know which
// nodes apply them; they cost 1 to 3 bytes a user). A node whose reply
// cannot be encoded is left out and named in the error; the others are
// returned.
func Replies(reports []fairshare.NodeReport, g fairshare.Guidance, version uint64) ([]NodeReply, error) {
	out := make([]NodeReply, 0, len(reports))
	var errs []error
	var users []fairgossip.ReplyUser
	for _, r := range reports {
		names := make([]string, 0, len(r.Users))
		for u := range r.Users {
			names = append(names, u)
		}
		slices.Sort(names)
		tw := g.TypeWeights[r.Type]
		users = users[:0]
		for _, u := range names {
			users = append(users, fairgossip.ReplyUser{User: u, Running: uint64(max(g.Running[u], 0)), Weight: fairgossip.QuantizeWeight(tw[u])})
		}
		msgs, err := fairgossip.EncodeReply(version, true, users)
		if err != nil {
			errs = append(errs, fmt.Errorf("reply to %s: %w", r.Node, err))
			continue
		}
		out = append(out, NodeReply{Node: r.Node, Msgs: msgs})
	}
	return out, errors.Join(errs...)
}

// Guide is one period's work of the active coordinator: Solve, then
// Encode. It is the publish path without the gossip.
func Guide(reports []fairshare.NodeReport, weight func(user string) float64, pub *fairgossip.Publisher, version uint64) (fairshare.Guidance, fairgossip.Publication, error) {
	g, err := Solve(reports, weight)
	if err != nil {
		return fairshare.Guidance{}, fairgossip.Publication{}, err
	}
	p, err := Encode(pub, version, g)
	if err != nil {
		return fairshare.Guidance{}, fairgossip.Publication{}, err
	}
	return g, p, nil
}

// Solve computes CMMF guidance over the node monitors' reports; weight
// gives users' base weights.
func Solve(reports []fairshare.NodeReport, weight func(user string) float64) (fairshare.Guidance, error) {
	g, err := fairshare.Compute(reports, weight)
	if err != nil {
		return fairshare.Guidance{}, fmt.Errorf("computing guidance: %w", err)
	}
	return g, nil
}

// Encode encodes g as version of the gossiped guidance with pub.
func Encode(pub *fairgossip.Publisher, version uint64, g fairshare.Guidance) (fairgossip.Publication, error) {
	running := make(map[string]uint64, len(g.Running))
	for u, n := range g.Running {
		running[u] = uint64(n)
	}
	p, err := pub.Publish(version, running, g.TypeWeights)
	if err != nil {
		return fairgossip.Publication{}, fmt.Errorf("encoding guidance: %w", err)
	}
	return p, nil
}
