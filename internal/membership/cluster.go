package membership

import (
	"fmt"
	"log"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	gometrics "github.com/hashicorp/go-metrics"
	"github.com/hashicorp/memberlist"
	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/internal/buildinfo"
)

// Config configures a member.
type Config struct {
	// Name is the member's unique name; it defaults to the gossip address.
	Name string
	// Bind is the gossip "host:port" to bind. Port 0 picks a free port.
	Bind string
	// Advertise is the gossip "host:port" peers use; it defaults to Bind.
	// Set it explicitly when Bind is a wildcard or behind NAT.
	Advertise string
	// Seeds are gossip "host:port" addresses of existing members. A host
	// name stands for every address it resolves to and is resolved again
	// on every try. Until the member has joined a peer it retries after
	// 100 ms, doubling to a second; then every rejoin interval it joins
	// the seeds missing from its view.
	Seeds []string
	// Resolve resolves seed host names; nil means the system resolver.
	Resolve Resolver
	// Meta is what this member advertises. An empty Meta.Version is
	// filled with this binary's build.
	Meta Meta
	// Profile picks memberlist's timing: "lan" (default), "local" (fast
	// failure detection, for loopback and tests) or "wan".
	Profile string
	// Keyring, when set, encrypts gossip and refuses members without a key.
	Keyring *memberlist.Keyring
	// JoinLater makes Start bind and answer gossip but join the seeds only
	// when Join is called, so that a daemon can first complete its
	// metadata (its HTTP endpoint, its executors' apps) and join with it:
	// every metadata change after the join is news that every member of
	// the fleet relays, and a fleet that starts at once relays every
	// member's.
	JoinLater bool
	// Log receives the member's and memberlist's logs.
	Log zerolog.Logger
}

// Member is a live member in the view.
type Member struct {
	Name string
	// Gossip is the member's gossip "host:port".
	Gossip string
	Meta   Meta
}

// EventKind says what happened to a member.
type EventKind int

// The kinds of membership event.
const (
	Joined EventKind = iota
	Updated
	Left // left gracefully or was declared dead
)

// Event is a change in the view, delivered to watchers.
type Event struct {
	Kind   EventKind
	Member Member
}

// Cluster is this process's membership in the gossip cluster and its view of
// the other members. Safe for concurrent use. Watchers registered with Watch
// are called on memberlist's goroutines and must not block.
type Cluster struct {
	ml  *memberlist.Memberlist
	log zerolog.Logger
	// addr and name are fixed at start; memberlist rewrites its own node
	// record under its lock, so reading that later would race.
	addr, name string
	stop       chan struct{}
	done       sync.WaitGroup
	// seeds joins the configured seeds; nil without seeds. Set before
	// Start returns and never changed. joinOnce starts it, from Start or,
	// with Config.JoinLater, from Join.
	seeds    *seedJoiner
	joinOnce sync.Once
	// role is this member's, fixed at start. gossipLog is memberlist's
	// logger; statesKey and states are what memberlist reports of its
	// failure detector (states.go).
	role      Role
	gossipLog *gossipLog
	statesKey string
	states    *gossipStates

	mu       sync.RWMutex
	meta     []byte
	http     string // set by SetHTTPAddr; kept across SetMeta
	build    string // Meta.Version unless a Meta sets its own
	members  map[string]Member
	byRole   map[Role]int // members by role
	version  uint64
	watchers []func(Event)

	msgs messaging

	// spread serialises metadata updates (gossipMeta): pending says one is
	// wanted, spreading that a goroutine is making them; spreadDone is
	// signalled when that goroutine stops.
	spread             sync.Mutex
	pending, spreading bool
	spreadDone         *sync.Cond
}

// Start creates a member, binds its gossip port and joins the seeds.
func Start(cfg Config) (*Cluster, error) {
	build := cfg.Meta.Version
	if build == "" {
		build = buildinfo.Read().Short()
	}
	cfg.Meta.Version = build
	metaBytes, err := cfg.Meta.Encode()
	if err != nil {
		return nil, err
	}
	mc, err := memberlistConfig(cfg.Profile)
	if err != nil {
		return nil, err
	}
	bindHost, bindPort, err := splitHostPort(cfg.Bind)
	if err != nil {
		return nil, fmt.Errorf("gossip bind address: %w", err)
	}
	var advHost string
	var advPort int
	if cfg.Advertise != "" {
		if advHost, advPort, err = splitHostPort(cfg.Advertise); err != nil {
			return nil, fmt.Errorf("gossip advertise address: %w", err)
		}
	}
	c := &Cluster{
		log:       cfg.Log.With().Str("component", "membership").Logger(),
		stop:      make(chan struct{}),
		meta:      metaBytes,
		http:      cfg.Meta.HTTP,
		build:     build,
		members:   make(map[string]Member),
		byRole:    make(map[Role]int),
		role:      cfg.Meta.Role,
		gossipLog: newGossipLog(cfg.Log.With().Str("component", "memberlist").Logger(), time.Now),
	}
	c.spreadDone = sync.NewCond(&c.spread)
	mc.Logger = log.New(c.gossipLog, "", 0)
	c.statesKey, c.states = sink.register()
	mc.MetricLabels = []gometrics.Label{{Name: clusterLabel, Value: c.statesKey}}
	transport, err := listenGossip(bindHost, bindPort, mc.MetricLabels, mc.Logger.Printf)
	if err != nil {
		sink.unregister(c.statesKey)
		return nil, fmt.Errorf("start gossip on %s: %w", cfg.Bind, err)
	}
	mc.Transport = transport
	mc.BindAddr, mc.BindPort = bindHost, transport.Port()
	if cfg.Advertise != "" {
		mc.AdvertiseAddr, mc.AdvertisePort = advHost, advPort
	} else if bindHost != "" && bindHost != "0.0.0.0" && bindHost != "::" {
		mc.AdvertiseAddr, mc.AdvertisePort = bindHost, transport.Port()
	}
	mc.Name = cfg.Name
	if mc.Name == "" {
		mc.Name = cfg.Bind
	}
	mc.Delegate = (*delegate)(c)
	mc.Events = (*events)(c)
	mc.Keyring = cfg.Keyring
	if cfg.Keyring != nil {
		mc.GossipVerifyIncoming, mc.GossipVerifyOutgoing = true, true
	}
	// The queue exists before memberlist starts gossiping, which it does
	// from inside Create; it sizes retransmits by the view, which holds
	// the same live members as memberlist's own count.
	c.msgs.queue = &memberlist.TransmitLimitedQueue{NumNodes: c.numMembers, RetransmitMult: mc.RetransmitMult}
	ml, err := memberlist.Create(mc)
	if err != nil {
		_ = transport.Shutdown()
		sink.unregister(c.statesKey)
		return nil, fmt.Errorf("start gossip on %s: %w", cfg.Bind, err)
	}
	c.ml = ml
	local := ml.LocalNode()
	c.addr = net.JoinHostPort(local.Addr.String(), strconv.Itoa(int(local.Port)))
	c.name = local.Name
	if mc.Name == cfg.Bind && bindPort == 0 {
		c.log.Info().Str("gossip", c.Addr()).Msg("gossip bound to a free port")
	}
	if seeds := slices.DeleteFunc(slices.Clone(cfg.Seeds), func(s string) bool { return s == "" }); len(seeds) > 0 {
		j := &seedJoiner{
			seeds: seeds, self: c.addr, resolve: cfg.Resolve, join: ml.Join, exchange: ml.Join, live: c.liveAddrs,
			every: rejoinInterval(cfg.Profile), log: c.log,
			wait: newBackoff(joinBackoffMin, min(joinBackoffCap, rejoinInterval(cfg.Profile))),
		}
		if j.resolve == nil {
			j.resolve = net.DefaultResolver.LookupHost
		}
		c.seeds = j
		if !cfg.JoinLater {
			c.Join()
		}
	}
	return c, nil
}

// Join joins the seeds, once: Start does unless Config.JoinLater. The
// first try is made before Join returns, so that a member whose seeds are
// up has them in its view; then seeds missing from the view are joined in
// the background until the member leaves. Without seeds it does nothing.
func (c *Cluster) Join() {
	if c.seeds == nil {
		return
	}
	c.joinOnce.Do(func() {
		select {
		case <-c.stop:
			return // left before joining
		default:
		}
		// Metadata set before Join (SetMeta, SetHTTPAddr) reaches
		// memberlist's own record of this member only when spreadMeta
		// has made its update, in the background; the join's state
		// exchange carries that record, so wait for it, or the seeds
		// would first see this member without it. With no peer yet each
		// update waits at most metaUpdateWait.
		c.spread.Lock()
		for c.spreading {
			c.spreadDone.Wait()
		}
		c.spread.Unlock()
		joined := c.seeds.try()
		if !joined {
			c.log.Warn().Strs("seeds", c.seeds.seeds).Msg("no seed answered; retrying in the background")
		}
		c.done.Add(1)
		go func() {
			defer c.done.Done()
			c.seeds.run(joined, c.stop)
		}()
	})
}

func memberlistConfig(profile string) (*memberlist.Config, error) {
	switch profile {
	case "", "lan":
		mc := memberlist.DefaultLANConfig()
		// memberlist compresses every packet with a fresh LZW writer,
		// whose 64 KiB table is allocated and cleared per packet, probes
		// and acks included: on a LAN that is most of an idle member's
		// garbage for bytes that a LAN does not miss (pings gain nothing;
		// a push-pull of a thousand members is a few hundred KiB every
		// few minutes). The wan profile keeps it.
		mc.EnableCompression = false
		return mc, nil
	case "local":
		mc := memberlist.DefaultLocalConfig()
		// Loopback peers answer in microseconds; detect failures quickly.
		mc.ProbeInterval = 200 * time.Millisecond
		mc.ProbeTimeout = 100 * time.Millisecond
		mc.GossipInterval = 20 * time.Millisecond
		// Small clusters give epidemic gossip few relays; retransmit more
		// and sync often, so that an app registration reaches every
		// scheduler in milliseconds rather than at the next push/pull.
		mc.RetransmitMult = 4
		mc.PushPullInterval = time.Second
		// A member starved of CPU (a loaded test machine runs a whole fleet
		// on two cores) must have time to refute suspicion: a false death
		// makes schedulers report its running tasks lost. About 2 s here.
		mc.SuspicionMult = 6
		// Compressing state on loopback costs CPU for nothing; with a whole
		// fleet in one process it was ~5% of a benchmark's CPU.
		mc.EnableCompression = false
		return mc, nil
	case "wan":
		return memberlist.DefaultWANConfig(), nil
	}
	return nil, fmt.Errorf("unknown gossip profile %q (want lan, local or wan)", profile)
}

func splitHostPort(hp string) (string, int, error) {
	host, portStr, err := net.SplitHostPort(hp)
	if err != nil {
		return "", 0, fmt.Errorf("%q is not host:port: %w", hp, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("%q has a bad port", hp)
	}
	if host == "" {
		host = "0.0.0.0"
	}
	if net.ParseIP(host) == nil {
		// memberlist takes only IP addresses; resolve names (container
		// hostnames, say) here.
		ips, err := net.LookupIP(host)
		if err != nil || len(ips) == 0 {
			return "", 0, fmt.Errorf("%q: cannot resolve host %q: %v", hp, host, err)
		}
		host = ips[0].String()
		for _, ip := range ips {
			if ip.To4() != nil {
				host = ip.String()
				break
			}
		}
	}
	return host, port, nil
}

// rejoinInterval is how often a member that has joined a peer joins the
// seeds missing from its view again.
func rejoinInterval(profile string) time.Duration {
	if profile == "local" {
		return 2 * time.Second
	}
	return 10 * time.Second
}

// numMembers counts the live members in the view, this one included, at
// least one.
func (c *Cluster) numMembers() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return max(1, len(c.members))
}

// liveAddrs returns the gossip addresses of the members in the view, this
// member's own included, observers aside: a member that an observer
// (`sparrow status`) has joined is still alone in the fleet.
func (c *Cluster) liveAddrs() map[string]bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	live := make(map[string]bool, len(c.members))
	for _, m := range c.members {
		if m.Name == c.name || m.Meta.Role != RoleObserver {
			live[m.Gossip] = true
		}
	}
	return live
}

// Addr returns this member's advertised gossip "host:port".
func (c *Cluster) Addr() string { return c.addr }

// Name returns this member's name.
func (c *Cluster) Name() string { return c.name }

// SetMeta changes what this member advertises and gossips the change.
// An address given to SetHTTPAddr is kept, and so is the version when m
// has none: the daemons rebuild their metadata from their own copy, which
// does not know them.
func (c *Cluster) SetMeta(m Meta) error {
	c.mu.Lock()
	err := c.storeMetaLocked(m, c.http)
	c.mu.Unlock()
	if err != nil {
		return err
	}
	return c.gossipMeta()
}

// SetHTTPAddr advertises addr as this member's operator HTTP endpoint
// (Meta.HTTP) from now on. The endpoint starts after the daemon has joined,
// hence a setter rather than a Config field.
func (c *Cluster) SetHTTPAddr(addr string) error {
	c.mu.Lock()
	// Decode and store under one lock, so that a concurrent SetMeta (a
	// node monitor advertising a new app) is not overwritten.
	m, err := DecodeMeta(c.meta)
	if err == nil {
		err = c.storeMetaLocked(m, addr)
	}
	c.mu.Unlock()
	if err != nil {
		return err
	}
	return c.gossipMeta()
}

// storeMetaLocked encodes m, advertising http if set, as the metadata
// memberlist will gossip. Called with c.mu held.
func (c *Cluster) storeMetaLocked(m Meta, http string) error {
	if http != "" {
		m.HTTP = http
	}
	if m.Version == "" {
		m.Version = c.build
	}
	b, err := m.Encode()
	if err != nil {
		return err
	}
	c.meta, c.http = b, http
	return nil
}

// gossipMeta starts spreading the stored metadata; memberlist reads it
// back through the delegate. It does not wait: memberlist's UpdateNode
// blocks until the update has been sent to enough members, which behind a
// busy broadcast queue outlasts any sensible wait (a node monitor
// registering an executor waited its full second on every call, and
// forty of them took 34 s to start), and the update spreads either way.
//
// One goroutine makes the updates, one at a time, the last after the last
// change: UpdateNode reads the metadata and then takes the next
// incarnation number, unlocked, so two calls at once could give the older
// metadata the newer number, which then won everywhere for good (a node
// monitor whose two executors registered together advertised one app;
// TestConcurrentMetaUpdatesEndWithTheLast). memberlist does not make
// concurrent UpdateNode calls safe either.
func (c *Cluster) gossipMeta() error {
	c.spread.Lock()
	c.pending = true
	start := !c.spreading
	c.spreading = true
	c.spread.Unlock()
	if start {
		go c.spreadMeta()
	}
	return nil
}

// spreadMeta makes metadata updates while gossipMeta asks for them.
func (c *Cluster) spreadMeta() {
	for {
		c.spread.Lock()
		if !c.pending {
			c.spreading = false
			c.spreadDone.Broadcast()
			c.spread.Unlock()
			return
		}
		c.pending = false
		c.spread.Unlock()
		if err := c.ml.UpdateNode(metaUpdateWait); err != nil {
			c.log.Debug().Err(err).Msg("metadata update still spreading")
		}
	}
}

// metaUpdateWait bounds how long spreadMeta waits to hear that an update
// was sent before it makes the next: short, since the update spreads
// either way and a newer one should not queue behind it.
const metaUpdateWait = 100 * time.Millisecond

// Members returns the live members with the given role (all roles if
// role is empty), sorted by name.
func (c *Cluster) Members(role Role) []Member {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]Member, 0, len(c.members))
	for _, m := range c.members {
		if role == "" || m.Meta.Role == role {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b Member) int {
		if a.Name < b.Name {
			return -1
		} else if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return out
}

// SyncWithSeed exchanges full state with one seed (the first address
// that answers) and returns its address. Gossip alone does not promise a
// member every other member soon: memberlist retransmits each change a
// bounded number of times, to members that knew the sender then, so a
// member the fleet learned of late can miss the news of members that
// joined just before it until the next push-pull (30 s on the lan
// profile). An observer (`sparrow status`) calls this before its first
// look and then every 30 s while it watches. It costs one
// TCP round trip per seed tried, carrying the whole view both ways. A
// member started without seeds gets an error.
func (c *Cluster) SyncWithSeed() (string, error) {
	if c.seeds == nil {
		return "", fmt.Errorf("no seeds configured")
	}
	return c.seeds.syncOne()
}

// Version increases whenever the view changes, so callers can cache
// derived views.
func (c *Cluster) Version() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.version
}

// Watch registers fn to be called on every change in the view.
func (c *Cluster) Watch(fn func(Event)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.watchers = append(c.watchers, fn)
}

// Leave tells the cluster this member is going, waits up to timeout for the
// message to spread, and shuts gossip down. When every peer is leaving at
// once (a whole fleet stopped together) nobody is left to carry the
// message and the wait times out; that is logged, not returned, because the
// member has left all the same.
func (c *Cluster) Leave(timeout time.Duration) error {
	close(c.stop)
	c.done.Wait()
	if err := c.ml.Leave(timeout); err != nil {
		c.log.Info().Err(err).Msg("leave message not confirmed; peers will detect the departure by failure detection")
	}
	defer sink.unregister(c.statesKey)
	if err := c.ml.Shutdown(); err != nil {
		return fmt.Errorf("leave gossip cluster: %w", err)
	}
	return nil
}

// Shutdown stops gossip without telling the cluster, as a crash would;
// peers declare this member dead after their failure-detection timeout.
func (c *Cluster) Shutdown() error {
	close(c.stop)
	c.done.Wait()
	defer sink.unregister(c.statesKey)
	if err := c.ml.Shutdown(); err != nil {
		return fmt.Errorf("shut down gossip: %w", err)
	}
	return nil
}

func (c *Cluster) apply(kind EventKind, n *memberlist.Node) {
	m := Member{Name: n.Name, Gossip: net.JoinHostPort(n.Addr.String(), strconv.Itoa(int(n.Port)))}
	if kind != Left {
		meta, err := DecodeMeta(n.Meta)
		if err != nil {
			c.log.Warn().Err(err).Str("member", n.Name).Msg("ignoring member with unreadable metadata")
			return
		}
		m.Meta = meta
	}
	c.mu.Lock()
	if kind == Left {
		old, ok := c.members[n.Name]
		if !ok {
			c.mu.Unlock()
			return
		}
		m.Meta = old.Meta
		delete(c.members, n.Name)
		c.countRoleLocked(old.Meta.Role, -1)
	} else {
		if old, ok := c.members[n.Name]; ok {
			c.countRoleLocked(old.Meta.Role, -1)
		}
		c.members[n.Name] = m
		c.countRoleLocked(m.Meta.Role, 1)
	}
	c.version++
	watchers := slices.Clone(c.watchers)
	c.mu.Unlock()
	for _, w := range watchers {
		w(Event{Kind: kind, Member: m})
	}
}

// countRoleLocked adds d to the members counted in role. Called with c.mu
// held.
func (c *Cluster) countRoleLocked(role Role, d int) {
	c.byRole[role] += d
	if c.byRole[role] == 0 {
		delete(c.byRole, role)
	}
}

// delegate serves this member's metadata to memberlist.
type delegate Cluster

func (d *delegate) NodeMeta(limit int) []byte {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.meta
}
func (d *delegate) NotifyMsg(b []byte) { (*Cluster)(d).deliver(b) }
func (d *delegate) GetBroadcasts(overhead, limit int) [][]byte {
	return d.msgs.queue.GetBroadcasts(overhead, limit)
}
func (d *delegate) LocalState(join bool) []byte            { return nil }
func (d *delegate) MergeRemoteState(buf []byte, join bool) {}

// events feeds memberlist's notifications into the view.
type events Cluster

func (e *events) NotifyJoin(n *memberlist.Node)   { (*Cluster)(e).apply(Joined, n) }
func (e *events) NotifyLeave(n *memberlist.Node)  { (*Cluster)(e).apply(Left, n) }
func (e *events) NotifyUpdate(n *memberlist.Node) { (*Cluster)(e).apply(Updated, n) }
