package httpapi

import (
	"net"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sparrowfleet/sparrow/internal/membership"
)

// Surface is what one daemon serves on its operator endpoint, as its own
// package describes it; the command that runs the daemon picks the
// address and serves it (Config adds those).
type Surface struct {
	// Cluster is the daemon's gossip membership: the endpoint's address
	// is advertised in it, and /status and the dashboard read its view.
	Cluster *membership.Cluster
	// Host replaces a wildcard host in the advertised address, as for
	// the daemon's Thrift services.
	Host       string
	Collectors []prometheus.Collector
	Ready      Check
	Status     func() Status
	// Drain, if set, is started by POST /drain.
	Drain func()
}

// HostOf is the host of a "host:port" address, or addr itself when it
// has no port.
func HostOf(addr string) string {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return h
}
