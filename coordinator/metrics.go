package coordinator

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sparrowfleet/sparrow/internal/metrics"
)

// Collector exposes a coordinator's last period to Prometheus, from one
// snapshot per scrape; pass the daemon's Stats method.
func Collector(stats func() Stats) prometheus.Collector {
	type st = Stats
	c, g := metrics.Counter[st], metrics.Gauge[st]
	return metrics.NewCollector(stats,
		g("sparrow_coordinator_active", "1 while this coordinator publishes, 0 while it stands by.", func(s st) float64 { return metrics.Bool(s.Active) }),
		c("sparrow_coordinator_published_total", "Guidance versions published.", func(s st) float64 { return float64(s.Published) }),
		g("sparrow_coordinator_reports", "Node monitor reports in the last computation.", func(s st) float64 { return float64(s.Reports) }),
		g("sparrow_coordinator_users", "Users with work in the last computation.", func(s st) float64 { return float64(s.Users) }),
		g("sparrow_coordinator_machine_types", "Machine types in the last computation.", func(s st) float64 { return float64(s.Types) }),
		g("sparrow_coordinator_solve_seconds", "Duration of the last CMMF computation.", func(s st) float64 { return s.Solve.Seconds() }),
		g("sparrow_coordinator_guidance_bytes", "Bytes of the last guidance version, all chunks.", func(s st) float64 { return float64(s.Bytes) }),
		g("sparrow_coordinator_gossip_load_bytes_per_second", "Estimated bytes per second each member sends to spread the last period's gossiped guidance (above about 21 KB/s memberlist's LAN timing cannot keep up).", func(s st) float64 { return s.GossipLoad }),
		g("sparrow_coordinator_replies", "Direct replies (UDP messages, all parts) sent in the last period (--delivery direct or both).", func(s st) float64 { return float64(s.Replies) }),
		g("sparrow_coordinator_reply_bytes", "Bytes of the direct replies sent in the last period.", func(s st) float64 { return float64(s.ReplyBytes) }),
		g("sparrow_coordinator_reply_failures", "Direct replies that could not be encoded or sent in the last period.", func(s st) float64 { return float64(s.ReplyFailed) }),
		g("sparrow_coordinator_reply_encode_seconds", "Time spent encoding the last period's direct replies.", func(s st) float64 { return s.ReplyEncode.Seconds() }),
		g("sparrow_coordinator_locality_solve_seconds", "Duration of the last locality prices' build, min-cost flow solve and encoding (--locality).", func(s st) float64 { return s.Locality.Solve.Seconds() }),
		g("sparrow_coordinator_locality_nodes", "Node monitors in the last locality prices.", func(s st) float64 { return float64(s.Locality.Nodes) }),
		g("sparrow_coordinator_locality_prices_bytes", "Bytes of the last locality prices message.", func(s st) float64 { return float64(s.Locality.Bytes) }),
		c("sparrow_coordinator_locality_prices_sent_total", "Locality prices messages sent to schedulers.", func(s st) float64 { return float64(s.Locality.Sent) }),
		c("sparrow_coordinator_locality_sent_bytes_total", "Bytes of locality prices sent to schedulers.", func(s st) float64 { return float64(s.Locality.SentBytes) }),
		c("sparrow_coordinator_locality_send_failures_total", "Locality prices sends to schedulers that failed or were skipped (previous send still under way).", func(s st) float64 { return float64(s.Locality.Failed) }),
		c("sparrow_coordinator_locality_solve_failures_total", "Periods whose locality prices could not be computed.", func(s st) float64 { return float64(s.Locality.SolveFailed) }),
		c("sparrow_coordinator_locality_periods_overran_total", "Locality periods skipped because the solve before them ran past them (the guidance loop is not delayed).", func(s st) float64 { return float64(s.Locality.Overran) }),
		g("sparrow_coordinator_locality_moved_tasks", "Queued tasks the last locality flow moves off their node (within the rack or across the core).", func(s st) float64 { return float64(s.Locality.Rack + s.Locality.Core) }),
	)
}
