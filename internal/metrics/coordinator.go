package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sparrowfleet/sparrow/coordinator"
)

// CoordinatorCollector exposes a fairness coordinator's last period.
func CoordinatorCollector(stats func() coordinator.Stats) prometheus.Collector {
	type st = coordinator.Stats
	b2f := func(b bool) float64 {
		if b {
			return 1
		}
		return 0
	}
	return newCollector(stats, []metric[st]{
		{"sparrow_coordinator_active", "1 while this coordinator publishes, 0 while it stands by.", gauge, func(s st) float64 { return b2f(s.Active) }},
		{"sparrow_coordinator_published_total", "Guidance versions published.", counter, func(s st) float64 { return float64(s.Published) }},
		{"sparrow_coordinator_reports", "Node monitor reports in the last computation.", gauge, func(s st) float64 { return float64(s.Reports) }},
		{"sparrow_coordinator_users", "Users with work in the last computation.", gauge, func(s st) float64 { return float64(s.Users) }},
		{"sparrow_coordinator_machine_types", "Machine types in the last computation.", gauge, func(s st) float64 { return float64(s.Types) }},
		{"sparrow_coordinator_solve_seconds", "Duration of the last CMMF computation.", gauge, func(s st) float64 { return s.Solve.Seconds() }},
		{"sparrow_coordinator_guidance_bytes", "Bytes of the last guidance version, all chunks.", gauge, func(s st) float64 { return float64(s.Bytes) }},
		{"sparrow_coordinator_gossip_load_bytes_per_second", "Estimated bytes per second each member sends to spread the last period's gossiped guidance (above about 21 KB/s memberlist's LAN timing cannot keep up).", gauge, func(s st) float64 { return s.GossipLoad }},
		{"sparrow_coordinator_replies", "Direct replies (UDP messages, all parts) sent in the last period (--delivery direct or both).", gauge, func(s st) float64 { return float64(s.Replies) }},
		{"sparrow_coordinator_reply_bytes", "Bytes of the direct replies sent in the last period.", gauge, func(s st) float64 { return float64(s.ReplyBytes) }},
		{"sparrow_coordinator_reply_failures", "Direct replies that could not be encoded or sent in the last period.", gauge, func(s st) float64 { return float64(s.ReplyFailed) }},
		{"sparrow_coordinator_reply_encode_seconds", "Time spent encoding the last period's direct replies.", gauge, func(s st) float64 { return s.ReplyEncode.Seconds() }},
		{"sparrow_coordinator_locality_solve_seconds", "Duration of the last locality prices' build, min-cost flow solve and encoding (--locality).", gauge, func(s st) float64 { return s.Locality.Solve.Seconds() }},
		{"sparrow_coordinator_locality_nodes", "Node monitors in the last locality prices.", gauge, func(s st) float64 { return float64(s.Locality.Nodes) }},
		{"sparrow_coordinator_locality_prices_bytes", "Bytes of the last locality prices message.", gauge, func(s st) float64 { return float64(s.Locality.Bytes) }},
		{"sparrow_coordinator_locality_prices_sent_total", "Locality prices messages sent to schedulers.", counter, func(s st) float64 { return float64(s.Locality.Sent) }},
		{"sparrow_coordinator_locality_sent_bytes_total", "Bytes of locality prices sent to schedulers.", counter, func(s st) float64 { return float64(s.Locality.SentBytes) }},
		{"sparrow_coordinator_locality_send_failures_total", "Locality prices sends to schedulers that failed or were skipped (previous send still under way).", counter, func(s st) float64 { return float64(s.Locality.Failed) }},
		{"sparrow_coordinator_locality_solve_failures_total", "Periods whose locality prices could not be computed.", counter, func(s st) float64 { return float64(s.Locality.SolveFailed) }},
		{"sparrow_coordinator_locality_periods_overran_total", "Locality periods skipped because the solve before them ran past them (the guidance loop is not delayed).", counter, func(s st) float64 { return float64(s.Locality.Overran) }},
		{"sparrow_coordinator_locality_moved_tasks", "Queued tasks the last locality flow moves off their node (within the rack or across the core).", gauge, func(s st) float64 { return float64(s.Locality.Rack + s.Locality.Core) }},
	})
}
