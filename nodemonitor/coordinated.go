package nodemonitor

import (
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/core/placement"
	"github.com/sparrowfleet/sparrow/internal/fairgossip"
	"github.com/sparrowfleet/sparrow/internal/membership"
)

// Defaults for CoordinationConfig's zero fields.
const (
	DefaultReportEvery   = time.Second
	DefaultGuidanceStale = 5 * time.Second
)

// CoordinationConfig says how a node monitor works with the optional
// fairness coordinator. Without a live coordinator nothing changes: the
// node decides locally, and reports only its load to schedulers that ask.
type CoordinationConfig struct {
	// ReportEvery is how often the node reports its per-user work to the
	// active coordinator (default 1 s, the coordinator's default period),
	// and its load to schedulers that ask (sendLoad).
	ReportEvery time.Duration
	// Stale is how long guidance stays in force without a newer version;
	// then the node falls back to its local weights (default 5 s).
	Stale time.Duration
	// Weights applies the coordinator's CMMF weights for this node's
	// machine type to its weighted fair queue ("fair" or "priority"). A
	// "choosy" queue uses the cluster-wide running counts either way.
	Weights bool
}

// coordination is a node monitor's side of the coordinator protocol: a
// report every period, guidance assembled from gossip, and the fall back
// when guidance goes stale. Its loop runs in one goroutine; OnMessage
// handlers run on memberlist's and take mu.
type coordination struct {
	cfg     CoordinationConfig
	nm      *NodeMonitor
	cluster *membership.Cluster
	node    string
	mtype   string
	rack    string // the node's "rack" attribute, for locality prices
	slots   int
	log     zerolog.Logger
	stop    chan struct{}
	done    chan struct{}

	mu        sync.Mutex
	rx        fairgossip.Receiver
	replies   fairgossip.ReplyAssembler // direct replies (coordinator --delivery direct)
	active    string                    // coordinator whose guidance is being assembled
	installed time.Time                 // when the guidance in force arrived (zero: none)
	version   uint64
	// current is whether version came from the active coordinator: then
	// an older or equal version from the other delivery path (gossip or
	// direct reply, when the coordinator uses both) is not installed.
	current bool
	seq     uint64
}

// MachineType is the canonical name of the machine type of a node with
// these attributes: nodes with equal attributes are interchangeable for
// every constraint, so they are one type for the coordinator.
func MachineType(attrs map[string]string) string {
	if len(attrs) == 0 {
		return "default"
	}
	kv := make([]string, 0, len(attrs))
	for k, v := range attrs {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	return strings.Join(kv, ",")
}

func startCoordination(cfg CoordinationConfig, nm *NodeMonitor, cluster *membership.Cluster, attrs map[string]string, slots int, log zerolog.Logger) *coordination {
	if cfg.ReportEvery <= 0 {
		cfg.ReportEvery = DefaultReportEvery
	}
	if cfg.Stale <= 0 {
		cfg.Stale = DefaultGuidanceStale
	}
	c := &coordination{
		cfg: cfg, nm: nm, cluster: cluster, node: cluster.Name(), mtype: MachineType(attrs), rack: attrs[placement.RackAttr], slots: slots,
		log: log.With().Str("component", "coordination").Logger(), stop: make(chan struct{}), done: make(chan struct{}),
	}
	// Only this node's type's weights are kept; the others are relayed.
	c.rx.Type = c.mtype
	cluster.OnMessage(c.onMessage)
	go c.loop()
	return c
}

func (c *coordination) close() {
	close(c.stop)
	<-c.done
}

// loop reports every period while someone listens (a live coordinator,
// or schedulers that ask for load reports) and expires guidance while
// some is in force. Otherwise it sleeps until the view changes: a node
// monitor in a fleet without a coordinator does no work each period.
func (c *coordination) loop() {
	defer close(c.done)
	changed := make(chan struct{}, 1)
	c.cluster.Watch(func(ev membership.Event) {
		// Only schedulers and coordinators listen: the other members'
		// news, the bulk of a large fleet's, changes nothing here.
		if r := ev.Member.Meta.Role; r != membership.RoleScheduler && r != membership.RoleCoordinator {
			return
		}
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	var t *time.Ticker
	defer func() {
		if t != nil {
			t.Stop()
		}
	}()
	to := c.listeners()
	for {
		var tick <-chan time.Time
		if to.any() || c.guided() {
			if t == nil {
				t = time.NewTicker(c.cfg.ReportEvery)
			}
			tick = t.C
		} else if t != nil {
			t.Stop()
			t = nil
		}
		select {
		case <-c.stop:
			return
		case <-changed:
			to = c.listeners()
		case now := <-tick:
			c.expire(now)
			c.report(to)
		}
	}
}

// listeners is who hears a node's reports: the active coordinator, if
// any, and the schedulers that ask for load reports.
type listeners struct {
	coordinator string
	load        []string
}

func (l listeners) any() bool { return l.coordinator != "" || len(l.load) > 0 }

// listeners reads the view for who hears this node's reports.
func (c *coordination) listeners() listeners {
	var l listeners
	l.coordinator, _ = c.cluster.ActiveCoordinator()
	for _, m := range c.cluster.Members(membership.RoleScheduler) {
		if m.Meta.Attrs[membership.AttrLoadReports] == "1" {
			l.load = append(l.load, m.Name)
		}
	}
	return l
}

// guided reports whether coordinator guidance is in force.
func (c *coordination) guided() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.installed.IsZero()
}

// report sends this node's per-user work, its rack and its mean task run
// time to the active coordinator in to, if any, and its load to the
// schedulers in to that ask for it (sendLoad), coordinator or not.
func (c *coordination) report(to listeners) {
	c.mu.Lock()
	c.seq++
	r := fairgossip.Report{Node: c.node, Type: c.mtype, Slots: uint64(c.slots), Seq: c.seq, Rack: c.rack}
	c.mu.Unlock()
	r.TaskMillis = c.nm.taskMillis()
	for u, use := range c.nm.Usage() {
		r.Users = append(r.Users, fairgossip.Usage{User: u, Queued: uint64(use.Queued), Running: uint64(use.Running)})
	}
	c.sendLoad(r, to.load)
	if to.coordinator == "" {
		return
	}
	b, err := fairgossip.EncodeReport(r)
	if err == nil {
		err = c.cluster.SendTo(to.coordinator, b)
	}
	if err != nil {
		c.log.Debug().Err(err).Str("coordinator", to.coordinator).Msg("report not sent")
	}
}

// loadUser names the single entry of a load report sent to schedulers: its
// users are summed into one, so that it always fits one UDP packet.
const loadUser = "*"

// sendLoad sends r, its users summed into one entry, in one best-effort
// UDP packet to each scheduler named in to: those that ask for load
// reports (membership.AttrLoadReports: those with --max-queue-wait, which
// estimate queue waits from them, scheduler/admission.go); the others get
// nothing. A lost packet only leaves a scheduler's estimate older.
func (c *coordination) sendLoad(r fairgossip.Report, to []string) {
	if len(to) == 0 {
		return
	}
	sum := fairgossip.Usage{User: loadUser}
	for _, u := range r.Users {
		sum.Queued += u.Queued
		sum.Running += u.Running
	}
	r.Users = []fairgossip.Usage{sum}
	b, err := fairgossip.EncodeReport(r)
	if err != nil {
		c.log.Debug().Err(err).Msg("load report not encoded")
		return
	}
	for _, name := range to {
		if err := c.cluster.SendBestEffortTo(name, b); err != nil {
			c.log.Debug().Err(err).Str("scheduler", name).Msg("load report not sent")
		}
	}
}

// expire drops guidance older than Stale, once.
func (c *coordination) expire(now time.Time) {
	c.mu.Lock()
	stale := !c.installed.IsZero() && now.Sub(c.installed) > c.cfg.Stale
	if stale {
		c.installed, c.current = time.Time{}, false
		// A restarted coordinator may number its versions lower.
		c.rx.Forget()
		c.replies.Forget()
	}
	c.mu.Unlock()
	if stale {
		c.nm.DropGuidance()
		c.log.Warn().Dur("stale_after", c.cfg.Stale).Msg("coordinator guidance stale; back to local weights")
	}
}

// onMessage takes a name table or guidance chunk, relays it when it is new
// (memberlist does not relay user broadcasts, so spreading the guidance
// to every member is the members' job) and installs a completed version;
// or takes a part of a direct reply (sent to this node only: never
// relayed) and installs the version once all its parts arrived.
func (c *coordination) onMessage(b []byte) {
	switch fairgossip.Kind(b) {
	case "guidance", "names":
		c.onGossip(b)
	case "reply":
		c.onReply(b)
	}
}

// followLocked starts afresh when the active coordinator changed: a new
// coordinator may number its versions below the old one's (its clock).
// Called with c.mu held.
func (c *coordination) followLocked(active string) {
	if active == c.active {
		return
	}
	// It sends its name table and a snapshot in each of its first periods
	// (fairgossip.Warmup); direct replies are whole every period.
	c.rx.Forget()
	c.replies.Forget()
	c.active, c.current = active, false
}

// takeLocked reports whether version should be installed, and if so
// records it as the guidance in force. Called with c.mu held.
func (c *coordination) takeLocked(version uint64) (first bool, ok bool) {
	if c.current && version <= c.version {
		return false, false
	}
	first = c.installed.IsZero()
	c.installed, c.version, c.current = time.Now(), version, true
	return first, true
}

func (c *coordination) onGossip(b []byte) {
	active, _ := c.cluster.ActiveCoordinator()
	c.mu.Lock()
	c.followLocked(active)
	res, err := c.rx.Add(b)
	var first, take bool
	if res.Installed {
		first, take = c.takeLocked(res.Guidance.Version)
	}
	c.mu.Unlock()
	if res.Fresh {
		c.cluster.Broadcast(res.Key, b)
	}
	if err != nil {
		c.log.Debug().Err(err).Msg("malformed guidance ignored")
	}
	if !take {
		return
	}
	g := res.Guidance
	ng := Guidance{Version: g.Version, Running: make(map[string]float64, len(g.Running))}
	for u, n := range g.Running {
		ng.Running[u] = float64(n)
	}
	ng.Alloc = g.Weights[c.mtype]
	if c.cfg.Weights {
		ng.Weights = map[string]float64{}
		for u, w := range g.Weights[c.mtype] {
			ng.Weights[u] = w
		}
	}
	c.apply(ng, first, active, "gossip")
}

func (c *coordination) onReply(b []byte) {
	r, err := fairgossip.DecodeReply(b)
	if err != nil {
		c.log.Debug().Err(err).Msg("malformed direct reply ignored")
		return
	}
	active, _ := c.cluster.ActiveCoordinator()
	c.mu.Lock()
	c.followLocked(active)
	g, complete := c.replies.Add(r)
	var first, take bool
	if complete {
		first, take = c.takeLocked(g.Version)
	}
	c.mu.Unlock()
	if !take {
		return
	}
	ng := Guidance{Version: g.Version, Running: make(map[string]float64, len(g.Running))}
	for u, n := range g.Running {
		ng.Running[u] = float64(n)
	}
	ng.Alloc = g.Weights
	if c.cfg.Weights {
		// A reply without weights leaves every user at the floor, as
		// gossiped guidance without this type does.
		ng.Weights = map[string]float64{}
		for u, w := range g.Weights {
			ng.Weights[u] = w
		}
	}
	c.apply(ng, first, active, "direct")
}

// apply installs a version of guidance on the node monitor.
func (c *coordination) apply(ng Guidance, first bool, active, via string) {
	if _, err := c.nm.ApplyGuidance(ng); err != nil {
		c.log.Warn().Err(err).Msg("coordinator guidance not applied")
		return
	}
	if first {
		c.log.Info().Str("coordinator", active).Uint64("version", ng.Version).Int("users", len(ng.Running)).Str("via", via).
			Msg("following coordinator guidance")
	}
}

// GuidanceVersion returns the version of the guidance in force, and false
// when the node decides locally.
func (d *Daemon) GuidanceVersion() (uint64, bool) {
	c := d.coord
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.version, !c.installed.IsZero()
}
