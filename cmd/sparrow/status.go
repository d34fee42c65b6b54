package main

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
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/sparrowfleet/sparrow/internal/httpapi"
	"github.com/sparrowfleet/sparrow/internal/membership"
)

func init() { rootCmd.AddCommand(newStatusCmd()) }

// statusOptions are `sparrow status`'s flags.
type statusOptions struct {
	join, bind, profile string
	asJSON              bool
	watch               watchInterval
	timeout             time.Duration
	keyring             *memberlist.Keyring
}

// watchInterval is --watch: a duration, or a bare number of seconds.
type watchInterval time.Duration

func (w *watchInterval) String() string { return time.Duration(*w).String() }
func (w *watchInterval) Type() string   { return "interval" }
func (w *watchInterval) Set(s string) error {
	if n, err := strconv.ParseFloat(s, 64); err == nil {
		*w = watchInterval(n * float64(time.Second))
	} else if d, err := time.ParseDuration(s); err == nil {
		*w = watchInterval(d)
	} else {
		return fmt.Errorf("want seconds (5) or a duration (5s)")
	}
	if *w < 0 {
		return fmt.Errorf("must not be negative")
	}
	return nil
}

func newStatusCmd() *cobra.Command {
	var (
		o   statusOptions
		sec securityFlags
	)
	cmd := &cobra.Command{
		Use:   "status --join HOST:PORT",
		Short: "Print the fleet: members by role, health, slots, queues, apps and users",
		Long: `Join the gossip cluster as a short-lived observer, print the fleet and
leave. Observers are a role of their own, which schedulers never sample and
node monitors never ask for tasks.

Gossip lists every member with its role, addresses, slots and apps, whether
or not it serves HTTP. Members started with --http-listen also advertise it,
and status asks each of them for /status: readiness (the /readyz answer),
free slots, running tasks, queued reservations, and each user's queued
reservations and running tasks. Members without it are shown as alive in
gossip, with "-" for those.

The observer binds gossip on the address that routes to the first --join
seed, port 0, unless --gossip says otherwise; the fleet must be able to
reach it there. An encrypted fleet needs its key: --gossip-key-file or
$` + membership.GossipKeyEnv + `.`,
		Example: `  sparrow status --join 10.0.0.1:7946
  sparrow status --join 10.0.0.1:7946 --json | jq '.members[] | select(.health != "ready")'
  sparrow status --join 10.0.0.1:7946 --watch 2`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("log-level") {
				// Output is the table; keep memberlist's chatter out of it.
				logLevel = "warn"
			}
			log, err := newLogger()
			if err != nil {
				return err
			}
			if o.join == "" {
				return fmt.Errorf("--join is required: the gossip address of any member")
			}
			if o.keyring, _, err = sec.keyring(log); err != nil {
				return err
			}
			ctx, cancel := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer cancel()
			return runStatus(ctx, o, cmd.OutOrStdout(), log)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.join, "join", "", "comma-separated gossip host:port of members to join through (required)")
	fs.StringVar(&o.bind, "gossip", "", "gossip host:port the observer binds and advertises (default: the local address that routes to the first --join seed, a free port)")
	fs.StringVar(&o.profile, "gossip-profile", "lan", "gossip timing of the observer: lan, local or wan (members of any profile can be observed)")
	fs.BoolVar(&o.asJSON, "json", false, "print one JSON object (one per line with --watch)")
	fs.Var(&o.watch, "watch", "refresh every interval (seconds, or a duration such as 500ms) until interrupted; 0 prints once")
	fs.DurationVar(&o.timeout, "timeout", 5*time.Second, "how long to wait for the join and for each member's /status")
	fs.StringVar(&sec.gossipKeyFile, "gossip-key-file", "", "file of the fleet's base64 gossip keys, one per line, as the daemons take it; $"+membership.GossipKeyEnv+" may hold them instead")
	return cmd
}

// runStatus joins the fleet as an observer, prints it once or every
// o.watch until ctx ends, and leaves.
func runStatus(ctx context.Context, o statusOptions, out io.Writer, log zerolog.Logger) error {
	seeds := (&gossipFlags{join: o.join}).seeds()
	if len(seeds) == 0 {
		return fmt.Errorf("--join names no address")
	}
	bind := o.bind
	if bind == "" {
		var err error
		if bind, err = routeTo(seeds[0]); err != nil {
			return err
		}
	}
	c, err := membership.Start(membership.Config{
		Name: observerName(), Bind: bind, Seeds: seeds, Profile: o.profile, Keyring: o.keyring,
		Meta: membership.Meta{Role: membership.RoleObserver}, Log: log,
	})
	if err != nil {
		return err
	}
	// Leave, not just stop: peers drop the observer at once instead of
	// suspecting it for seconds and logging it dead.
	defer c.Leave(time.Second)
	if err := waitForPeers(ctx, c, o.timeout); err != nil {
		return fmt.Errorf("%w via %s (a gossip address? the right key? can the fleet reach %s?)", err, o.join, c.Addr())
	}
	client := &http.Client{Timeout: o.timeout}
	redraw := o.watch > 0 && !o.asJSON && isTerminal(out)
	for {
		v := collect(ctx, c, client, o.join)
		if ctx.Err() != nil {
			return nil // interrupted mid-collection: print nothing half-read
		}
		if redraw {
			fmt.Fprint(out, "\x1b[H\x1b[2J") // home and clear: redraw in place
		}
		if o.asJSON {
			if err := json.NewEncoder(out).Encode(v); err != nil {
				return err
			}
		} else {
			render(out, v)
		}
		if o.watch == 0 {
			return nil
		}
		if !redraw && !o.asJSON {
			fmt.Fprintln(out)
		}
		t := time.NewTimer(time.Duration(o.watch))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// routeTo returns the local address, port 0, that the kernel would use to
// reach seed: the one address of this machine the fleet can answer to.
// Connecting a UDP socket sends nothing.
func routeTo(seed string) (string, error) {
	conn, err := net.Dial("udp", seed)
	if err != nil {
		return "", fmt.Errorf("no route to --join %s: %w (set --gossip)", seed, err)
	}
	defer conn.Close()
	host, _, err := net.SplitHostPort(conn.LocalAddr().String())
	if err != nil {
		return "", err
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

// fleetView is what status prints; its JSON form is --json's output.
type fleetView struct {
	Via      string       `json:"via"`
	Observer string       `json:"observer"`
	At       time.Time    `json:"at"`
	Members  []memberView `json:"members"`
	Apps     []appView    `json:"apps"`
	Users    []userView   `json:"users"`
	Totals   totalsView   `json:"totals"`
	// Versions lists each build the members (observers aside) advertise,
	// with its members; MixedVersions says there is more than one, as
	// during a rolling upgrade.
	Versions      []versionView `json:"versions"`
	MixedVersions bool          `json:"mixed_versions"`
}

// versionView is one build and the members that run it. Version is empty
// for members built before members advertised their version.
type versionView struct {
	Version string   `json:"version"`
	Members []string `json:"members"`
}

// memberView is one member: from gossip, and from its /status if it
// serves one.
type memberView struct {
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

type appView struct {
	App          string `json:"app"`
	NodeMonitors int    `json:"node_monitors"`
	Slots        int    `json:"slots"`
}

type userView struct {
	User    string `json:"user"`
	Queued  int    `json:"queued"`
	Running int    `json:"running"`
}

// totalsView sums the fleet. Slots come from gossip and cover every node
// monitor; the live counts cover the Reporting ones that answered /status.
type totalsView struct {
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
// endpoint for its /status, a few at a time.
func collect(ctx context.Context, c *membership.Cluster, client *http.Client, via string) fleetView {
	v := fleetView{Via: via, Observer: c.Name(), At: time.Now().UTC()}
	for _, m := range c.Members("") {
		if m.Name == c.Name() {
			continue
		}
		v.Members = append(v.Members, memberView{
			Name: m.Name, Role: m.Meta.Role, Gossip: m.Gossip, Service: m.Meta.Service, Internal: m.Meta.Internal,
			HTTP: m.Meta.HTTP, Slots: m.Meta.Slots, Apps: m.Meta.Apps, Attrs: m.Meta.Attrs, Version: m.Meta.Version, Health: "alive",
		})
	}
	sem := make(chan struct{}, 16)
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
	slices.SortStableFunc(v.Members, func(a, b memberView) int {
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
func (v *fleetView) summarize() {
	apps := map[string]*appView{}
	users := map[string]*userView{}
	v.summarizeVersions()
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
				apps[a] = &appView{App: a}
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
				users[u] = &userView{User: u}
			}
			users[u].Queued += c.Queued
			users[u].Running += c.Running
		}
	}
	for _, a := range apps {
		v.Apps = append(v.Apps, *a)
	}
	slices.SortFunc(v.Apps, func(a, b appView) int { return strings.Compare(a.App, b.App) })
	for _, u := range users {
		v.Users = append(v.Users, *u)
	}
	slices.SortFunc(v.Users, func(a, b userView) int { return strings.Compare(a.User, b.User) })
}

// summarizeVersions groups the members other than observers by build.
func (v *fleetView) summarizeVersions() {
	byVersion := map[string]*versionView{}
	for _, m := range v.Members {
		if m.Role == membership.RoleObserver {
			continue
		}
		if byVersion[m.Version] == nil {
			byVersion[m.Version] = &versionView{Version: m.Version}
		}
		byVersion[m.Version].Members = append(byVersion[m.Version].Members, m.Name)
	}
	for _, b := range byVersion {
		v.Versions = append(v.Versions, *b)
	}
	slices.SortFunc(v.Versions, func(a, b versionView) int { return strings.Compare(a.Version, b.Version) })
	v.MixedVersions = len(v.Versions) > 1
}

// versionName shows a build, or says the member predates advertising one.
func versionName(v string) string {
	if v == "" {
		return "(not advertised: an older build)"
	}
	return v
}

// render prints v as tables.
func render(out io.Writer, v fleetView) {
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
	var others []memberView
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

func health(m memberView) string {
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

// isTerminal reports whether out is a terminal, where --watch redraws in
// place instead of scrolling.
func isTerminal(out io.Writer) bool {
	f, ok := out.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
