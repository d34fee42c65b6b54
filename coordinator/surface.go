package coordinator

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sparrowfleet/sparrow/internal/httpapi"
	"github.com/sparrowfleet/sparrow/internal/membership"
)

// Surface is the coordinator's operator endpoint: ready once it has
// joined seeds, whether it publishes or stands by. advertise, if set, is
// the host advertised for the endpoint; otherwise the gossip host is.
func (d *Daemon) Surface(seeds []string, advertise string) httpapi.Surface {
	host := advertise
	if host == "" {
		host = httpapi.HostOf(d.Cluster.Addr())
	}
	return httpapi.Surface{
		Cluster: d.Cluster, Host: host,
		Collectors: []prometheus.Collector{Collector(d.Stats)},
		Ready:      httpapi.All(httpapi.Joined(d.Cluster, seeds)),
		Status: func() httpapi.Status {
			return httpapi.Status{Name: d.Cluster.Name(), Role: membership.RoleCoordinator, Gossip: d.Cluster.Addr(),
				Coordinator: httpStatus(d.Guidance())}
		},
	}
}

// httpStatus is the coordinator's part of /status: its role and the
// guidance it last published.
func httpStatus(g GuidanceStatus) *httpapi.CoordinatorStatus {
	st := &httpapi.CoordinatorStatus{Active: g.Active, Version: g.Version, Reports: g.Reports,
		Users: make(map[string]httpapi.UserShare, len(g.Users))}
	if !g.At.IsZero() {
		st.At = g.At.UTC().Format(time.RFC3339Nano)
	}
	for u, s := range g.Users {
		st.Users[u] = httpapi.UserShare{Running: s.Running, Target: s.Target}
	}
	if l := g.Locality; l != nil {
		st.Locality = &httpapi.LocalityStatus{Version: l.Version, At: l.At.UTC().Format(time.RFC3339Nano), SolveSeconds: l.Solve.Seconds(),
			Nodes: l.Nodes, TaskMillis: l.TaskMillis, Local: l.Local, Rack: l.Rack, Core: l.Core, Cluster: l.Cluster, Racks: l.Racks,
			Bytes: l.Bytes, Sent: l.Sent, SentBytes: l.SentBytes, Failed: l.Failed}
	}
	return st
}
