package nodemonitor

import (
	"github.com/sparrowfleet/sparrow/internal/httpapi"
	"github.com/sparrowfleet/sparrow/internal/membership"
)

// OperatorStatus is the daemon's /status document: its slots, queue,
// executors and each user's work here. It is a cheap snapshot, taken
// once per request.
func (d *Daemon) OperatorStatus() httpapi.Status {
	st, usage := d.State(), d.Usage()
	nm := &httpapi.NodeMonitorStatus{
		Slots: st.Slots, Free: st.Free, Fetching: st.Fetching, Running: st.Running,
		Queued: st.Queued, Launches: st.Launches, Apps: st.Apps,
		Users: make(map[string]httpapi.UserCounts, len(usage)),
	}
	for u, n := range usage {
		nm.Users[u] = httpapi.UserCounts{Queued: n.Queued, Running: n.Running}
	}
	return httpapi.Status{Name: d.Cluster.Name(), Role: membership.RoleNodeMonitor, Gossip: d.Cluster.Addr(), NodeMonitor: nm}
}
