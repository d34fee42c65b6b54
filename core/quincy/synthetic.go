package quincy

import (
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/sparrowfleet/sparrow/core/flow"
)

// SyntheticConfig shapes a synthetic snapshot: a cluster of racks and
// computers, and jobs whose workers read replicated input blocks, some
// running and the rest waiting, as Quincy's graphs look under load.
type SyntheticConfig struct {
	// Computers and Racks size the cluster; computers are spread over the
	// racks in contiguous runs whose sizes differ by at most one.
	Computers, Racks int
	// Slots per computer; 0 means Quincy's one.
	Slots int
	// Jobs is the number of admitted jobs, each with a placed root.
	Jobs int
	// Tasks is the total number of workers over all jobs; job sizes are
	// skewed (exponentially distributed weights), each at least one.
	Tasks int
	// Replicas is how many copies of each input block exist (3 by
	// default): one on a random computer, the others on distinct
	// computers of one other random rack, as HDFS and GFS place them.
	Replicas int
	// BlockBytes is the mean block size; sizes are uniform in [B/2, 3B/2].
	BlockBytes int64
	// MaxBlocks bounds the blocks a worker reads (uniform in 1..MaxBlocks).
	MaxBlocks int
	// SpreadFraction of workers read SpreadBlocks small blocks scattered
	// over the cluster, so no computer is preferred (like PageRank's
	// second phase, §6.1).
	SpreadFraction float64
	// SpreadBlocks is the number of blocks such a worker reads.
	SpreadBlocks int
	// Busy is the fraction of the slots left free by roots that run
	// workers (1: every slot busy, the usual state under load). Zero
	// means the default, 1; a negative value means no worker runs.
	Busy float64
	// Horizon bounds how long a task has waited or run; State.Now is
	// Horizon.
	Horizon time.Duration
}

// syntheticSizes are the named benchmark sizes (SyntheticSize).
var syntheticSizes = map[string]SyntheticConfig{
	"243":      withDefaults(SyntheticConfig{Computers: 243, Racks: 8, Jobs: 10, Tasks: 2140}),
	"2500x100": withDefaults(SyntheticConfig{Computers: 2500, Racks: 80, Jobs: 100, Tasks: 22000}),
	"12500":    withDefaults(SyntheticConfig{Computers: 12500, Racks: 400, Jobs: 500, Tasks: 110000}),
}

// SyntheticSizeNames lists the named sizes, smallest first.
func SyntheticSizeNames() []string { return []string{"243", "2500x100", "12500"} }

// SyntheticSize returns the named size (see SyntheticSizeNames): Quincy's
// 243-computer cluster in 8 racks with K = 10 jobs (§5, §6.5); the
// simulated 2,500 computers with 100 jobs of §6.5 (about 22,000 workers,
// the largest graph the simulator solves); and 12,500 computers (Firmament's scale) with
// 500 jobs. Workers number about 8.8 per computer in each.
func SyntheticSize(name string) (SyntheticConfig, error) {
	cfg, ok := syntheticSizes[name]
	if !ok {
		return SyntheticConfig{}, fmt.Errorf("quincy: unknown synthetic size %q (want 243, 2500x100 or 12500)", name)
	}
	return cfg, nil
}

// withDefaults fills the zero fields a named size leaves open.
func withDefaults(c SyntheticConfig) SyntheticConfig {
	if c.Replicas == 0 {
		c.Replicas = 3
	}
	if c.BlockBytes == 0 {
		c.BlockBytes = 1_000_000_000 // PageRank's ~1 GB partitions (§5.1)
	}
	if c.MaxBlocks == 0 {
		c.MaxBlocks = 2
	}
	if c.SpreadFraction == 0 {
		c.SpreadFraction = 0.1
	}
	if c.SpreadBlocks == 0 {
		c.SpreadBlocks = 20
	}
	if c.Busy == 0 {
		c.Busy = 1
	}
	if c.Horizon == 0 {
		c.Horizon = time.Hour
	}
	return c
}

// Synthetic builds a snapshot shaped by cfg, drawing everything from rng.
// The same cfg and rng state give the same snapshot.
func Synthetic(cfg SyntheticConfig, rng *rand.Rand) (*State, error) {
	cfg = withDefaults(cfg)
	slots := max(cfg.Slots, 1)
	switch {
	case cfg.Racks <= 0 || cfg.Computers < cfg.Racks:
		return nil, fmt.Errorf("quincy: synthetic cluster of %d computers in %d racks: want at least one computer per rack", cfg.Computers, cfg.Racks)
	case cfg.Jobs <= 0 || cfg.Tasks < cfg.Jobs:
		return nil, fmt.Errorf("quincy: synthetic %d tasks in %d jobs: want at least one job and one task per job", cfg.Tasks, cfg.Jobs)
	case cfg.Jobs > cfg.Computers*slots:
		return nil, fmt.Errorf("quincy: %d jobs' roots do not fit in %d slots", cfg.Jobs, cfg.Computers*slots)
	case cfg.BlockBytes <= 0 || cfg.MaxBlocks <= 0 || cfg.SpreadBlocks <= 0 || cfg.Replicas <= 0:
		return nil, fmt.Errorf("quincy: synthetic blocks need positive sizes, counts and replicas")
	}
	s := &State{Now: cfg.Horizon, Cluster: Cluster{Racks: cfg.Racks, Computers: make([]Computer, cfg.Computers)}}
	members := make([][]int, cfg.Racks)
	for m := range s.Cluster.Computers {
		l := m * cfg.Racks / cfg.Computers
		s.Cluster.Computers[m] = Computer{Rack: l, Slots: cfg.Slots}
		members[l] = append(members[l], m)
	}

	// Job sizes: skewed weights, each job at least one task, rounding
	// handed out in job order.
	weights := make([]float64, cfg.Jobs)
	var wsum float64
	for j := range weights {
		weights[j] = rng.ExpFloat64() + 0.05
		wsum += weights[j]
	}
	sizes := make([]int, cfg.Jobs)
	given := 0
	for j, w := range weights {
		sizes[j] = 1 + int(w/wsum*float64(cfg.Tasks-cfg.Jobs))
		given += sizes[j]
	}
	for j := 0; given < cfg.Tasks; j = (j + 1) % cfg.Jobs {
		sizes[j]++
		given++
	}

	// Free slots, for roots and running workers: a shuffled list of
	// computer numbers, one entry per slot, consumed from the end.
	used := make([]int, cfg.Computers)
	free := make([]int, 0, cfg.Computers*slots)
	for m := range cfg.Computers {
		for range slots {
			free = append(free, m)
		}
	}
	rng.Shuffle(len(free), func(a, b int) { free[a], free[b] = free[b], free[a] })
	take := func(prefer []int) int {
		for _, m := range prefer {
			if used[m] < slots {
				used[m]++
				return m
			}
		}
		for len(free) > 0 {
			m := free[len(free)-1]
			free = free[:len(free)-1]
			if used[m] < slots {
				used[m]++
				return m
			}
		}
		return -1
	}

	s.Jobs = make([]Job, cfg.Jobs)
	for j := range s.Jobs {
		s.Jobs[j].Root = &Root{Computer: take(nil)}
	}
	block := func() Block {
		return Block{Bytes: cfg.BlockBytes/2 + rng.Int64N(cfg.BlockBytes+1), Replicas: replicas(rng, members, cfg.Computers, cfg.Replicas)}
	}
	for j := range s.Jobs {
		tasks := make([]Task, sizes[j])
		for n := range tasks {
			t := &tasks[n]
			if rng.Float64() < cfg.SpreadFraction {
				for range cfg.SpreadBlocks {
					b := block()
					b.Bytes /= int64(cfg.SpreadBlocks)
					t.Input = append(t.Input, b)
				}
			} else {
				for range 1 + rng.IntN(cfg.MaxBlocks) {
					t.Input = append(t.Input, block())
				}
			}
			t.Since = cfg.Horizon - time.Duration(rng.Int64N(int64(cfg.Horizon)/4+1))
			if rng.IntN(4) == 0 {
				t.WaitedBefore = time.Duration(rng.Int64N(int64(cfg.Horizon) / 8))
				t.RanBefore = time.Duration(rng.Int64N(int64(cfg.Horizon) / 8))
			}
		}
		s.Jobs[j].Tasks = tasks
	}

	// Running workers: a random subset, each on a free slot of a computer
	// holding its input when one has room (the scheduler placed it well
	// before), else anywhere.
	workers := make([]TaskRef, 0, cfg.Tasks)
	for j, job := range s.Jobs {
		for n := range job.Tasks {
			workers = append(workers, TaskRef{j, n})
		}
	}
	rng.Shuffle(len(workers), func(a, b int) { workers[a], workers[b] = workers[b], workers[a] })
	run := max(0, min(int(cfg.Busy*float64(cfg.Computers*slots-cfg.Jobs)), len(workers)))
	for _, ref := range workers[:run] {
		t := &s.Jobs[ref.Job].Tasks[ref.Task]
		var prefer []int
		for _, b := range t.Input {
			prefer = append(prefer, b.Replicas...)
		}
		m := take(prefer)
		if m < 0 {
			break
		}
		t.State, t.Computer = Running, m
		t.Since = cfg.Horizon - time.Duration(rng.Int64N(int64(cfg.Horizon)/2+1))
	}
	return s, nil
}

// replicas places n copies of a block: one on a random computer, the rest
// on distinct computers of another random rack (the same rack when there
// is only one), then anywhere if that rack is too small.
func replicas(rng *rand.Rand, members [][]int, computers, n int) []int {
	first := rng.IntN(computers)
	out := []int{first}
	rack := first * len(members) / computers // Synthetic's contiguous layout
	if len(members) > 1 {
		other := rng.IntN(len(members) - 1)
		if other >= rack {
			other++
		}
		rack = other
	}
	ms := members[rack]
	for _, k := range rng.Perm(len(ms)) {
		if len(out) == n {
			break
		}
		if ms[k] != first {
			out = append(out, ms[k])
		}
	}
	for tries := 0; len(out) < min(n, computers) && tries < 64*n; tries++ {
		m := rng.IntN(computers)
		dup := false
		for _, x := range out {
			dup = dup || x == m
		}
		if !dup {
			out = append(out, m)
		}
	}
	return out
}

// SyntheticGraph builds a synthetic snapshot and its flow network under
// the policy, for benchmarks.
func SyntheticGraph(cfg SyntheticConfig, pol Policy, p Params, rng *rand.Rand) (*Graph, error) {
	s, err := Synthetic(cfg, rng)
	if err != nil {
		return nil, err
	}
	g, err := Build(s, pol, p)
	if err != nil {
		return nil, fmt.Errorf("quincy: synthetic %d computers, %d jobs, %d tasks: %w", cfg.Computers, cfg.Jobs, cfg.Tasks, err)
	}
	return g, nil
}

// WriteSyntheticDIMACS writes the flow network of a synthetic snapshot as
// a DIMACS min-cost-flow problem, for `sparrow flow bench` and for
// checking our solver against another one.
func WriteSyntheticDIMACS(w io.Writer, cfg SyntheticConfig, pol Policy, p Params, rng *rand.Rand) error {
	g, err := SyntheticGraph(cfg, pol, p, rng)
	if err != nil {
		return err
	}
	return flow.WriteDIMACS(w, g.Net)
}
