package racksim

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Layout says where an instance's input partitions are stored.
type Layout int

const (
	// Spread puts each partition's primary copy on a random computer and
	// two more copies on two computers of one other random rack (HDFS's
	// placement).
	Spread Layout = iota
	// OnePerComputer puts partition n's primary copy on computer n, with
	// HDFS's two other copies (PageRank's 240 partitions "stored on 240
	// computers").
	OnePerComputer
	// Join40 stores each partition once, on 40 distinct random computers
	// (DatabaseJoin40: "distributed over 40 computers each of which holds
	// a single partition").
	Join40
	// Join5 stores each partition once, 8 on each of 5 computers of one
	// rack (DatabaseJoin5).
	Join5
)

// Phase is one stage of an instance's workflow: Tasks workers that each
// read partition n's Read blocks, or the previous phase's outputs, compute
// for CPU seconds and write Output bytes.
type Phase struct {
	// Tasks is the phase's worker count.
	Tasks int
	// Read are the sizes of the blocks of input partition n that worker n
	// reads (all stored on partition n's replicas); empty for none.
	Read []float64
	// Gather makes worker n read bucket n of every output of the previous
	// phase (1/Tasks of each); the phase is submitted when the previous
	// phase has finished.
	Gather bool
	// Pipe makes worker n read the whole output of the previous phase's
	// worker n, and be submitted as soon as that worker finishes.
	Pipe bool
	// Weight is the phase's share of the instance's CPU time per worker;
	// calibrate turns it into CPU seconds.
	Weight float64
	// CPU is each worker's computing time in seconds, after its reads
	// (set by calibrate).
	CPU float64
	// Output is the bytes each worker writes to its own computer.
	Output float64
}

// Instance is one application instance of Table 3.
type Instance struct {
	// Name is the instance's name, e.g. "Sort40".
	Name string
	// NW marks Table 3's network-bound instances (the rest are CPU-bound).
	NW bool
	// Partitions is Table 3's partition count.
	Partitions int
	// Ideal is Table 3's mean running time alone on the cluster, seconds.
	Ideal float64
	// Layout says where the input partitions are stored.
	Layout Layout
	// Phases are the workflow's stages in order.
	Phases []Phase
	// CPUFrom names an instance whose calibrated CPU times this one takes
	// instead of being fitted itself (DatabaseJoin5 runs DatabaseJoin40's
	// program on the same data, only stored on fewer computers).
	CPUFrom string
}

// Tasks returns the instance's worker count over all phases.
func (in *Instance) Tasks() int {
	n := 0
	for _, p := range in.Phases {
		n += p.Tasks
	}
	return n
}

// table3 lists Table 3's (partitions, seconds) pairs.
var table3 = []struct {
	app   string
	pairs [][2]float64
}{
	{"PrimeSmall", [][2]float64{{2, 14}, {4, 14}, {5, 14}, {6, 14}, {8, 15}, {10, 15}, {15, 15}, {20, 17}, {25, 17}, {500, 29}, {1000, 44}, {1500, 57}, {2000, 71}}},
	{"PrimeLarge", [][2]float64{{240, 1360}}},
	{"Word", [][2]float64{{2, 44}, {4, 45}, {5, 47}, {6, 48}, {8, 49}, {10, 47}, {15, 52}, {20, 56}, {25, 54}, {100, 61}}},
	{"DatabaseJoin", [][2]float64{{40, 309}, {5, 365}}},
	{"Sort", [][2]float64{{10, 365}, {40, 409}, {80, 562}}},
	{"PageRank", [][2]float64{{240, 877}}},
}

// Table3 returns the 30 instances of Table 3 in the table's order, with
// phases and sizes reconstructed from §5.1 (CPU times not yet calibrated):
//
//   - PrimeSmall/PrimeLarge: one phase, one worker per partition of
//     40,000 or 500,000 integers (0.4 MB or 5 MB at 10 bytes each).
//   - Word (WordCount): one worker per 50 MB partition, writing 1 MB of
//     counts, then one worker merging them (CPU weight 0.02 per partition).
//   - DatabaseJoin: 40 workers each reading a matching pair of partitions
//     (11.8 GB and 41.8 GB tables in 40 partitions) and writing 1 GB in 40
//     buckets, then 40 workers each reading a partition of the larger table
//     and one bucket of every first-phase output.
//   - Sort: S workers each reading a 4 GB partition and writing it
//     range-partitioned, then S workers each reading one range of every
//     first-phase output (all data moves).
//   - PageRank: three iterations of two phases; a first-phase worker reads
//     its 1 GB partition (and, after the first iteration, the 50 MB its
//     previous second-phase worker wrote) and writes 0.5 GB in 240
//     buckets; a second-phase worker reads one bucket of each.
func Table3() []Instance {
	var out []Instance
	for _, app := range table3 {
		for _, pr := range app.pairs {
			p, ideal := int(pr[0]), pr[1]
			in := Instance{Partitions: p, Ideal: ideal}
			switch app.app {
			case "PrimeSmall", "PrimeLarge":
				size := 0.4 * MB
				if app.app == "PrimeLarge" {
					size = 5 * MB
				}
				in.Name = fmt.Sprintf("%s%d", app.app, p)
				if app.app == "PrimeLarge" {
					in.Name = "PrimeLarge"
				}
				in.Phases = []Phase{{Tasks: p, Read: []float64{size}, Weight: 1}}
			case "Word":
				in.Name = fmt.Sprintf("Word%d", p)
				in.Phases = []Phase{
					{Tasks: p, Read: []float64{50 * MB}, Weight: 1, Output: 1 * MB},
					{Tasks: 1, Gather: true, Weight: 0.02 * float64(p), Output: 0.01 * MB},
				}
			case "DatabaseJoin":
				in.Name = fmt.Sprintf("DatabaseJoin%d", p)
				in.NW = true
				in.Layout = Join40
				if p == 5 {
					in.Layout, in.CPUFrom = Join5, "DatabaseJoin40"
				}
				small, large := 11.8*GB/40, 41.8*GB/40
				in.Phases = []Phase{
					{Tasks: 40, Read: []float64{small, large}, Weight: 1, Output: 1 * GB},
					{Tasks: 40, Read: []float64{large}, Gather: true, Weight: 1, Output: 0.1 * GB},
				}
			case "Sort":
				in.Name = fmt.Sprintf("Sort%d", p)
				in.NW = true
				in.Phases = []Phase{
					{Tasks: p, Read: []float64{4 * GB}, Weight: 1, Output: 4 * GB},
					{Tasks: p, Gather: true, Weight: 1, Output: 4 * GB},
				}
			case "PageRank":
				in.Name = "PageRank"
				in.NW = true
				in.Layout = OnePerComputer
				for it := range 3 {
					in.Phases = append(in.Phases,
						Phase{Tasks: p, Read: []float64{1 * GB}, Pipe: it > 0, Weight: 1, Output: 0.5 * GB},
						Phase{Tasks: p, Gather: true, Weight: 1, Output: 50 * MB})
				}
			}
			out = append(out, in)
		}
	}
	return out
}

// Workload returns the instances of cfg in admission order, calibrated:
// Table 3's instances (or cfg.Instances), PrimeLarge first (§5.1: "We
// always start PrimeLarge first") or dropped (NoPrimeLarge), the others in
// one fixed order the paper does not give, the same for every policy and
// seed.
func Workload(cfg *Config) []Instance {
	if cfg.Instances != nil {
		out := append([]Instance(nil), cfg.Instances...)
		calibrate(out, cfg)
		return out
	}
	all := Table3()
	for i := range all {
		scaleGathers(&all[i], cfg.GatherScale)
	}
	calibrate(all, cfg)
	for i := range all {
		if cpu, ok := cfg.CPU[all[i].Name]; ok && len(cpu) == len(all[i].Phases) {
			for k := range cpu {
				all[i].Phases[k].CPU = cpu[k]
			}
		}
	}
	var first []Instance
	var rest []Instance
	for _, in := range all {
		if in.Name == "PrimeLarge" {
			if !cfg.NoPrimeLarge {
				first = append(first, in)
			}
			continue
		}
		rest = append(rest, in)
	}
	// A fixed shuffle (its own constant seed, not cfg.Seed) mixes big and
	// small, CPU- and network-bound instances.
	r := rand.New(rand.NewPCG(2009, 3))
	r.Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
	return append(first, rest...)
}

// scaleGathers multiplies the output of every phase that a gather reads
// by scale.
func scaleGathers(in *Instance, scale float64) {
	if scale == 1 || scale <= 0 {
		return
	}
	for k := 1; k < len(in.Phases); k++ {
		if in.Phases[k].Gather {
			in.Phases[k-1].Output *= scale
		}
	}
}

// calibrate sets each phase's CPU seconds so that the instance's estimated
// running time alone on the cluster (K = 1, every other computer free)
// equals Table 3's: the estimate adds the job's start-up and wrap-up, and
// for each phase its waves (tasks over free computers) times the sum of
// the estimated read time and the CPU time. Reads are estimated without
// contention: a task's own partition from its local disk at cfg.Disk,
// gathered inputs over its NIC, their cross-rack part (all but one rack's
// share) at its share of the uplink, piped input over its NIC. The CPU
// time per unit of Weight is what is left, divided evenly. Instances with
// CPUFrom copy that instance's CPU times instead.
func calibrate(ins []Instance, cfg *Config) {
	computers, racks := 0, len(cfg.RackSizes)
	for _, n := range cfg.RackSizes {
		computers += n
	}
	free := float64(max(computers-1, 1))
	byName := map[string]*Instance{}
	for i := range ins {
		in := &ins[i]
		byName[in.Name] = in
		if in.CPUFrom != "" || in.Ideal <= 0 {
			continue
		}
		fixed, weighted := cfg.JobStartup+cfg.JobFinish, 0.0
		for k := range in.Phases {
			p := &in.Phases[k]
			waves := math.Ceil(float64(p.Tasks) / free)
			fixed += waves * readEstimate(in, k, cfg, free, racks)
			weighted += waves * p.Weight
		}
		unit := 0.0
		if weighted > 0 {
			unit = max(in.Ideal-fixed, 0) / weighted
		}
		for k := range in.Phases {
			in.Phases[k].CPU = unit * in.Phases[k].Weight
		}
	}
	for i := range ins {
		in := &ins[i]
		if src, ok := byName[in.CPUFrom]; ok && in.CPUFrom != "" && len(src.Phases) == len(in.Phases) {
			for k := range in.Phases {
				in.Phases[k].CPU = src.Phases[k].CPU
			}
		}
	}
}

// readEstimate is calibrate's uncontended read time of one worker of
// phase k.
func readEstimate(in *Instance, k int, cfg *Config, free float64, racks int) float64 {
	p := &in.Phases[k]
	t := 0.0
	for _, b := range p.Read {
		t += b / cfg.Disk
	}
	if k == 0 {
		return t
	}
	prev := &in.Phases[k-1]
	switch {
	case p.Gather:
		total := float64(prev.Tasks) * prev.Output / float64(p.Tasks)
		remote := total * (1 - 1/float64(prev.Tasks))
		cross := remote * float64(racks-1) / float64(racks)
		perRack := max(math.Min(float64(p.Tasks), free)/float64(racks), 1)
		t += max(remote/cfg.NIC, cross/(cfg.Uplink/perRack))
	case p.Pipe:
		t += prev.Output / cfg.NIC
	}
	return t
}
