package nodemonitor

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sparrowfleet/sparrow/internal/httpapi"
	"github.com/sparrowfleet/sparrow/internal/metrics"
)

// Surface is the node monitor's operator endpoint. It is ready once its
// Thrift services serve, it has joined seeds, and at least one executor
// has registered: until then schedulers refuse to sample it for any app.
// A paused node (SetPaused) stays ready: it is healthy, and an
// orchestrator must not count it unavailable (a DaemonSet's roll would
// stall on a cordoned node).
// The caller sets Drain if POST /drain should start a drain.
func (d *Daemon) Surface(seeds []string) httpapi.Surface {
	return httpapi.Surface{
		Cluster: d.Cluster, Host: httpapi.HostOf(d.ServiceAddr()),
		Collectors: []prometheus.Collector{Collector(d.State), metrics.RPCCollector(d.RPCStats), metrics.CallsCollector(d.RPCCalls)},
		Ready: httpapi.All(
			httpapi.Serving(d.Serving),
			httpapi.Joined(d.Cluster, seeds),
			func() string {
				if len(d.execs.snapshot()) == 0 {
					return "no executor registered"
				}
				return ""
			},
		),
		Status: d.OperatorStatus,
	}
}
