package locality

import (
	"math"
	"testing"
	"time"
)

func TestChoose(t *testing.T) {
	// Three racks; ψ = 10 and ξ = 40 per GB. Costs below are worked out by
	// hand from these prices.
	base := Prices{
		Version:   1,
		Node:      map[string]int64{"a1": 50, "a2": 80, "b1": 5, "c1": 0},
		Rack:      map[string]int64{"ra": 30, "rb": 5, "rc": 0},
		Cluster:   0,
		RackPerGB: 10,
		CorePerGB: 40,
	}
	const gb = GB
	tests := []struct {
		name   string
		p      Prices
		nodes  []string
		racks  []string
		input  int64
		want   Level
		costs  Costs
		wantOK bool
	}{
		{
			// node 50 (a1); rack 10·1.5 + 30 = 45; cluster 40·1.5 + 0 = 60.
			name: "rack beats a busy node", p: base, nodes: []string{"a1", "a2"}, racks: []string{"ra"}, input: gb * 3 / 2,
			want: RackLevel, costs: Costs{Node: 50, Rack: 45, Cluster: 60}, wantOK: true,
		},
		{
			// node 50; rack 10·2 + 30 = 50 ties the node; cluster 80. The
			// flow's cap on a full node's price: the tie widens.
			name: "node at its cap widens", p: base, nodes: []string{"a1"}, racks: []string{"ra"}, input: 2 * gb,
			want: RackLevel, costs: Costs{Node: 50, Rack: 50, Cluster: 80}, wantOK: true,
		},
		{
			// node 80 (a2 only); rack 10·0.5 + 30 = 35; cluster 40·0.5 = 20.
			name: "cluster when the rack is busy too", p: base, nodes: []string{"a2"}, racks: []string{"ra"}, input: gb / 2,
			want: ClusterLevel, costs: Costs{Node: 80, Rack: 35, Cluster: 20}, wantOK: true,
		},
		{
			// node 5 (b1); rack 10 + 5 = 15; cluster 40.
			name: "node with room stays local", p: base, nodes: []string{"b1"}, racks: []string{"rb"}, input: gb,
			want: NodeLevel, costs: Costs{Node: 5, Rack: 15, Cluster: 40}, wantOK: true,
		},
		{
			// The cheapest of several racks: min(30, 0) = 0, plus 10.
			name: "cheapest of the racks", p: base, nodes: []string{"a2"}, racks: []string{"ra", "rc"}, input: gb,
			want: RackLevel, costs: Costs{Node: 80, Rack: 10, Cluster: 40}, wantOK: true,
		},
		{
			// Zero input: transfer is free, so the cheapest place wins;
			// cluster 0 ties rack rc's 0 and the wider wins.
			name: "no input", p: base, nodes: []string{"a1"}, racks: []string{"rc"}, input: 0,
			want: ClusterLevel, costs: Costs{Node: 50, Rack: 0, Cluster: 0}, wantOK: true,
		},
		{
			// 128 MiB = 134217728 bytes: ψ-transfer 10·0.134… = 1.34 → 1,
			// ξ-transfer 40·0.134… = 5.37 → 5. node 80; rack 31; cluster 5.
			name: "default input size rounds to nearest", p: base, nodes: []string{"a2"}, racks: []string{"ra"}, input: 128 << 20,
			want: ClusterLevel, costs: Costs{Node: 80, Rack: 31, Cluster: 5}, wantOK: true,
		},
		{
			// An unpriced rack cannot win; cluster 40 beats node 50.
			name: "unpriced rack", p: base, nodes: []string{"a1"}, racks: []string{"rz"}, input: gb,
			want: ClusterLevel, costs: Costs{Node: 50, Rack: Unknown, Cluster: 40}, wantOK: true,
		},
		{
			// An idle fleet: every price 0, so any input makes moving
			// dearer than the preferred node.
			name: "idle fleet stays local", p: Prices{Node: map[string]int64{"n": 0}, Rack: map[string]int64{"r": 0}, RackPerGB: 10, CorePerGB: 40},
			nodes: []string{"n"}, racks: []string{"r"}, input: 128 << 20,
			want: NodeLevel, costs: Costs{Node: 0, Rack: 1, Cluster: 5}, wantOK: true,
		},
		{
			name: "no priced preferred node", p: base, nodes: []string{"zz"}, racks: []string{"ra"}, input: gb,
			want: NodeLevel, costs: Costs{Node: Unknown, Rack: 40, Cluster: 40}, wantOK: false,
		},
		{
			name: "empty prices", p: Prices{}, nodes: []string{"a1"}, input: gb,
			want: NodeLevel, costs: Costs{Node: Unknown, Rack: Unknown, Cluster: 0}, wantOK: false,
		},
		{
			// Prices may be negative: node -10, rack 10 - 20 = -10,
			// cluster 40 - 100 = -60 wins.
			name:  "negative prices",
			p:     Prices{Node: map[string]int64{"n": -10}, Rack: map[string]int64{"r": -20}, Cluster: -100, RackPerGB: 10, CorePerGB: 40},
			nodes: []string{"n"}, racks: []string{"r"}, input: gb,
			want: ClusterLevel, costs: Costs{Node: -10, Rack: -10, Cluster: -60}, wantOK: true,
		},
		{
			// A huge input saturates the transfer instead of wrapping
			// around to a negative cost that would look cheap.
			name:  "overflow saturates",
			p:     Prices{Node: map[string]int64{"n": 1 << 40}, Rack: map[string]int64{"r": 0}, CorePerGB: math.MaxInt64, RackPerGB: math.MaxInt64},
			nodes: []string{"n"}, racks: []string{"r"}, input: math.MaxInt64,
			want: NodeLevel, costs: Costs{Node: 1 << 40, Rack: Unknown, Cluster: Unknown}, wantOK: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, c, ok := Choose(tc.p, tc.nodes, tc.racks, tc.input)
			if l != tc.want || c != tc.costs || ok != tc.wantOK {
				t.Fatalf("Choose = %v, %+v, %v; want %v, %+v, %v", l, c, ok, tc.want, tc.costs, tc.wantOK)
			}
		})
	}
}

func TestTransfer(t *testing.T) {
	tests := []struct {
		perGB, bytes, want int64
	}{
		{10, GB, 10},
		{10, GB - 1, 10},    // 9.99999999
		{1, GB/2 - 1, 0},    // 0.499999999
		{1, GB / 2, 1},      // 0.5 rounds up
		{3, 2 * GB / 3, 2},  // 1.999999998
		{4, GB / 10 * 3, 1}, // 1.2
		{1000, 1, 0},
		{0, GB, 0},
		{10, -5, 0},
		{-10, GB, 0},
		{1 << 40, 1 << 40, ((1 << 80) + GB/2) / GB}, // needs the 128-bit product
		{math.MaxInt64, math.MaxInt64, Unknown},
	}
	for _, tc := range tests {
		if got := Transfer(tc.perGB, tc.bytes); got != tc.want {
			t.Errorf("Transfer(%d, %d) = %d, want %d", tc.perGB, tc.bytes, got, tc.want)
		}
	}
}

func TestLevelString(t *testing.T) {
	for l, want := range map[Level]string{NodeLevel: "node", RackLevel: "rack", ClusterLevel: "cluster", Level(7): "level(7)"} {
		if got := l.String(); got != want {
			t.Errorf("Level(%d).String() = %q, want %q", int(l), got, want)
		}
	}
}

func TestDelayLevel(t *testing.T) {
	const d = 100 * time.Millisecond
	tests := []struct {
		elapsed, delay time.Duration
		want           Level
	}{
		{0, d, NodeLevel},
		{d - 1, d, NodeLevel},
		{d, d, RackLevel},
		{2*d - 1, d, RackLevel},
		{2 * d, d, ClusterLevel},
		{time.Hour, d, ClusterLevel},
		{time.Hour, 0, NodeLevel},  // strict
		{time.Hour, -d, NodeLevel}, // strict
	}
	for _, tc := range tests {
		if got := DelayLevel(tc.elapsed, tc.delay); got != tc.want {
			t.Errorf("DelayLevel(%v, %v) = %v, want %v", tc.elapsed, tc.delay, got, tc.want)
		}
	}
	// DelayStep is where DelayLevel changes.
	for l := NodeLevel; l < ClusterLevel; l++ {
		step := DelayStep(l, d)
		if DelayLevel(step-1, d) != l || DelayLevel(step, d) != l+1 {
			t.Errorf("DelayStep(%v) = %v is not where the level leaves %v", l, step, l)
		}
	}
}
