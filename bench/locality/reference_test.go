package locality

import (
	"reflect"
	"testing"
	"time"
)

// TestReferenceHandCases checks the reference schedule on traces small
// enough to work out by hand: 4 nodes in 2 racks (0-1, 2-3), 1 slot each,
// 100 ms of CPU; a rack read takes 100 ms and a core read 600 ms (64 MiB).
// At ω = 0.5 per second and ψ = 1 per GB, a 64 MiB rack read costs as
// much as about 134 ms of waiting, a core read (ξ = 2) 268 ms.
func TestReferenceHandCases(t *testing.T) {
	const blk = 64 << 20
	w := WorkloadConfig{Topology: Topology{Nodes: 4, Racks: 2}, Slots: 1, Blocks: 1, BlockBytes: blk, TasksPerJob: 1,
		Load: 1, CPU: 100 * time.Millisecond, Duration: time.Second}
	read := ReadModel{RackBandwidth: DefaultRackBandwidth, CoreBandwidth: DefaultCoreBandwidth}
	// Block 0 on node 0 and on nodes 2 and 3 (rack 1).
	blocks := []Block{{Bytes: blk, Replicas: [3]int{0, 2, 3}}}
	tests := []struct {
		name string
		jobs []Job
		// want per task: node, launch and finish in ms
		want [][3]int
	}{
		{"one task starts at once on a replica",
			[]Job{{At: 0, Blocks: []int{0}}},
			[][3]int{{0, 0, 100}}},
		{"three tasks fill the three replicas",
			[]Job{{At: 0, Blocks: []int{0, 0, 0}}},
			[][3]int{{0, 0, 100}, {2, 0, 100}, {3, 0, 100}}},
		// Policy Q makes every task run when all of them fit in the free
		// slots (E_j = N_j, §4.3): with 4 tasks on 4 slots the fourth
		// must start on node 1, which reads the block within rack 0.
		{"when every task fits, every task starts",
			[]Job{{At: 0, Blocks: []int{0, 0, 0, 0}}},
			[][3]int{{0, 0, 100}, {2, 0, 100}, {3, 0, 100}, {1, 0, 200}}},
		// With 5 tasks they do not all fit, E_j = 1, and the two beyond
		// the replicas wait (1 unit each) rather than read in a rack
		// (67 units); they take replicas as those free at 100 ms.
		{"when not all fit, tasks wait for replicas",
			[]Job{{At: 0, Blocks: []int{0, 0, 0, 0, 0}}},
			[][3]int{{0, 0, 100}, {2, 0, 100}, {3, 0, 100}, {anyReplica, 100, 200}, {anyReplica, 100, 200}}},
		// A second job arriving at 50 ms fits in the free slot: it starts
		// at once on node 1.
		{"a later job that fits starts at once in the rack",
			[]Job{{At: 0, Blocks: []int{0, 0, 0}}, {At: 50 * time.Millisecond, Blocks: []int{0}}},
			[][3]int{{0, 0, 100}, {2, 0, 100}, {3, 0, 100}, {1, 50, 250}}},
	}
	for _, tt := range tests {
		tr := Trace{Blocks: blocks, Jobs: tt.jobs}
		res, err := Reference(w, read, tr, ReferenceParams())
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var got [][3]int
		for _, j := range res.Jobs {
			for _, task := range j.Tasks {
				if task.Launches != 1 || !task.Done {
					t.Fatalf("%s: task %+v not run exactly once", tt.name, task)
				}
				got = append(got, [3]int{task.Node, int(task.Launched / time.Millisecond), int(task.Finished / time.Millisecond)})
			}
		}
		// Which of the tied replica nodes a task takes is the solver's
		// choice; compare the multisets of (node, times) by sorting on
		// what the cases make unique.
		if !sameRuns(got, tt.want) {
			t.Errorf("%s: runs %v, want %v", tt.name, got, tt.want)
		}
	}
}

// anyReplica in a wanted run matches any of block 0's replica nodes.
const anyReplica = -1

// sameRuns compares two lists of runs as multisets.
func sameRuns(a, b [][3]int) bool {
	if len(a) != len(b) {
		return false
	}
	used := make([]bool, len(b))
outer:
	for _, x := range a {
		for i, y := range b {
			if y[0] == anyReplica && (x[0] == 0 || x[0] == 2 || x[0] == 3) {
				y[0] = x[0]
			}
			if !used[i] && x == y {
				used[i] = true
				continue outer
			}
		}
		return false
	}
	return true
}

// TestReferenceHotBlock: one hot block on a cluster too small to run it
// all on the replicas: the reference must move some tasks off them, run
// every task exactly once, never run two tasks at once on a slot, and be
// deterministic.
func TestReferenceHotBlock(t *testing.T) {
	w := WorkloadConfig{Topology: Topology{Nodes: 8, Racks: 2}, Slots: 1, Blocks: 1, BlockBytes: 64 << 20, ZipfS: 0,
		TasksPerJob: 4, Load: 0.7, CPU: 100 * time.Millisecond, Duration: 3 * time.Second, Seed: 5}
	read := ReadModel{RackBandwidth: DefaultRackBandwidth, CoreBandwidth: DefaultCoreBandwidth}
	tr, err := Generate(w)
	if err != nil {
		t.Fatal(err)
	}
	a, err := Reference(w, read, tr, ReferenceParams())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Reference(w, read, tr, ReferenceParams())
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two runs gave two schedules")
	}
	s := Analyze(a.Jobs, a.End)
	if s.TasksCompleted != s.TasksSubmitted || s.JobsCompleted != len(tr.Jobs) || s.DuplicateLaunches != 0 {
		t.Fatalf("stats %+v", s)
	}
	if s.NodeLocal == 1 || s.NodeLocal == 0 {
		t.Errorf("node-local fraction %g: the hot block's load (%.1f slots on 3) must spill, but not all of it", s.NodeLocal, 0.7*8)
	}
	// No slot runs two tasks at once: sweep the launches and finishes.
	type ev struct {
		at    time.Duration
		node  int
		delta int
	}
	var evs []ev
	for _, j := range a.Jobs {
		for _, task := range j.Tasks {
			evs = append(evs, ev{task.Launched, task.Node, 1}, ev{task.Finished, task.Node, -1})
		}
	}
	busy := make([]int, w.Topology.Nodes)
	for len(evs) > 0 {
		// Finishes before launches at the same instant.
		k := 0
		for i, e := range evs {
			if e.at < evs[k].at || (e.at == evs[k].at && e.delta < evs[k].delta) {
				k = i
			}
		}
		e := evs[k]
		evs = append(evs[:k], evs[k+1:]...)
		if busy[e.node] += e.delta; busy[e.node] > w.Slots {
			t.Fatalf("node %d runs %d tasks at %v", e.node, busy[e.node], e.at)
		}
	}
}
