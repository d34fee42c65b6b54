package dashboard

import (
	"context"
	"net/http"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sparrowfleet/sparrow/internal/httpapi"
	"github.com/sparrowfleet/sparrow/internal/membership"
)

// Source is the gossip view the dashboard shows; *membership.Cluster is
// one. Members("") lists every live member.
type Source interface {
	Members(role membership.Role) []membership.Member
}

// Defaults of Config's zero fields.
const (
	DefaultInterval      = 2 * time.Second
	DefaultHistory       = 300 // ten minutes at the default interval
	DefaultMaxUsers      = 24
	DefaultMaxSchedulers = 32
	DefaultForgetDead    = 10 * time.Minute
	DefaultViewWait      = 500 * time.Millisecond
)

// Bounds on what one member's /status may make the dashboard keep.
const (
	maxReasonBytes  = 200
	maxUsersPerNode = 256
	maxAppsPerNode  = 64
	maxRacks        = 256
	// otherUsers is the series that sums the users past Config.MaxUsers.
	otherUsers = "(other users)"
)

// Config says what a Dashboard shows and how much it keeps.
type Config struct {
	Source  Source
	Fetcher Fetcher
	// Self is the name of the member serving the dashboard when it is an
	// observer that should not list itself; empty lists everyone.
	Self string
	// Interval is the polling period, and the page's refresh period.
	Interval time.Duration
	// History is the number of samples kept per series.
	History int
	// MaxUsers and MaxSchedulers bound the series kept; users past the
	// bound are summed into one series.
	MaxUsers, MaxSchedulers int
	// ForgetDead is how long a member gone from gossip is still shown,
	// as dead.
	ForgetDead time.Duration
	// Parallel bounds the /status requests in flight at once.
	Parallel int
	// IdleAfter, when positive, stops polling once no page has been
	// asked for in that long, and resumes on the next page view: a
	// daemon that serves the dashboard costs the fleet nothing while
	// nobody looks. Zero polls always (`sparrow ui`).
	IdleAfter time.Duration
	// ViewWait bounds how long a page view waits for the poll it needs
	// (the dashboard's first, or its first after a sleep) before it shows
	// what the dashboard knows: at least the gossip view, with members
	// whose /status is not read yet shown alive. The poll goes on, and the
	// page's next refresh shows it. Reading a thousand members' /status
	// takes about a second.
	ViewWait time.Duration
}

func (c *Config) fill() {
	if c.Interval <= 0 {
		c.Interval = DefaultInterval
	}
	if c.History <= 0 {
		c.History = DefaultHistory
	}
	if c.MaxUsers <= 0 {
		c.MaxUsers = DefaultMaxUsers
	}
	if c.MaxSchedulers <= 0 {
		c.MaxSchedulers = DefaultMaxSchedulers
	}
	if c.ForgetDead <= 0 {
		c.ForgetDead = DefaultForgetDead
	}
	if c.Parallel <= 0 {
		c.Parallel = 32
	}
	if c.ViewWait <= 0 {
		c.ViewWait = DefaultViewWait
	}
}

// Health is what the dashboard last learnt of a member.
type Health string

// The healths, from best to worst.
const (
	Ready       Health = "ready"
	NotReady    Health = "not ready"
	Alive       Health = "alive" // in gossip, serving no /status
	Unreachable Health = "unreachable"
	Dead        Health = "dead" // gone from the gossip view
)

// memberState is the latest of one member.
type memberState struct {
	Name, Gossip, HTTP string
	Role               membership.Role
	Slots              int
	Apps               []string
	Health             Health
	Reason             string
	Version, Started   string
	NodeMonitor        *httpapi.NodeMonitorStatus
	Scheduler          *httpapi.SchedulerStatus
	Coordinator        *httpapi.CoordinatorStatus
	// GoneAt is when it left the gossip view (zero while in it).
	GoneAt time.Time
}

// userPoint is one user's fleet-wide work at one poll.
type userPoint struct {
	At              time.Time
	Running, Queued int
	Target          float64 // the coordinator's CMMF target; NaN-free: 0 when none
	HasTarget       bool
}

// schedPoint is one scheduler's rates over the interval ending At.
type schedPoint struct {
	At            time.Time
	TasksPerSec   float64
	JobsPerSec    float64
	Held          int
	RefusedPerSec float64
	DelaySeconds  float64 // mean over the interval's launches
	HasDelay      bool
}

// schedCounters are a scheduler's cumulative counters at the last poll.
type schedCounters struct {
	at                           time.Time
	tasks, jobs, refused, delays uint64
	delaySum                     float64
}

// Dashboard polls the fleet and serves the pages. Its lock guards every
// field below it; it is never held while fetching.
type Dashboard struct {
	cfg Config

	// polling serialises polls: Run's, and those a page makes when the
	// dashboard has no recent one (current). It is taken before mu.
	polling sync.Mutex

	mu       sync.Mutex
	members  map[string]*memberState
	users    map[string]*ring[userPoint]
	scheds   map[string]*ring[schedPoint]
	counters map[string]schedCounters
	polls    uint64
	lastPoll time.Time

	// viewed is when a page was last asked for (Unix nanoseconds); wake
	// tells an idle Run that one was.
	viewed atomic.Int64
	wake   chan struct{}
}

// New returns a Dashboard; Run or Poll fills it.
func New(cfg Config) *Dashboard {
	cfg.fill()
	return &Dashboard{
		cfg:      cfg,
		members:  make(map[string]*memberState),
		users:    make(map[string]*ring[userPoint]),
		scheds:   make(map[string]*ring[schedPoint]),
		counters: make(map[string]schedCounters),
		wake:     make(chan struct{}, 1),
	}
}

// Viewed records a page view at now, waking an idle Run.
func (d *Dashboard) Viewed(now time.Time) {
	d.viewed.Store(now.UnixNano())
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// idle reports whether Run should stop polling at now.
func (d *Dashboard) idle(now time.Time) bool {
	return d.cfg.IdleAfter > 0 && now.Sub(time.Unix(0, d.viewed.Load())) > d.cfg.IdleAfter
}

// Run polls every Interval until ctx ends.
func (d *Dashboard) Run(ctx context.Context) {
	t := time.NewTicker(d.cfg.Interval)
	defer t.Stop()
	for {
		if d.idle(time.Now()) {
			select {
			case <-ctx.Done():
				return
			case <-d.wake:
			}
		}
		// A page may have just polled, waking Run: no second poll then.
		d.pollIfOlder(ctx, time.Now(), d.cfg.Interval/2)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// fetched is one member's answer to a poll.
type fetched struct {
	st  httpapi.Status
	err error
}

// Poll takes one round: the gossip view, every member's /status (each
// within the interval), and one sample of every series, stamped now.
func (d *Dashboard) Poll(ctx context.Context, now time.Time) {
	d.polling.Lock()
	defer d.polling.Unlock()
	d.poll(ctx, now)
}

// current makes the state current for a page viewed at now: it polls
// if the last poll is older than two intervals, or there was none (a
// dashboard that has not polled yet, or slept while nobody looked), so
// that the first page shows the fleet rather than nothing or the fleet as
// it was, and waits for that poll up to ViewWait: a poll starts by
// recording the gossip view, so a page that stops waiting still shows
// every member.
func (d *Dashboard) current(ctx context.Context, now time.Time) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.pollIfOlder(ctx, now, 2*d.cfg.Interval)
	}()
	t := time.NewTimer(d.cfg.ViewWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

// pollIfOlder polls unless a poll was stamped within age before now,
// counting one that finishes while it waits for another to end.
func (d *Dashboard) pollIfOlder(ctx context.Context, now time.Time, age time.Duration) {
	d.polling.Lock()
	defer d.polling.Unlock()
	d.mu.Lock()
	recent := d.polls > 0 && now.Sub(d.lastPoll) < age
	d.mu.Unlock()
	if !recent {
		d.poll(ctx, now)
	}
}

// poll is Poll, with d.polling held.
func (d *Dashboard) poll(ctx context.Context, now time.Time) {
	live := d.cfg.Source.Members("")
	live = slices.DeleteFunc(live, func(m membership.Member) bool { return m.Name == d.cfg.Self })
	d.mu.Lock()
	for _, m := range live {
		if d.members[m.Name] == nil {
			ms := gossipState(m)
			if m.Meta.HTTP != "" {
				ms.Reason = "status not read yet"
			}
			d.members[m.Name] = ms
		}
	}
	d.mu.Unlock()
	answers := make([]fetched, len(live))
	sem := make(chan struct{}, d.cfg.Parallel)
	var wg sync.WaitGroup
	for i, m := range live {
		if m.Meta.HTTP == "" {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			cctx, cancel := context.WithTimeout(ctx, d.cfg.Interval)
			defer cancel()
			st, err := d.cfg.Fetcher.Status(cctx, m.Meta.HTTP)
			answers[i] = fetched{st, err}
		}()
	}
	wg.Wait()

	d.mu.Lock()
	defer d.mu.Unlock()
	d.polls++
	d.lastPoll = now
	seen := make(map[string]bool, len(live))
	for i, m := range live {
		seen[m.Name] = true
		d.members[m.Name] = memberFrom(m, answers[i])
	}
	for name, ms := range d.members {
		if seen[name] {
			continue
		}
		if ms.GoneAt.IsZero() {
			ms.GoneAt = now
			ms.Health, ms.Reason = Dead, "gone from the gossip view"
			ms.NodeMonitor, ms.Scheduler, ms.Coordinator = nil, nil, nil
		} else if now.Sub(ms.GoneAt) > d.cfg.ForgetDead {
			delete(d.members, name)
		}
	}
	d.sampleUsers(now)
	d.sampleSchedulers(now)
}

// gossipState is what gossip says of m: alive, with its role, slots and
// apps.
func gossipState(m membership.Member) *memberState {
	return &memberState{
		Name: m.Name, Gossip: m.Gossip, HTTP: m.Meta.HTTP, Role: m.Meta.Role,
		Slots: m.Meta.Slots, Apps: capList(m.Meta.Apps, maxAppsPerNode), Health: Alive,
	}
}

// memberFrom is m's state from gossip and its /status answer.
func memberFrom(m membership.Member, a fetched) *memberState {
	ms := gossipState(m)
	switch {
	case m.Meta.HTTP == "":
		ms.Reason = "no --http-listen"
		return ms
	case a.err != nil:
		ms.Health, ms.Reason = Unreachable, clip(a.err.Error())
		return ms
	case a.st.Ready:
		ms.Health = Ready
	default:
		ms.Health, ms.Reason = NotReady, clip(a.st.Reason)
	}
	ms.Version, ms.Started = clip(a.st.Version), clip(a.st.Started)
	if nm := a.st.NodeMonitor; nm != nil && m.Meta.Role == membership.RoleNodeMonitor {
		c := *nm
		c.Apps = capList(c.Apps, maxAppsPerNode)
		c.Users = capMap(c.Users, maxUsersPerNode)
		ms.NodeMonitor = &c
	}
	if s := a.st.Scheduler; s != nil && m.Meta.Role == membership.RoleScheduler {
		c := *s
		ms.Scheduler = &c
	}
	if co := a.st.Coordinator; co != nil {
		c := *co
		c.Users = capMap(c.Users, maxUsersPerNode)
		if c.Locality != nil {
			l := *c.Locality
			l.Racks = capMap(l.Racks, maxRacks)
			c.Locality = &l
		}
		ms.Coordinator = &c
	}
	return ms
}

// activeCoordinator is the coordinator that publishes now, if any.
func (d *Dashboard) activeCoordinator() *httpapi.CoordinatorStatus {
	var standby *httpapi.CoordinatorStatus
	for _, name := range sortedKeys(d.members) {
		co := d.members[name].Coordinator
		if co == nil {
			continue
		}
		if co.Active {
			return co
		}
		standby = co
	}
	return standby
}

// sampleUsers pushes one point per user series: running and queued summed
// over the node monitors that answered, beside the coordinator's target.
func (d *Dashboard) sampleUsers(now time.Time) {
	totals := map[string]*userPoint{}
	get := func(u string) *userPoint {
		if totals[u] == nil {
			totals[u] = &userPoint{At: now}
		}
		return totals[u]
	}
	for _, ms := range d.members {
		if ms.NodeMonitor == nil {
			continue
		}
		for u, c := range ms.NodeMonitor.Users {
			p := get(u)
			p.Running += c.Running
			p.Queued += c.Queued
		}
	}
	if co := d.activeCoordinator(); co != nil {
		for u, s := range co.Users {
			p := get(u)
			p.Target, p.HasTarget = s.Target, true
		}
	}
	// Users already followed keep their series; new ones take the free
	// places, busiest first; the rest are summed into otherUsers.
	var fresh []string
	for u := range totals {
		if d.users[u] == nil {
			fresh = append(fresh, u)
		}
	}
	sort.Slice(fresh, func(i, j int) bool {
		a, b := totals[fresh[i]], totals[fresh[j]]
		if wa, wb := a.Running+a.Queued, b.Running+b.Queued; wa != wb {
			return wa > wb
		}
		return fresh[i] < fresh[j]
	})
	other := userPoint{At: now}
	hasOther := false
	for _, u := range fresh {
		if len(d.users) < d.cfg.MaxUsers {
			d.users[u] = newRing[userPoint](d.cfg.History)
			continue
		}
		other.Running += totals[u].Running
		other.Queued += totals[u].Queued
		hasOther = true
	}
	for u, r := range d.users {
		if u == otherUsers {
			continue
		}
		p := userPoint{At: now}
		if t := totals[u]; t != nil {
			p = *t
		}
		r.push(p)
		if idleThroughout(r) {
			delete(d.users, u)
		}
	}
	if r := d.users[otherUsers]; r != nil || hasOther {
		if r == nil {
			r = newRing[userPoint](d.cfg.History)
			d.users[otherUsers] = r
		}
		r.push(other)
		if idleThroughout(r) {
			delete(d.users, otherUsers)
		}
	}
}

// idleThroughout reports whether a full series shows no work at all.
func idleThroughout(r *ring[userPoint]) bool {
	if r.len() < len(r.buf) {
		return false
	}
	for i := range r.len() {
		p := r.at(i)
		if p.Running != 0 || p.Queued != 0 || p.HasTarget {
			return false
		}
	}
	return true
}

// sampleSchedulers pushes one point per scheduler: rates from the change
// in its counters since the last poll.
func (d *Dashboard) sampleSchedulers(now time.Time) {
	for _, name := range sortedKeys(d.members) {
		ms := d.members[name]
		s := ms.Scheduler
		if s == nil {
			continue
		}
		cur := schedCounters{at: now, tasks: s.TasksLaunched, jobs: s.JobsSubmitted, refused: s.HoldRefused,
			delays: s.LaunchDelays, delaySum: s.LaunchDelaySeconds}
		prev, had := d.counters[name]
		d.counters[name] = cur
		r := d.scheds[name]
		if r == nil {
			if len(d.scheds) >= d.cfg.MaxSchedulers {
				continue
			}
			r = newRing[schedPoint](d.cfg.History)
			d.scheds[name] = r
		}
		p := schedPoint{At: now, Held: s.Held}
		dt := now.Sub(prev.at).Seconds()
		// A counter that went down is a restarted scheduler: no rate
		// for that interval.
		if had && dt > 0 && cur.tasks >= prev.tasks && cur.jobs >= prev.jobs && cur.refused >= prev.refused && cur.delays >= prev.delays {
			p.TasksPerSec = float64(cur.tasks-prev.tasks) / dt
			p.JobsPerSec = float64(cur.jobs-prev.jobs) / dt
			p.RefusedPerSec = float64(cur.refused-prev.refused) / dt
			if n := cur.delays - prev.delays; n > 0 {
				p.DelaySeconds, p.HasDelay = (cur.delaySum-prev.delaySum)/float64(n), true
			}
		}
		r.push(p)
	}
	for name := range d.scheds {
		if ms := d.members[name]; ms == nil {
			delete(d.scheds, name)
			delete(d.counters, name)
		}
	}
	for name := range d.counters {
		if d.members[name] == nil {
			delete(d.counters, name)
		}
	}
}

// Handler serves the pages under prefix (for example "/ui/").
func (d *Dashboard) Handler(prefix string) http.Handler {
	return newPages(d, prefix)
}

func clip(s string) string {
	if len(s) <= maxReasonBytes {
		return s
	}
	return s[:maxReasonBytes] + "…"
}

func capList(l []string, n int) []string {
	if len(l) > n {
		l = l[:n]
	}
	out := make([]string, len(l))
	for i, s := range l {
		out[i] = clip(s)
	}
	return out
}

// capMap keeps at most n entries of m, those with the smallest keys, so
// that which are kept does not depend on map order.
func capMap[V any](m map[string]V, n int) map[string]V {
	if len(m) <= n {
		return m
	}
	keys := sortedKeys(m)[:n]
	out := make(map[string]V, n)
	for _, k := range keys {
		out[clip(k)] = m[k]
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// ForDaemon starts the dashboard a daemon serves beside its operator
// endpoints: it reads the daemon's own gossip view and polls the fleet
// only while someone looks at it. stop ends its polling.
func ForDaemon(src Source) (d *Dashboard, stop func()) {
	d = New(Config{
		Source: src, Fetcher: HTTPFetcher{Client: &http.Client{Timeout: DefaultInterval}},
		IdleAfter: time.Minute,
	})
	ctx, cancel := context.WithCancel(context.Background())
	go d.Run(ctx)
	return d, cancel
}
