package daemon

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/internal/buildinfo"
	"github.com/sparrowfleet/sparrow/internal/dashboard"
	"github.com/sparrowfleet/sparrow/internal/httpapi"
	"github.com/sparrowfleet/sparrow/internal/membership"
	"github.com/sparrowfleet/sparrow/internal/metrics"
	"github.com/sparrowfleet/sparrow/internal/rpc"
)

// HTTPServer is a daemon's operator endpoint. Its methods do nothing when
// --http-listen is off; they may be called from any goroutine.
type HTTPServer struct {
	srv        *httpapi.Server
	stopPoller context.CancelFunc
}

// ServeHTTP serves s on h.Addr, unless it is empty, with the fleet
// dashboard, and advertises the address in gossip so that `sparrow
// status` can find it.
func ServeHTTP(h HTTPFlags, log zerolog.Logger, s httpapi.Surface) (*HTTPServer, error) {
	if h.Addr == "" {
		if h.Pprof {
			log.Warn().Msg("--pprof does nothing without --http-listen")
		}
		return &HTTPServer{}, nil
	}
	dash, stopPoller := dashboard.ForDaemon(s.Cluster)
	srv, err := httpapi.Serve(httpapi.Config{
		Addr: h.Addr, Collectors: append(MemberCollectors(s.Cluster), s.Collectors...), Ready: s.Ready, Status: s.Status, View: s.Cluster, Drain: s.Drain, Pprof: h.Pprof,
		UI: dash.Handler("/ui/"),
	})
	if err != nil {
		stopPoller()
		return nil, err
	}
	adv := rpc.Advertised(srv.Addr(), s.Host)
	if err := s.Cluster.SetHTTPAddr(adv); err != nil {
		// The endpoint works; only `sparrow status` will not find it.
		log.Warn().Err(err).Msg("could not advertise the HTTP endpoint in gossip")
	}
	ev := log.Info().Str("http", "http://"+srv.Addr()).Str("advertised", adv)
	if h.Pprof {
		ev = ev.Bool("pprof", true)
	}
	ev.Msg("serving /metrics, /livez, /readyz, /status and the dashboard at /ui/")
	return &HTTPServer{srv, stopPoller}, nil
}

// MemberCollectors are the metrics every daemon serves beside its own:
// its build (sparrow_build_info) and its view of the gossip membership.
func MemberCollectors(c *membership.Cluster) []prometheus.Collector {
	return []prometheus.Collector{
		metrics.BuildInfo(buildinfo.Read(), string(c.Role())),
		membership.Collector(c.Stats),
	}
}

// Addr is the address the endpoint listens on, "" when it is off.
func (h *HTTPServer) Addr() string {
	if h.srv == nil {
		return ""
	}
	return h.srv.Addr()
}

// ShuttingDown fails /readyz from now on.
func (h *HTTPServer) ShuttingDown() {
	if h.srv != nil {
		h.srv.ShuttingDown()
	}
}

// Close stops the endpoint and its dashboard's polling.
func (h *HTTPServer) Close() {
	if h.srv != nil {
		h.stopPoller()
		h.srv.Close()
	}
}
