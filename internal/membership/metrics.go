package membership

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sparrowfleet/sparrow/internal/metrics"
)

// Stats is what a member knows of its membership, for /metrics.
type Stats struct {
	// ByRole counts the live members in this member's view (alive or
	// suspected, this member included) by role.
	ByRole map[Role]int
	// Nodes counts memberlist's nodes by state as of its last push/pull
	// exchange, this member included; NodesReported is false before the
	// first.
	Nodes         [numNodeStates]int64
	NodesReported bool
	// Suspicions counts the members memberlist newly suspected.
	Suspicions uint64
	// Log counts memberlist's log lines by kind and level.
	Log GossipLogCounts
}

// Stats returns a snapshot of the member's membership counts: cheap, it
// reads counters kept as the view changes.
func (c *Cluster) Stats() Stats {
	st := Stats{Suspicions: c.states.suspicions.Load(), NodesReported: c.states.reported.Load(), Log: c.gossipLog.logCounts()}
	for i := range st.Nodes {
		st.Nodes[i] = c.states.nodes[i].Load()
	}
	c.mu.RLock()
	st.ByRole = make(map[Role]int, len(c.byRole))
	for r, n := range c.byRole {
		st.ByRole[r] = n
	}
	c.mu.RUnlock()
	return st
}

// Role returns the role this member advertised at start.
func (c *Cluster) Role() Role { return c.role }

// countedRoles are the roles a view is always counted in, zero or not, so
// that an alert on none of a role has a series to see.
var countedRoles = []Role{RoleScheduler, RoleNodeMonitor, RoleCoordinator, RoleObserver}

// Collector exposes a member's membership counts; pass the Cluster's
// Stats method.
func Collector(stats func() Stats) prometheus.Collector {
	type st = Stats
	return metrics.NewCollector(stats,
		metrics.GaugeVec("sparrow_membership_members",
			"Live members (alive or suspected) in this member's gossip view, itself included, by role (scheduler, nodemonitor, coordinator, observer, and any other role a member advertises). Updated as the view changes.",
			[]string{"role"}, func(s st) []metrics.Labelled {
				roles := slices.Clone(countedRoles)
				for r := range s.ByRole {
					if !slices.Contains(roles, r) {
						roles = append(roles, r)
					}
				}
				slices.Sort(roles)
				out := make([]metrics.Labelled, 0, len(roles))
				for _, r := range roles {
					out = append(out, metrics.Labelled{Labels: []string{string(r)}, Value: float64(s.ByRole[r])})
				}
				return out
			}),
		metrics.GaugeVec("sparrow_membership_nodes",
			"Nodes memberlist's failure detector holds, itself included, by state: alive, suspect (missed probes; declared dead unless it refutes within the suspicion timeout), dead (declared failed) and left (left gracefully); dead and left nodes are kept for a while (memberlist's GossipToTheDeadTime), then forgotten. As of this member's last push/pull exchange, which memberlist makes every push/pull interval (30 s on the lan profile, longer past 32 members) and whenever a peer syncs with it; none before the first.",
			[]string{"state"}, func(s st) []metrics.Labelled {
				if !s.NodesReported {
					return nil
				}
				out := make([]metrics.Labelled, numNodeStates)
				for i := range out {
					out[i] = metrics.Labelled{Labels: []string{NodeState(i).String()}, Value: float64(s.Nodes[i])}
				}
				return out
			}),
		metrics.Counter("sparrow_membership_suspicions_total",
			"Members this member's failure detector newly suspected, on its own probes or a peer's word.",
			func(s st) float64 { return float64(s.Suspicions) }),
		metrics.CounterVec("sparrow_membership_log_events_total",
			"memberlist's log lines, by kind (probe, gossip, stream, overload: transient failures, logged at warn at most and at most 5 a minute each; suspect, refute: suspicions, failure verdicts and refutations, at info or warn; malformed, conflict, internal: errors that need a person, logged at error; shutdown; other) and the level they were logged at. Every line is counted, those left out of the log by its rate limit too. Each kind has a series at its highest level from the start; others appear with their first line.",
			[]string{"kind", "level"}, func(s st) []metrics.Labelled {
				var out []metrics.Labelled
				s.Log.series(func(kind, level string, n uint64) {
					out = append(out, metrics.Labelled{Labels: []string{kind, level}, Value: float64(n)})
				})
				return out
			}),
	)
}
