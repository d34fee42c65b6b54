package scheduler

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sparrowfleet/sparrow/internal/httpapi"
	"github.com/sparrowfleet/sparrow/internal/membership"
	"github.com/sparrowfleet/sparrow/internal/metrics"
)

// Surface is the scheduler's operator endpoint. It is ready once its
// Thrift services serve, it has joined seeds, and it has at least one
// node monitor to sample.
func (d *Daemon) Surface(seeds []string) httpapi.Surface {
	return httpapi.Surface{
		Cluster: d.Cluster, Host: httpapi.HostOf(d.ServiceAddr()),
		Collectors: []prometheus.Collector{Collector(d.Stats), metrics.RPCCollector(d.RPCStats), metrics.CallsCollector(d.RPCCalls)},
		Ready: httpapi.All(
			httpapi.Serving(d.Serving),
			httpapi.Joined(d.Cluster, seeds),
			httpapi.HasMember(d.Cluster, membership.RoleNodeMonitor, "no live node monitor in the gossip view"),
		),
		Status: d.OperatorStatus,
	}
}
