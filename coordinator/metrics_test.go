package coordinator

import (
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/internal/metrics/metricstest"
)

// TestCollector checks that the coordinator's last period, gossip and
// direct replies alike, is exported with its values.
func TestCollector(t *testing.T) {
	got := metricstest.Values(t, Collector(func() Stats {
		return Stats{Active: true, Published: 7, Reports: 4, Replies: 4, ReplyBytes: 240,
			ReplyFailed: 1, ReplyEncode: 3 * time.Millisecond, GossipLoad: 1500,
			Locality: LocalityStats{Solve: 20 * time.Millisecond, Nodes: 40, Bytes: 300, Sent: 9, Failed: 2, Rack: 3, Core: 1}}
	}))
	for _, tc := range []struct {
		name string
		want float64
	}{
		{"sparrow_coordinator_active", 1},
		{"sparrow_coordinator_published_total", 7},
		{"sparrow_coordinator_reports", 4},
		{"sparrow_coordinator_gossip_load_bytes_per_second", 1500},
		{"sparrow_coordinator_replies", 4},
		{"sparrow_coordinator_reply_bytes", 240},
		{"sparrow_coordinator_reply_failures", 1},
		{"sparrow_coordinator_reply_encode_seconds", 0.003},
		{"sparrow_coordinator_locality_solve_seconds", 0.02},
		{"sparrow_coordinator_locality_nodes", 40},
		{"sparrow_coordinator_locality_prices_bytes", 300},
		{"sparrow_coordinator_locality_prices_sent_total", 9},
		{"sparrow_coordinator_locality_send_failures_total", 2},
		{"sparrow_coordinator_locality_moved_tasks", 4},
		{"sparrow_coordinator_users", 0},
	} {
		if v, ok := got[tc.name]; !ok || v != tc.want {
			t.Errorf("%s = %v (exported: %v), want %v", tc.name, v, ok, tc.want)
		}
	}
}
