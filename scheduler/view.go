package scheduler

import (
	"net"
	"sync"

	"github.com/sparrowfleet/sparrow/core/placement"
	"github.com/sparrowfleet/sparrow/internal/membership"
)

// NodeView tells the scheduler which node monitors are live.
type NodeView interface {
	// Candidates returns the live node monitors that host an executor for
	// app. The caller must not modify the result.
	Candidates(app string) []placement.Node
	// Node returns the live node monitor with the given InternalService
	// address, if any.
	Node(addr string) (placement.Node, bool)
}

// MembershipView is a NodeView over the gossip cluster. It caches the
// candidates per app until the membership changes, so that submitJob does
// not rescan the whole fleet. Safe for concurrent use.
type MembershipView struct {
	cluster *membership.Cluster
	// reach, if set, holds node monitors this scheduler could not reach:
	// Candidates leaves them out until they are reachable again.
	reach *reachability

	mu      sync.Mutex
	version uint64
	// reachVersion is reach's version when byApp was built.
	reachVersion uint64
	down         map[string]bool
	built        bool
	members      []membership.Member
	byAddr       map[string]placement.Node
	byApp        map[string][]placement.Node
	busy         map[string]bool // node monitors advertising long work
	hosts        map[string]membership.Meta
}

var (
	_ LongWorkView = (*MembershipView)(nil)
	_ AppHostView  = (*MembershipView)(nil)
)

// NewMembershipView returns a view of c's live node monitors.
func NewMembershipView(c *membership.Cluster) *MembershipView {
	return &MembershipView{cluster: c}
}

func (v *MembershipView) refresh() {
	ver := v.cluster.Version()
	if v.reach != nil && (!v.built || v.reach.changedSince(v.reachVersion)) {
		v.down, v.reachVersion = v.reach.state()
		v.byApp = make(map[string][]placement.Node)
	}
	if v.built && ver == v.version {
		return
	}
	v.version, v.built = ver, true
	v.byAddr = make(map[string]placement.Node)
	v.byApp = make(map[string][]placement.Node)
	v.busy = make(map[string]bool)
	v.hosts = make(map[string]membership.Meta)
	v.members = v.cluster.Members(membership.RoleNodeMonitor)
	for _, m := range v.members {
		host, _, err := net.SplitHostPort(m.Meta.Internal)
		if err != nil {
			continue
		}
		n := placement.Node{Addr: m.Meta.Internal, Host: host, Name: m.Name, Attrs: m.Meta.Attrs}
		v.byAddr[n.Addr] = n
		v.hosts[n.Addr] = m.Meta
		if m.Meta.LongWork > 0 {
			v.busy[n.Addr] = true
		}
	}
}

// Candidates implements NodeView: the live node monitors hosting app,
// less those this scheduler holds unreachable unless that leaves none.
func (v *MembershipView) Candidates(app string) []placement.Node {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.refresh()
	if c, ok := v.byApp[app]; ok {
		return c
	}
	var hosts []placement.Node
	for _, m := range v.members {
		if n, ok := v.byAddr[m.Meta.Internal]; ok && m.Meta.HostsApp(app) {
			hosts = append(hosts, n)
		}
	}
	out := reachable(hosts, v.down)
	v.byApp[app] = out
	return out
}

// Node implements NodeView.
func (v *MembershipView) Node(addr string) (placement.Node, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.refresh()
	n, ok := v.byAddr[addr]
	return n, ok
}

// LongWork implements LongWorkView: whether the node monitor at addr
// advertises long work in its gossip metadata.
func (v *MembershipView) LongWork(addr string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.refresh()
	return v.busy[addr]
}

// HostsApp implements AppHostView: whether the live node monitor at addr
// advertises an executor for app.
func (v *MembershipView) HostsApp(addr, app string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.refresh()
	m, ok := v.hosts[addr]
	return ok && m.HostsApp(app)
}
