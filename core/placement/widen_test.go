package placement

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/sparrowfleet/sparrow/core/locality"
)

func TestWiden(t *testing.T) {
	pref := Task{ID: "t", Nodes: []string{"nm-1"}, Racks: []string{"r9"}}
	home := []string{"r1", "r9"}
	tests := []struct {
		name string
		t    Task
		l    locality.Level
		want Task
	}{
		{"node keeps the client's preferences", pref, locality.NodeLevel, pref},
		{"rack adds the home racks", pref, locality.RackLevel, Task{ID: "t", Nodes: []string{"nm-1"}, Racks: home}},
		{"cluster drops every preference", pref, locality.ClusterLevel, Task{ID: "t"}},
		{"a free task stays free", Task{ID: "f"}, locality.RackLevel, Task{ID: "f"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Widen(tc.t, tc.l, home); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Widen = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestRackIndex(t *testing.T) {
	nodes := mkNodes(8) // nm-i in rack r(i%4), host 10.0.0.(i+1)
	x := NewRackIndex(nodes)
	tests := []struct {
		name  string
		t     Task
		names []string
		home  []string
	}{
		{"by name", Task{Nodes: []string{"nm-1", "nm-6"}}, []string{"nm-1", "nm-6"}, []string{"r1", "r2"}},
		{"by host", Task{Nodes: []string{"10.0.0.4"}}, []string{"nm-3"}, []string{"r3"}},
		{"host and name of one node count once", Task{Nodes: []string{"10.0.0.1", "nm-0"}}, []string{"nm-0"}, []string{"r0"}},
		{"dead preferred nodes add nothing", Task{Nodes: []string{"nm-99", "nm-5"}}, []string{"nm-5"}, []string{"r1"}},
		{"preferred racks are home", Task{Nodes: []string{"nm-0"}, Racks: []string{"r7"}}, []string{"nm-0"}, []string{"r0", "r7"}},
		{"only racks", Task{Racks: []string{"r2"}}, nil, []string{"r2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := x.Names(tc.t); !slices.Equal(got, tc.names) {
				t.Errorf("Names = %v, want %v", got, tc.names)
			}
			if got := x.HomeRacks(tc.t); !slices.Equal(got, tc.home) {
				t.Errorf("HomeRacks = %v, want %v", got, tc.home)
			}
		})
	}
}

func TestLaunchLevel(t *testing.T) {
	nodes := mkNodes(8)
	orig := Task{ID: "t", Nodes: []string{"nm-1"}, Racks: []string{"r2"}}
	home := []string{"r1", "r2"}
	tests := []struct {
		node int
		want locality.Level
	}{
		{1, locality.NodeLevel},    // the preferred node
		{2, locality.NodeLevel},    // in a preferred rack: what the client allowed
		{5, locality.RackLevel},    // nm-1's rack-mate
		{0, locality.ClusterLevel}, // elsewhere
		{3, locality.ClusterLevel},
	}
	for _, tc := range tests {
		if got := LaunchLevel(orig, home, nodes[tc.node]); got != tc.want {
			t.Errorf("LaunchLevel on nm-%d = %v, want %v", tc.node, got, tc.want)
		}
	}
}

func TestPlanWidened(t *testing.T) {
	nodes := mkNodes(16) // four nodes per rack
	x := NewRackIndex(nodes)
	orig := Task{ID: "a", Nodes: []string{"nm-1"}}
	rack := Widen(orig, locality.RackLevel, x.HomeRacks(orig)) // r1: nm-1, 5, 9, 13
	cluster := Widen(Task{ID: "b", Nodes: []string{"nm-2"}}, locality.ClusterLevel, nil)
	holds := map[string]bool{nodes[1].Addr: true, nodes[5].Addr: true, nodes[2].Addr: true}
	skip := func(n Node) bool { return holds[n.Addr] }

	for seed := uint64(1); seed <= 200; seed++ {
		var s Sampler
		probes, starved, err := s.PlanWidened(newRNG(seed), nodes, []Task{rack, cluster}, 2, skip)
		if err != nil || len(starved) != 0 {
			t.Fatalf("seed %d: err %v, starved %v", seed, err, starved)
		}
		total, per := sumCounts(t, nodes, probes)
		if total != 4 {
			t.Fatalf("seed %d: %d reservations, want 2 per task", seed, total)
		}
		inRack := 0
		for addr, c := range per {
			if holds[addr] {
				t.Fatalf("seed %d: reservation on %s, which already holds one", seed, addr)
			}
			if c != 1 && !(addr == nodes[9].Addr || addr == nodes[13].Addr) {
				t.Fatalf("seed %d: %d reservations on %s", seed, c, addr)
			}
			if addr == nodes[9].Addr || addr == nodes[13].Addr {
				inRack += c
			}
		}
		// The rack task can only use nm-9 and nm-13, the two rack-mates
		// not already probed; the cluster task may also land there.
		if per[nodes[9].Addr] < 1 || per[nodes[13].Addr] < 1 {
			t.Fatalf("seed %d: rack task's reservations not on nm-9 and nm-13: %v", seed, per)
		}
		if inRack < 2 {
			t.Fatalf("seed %d: %d reservations in rack r1, want at least 2", seed, inRack)
		}
	}

	// The same seed gives the same plan.
	var s1, s2 Sampler
	p1, _, _ := s1.PlanWidened(newRNG(7), nodes, []Task{rack, cluster}, 2, skip)
	p2, _, _ := s2.PlanWidened(newRNG(7), nodes, []Task{rack, cluster}, 2, skip)
	if !reflect.DeepEqual(p1, p2) {
		t.Fatalf("same seed, different plans: %v vs %v", p1, p2)
	}
}

func TestPlanWidenedStarved(t *testing.T) {
	nodes := mkNodes(8) // r1: nm-1, nm-5
	x := NewRackIndex(nodes)
	orig := Task{ID: "a", Nodes: []string{"nm-1"}}
	rack := Widen(orig, locality.RackLevel, x.HomeRacks(orig))
	free := Widen(Task{ID: "b", Nodes: []string{"nm-0"}}, locality.ClusterLevel, nil)
	var s Sampler

	// Every node of r1 already holds one: the rack task is starved, the
	// cluster task still gets its reservations.
	inR1 := func(n Node) bool { return n.Attrs[RackAttr] == "r1" }
	probes, starved, err := s.PlanWidened(newRNG(1), nodes, []Task{rack, free}, 2, inR1)
	if err != nil {
		t.Fatal(err)
	}
	if len(starved) != 1 || starved[0].ID != "a" {
		t.Fatalf("starved %v, want task a", starved)
	}
	if total, per := sumCounts(t, nodes, probes); total != 2 || per[nodes[1].Addr]+per[nodes[5].Addr] != 0 {
		t.Fatalf("probes %v: want 2, none in r1", probes)
	}

	// Nothing eligible at all.
	probes, starved, err = s.PlanWidened(newRNG(1), nodes, []Task{rack, free}, 2, func(Node) bool { return true })
	if err != nil || len(probes) != 0 || len(starved) != 2 {
		t.Fatalf("all skipped: probes %v, starved %v, err %v; want none, both, nil", probes, starved, err)
	}
	if _, _, err := s.PlanWidened(newRNG(1), nodes, []Task{rack}, 0.5, nil); err == nil {
		t.Fatal("probe ratio 0.5 accepted")
	}
}

// A task widened while a reservation on its preferred node is still
// queued may be asked for by that node and by a node of the wider level:
// whichever asks first gets it, the other gets nothing.
func TestWidenedTaskLaunchesOnce(t *testing.T) {
	nodes := mkNodes(8)
	pref := nodes[1]
	for _, level := range []locality.Level{locality.RackLevel, locality.ClusterLevel} {
		for _, preferredFirst := range []bool{true, false} {
			name := fmt.Sprintf("%v/preferred-first=%v", level, preferredFirst)
			t.Run(name, func(t *testing.T) {
				orig := Task{ID: "t", Nodes: []string{pref.Name}}
				other := nodes[6] // another rack
				if level == locality.RackLevel {
					other = nodes[5] // nm-1's rack-mate
				}
				r := NewRequest("req", []Task{orig})
				r.AddProbes([]Probe{{Node: pref, Count: 1}})
				if !r.Widen(0, Widen(orig, level, NewRackIndex(nodes).HomeRacks(orig))) {
					t.Fatal("Widen refused an unlaunched task")
				}
				r.AddProbes([]Probe{{Node: other, Count: 1}})
				first, second := pref, other
				if !preferredFirst {
					first, second = other, pref
				}
				if i, ok := r.Assign(first.Addr); !ok || i != 0 {
					t.Fatalf("first asker %s got %d, %v; want task 0", first.Name, i, ok)
				}
				if i, ok := r.Assign(second.Addr); ok {
					t.Fatalf("second asker %s also got task %d", second.Name, i)
				}
				if !r.Launched() || r.Widen(0, Task{ID: "t"}) {
					t.Fatal("launched task could still be widened, or request not launched")
				}
			})
		}
	}
}

// Before widening, a node outside the preferences gets nothing even with
// a reservation; the caller's task slice is never changed.
func TestWidenChangesWhoMayRun(t *testing.T) {
	nodes := mkNodes(8)
	tasks := []Task{{ID: "t", Nodes: []string{"nm-1"}}, {ID: "u"}}
	r := NewRequest("req", tasks)
	r.AddProbes([]Probe{{Node: nodes[6], Count: 2}})
	// nm-6 takes the free task, then has nothing it may run.
	if i, ok := r.Assign(nodes[6].Addr); !ok || i != 1 {
		t.Fatalf("nm-6 got %d, %v; want the free task 1", i, ok)
	}
	if _, ok := r.Assign(nodes[6].Addr); ok {
		t.Fatal("nm-6 got the constrained task before it was widened")
	}
	if got := r.Uncovered(); len(got) != 1 || got[0].ID != "t" {
		t.Fatalf("Uncovered = %v, want task t", got)
	}
	r.Widen(0, Task{ID: "t"})
	if got := r.Uncovered(); len(got) != 1 || got[0].Constrained() {
		t.Fatalf("Uncovered after widening = %v, want t without preferences", got)
	}
	r.AddProbes([]Probe{{Node: nodes[6], Count: 1}})
	if i, ok := r.Assign(nodes[6].Addr); !ok || i != 0 {
		t.Fatalf("nm-6 got %d, %v after widening; want task 0", i, ok)
	}
	if !reflect.DeepEqual(tasks[0], Task{ID: "t", Nodes: []string{"nm-1"}}) {
		t.Fatalf("caller's task changed to %+v", tasks[0])
	}
}

// Property: under any interleaving of widenings and asks, every task is
// handed out at most once, only to a node its preferences allowed at that
// moment, and Widen refuses exactly the launched tasks.
func TestWidenAssignProperty(t *testing.T) {
	nodes := mkNodes(12)
	x := NewRackIndex(nodes)
	for seed := uint64(1); seed <= 300; seed++ {
		rng := newRNG(seed)
		m := 1 + rng.IntN(6)
		tasks := make([]Task, m)
		for i := range tasks {
			if rng.IntN(4) > 0 {
				tasks[i] = Task{ID: fmt.Sprint(i), Nodes: []string{nodes[rng.IntN(len(nodes))].Name}}
			} else {
				tasks[i] = Task{ID: fmt.Sprint(i)}
			}
		}
		r := NewRequest("req", tasks)
		var s Sampler
		probes, err := s.Plan(rng, nodes, tasks, 2)
		if err != nil {
			t.Fatal(err)
		}
		r.AddProbes(probes)
		level := make([]locality.Level, m)
		launchedOn := map[int]string{}
		for step := 0; step < 200 && !r.Launched(); step++ {
			if rng.IntN(3) == 0 {
				i := rng.IntN(m)
				if level[i] < locality.ClusterLevel {
					level[i]++
					w := Widen(tasks[i], level[i], x.HomeRacks(tasks[i]))
					if ok := r.Widen(i, w); ok == r.IsLaunched(i) {
						t.Fatalf("seed %d: Widen(%d) = %v with launched %v", seed, i, ok, r.IsLaunched(i))
					}
					extra, _, err := s.PlanWidened(rng, nodes, []Task{w}, 2, func(n Node) bool { return r.Holds(n.Addr) })
					if err != nil {
						t.Fatal(err)
					}
					r.AddProbes(extra)
				}
				continue
			}
			n := nodes[rng.IntN(len(nodes))]
			allowedNow := make([]bool, m)
			for i := range tasks {
				allowedNow[i] = Widen(tasks[i], level[i], x.HomeRacks(tasks[i])).Allows(n)
			}
			i, ok := r.Assign(n.Addr)
			if !ok {
				continue
			}
			if prev, dup := launchedOn[i]; dup {
				t.Fatalf("seed %d: task %d launched on %s and %s", seed, i, prev, n.Name)
			}
			if !allowedNow[i] {
				t.Fatalf("seed %d: task %d (level %v) launched on %s, which it did not allow", seed, i, level[i], n.Name)
			}
			launchedOn[i] = n.Name
		}
		for i := range tasks {
			if _, ok := launchedOn[i]; ok != r.IsLaunched(i) {
				t.Fatalf("seed %d: task %d launched %v but recorded %v", seed, i, r.IsLaunched(i), ok)
			}
		}
	}
}
