package planner

import "github.com/sparrowfleet/sparrow/core/perfmodel"

// gigabit is a 1000 Mbps interface in bytes per second.
const gigabit = 1000e6 / 8

// Frank returns the report's 3-machine "Frank" cluster (Figure 17), on
// which its Join search space (§4.3) and evaluation (§5.2) ran.
func Frank() []perfmodel.Machine {
	mb := float64(perfmodel.MB)
	return []perfmodel.Machine{
		{Name: "F1", Cores: 1, GHz: 1.8, DiskRead: 20 * mb, DiskWrite: 20 * mb, Net: gigabit},
		{Name: "F2", Cores: 2, GHz: 2.4, DiskRead: 42 * mb, DiskWrite: 42 * mb, Net: gigabit},
		{Name: "F3", Cores: 4, GHz: 2.0, DiskRead: 210 * mb, DiskWrite: 180 * mb, Net: gigabit},
	}
}

// T5400 is the report's reference machine (§3.4): 2 × quad-core 2.66 GHz,
// striped disks at 140/128 MB/s, gigabit Ethernet.
func T5400() perfmodel.Machine {
	mb := float64(perfmodel.MB)
	return perfmodel.Machine{Name: "T5400", Cores: 8, GHz: 2.66, DiskRead: 140 * mb, DiskWrite: 128 * mb, Net: gigabit}
}

// JoinModels returns models of the Join query's vertex types. The report
// prints no model for them, only their predicted times on the reference
// machine (Figure 10: HashPartition 18.5 s, Merge 18.7 s, Join 25.4 s), so
// these are reconstructions in the shape of Select's Figure 7, each
// calibrated to its Figure 10 time for 1 GB of input on the T5400:
//   - HashPartition: 1 GB read at a CPU cost that makes it CPU-bound on
//     the reference, written as two 512 MB partitions;
//   - Merge: 1 GB read and written with little CPU;
//   - Join: a small keys channel (read channel 0) held in memory, 1 GB of
//     data (read channel 1) joined against it, CPU-bound and two-wide at
//     best; output 25% of the input (the report gives no selectivity).
//
// Writes carry Select's stretch of 1.1 (8.8 s where the disk allows 8.0).
func JoinModels() map[string]perfmodel.Model {
	mb := float64(perfmodel.MB)
	ref := T5400()
	init := perfmodel.PhaseGroup{Label: "init", Kind: perfmodel.Init, Phases: 1, Run: 1.4, CPU: []float64{1.1}}
	return map[string]perfmodel.Model{
		"HashPartition": {Type: "HashPartition", Ref: ref, Groups: []perfmodel.PhaseGroup{
			init,
			{Label: "read", Kind: perfmodel.IO, Phases: 4, CPU: []float64{2.0}, Read: []float64{256 * mb}},
			{Label: "write", Kind: perfmodel.IO, Phases: 4, CPU: []float64{0.4}, Write: []float64{128 * mb, 128 * mb}, Stretch: 1.1},
			{Label: "compute", Kind: perfmodel.Compute, Phases: 1, CPU: []float64{0.3}},
		}},
		"Merge": {Type: "Merge", Ref: ref, Groups: []perfmodel.PhaseGroup{
			init,
			{Label: "read", Kind: perfmodel.IO, Phases: 4, CPU: []float64{0.6}, Read: []float64{256 * mb}},
			{Label: "write", Kind: perfmodel.IO, Phases: 4, CPU: []float64{0.4}, Write: []float64{256 * mb}, Stretch: 1.1},
			{Label: "compute", Kind: perfmodel.Compute, Phases: 6, CPU: []float64{0.2}},
		}},
		"Join": {Type: "Join", Ref: ref, Groups: []perfmodel.PhaseGroup{
			init,
			{Label: "keys", Kind: perfmodel.IO, Phases: 1, CPU: []float64{0.01}, Read: []float64{112, 0}},
			{Label: "read", Kind: perfmodel.IO, Phases: 4, CPU: []float64{3.5, 2.0}, Read: []float64{0, 256 * mb}},
			{Label: "write", Kind: perfmodel.IO, Phases: 1, CPU: []float64{0.2}, Write: []float64{256 * mb}, Stretch: 1.1},
			{Label: "compute", Kind: perfmodel.Compute, Phases: 2, CPU: []float64{1.895}},
		}},
	}
}

// JoinOnFrank returns the report's Join query (§2.2, §5.1) as a task graph
// on Frank, reconstructed from the text (Figure 2 is lost): two 512 MB
// data partitions (1 GB in all) each hashed by a HashPartition into two
// 256 MB partitions; the 112-byte keys file hashed by a third; each data
// Merge reads one partition from both data HashPartitions (§4.2), each keys
// Merge one keys partition; each Join reads a data Merge and a keys Merge.
// Nine active vertices, so 3^9 = 19,683 assignments. Every channel is a
// file. dataOn and keysOn name the machines holding the two data
// partitions and the keys file, which the report does not give.
func JoinOnFrank(dataOn [2]string, keysOn string) Problem {
	mb := float64(perfmodel.MB)
	const keys = 112.0
	tasks := []Task{
		{Name: "HP0", Type: "HashPartition", Inputs: []Input{{Machine: dataOn[0], Bytes: 512 * mb}}},
		{Name: "HP1", Type: "HashPartition", Inputs: []Input{{Machine: dataOn[1], Bytes: 512 * mb}}},
		{Name: "HPk", Type: "HashPartition", Inputs: []Input{{Machine: keysOn, Bytes: keys}}},
		{Name: "M0", Type: "Merge"}, {Name: "M1", Type: "Merge"},
		{Name: "Mk0", Type: "Merge"}, {Name: "Mk1", Type: "Merge"},
		{Name: "J0", Type: "Join"}, {Name: "J1", Type: "Join"},
	}
	arcs := []Arc{
		{From: "HP0", To: "M0", Bytes: 256 * mb}, {From: "HP0", To: "M1", Bytes: 256 * mb, WriteChannel: 1},
		{From: "HP1", To: "M0", Bytes: 256 * mb}, {From: "HP1", To: "M1", Bytes: 256 * mb, WriteChannel: 1},
		{From: "HPk", To: "Mk0", Bytes: keys / 2}, {From: "HPk", To: "Mk1", Bytes: keys / 2, WriteChannel: 1},
		{From: "M0", To: "J0", Bytes: 512 * mb, ReadChannel: 1}, {From: "Mk0", To: "J0", Bytes: keys / 2},
		{From: "M1", To: "J1", Bytes: 512 * mb, ReadChannel: 1}, {From: "Mk1", To: "J1", Bytes: keys / 2},
	}
	return Problem{Graph: Graph{Tasks: tasks, Arcs: arcs}, Machines: Frank(), Models: JoinModels()}
}
