package placement

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func steerNodes(n int) []Node {
	out := make([]Node, n)
	for i := range out {
		out[i] = Node{Addr: fmt.Sprintf("n%d", i)}
	}
	return out
}

func steerAddrs(ns []Node) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.Addr
	}
	slices.Sort(out)
	return out
}

func TestSteerCandidates(t *testing.T) {
	t0 := time.Unix(1000, 0)
	sec := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	type ev struct {
		at     float64
		served bool
		node   int
		user   string
	}
	tests := []struct {
		name   string
		nodes  int
		events []ev
		at     float64
		user   string
		want   []string // sorted; nil: all nodes
		sample int      // how many of the nodes sitting on the user's reservations are added back
	}{
		{name: "nothing known: every node", nodes: 4, at: 5, user: "h"},
		{
			name:  "a node that served the user stays; one that sat on it for longer than After goes",
			nodes: 8,
			events: []ev{
				{at: 0, node: 0}, {at: 0, node: 1}, {at: 0, node: 2}, {at: 0, node: 3}, {at: 0, node: 4},
				{at: 0.5, served: true, node: 0}, {at: 0.5, served: true, node: 1},
				{at: 0.5, served: true, node: 2}, {at: 0.5, served: true, node: 3},
			},
			at: 1.5, user: "h",
			// n5-n7 were never probed: kept. n4 sat 1.5 s > 1 s: out, but
			// it comes back as the one to explore (one per two kept, at
			// most those sitting): every node.
		},
		{
			name:  "sitting nodes make way, but a few are explored",
			nodes: 12,
			events: []ev{
				{at: 0, node: 0}, {at: 0, node: 1}, {at: 0, node: 2}, {at: 0, node: 3}, {at: 0, node: 4}, {at: 0, node: 5},
				{at: 0, node: 6}, {at: 0, node: 7}, {at: 0, node: 8}, {at: 0, node: 9}, {at: 0, node: 10}, {at: 0, node: 11},
				{at: 0.5, served: true, node: 0}, {at: 0.5, served: true, node: 1},
				{at: 0.5, served: true, node: 2}, {at: 0.5, served: true, node: 3},
			},
			at: 1.5, user: "h",
			want: []string{"n0", "n1", "n2", "n3"}, sample: 2,
		},
		{
			name:   "a reservation waiting less than After does not count",
			nodes:  3,
			events: []ev{{at: 0, node: 0}, {at: 0, node: 1}, {at: 0.5, served: true, node: 2}},
			at:     0.9, user: "h",
		},
		{
			name:   "every node sitting: every node",
			nodes:  3,
			events: []ev{{at: 0, node: 0}, {at: 0, node: 1}, {at: 0, node: 2}},
			at:     1.5, user: "h",
		},
		{
			name:   "a verdict older than After + Retry is dropped",
			nodes:  2,
			events: []ev{{at: 0, node: 0}, {at: 0, node: 1}, {at: 2.5, served: true, node: 1}},
			at:     3.5, user: "h",
		},
		{
			name:   "users are judged apart",
			nodes:  2,
			events: []ev{{at: 0, node: 0, user: "s"}, {at: 0.5, node: 1, user: "s", served: true}},
			at:     1.5, user: "h",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Steer{After: time.Second, Retry: 2 * time.Second}
			for _, e := range tt.events {
				u := e.user
				if u == "" {
					u = "h"
				}
				addr := fmt.Sprintf("n%d", e.node)
				if e.served {
					s.Served(u, addr, sec(e.at))
				} else {
					s.Probed(u, addr, sec(e.at))
				}
			}
			nodes := steerNodes(tt.nodes)
			got := s.Candidates(rand.New(rand.NewPCG(1, 2)), tt.user, nodes, sec(tt.at))
			want := tt.want
			if want == nil {
				want = steerAddrs(nodes)
			}
			if tt.sample == 0 {
				if !slices.Equal(steerAddrs(got), want) {
					t.Fatalf("candidates %v, want %v", steerAddrs(got), want)
				}
				return
			}
			if len(got) != len(want)+tt.sample {
				t.Fatalf("candidates %v: want %v plus %d explored", steerAddrs(got), want, tt.sample)
			}
			for _, a := range want {
				if !slices.Contains(steerAddrs(got), a) {
					t.Fatalf("candidates %v miss %s", steerAddrs(got), a)
				}
			}
		})
	}
}

// TestSteerCandidatesProperty: the candidates are distinct nodes of the
// input; every node not sitting on the user's reservations is among
// them; and while some node is kept and some sits, between one and
// len(kept)/Explore of the sitting ones are explored.
func TestSteerCandidatesProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	t0 := time.Unix(0, 0)
	for trial := range 300 {
		s := &Steer{After: time.Second, Explore: 1 + rng.IntN(5)}
		nodes := steerNodes(1 + rng.IntN(20))
		now := t0
		for range rng.IntN(80) {
			now = now.Add(time.Duration(rng.IntN(400)) * time.Millisecond)
			n := nodes[rng.IntN(len(nodes))].Addr
			if rng.IntN(3) == 0 {
				s.Served("u", n, now)
			} else {
				s.Probed("u", n, now)
			}
		}
		now = now.Add(time.Duration(rng.IntN(1500)) * time.Millisecond)
		sitting := map[string]bool{}
		for _, n := range nodes {
			// Judged before Candidates, which may drop old verdicts the
			// same way.
			sitting[n.Addr] = s.sitting("u", n.Addr, now)
		}
		got := s.Candidates(rng, "u", nodes, now)
		seen := map[string]bool{}
		explored := 0
		for _, n := range got {
			if seen[n.Addr] || !slices.ContainsFunc(nodes, func(m Node) bool { return m.Addr == n.Addr }) {
				t.Fatalf("trial %d: candidate %s repeated or unknown", trial, n.Addr)
			}
			seen[n.Addr] = true
			if sitting[n.Addr] {
				explored++
			}
		}
		kept, sat := 0, 0
		for _, n := range nodes {
			if !sitting[n.Addr] {
				kept++
				if !seen[n.Addr] {
					t.Fatalf("trial %d: node %s, not sitting, left out", trial, n.Addr)
				}
			} else {
				sat++
			}
		}
		if kept > 0 && sat > 0 {
			if lim := max(1, kept/s.Explore); explored < 1 || explored > lim {
				t.Fatalf("trial %d: explored %d of %d sitting nodes with %d kept, want 1..%d", trial, explored, sat, kept, lim)
			}
		} else if len(got) != len(nodes) {
			t.Fatalf("trial %d: %d candidates of %d with nothing to steer", trial, len(got), len(nodes))
		}
	}
}

func TestSteerServing(t *testing.T) {
	t0 := time.Unix(0, 0)
	s := &Steer{After: 500 * time.Millisecond}
	s.Served("h", "n0", t0)
	s.Served("h", "n1", t0.Add(1500*time.Millisecond))
	s.Probed("h", "n2", t0)
	s.Served("s", "n3", t0.Add(1500*time.Millisecond))
	tests := []struct {
		user string
		at   time.Duration
		want []string
	}{
		{user: "h", at: 1800 * time.Millisecond, want: []string{"n1"}}, // n0 served 1.8 s ago: too long
		{user: "h", at: 900 * time.Millisecond, want: []string{"n0"}},  // n1 not yet
		{user: "s", at: 2 * time.Second, want: []string{"n3"}},
		{user: "x", at: time.Second, want: nil},
	}
	for _, tt := range tests {
		got := s.Serving(tt.user, steerNodes(5), t0.Add(tt.at))
		if g := steerAddrs(got); !slices.Equal(g, tt.want) && !(len(g) == 0 && len(tt.want) == 0) {
			t.Errorf("Serving(%s) at %v = %v, want %v", tt.user, tt.at, g, tt.want)
		}
	}
}
