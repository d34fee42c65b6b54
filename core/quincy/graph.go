package quincy

import (
	"fmt"

	"github.com/sparrowfleet/sparrow/core/flow"
)

// ArcKind says which of the Appendix's edges an arc is.
type ArcKind uint8

const (
	// RootArc is r^j → C_m for a placed root, or r^j → X for one not yet
	// placed; capacity 1, cost 0.
	RootArc ArcKind = iota
	// UnscheduledArc is w → U_j, cost υ = ω·ν: the task stays (or, if
	// running, is preempted to) unscheduled.
	UnscheduledArc
	// ClusterArc is w → X, cost α: run anywhere.
	ClusterArc
	// RackArc is w → R_l for a preferred rack l, cost ρ_l.
	RackArc
	// ComputerArc is w → C_m for a preferred computer m, cost γ_m.
	ComputerArc
	// RunningArc is w → C_m' for the computer m' the task runs on, cost
	// d* − p* (its data cost there minus its running time θ).
	RunningArc
	// FairArc is U_j → S, whose bounds keep job j between E_j and F_j
	// running workers.
	FairArc
	// ClusterRackArc is X → R_l, capacity the rack's slots (P_l).
	ClusterRackArc
	// RackComputerArc is R_l → C_m, capacity m's slots (1 in the paper).
	RackComputerArc
	// SinkArc is C_m → S, capacity m's slots (1 in the paper).
	SinkArc
)

var arcKindNames = [...]string{"root", "unscheduled", "cluster", "rack", "computer", "running", "fair", "cluster-rack", "rack-computer", "sink"}

// String names the kind.
func (k ArcKind) String() string {
	if int(k) < len(arcKindNames) {
		return arcKindNames[k]
	}
	return fmt.Sprintf("ArcKind(%d)", int(k))
}

// ArcInfo maps an arc back to what it stands for. Fields that do not apply
// to the kind are -1. It uses int32 to keep the index small on graphs of
// a million arcs.
type ArcInfo struct {
	// Kind is which of the Appendix's edges the arc is.
	Kind ArcKind
	// Job is the job of a task, root or fair arc.
	Job int32
	// Task is the worker's number within its job (-1 for a root).
	Task int32
	// Rack is the rack of a rack, cluster-rack or rack-computer arc.
	Rack int32
	// Computer is the computer of a computer, running, root (when
	// placed), rack-computer or sink arc.
	Computer int32
}

// Graph is Quincy's flow network for one snapshot, with the index that
// maps its nodes and arcs back to the snapshot. Node and arc numbers are
// those of Net.
type Graph struct {
	// Net is the min-cost flow problem to solve.
	Net *flow.Network
	// Policy and Params are what the graph was built with.
	Policy Policy
	Params Params
	// State is the snapshot the graph describes; ReadSchedule reads task
	// states and input locations from it. Build does not copy it: do not
	// change it while the Graph is in use.
	State *State

	// RootNode[j] is r^j's node, -1 for a job without a root.
	RootNode []int
	// TaskNode[j][n] is w_n^j's node.
	TaskNode [][]int
	// UnscheduledNode[j] is U_j's node.
	UnscheduledNode []int
	// ClusterNode is X's node.
	ClusterNode int
	// RackNode[l] is R_l's node.
	RackNode []int
	// ComputerNode[m] is C_m's node.
	ComputerNode []int
	// SinkNode is S's node.
	SinkNode int

	// Arcs[i] says what arc i of Net stands for.
	Arcs []ArcInfo
	// RootArcIndex[j] is r^j's only arc, -1 for a job without a root.
	RootArcIndex []int
	// TaskArcs[j][n] is the first of w_n^j's arcs, which are consecutive;
	// ArcsOf gives the whole range.
	TaskArcs [][]int
	// FairArcIndex[j] is U_j → S.
	FairArcIndex []int
	// ClusterRackArcIndex[l] is X → R_l; RackComputerArcIndex[m] is
	// R_l → C_m for m's rack l; SinkArcIndex[m] is C_m → S.
	ClusterRackArcIndex  []int
	RackComputerArcIndex []int
	SinkArcIndex         []int

	// Min[j] and Max[j] are E_j and F_j: the least and most workers job j
	// may have running in the schedule.
	Min, Max []int

	taskEnd [][]int      // one past w_n^j's last arc
	topo    *topology    // the cluster's racks, precomputed
	locs    [][]locality // each worker's input summary
}

// ArcsOf returns the range [first, end) of worker n of job j's arcs.
func (g *Graph) ArcsOf(j, n int) (first, end int) {
	return g.TaskArcs[j][n], g.taskEnd[j][n]
}
