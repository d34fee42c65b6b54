package placement

import (
	"fmt"
	"reflect"
	"testing"
	"unsafe"
)

// requestState is everything a Request's exported API reports, for
// comparing two Requests driven through different entry points.
type requestState struct {
	Launched    bool
	Unlaunched  int
	Constrained bool
	Outstanding []Probe
	Uncovered   []Task
	Unlaunch    []Task
	Holds       map[string]bool
	NodeOf      map[string]Node
}

func stateOf(r *Request, nodes []Node) requestState {
	s := requestState{
		Launched:    r.Launched(),
		Unlaunched:  r.Unlaunched(),
		Constrained: r.HasConstrained(),
		Outstanding: r.Outstanding(),
		Uncovered:   r.Uncovered(),
		Unlaunch:    r.UnlaunchedTasks(),
		Holds:       map[string]bool{},
		NodeOf:      map[string]Node{},
	}
	for _, n := range nodes {
		s.Holds[n.Addr] = r.Holds(n.Addr)
		if nd, ok := r.NodeOf(n.Addr); ok {
			s.NodeOf[n.Addr] = nd
		}
	}
	return s
}

// handleCase is a request driven by reservation handles. batches are the
// AddProbes calls, as node index and count pairs; asks are handles (-1 and
// out-of-range ones included).
type handleCase struct {
	name    string
	tasks   []Task
	batches [][][2]int
	asks    []int
	observe bool // compare the full state after every ask (forces indexing early)
}

func handleCases() []handleCase {
	return []handleCase{
		{name: "distinct probes", tasks: free(3), batches: [][][2]int{{{0, 1}, {1, 1}, {2, 1}, {3, 1}}}, asks: []int{2, 0, 3, 1, 1}},
		{name: "distinct probes, observed", tasks: free(3), batches: [][][2]int{{{0, 1}, {1, 1}, {2, 1}, {3, 1}}}, asks: []int{2, 0, 3, 1}, observe: true},
		{name: "counts above one", tasks: free(4), batches: [][][2]int{{{0, 2}, {1, 3}}}, asks: []int{1, 1, 0, 0, 0, 1, 1}},
		{name: "zero counts get no handle", tasks: free(2), batches: [][][2]int{{{0, 0}, {1, 1}, {2, -1}, {3, 1}}}, asks: []int{1, 0, 2, -1}},
		{name: "duplicate node in one batch", tasks: free(3), batches: [][][2]int{{{0, 1}, {1, 1}, {0, 2}}}, asks: []int{2, 2, 0, 1, 2}},
		{name: "duplicate node, later handle asked past its own count", tasks: free(4), batches: [][][2]int{{{0, 1}, {1, 1}, {0, 2}}}, asks: []int{2, 2, 2, 2, 1}},
		{name: "duplicate node in one batch, observed", tasks: free(3), batches: [][][2]int{{{0, 1}, {1, 1}, {0, 2}}}, asks: []int{2, 0, 2, 1}, observe: true},
		{name: "second batch re-probes a node", tasks: free(4), batches: [][][2]int{{{0, 1}, {1, 1}}, {{1, 1}, {2, 1}}}, asks: []int{2, 1, 1, 3, 0}},
		{name: "out of range", tasks: free(1), batches: [][][2]int{{{0, 1}}}, asks: []int{-1, 1, 100, 0}},
		{
			name:    "constrained tasks",
			tasks:   []Task{{ID: "c", Nodes: []string{"n2"}}, {ID: "f"}, {ID: "r", Racks: []string{"rack-1"}}},
			batches: [][][2]int{{{0, 1}, {1, 1}, {2, 1}}, {{2, 1}, {3, 1}}},
			asks:    []int{0, 3, 1, 2, 4},
		},
		{
			name:    "constrained tasks, observed",
			tasks:   []Task{{ID: "c", Nodes: []string{"n2"}}, {ID: "f"}},
			batches: [][][2]int{{{0, 1}, {2, 1}, {0, 1}}},
			asks:    []int{2, 1, 0},
			observe: true,
		},
	}
}

// handleNodes returns nodes whose rack attribute is "rack-<i mod 2>".
func handleNodes(n int) []Node {
	out := make([]Node, n)
	for i := range out {
		a := fmt.Sprintf("n%d", i)
		out[i] = Node{Addr: a + ":1", Host: a, Name: a, Attrs: map[string]string{RackAttr: fmt.Sprintf("rack-%d", i%2)}}
	}
	return out
}

// TestAssignAtMatchesAssign drives one Request with Assign(addr) and
// another with AddPicks and AssignAt(handle), and a third, reused through
// Reset, with AddProbes and AssignAt: every answer and the final state must
// agree.
func TestAssignAtMatchesAssign(t *testing.T) {
	nodes := handleNodes(5)
	used := NewRequest("old", free(7)) // to be Reset: its past must not show
	used.AddProbes([]Probe{{Node: nodes[4], Count: 3}, {Node: nodes[1], Count: 1}})
	used.Assign(nodes[4].Addr)
	used.AssignAt(1)
	for _, tc := range handleCases() {
		t.Run(tc.name, func(t *testing.T) {
			byAddr := NewRequest("req", tc.tasks)
			byPick := NewRequest("req", tc.tasks)
			used.Reset("req", tc.tasks)
			reused := used
			var handleNode []int // node index of each handle
			for _, b := range tc.batches {
				var probes []Probe
				var picks []Pick
				for _, p := range b {
					probes = append(probes, Probe{Node: nodes[p[0]], Count: p[1]})
					picks = append(picks, Pick{Node: int32(p[0]), Count: int32(p[1])})
					if p[1] > 0 {
						handleNode = append(handleNode, p[0])
					}
				}
				byAddr.AddProbes(probes)
				byPick.AddPicks(nodes, picks)
				reused.AddProbes(probes)
			}
			for i, h := range tc.asks {
				wantTask, wantOK := 0, false
				if h >= 0 && h < len(handleNode) {
					wantTask, wantOK = byAddr.Assign(nodes[handleNode[h]].Addr)
				}
				for name, r := range map[string]*Request{"AddPicks": byPick, "Reset": reused} {
					task, ok := r.AssignAt(h)
					if ok != wantOK || task != wantTask {
						t.Fatalf("%s: ask %d (handle %d): AssignAt = (%d, %v), Assign = (%d, %v)", name, i, h, task, ok, wantTask, wantOK)
					}
				}
				if tc.observe {
					want := stateOf(byAddr, nodes)
					for name, r := range map[string]*Request{"AddPicks": byPick, "Reset": reused} {
						if got := stateOf(r, nodes); !reflect.DeepEqual(got, want) {
							t.Fatalf("%s: after ask %d state\n got %+v\nwant %+v", name, i, got, want)
						}
					}
				}
			}
			want := stateOf(byAddr, nodes)
			for name, r := range map[string]*Request{"AddPicks": byPick, "Reset": reused} {
				if got := stateOf(r, nodes); !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: final state\n got %+v\nwant %+v", name, got, want)
				}
			}
			// DropNode by address works on handles filed lazily.
			for _, n := range nodes {
				if a, b := byAddr.DropNode(n.Addr), byPick.DropNode(n.Addr); a != b {
					t.Fatalf("DropNode(%s) = %d by address, %d after AddPicks", n.Addr, b, a)
				}
			}
		})
	}
}

// TestHoldAddr checks that HoldAddr gives the address of each handle's
// count, HoldStride apart, and 0 outside the handles, before and after
// asks, and that asking
// it changes no answer or state: a Request asked HoldAddr of every handle
// before each AssignAt must answer and end as one that is not.
func TestHoldAddr(t *testing.T) {
	nodes := handleNodes(5)
	for _, tc := range handleCases() {
		t.Run(tc.name, func(t *testing.T) {
			plain := NewRequest("req", tc.tasks)
			hinted := NewRequest("req", tc.tasks)
			for _, b := range tc.batches {
				var picks []Pick
				for _, p := range b {
					picks = append(picks, Pick{Node: int32(p[0]), Count: int32(p[1])})
				}
				plain.AddPicks(nodes, picks)
				hinted.AddPicks(nodes, picks)
			}
			for i, h := range tc.asks {
				for k := -2; k <= len(hinted.holds)+1; k++ {
					want := uintptr(0)
					if k >= 0 && k < len(hinted.holds) {
						want = uintptr(unsafe.Pointer(&hinted.holds[k]))
					}
					if got := hinted.HoldAddr(k); got != want {
						t.Fatalf("ask %d: HoldAddr(%d) = %#x, want %#x", i, k, got, want)
					}
					if base := hinted.HoldAddr(0); want != 0 && base+uintptr(k)*HoldStride != want {
						t.Fatalf("ask %d: HoldAddr(0) + %d*HoldStride = %#x, want %#x", i, k, base+uintptr(k)*HoldStride, want)
					}
				}
				wantTask, wantOK := plain.AssignAt(h)
				if task, ok := hinted.AssignAt(h); task != wantTask || ok != wantOK {
					t.Fatalf("ask %d (handle %d): (%d, %v) after HoldAddr, (%d, %v) without", i, h, task, ok, wantTask, wantOK)
				}
			}
			if got, want := stateOf(hinted, nodes), stateOf(plain, nodes); !reflect.DeepEqual(got, want) {
				t.Fatalf("final state\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

// TestResetForgetsEverything checks that a Reset request is
// indistinguishable from a new one before any probe is added.
func TestResetForgetsEverything(t *testing.T) {
	nodes := handleNodes(3)
	tests := []struct {
		name  string
		tasks []Task
	}{
		{name: "free", tasks: free(2)},
		{name: "constrained", tasks: []Task{{ID: "a", Nodes: []string{"n0"}}, {ID: "b"}}},
		{name: "none", tasks: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRequest("x", []Task{{ID: "c", Racks: []string{"rack-0"}}, {ID: "d"}, {ID: "e"}})
			r.AddProbes([]Probe{{Node: nodes[0], Count: 2}, {Node: nodes[2], Count: 1}})
			r.Assign(nodes[0].Addr)
			r.Widen(2, Task{ID: "e"})
			r.Reset("y", tc.tasks)
			fresh := NewRequest("y", tc.tasks)
			if r.ID != "y" {
				t.Fatalf("ID = %q after Reset", r.ID)
			}
			if got, want := stateOf(r, nodes), stateOf(fresh, nodes); !reflect.DeepEqual(got, want) {
				t.Fatalf("after Reset\n got %+v\nwant %+v", got, want)
			}
			if _, ok := r.AssignAt(0); ok {
				t.Fatal("AssignAt(0) on a Reset request with no probes returned a task")
			}
		})
	}
}

// TestPlanPicksMatchesPlan checks that Plan is PlanPicks mapped to nodes,
// drawing the same random numbers, with and without constrained tasks.
func TestPlanPicksMatchesPlan(t *testing.T) {
	nodes := handleNodes(40)
	tests := []struct {
		name  string
		tasks []Task
		d     float64
		n     int // candidate nodes
	}{
		{name: "batch", tasks: free(10), d: 2, n: 40},
		{name: "more reservations than nodes", tasks: free(10), d: 3, n: 7},
		{name: "constrained", tasks: []Task{{ID: "a", Nodes: []string{"n3"}}, {ID: "b", Racks: []string{"rack-1"}}, {ID: "c"}}, d: 2, n: 40},
		{name: "no candidate", tasks: []Task{{ID: "a", Nodes: []string{"nowhere"}}}, d: 2, n: 40},
		{name: "bad ratio", tasks: free(2), d: 0.5, n: 40},
		{name: "no nodes", tasks: free(2), d: 2, n: 0},
		{name: "no tasks", tasks: nil, d: 2, n: 40},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for seed := uint64(1); seed <= 5; seed++ {
				var s1, s2 Sampler
				r1, r2 := newRNG(seed), newRNG(seed)
				probes, err1 := s1.Plan(r1, nodes[:tc.n], tc.tasks, tc.d)
				prefix := []Pick{{Node: 99, Count: 9}} // PlanPicks appends
				picks, err2 := s2.PlanPicks(prefix, r2, nodes[:tc.n], tc.tasks, tc.d)
				if (err1 == nil) != (err2 == nil) || (err1 != nil && err1.Error() != err2.Error()) {
					t.Fatalf("seed %d: Plan error %v, PlanPicks error %v", seed, err1, err2)
				}
				if picks[0] != prefix[0] {
					t.Fatalf("seed %d: PlanPicks overwrote dst", seed)
				}
				var mapped []Probe
				for _, p := range picks[1:] {
					mapped = append(mapped, Probe{Node: nodes[p.Node], Count: int(p.Count)})
				}
				if len(mapped) != len(probes) || (len(probes) > 0 && !reflect.DeepEqual(mapped, probes)) {
					t.Fatalf("seed %d: Plan %v, PlanPicks mapped %v", seed, probes, mapped)
				}
				if a, b := r1.Uint64(), r2.Uint64(); a != b {
					t.Fatalf("seed %d: random streams differ after planning", seed)
				}
			}
		})
	}
}
