package fleetstatus

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/internal/httpapi"
	"github.com/sparrowfleet/sparrow/internal/membership"
	"github.com/sparrowfleet/sparrow/internal/rpc"
)

// Config says how an observer joins the fleet.
type Config struct {
	// Join is a comma-separated list of members' gossip host:port.
	Join string
	// Bind is the observer's gossip host:port; "" binds the local
	// address that routes to the first seed, a free port.
	Bind string
	// Profile is the observer's gossip timing: lan, local or wan.
	Profile string
	// Keyring holds an encrypted fleet's gossip keys; nil for plaintext.
	Keyring *memberlist.Keyring
	// Timeout bounds the wait for the join and for each member's
	// /status.
	Timeout time.Duration
	Log     zerolog.Logger
}

// Observer is a short-lived member of the fleet's gossip, of a role of
// its own that schedulers never sample and node monitors never ask for
// tasks. Collect may be called again and again; Leave when done.
type Observer struct {
	c      *membership.Cluster
	client *http.Client
	via    string
	log    zerolog.Logger
	// synced is when Collect last took its seed's full state (zero:
	// never), wait how long after it the next is due, and members how
	// many members the view held at the last Collect; behind, that a
	// member's own view held daemons the observer's lacked then.
	synced  time.Time
	wait    time.Duration
	members int
	behind  bool
}

// resyncEvery is how often a watching observer takes its seed's full
// state again once it has watched for a while. Between, gossip keeps its
// view current as any member's: a full state exchange costs the seed and
// the observer the whole fleet's member list (hundreds of kilobytes at a
// thousand members), so it is not made for every sample. It matches the
// lan profile's push-pull interval, the pace at which members themselves
// repair missed news.
//
// An observer that joined a fleet still forming (its seed not yet linked
// to the rest) hears of the others only from gossip that may have spent
// its retransmissions before the observer was known: so the exchanges
// start resyncFirst after the first and double up to resyncEvery, and a
// sample whose view gained or lost members since the last one (a fleet in
// flux) takes one as well, no more often than every resyncFirst. So does
// a sample after one in which a member's own view held more daemons than
// the observer's (news the observer's gossip has not brought yet), no
// more often than every resyncBehind.
const (
	resyncEvery  = 30 * time.Second
	resyncFirst  = time.Second
	resyncBehind = 500 * time.Millisecond
)

// observerLeaveWait bounds the wait for the observer's leave message to
// start spreading: the first gossip round (200 ms on the lan profile)
// hands it to a few members, who spread it on, so the command need not
// wait for every retransmission of it.
const observerLeaveWait = 300 * time.Millisecond

// statusFetches is how many members' /status are read at once.
const statusFetches = 64

// Join joins the fleet as an observer and waits until it sees another
// member.
func Join(ctx context.Context, cfg Config) (*Observer, error) {
	var seeds []string
	for _, s := range strings.Split(cfg.Join, ",") {
		if s = strings.TrimSpace(s); s != "" {
			seeds = append(seeds, s)
		}
	}
	if len(seeds) == 0 {
		return nil, fmt.Errorf("--join names no address")
	}
	bind := cfg.Bind
	if bind == "" {
		var err error
		if bind, err = routeTo(seeds[0]); err != nil {
			return nil, err
		}
	}
	c, err := membership.Start(membership.Config{
		Name: observerName(), Bind: bind, Seeds: seeds, Profile: cfg.Profile, Keyring: cfg.Keyring,
		Meta: membership.Meta{Role: membership.RoleObserver}, Log: cfg.Log,
	})
	if err != nil {
		return nil, err
	}
	o := &Observer{c: c, client: &http.Client{Timeout: cfg.Timeout}, via: cfg.Join, log: cfg.Log}
	if members := len(c.Members("")); members > 1 {
		// Start's join exchanged full state with the seeds that answered
		// just now: the first Collect need not take it again (the whole
		// fleet's member list, both ways), only the later ones.
		o.synced, o.wait, o.members = time.Now(), resyncFirst, members
	}
	if err := waitForPeers(ctx, c, cfg.Timeout); err != nil {
		o.Leave()
		return nil, fmt.Errorf("%w via %s (a gossip address? the right key? can the fleet reach %s?)", err, cfg.Join, c.Addr())
	}
	return o, nil
}

// Leave leaves the gossip, so that peers drop the observer at once instead
// of suspecting it for seconds and logging it dead.
func (o *Observer) Leave() { o.c.Leave(observerLeaveWait) }

// Members lists the live members of the observer's gossip view, itself
// included (a dashboard reads the fleet through it).
func (o *Observer) Members(role membership.Role) []membership.Member { return o.c.Members(role) }

// Name is the observer's member name; Addr its gossip address.
func (o *Observer) Name() string { return o.c.Name() }
func (o *Observer) Addr() string { return o.c.Addr() }

// Collect reads the view and asks every member that advertises an HTTP
// endpoint for its /status, several at a time. The first Collect, unless
// Join's own join just exchanged full state with a seed, and then others
// as resyncEvery says, first takes the seed's full state (Join returns
// once it sees one member, possibly while a join retried in the
// background is still merging the rest; and gossip alone may leave a
// member without news it missed, see membership.Cluster.SyncWithSeed).
// A seed that does not answer leaves the view as gossip made it.
func (o *Observer) Collect(ctx context.Context) View {
	members := len(o.c.Members(""))
	if resyncDue(o.synced, o.wait, o.members, members, o.behind, time.Now()) {
		if _, err := o.c.SyncWithSeed(); err != nil {
			o.log.Debug().Err(err).Msg("state sync with the seed failed; reporting the gossip view as it is")
		} else {
			o.synced = time.Now()
			o.wait = min(max(2*o.wait, resyncFirst), resyncEvery)
		}
		members = len(o.c.Members(""))
	}
	o.members = members
	v := collect(ctx, o.c, o.client, o.via)
	o.behind = behindFleet(v)
	return v
}

// resyncDue reports whether a Collect at now takes the seed's full state:
// never taken yet, wait passed since the last, the view's member count
// moved from before to members and resyncFirst has passed, or the last
// sample found the view behind a member's and resyncBehind has passed.
func resyncDue(synced time.Time, wait time.Duration, before, members int, behind bool, now time.Time) bool {
	since := now.Sub(synced)
	return synced.IsZero() || since >= wait || (members != before && since >= resyncFirst) ||
		(behind && since >= resyncBehind)
}

// behindFleet reports whether some member of v said its own view holds
// more daemons than v lists.
func behindFleet(v View) bool {
	daemons := 0
	for _, m := range v.Members {
		if m.Role != membership.RoleObserver {
			daemons++
		}
	}
	for _, m := range v.Members {
		if m.ViewSize > daemons {
			return true
		}
	}
	return false
}

// routeTo returns the local address, port 0, that the kernel would use to
// reach seed: the one address of this machine the fleet can answer to.
// Connecting a UDP socket sends nothing.
func routeTo(seed string) (string, error) {
	host, err := rpc.RouteHost(context.Background(), seed)
	if err != nil {
		return "", fmt.Errorf("--join: %w (set --gossip)", err)
	}
	return net.JoinHostPort(host, "0"), nil
}

// observerName is unique per run, so that two operators' observers, or a
// quick second run before the first one's leave has spread, never clash.
func observerName() string {
	host, _ := os.Hostname()
	b := make([]byte, 3)
	rand.Read(b)
	return fmt.Sprintf("status-%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b))
}

// waitForPeers waits until the view holds a member other than the
// observer. The join itself is synchronous, so this normally returns at
// once; it waits only for seeds that answer late.
func waitForPeers(ctx context.Context, c *membership.Cluster, timeout time.Duration) error {
	changed := make(chan struct{}, 1)
	c.Watch(func(membership.Event) {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		for _, m := range c.Members("") {
			if m.Name != c.Name() {
				return nil
			}
		}
		select {
		case <-changed:
		case <-deadline.C:
			return fmt.Errorf("no member answered within %v", timeout)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// View is the fleet as an observer saw it; its JSON form is sparrow
// status --json's output.
type View struct {
	Via      string    `json:"via"`
	Observer string    `json:"observer"`
	At       time.Time `json:"at"`
	Members  []Member  `json:"members"`
	Apps     []App     `json:"apps"`
	Users    []User    `json:"users"`
	Totals   Totals    `json:"totals"`
	// Versions lists each build the members (observers aside) advertise,
	// with its members; MixedVersions says there is more than one, as
	// during a rolling upgrade.
	Versions      []Version `json:"versions"`
	MixedVersions bool      `json:"mixed_versions"`
}

// Version is one build and the members that run it. It is empty for
// members built before members advertised their version.
type Version struct {
	Version string   `json:"version"`
	Members []string `json:"members"`
}

// Member is one member: from gossip, and from its /status if it
// serves one.
type Member struct {
	Name     string            `json:"name"`
	Role     membership.Role   `json:"role"`
	Gossip   string            `json:"gossip"`
	Service  string            `json:"service,omitempty"`
	Internal string            `json:"internal,omitempty"`
	HTTP     string            `json:"http,omitempty"`
	Slots    int               `json:"slots,omitempty"`
	Apps     []string          `json:"apps,omitempty"`
	Attrs    map[string]string `json:"attrs,omitempty"`
	// Version is the member's build, from gossip ("" from a member built
	// before members advertised it).
	Version string `json:"version,omitempty"`
	// ViewSize is how many daemons the member's own gossip view holds
	// (from its /status; 0 when it has none): a member seeing fewer than
	// the fleet has not heard of them all.
	ViewSize int `json:"view_size,omitempty"`
	// Health is "ready" or "not ready" (from /status), "unreachable"
	// (/status did not answer) or "alive" (in the gossip view, no HTTP
	// endpoint to ask); Reason says why when not ready or unreachable.
	Health      string                     `json:"health"`
	Reason      string                     `json:"reason,omitempty"`
	NodeMonitor *httpapi.NodeMonitorStatus `json:"nodemonitor,omitempty"`
	Scheduler   *httpapi.SchedulerStatus   `json:"scheduler,omitempty"`
}

type App struct {
	App          string `json:"app"`
	NodeMonitors int    `json:"node_monitors"`
	Slots        int    `json:"slots"`
}

type User struct {
	User    string `json:"user"`
	Queued  int    `json:"queued"`
	Running int    `json:"running"`
}

// Totals sums the fleet. Slots come from gossip and cover every node
// monitor; the live counts cover the Reporting ones that answered /status.
type Totals struct {
	Schedulers   int `json:"schedulers"`
	NodeMonitors int `json:"node_monitors"`
	Observers    int `json:"observers"`
	Slots        int `json:"slots"`
	Reporting    int `json:"reporting"`
	Free         int `json:"free"`
	Running      int `json:"running"`
	Queued       int `json:"queued"`
}

// collect reads the view and asks every member that advertises an HTTP
// endpoint for its /status, statusFetches at a time.
func collect(ctx context.Context, c *membership.Cluster, client *http.Client, via string) View {
	v := View{Via: via, Observer: c.Name(), At: time.Now().UTC()}
	for _, m := range c.Members("") {
		if m.Name == c.Name() {
			continue
		}
		v.Members = append(v.Members, Member{
			Name: m.Name, Role: m.Meta.Role, Gossip: m.Gossip, Service: m.Meta.Service, Internal: m.Meta.Internal,
			HTTP: m.Meta.HTTP, Slots: m.Meta.Slots, Apps: m.Meta.Apps, Attrs: m.Meta.Attrs, Version: m.Meta.Version, Health: "alive",
		})
	}
	sem := make(chan struct{}, statusFetches)
	var wg sync.WaitGroup
	for i := range v.Members {
		m := &v.Members[i]
		if m.HTTP == "" {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			st, err := fetchStatus(ctx, client, m.HTTP)
			switch {
			case err != nil:
				m.Health, m.Reason = "unreachable", err.Error()
			case st.Ready:
				m.Health = "ready"
			default:
				m.Health, m.Reason = "not ready", st.Reason
			}
			if err == nil {
				m.NodeMonitor, m.Scheduler, m.ViewSize = st.NodeMonitor, st.Scheduler, st.ViewSize
			}
		}()
	}
	wg.Wait()
	slices.SortStableFunc(v.Members, func(a, b Member) int {
		if r := strings.Compare(roleOrder(a.Role), roleOrder(b.Role)); r != 0 {
			return r
		}
		return strings.Compare(a.Name, b.Name)
	})
	v.summarize()
	return v
}

// roleOrder lists schedulers, then node monitors, then anything else.
func roleOrder(r membership.Role) string {
	switch r {
	case membership.RoleScheduler:
		return "0"
	case membership.RoleNodeMonitor:
		return "1"
	}
	return "2" + string(r)
}

func fetchStatus(ctx context.Context, client *http.Client, addr string) (httpapi.Status, error) {
	var st httpapi.Status
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/status", nil)
	if err != nil {
		return st, err
	}
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is the member's, shown beside it already
		}
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("/status answered %s", resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&st); err != nil {
		return st, fmt.Errorf("/status: %w", err)
	}
	return st, nil
}

// summarize fills the per-app, per-user and fleet totals.
func (v *View) summarize() {
	v.summarizeVersions()
	apps := map[string]*App{}
	users := map[string]*User{}
	for _, m := range v.Members {
		switch m.Role {
		case membership.RoleScheduler:
			v.Totals.Schedulers++
			continue
		case membership.RoleObserver:
			v.Totals.Observers++
			continue
		case membership.RoleNodeMonitor:
		default:
			continue
		}
		v.Totals.NodeMonitors++
		v.Totals.Slots += m.Slots
		for _, a := range m.Apps {
			if apps[a] == nil {
				apps[a] = &App{App: a}
			}
			apps[a].NodeMonitors++
			apps[a].Slots += m.Slots
		}
		nm := m.NodeMonitor
		if nm == nil {
			continue
		}
		v.Totals.Reporting++
		v.Totals.Free += nm.Free
		v.Totals.Running += nm.Running
		v.Totals.Queued += nm.Queued
		for u, c := range nm.Users {
			if users[u] == nil {
				users[u] = &User{User: u}
			}
			users[u].Queued += c.Queued
			users[u].Running += c.Running
		}
	}
	for _, a := range apps {
		v.Apps = append(v.Apps, *a)
	}
	slices.SortFunc(v.Apps, func(a, b App) int { return strings.Compare(a.App, b.App) })
	for _, u := range users {
		v.Users = append(v.Users, *u)
	}
	slices.SortFunc(v.Users, func(a, b User) int { return strings.Compare(a.User, b.User) })
}

// summarizeVersions groups the members other than observers by build.
func (v *View) summarizeVersions() {
	byVersion := map[string]*Version{}
	for _, m := range v.Members {
		if m.Role == membership.RoleObserver {
			continue
		}
		if byVersion[m.Version] == nil {
			byVersion[m.Version] = &Version{Version: m.Version}
		}
		byVersion[m.Version].Members = append(byVersion[m.Version].Members, m.Name)
	}
	for _, b := range byVersion {
		v.Versions = append(v.Versions, *b)
	}
	slices.SortFunc(v.Versions, func(a, b Version) int { return strings.Compare(a.Version, b.Version) })
	v.MixedVersions = len(v.Versions) > 1
}

// versionName shows a build, or says the member predates advertising one.
func versionName(v string) string {
	if v == "" {
		return "(not advertised: an older build)"
	}
	return v
}

// Render prints v as the tables sparrow status shows.
func Render(out io.Writer, v View) {
	fmt.Fprintf(out, "Fleet via %s at %s: %s, %s", v.Via, v.At.Local().Format("15:04:05"),
		plural(v.Totals.Schedulers, "scheduler"), plural(v.Totals.NodeMonitors, "node monitor"))
	if v.Totals.Observers > 0 {
		fmt.Fprintf(out, ", %s", plural(v.Totals.Observers, "other observer"))
	}
	fmt.Fprintf(out, "; %d slots", v.Totals.Slots)
	if v.Totals.Reporting > 0 {
		fmt.Fprintf(out, ", %d free, %d running, %d queued on the %d reporting", v.Totals.Free, v.Totals.Running, v.Totals.Queued, v.Totals.Reporting)
	}
	fmt.Fprintln(out)
	if v.MixedVersions {
		fmt.Fprintf(out, "MIXED VERSIONS: %d builds run side by side (a rolling upgrade?); see VERSIONS\n", len(v.Versions))
	}

	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	section := func(title, header string) {
		tw.Flush()
		fmt.Fprintf(out, "\n%s\n", title)
		fmt.Fprintln(tw, header)
	}
	section("SCHEDULERS", "NAME\tSERVICE\tGOSSIP\tNODE MONITORS\tACTIVE REQUESTS\tRUNNING\tHEALTH")
	for _, m := range v.Members {
		if m.Role != membership.RoleScheduler {
			continue
		}
		nms, active, running := "-", "-", "-"
		if s := m.Scheduler; s != nil {
			nms, active, running = strconv.Itoa(s.NodeMonitors), strconv.Itoa(s.ActiveRequests), strconv.Itoa(s.RunningTracked)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", m.Name, m.Service, m.Gossip, nms, active, running, health(m))
	}
	section("NODE MONITORS", "NAME\tINTERNAL\tSLOTS\tFREE\tRUNNING\tQUEUED\tAPPS\tHEALTH")
	for _, m := range v.Members {
		if m.Role != membership.RoleNodeMonitor {
			continue
		}
		free, running, queued := "-", "-", "-"
		if s := m.NodeMonitor; s != nil {
			free, running, queued = strconv.Itoa(s.Free), strconv.Itoa(s.Running), strconv.Itoa(s.Queued)
		}
		apps := strings.Join(m.Apps, ",")
		if apps == "" {
			apps = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", m.Name, m.Internal, m.Slots, free, running, queued, apps, health(m))
	}
	var others []Member
	for _, m := range v.Members {
		if m.Role != membership.RoleScheduler && m.Role != membership.RoleNodeMonitor {
			others = append(others, m)
		}
	}
	if len(others) > 0 {
		section("OTHER MEMBERS", "NAME\tROLE\tGOSSIP\tHEALTH")
		for _, m := range others {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m.Name, m.Role, m.Gossip, health(m))
		}
	}
	section("APPS", "APP\tNODE MONITORS\tSLOTS")
	for _, a := range v.Apps {
		fmt.Fprintf(tw, "%s\t%d\t%d\n", a.App, a.NodeMonitors, a.Slots)
	}
	section("VERSIONS", "VERSION\tMEMBERS\tNAMES")
	for _, b := range v.Versions {
		fmt.Fprintf(tw, "%s\t%d\t%s\n", versionName(b.Version), len(b.Members), strings.Join(b.Members, ","))
	}
	section("USERS (over the reporting node monitors)", "USER\tQUEUED\tRUNNING")
	for _, u := range v.Users {
		name := u.User
		if name == "" {
			name = "(none)"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\n", name, u.Queued, u.Running)
	}
	tw.Flush()
}

func health(m Member) string {
	switch {
	case m.Reason != "":
		return m.Health + ": " + m.Reason
	case m.Health == "alive" && m.HTTP == "" && m.Role != membership.RoleObserver:
		return "alive (no --http-listen)"
	}
	return m.Health
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}
