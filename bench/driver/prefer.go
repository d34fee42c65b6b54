package driver

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/sparrowfleet/sparrow/bench/locality"
)

// Preferences gives every task placement preferences shaped like issue
// 9's locality workload (bench/locality, docs/experiments/locality.md), for a fleet
// the driver does not run: a catalogue of Blocks input blocks, each with
// Replicas replicas on Nodes; each task reads one block drawn by a
// Zipf(Zipf) popularity (block 0 the hottest) and prefers its replicas'
// nodes. The zero value (no Nodes) gives no preferences.
type Preferences struct {
	// Nodes are the node monitors as the schedulers know them (gossip
	// member names or hosts), split into Racks contiguous racks of nearly
	// equal size, as bench/locality's Topology does: node i is in rack
	// i·Racks/len(Nodes). The node monitors' "rack" attributes should say
	// the same, or rack-level relaxation widens to other racks than these.
	Nodes []string
	Racks int
	// Replicas per block, placed as HDFS does: the first on a node drawn
	// uniformly, the others on distinct nodes of one other rack drawn
	// uniformly (with one rack: distinct nodes drawn uniformly).
	Replicas int
	Blocks   int
	Zipf     float64
	// DelayThreshold, when positive, opts every task into relaxing its
	// preferences (TPlacementPreference.delayThreshold); zero keeps them
	// strict, as an original Sparrow client means them.
	DelayThreshold time.Duration
	// InputBytes is every task's input size (TPlacementPreference's
	// inputBytes); zero leaves it unset.
	InputBytes int64
}

// On says whether tasks get preferences.
func (p Preferences) On() bool { return len(p.Nodes) > 0 }

// Validate names the first unusable field of preferences that are On.
func (p Preferences) Validate() error {
	if !p.On() {
		return nil
	}
	seen := map[string]bool{}
	for _, n := range p.Nodes {
		if n == "" || strings.ContainsAny(n, ", ") {
			return fmt.Errorf("preferences: bad node name %q", n)
		}
		if seen[n] {
			return fmt.Errorf("preferences: node %q listed twice", n)
		}
		seen[n] = true
	}
	switch {
	case p.Racks < 1 || p.Racks > len(p.Nodes):
		return fmt.Errorf("preferences: %d racks for %d nodes, want 1 to %d", p.Racks, len(p.Nodes), len(p.Nodes))
	case p.Replicas < 1 || p.Replicas > len(p.Nodes):
		return fmt.Errorf("preferences: %d replicas for %d nodes, want 1 to %d", p.Replicas, len(p.Nodes), len(p.Nodes))
	case p.Blocks < 1:
		return fmt.Errorf("preferences: %d blocks, want at least 1", p.Blocks)
	case !(p.Zipf >= 0) || math.IsInf(p.Zipf, 0):
		return fmt.Errorf("preferences: Zipf exponent %g, want a finite s ≥ 0", p.Zipf)
	case p.DelayThreshold < 0 || p.DelayThreshold%time.Millisecond != 0:
		return fmt.Errorf("preferences: delay threshold %v, want whole milliseconds ≥ 0 (the wire carries milliseconds)", p.DelayThreshold)
	case p.InputBytes < 0:
		return fmt.Errorf("preferences: input bytes %d, want ≥ 0", p.InputBytes)
	}
	return nil
}

// RackOf returns node i's rack, 0..Racks-1.
func (p Preferences) RackOf(i int) int { return i * p.Racks / len(p.Nodes) }

// Placement is a generated catalogue and every task's block.
type Placement struct {
	// Replicas[b] are block b's replica nodes, as indices into Nodes.
	Replicas [][]int
	// Block[j][k] is the block job j's task k reads.
	Block [][]int
}

// NodesOf returns the names of the nodes holding block b's replicas.
func (p Preferences) NodesOf(pl Placement, b int) []string {
	out := make([]string, len(pl.Replicas[b]))
	for i, n := range pl.Replicas[b] {
		out[i] = p.Nodes[n]
	}
	return out
}

// Generate places the catalogue and draws each task's block, for jobs
// jobs of tasks tasks, deterministically from seed (a stream of its own:
// the driver's arrivals and backoff jitter draw from others). A
// resubmitted task keeps its block: it reads the same input.
func (p Preferences) Generate(seed uint64, jobs, tasks int) (Placement, error) {
	if err := p.Validate(); err != nil {
		return Placement{}, err
	}
	if !p.On() {
		return Placement{}, fmt.Errorf("preferences: no nodes")
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	pl := Placement{Replicas: make([][]int, p.Blocks), Block: make([][]int, jobs)}
	for b := range pl.Replicas {
		pl.Replicas[b] = p.placeReplicas(rng)
	}
	z, err := locality.NewZipf(p.Blocks, p.Zipf)
	if err != nil {
		return Placement{}, fmt.Errorf("preferences: %w", err)
	}
	for j := range pl.Block {
		pl.Block[j] = make([]int, tasks)
		for k := range pl.Block[j] {
			pl.Block[j][k] = z.Draw(rng)
		}
	}
	return pl, nil
}

// placeReplicas places one block's replicas (see Preferences.Replicas).
func (p Preferences) placeReplicas(rng *rand.Rand) []int {
	n := len(p.Nodes)
	first := rng.IntN(n)
	out := []int{first}
	// The pool the other replicas come from: one other rack, or every
	// other node when there is one rack or that rack is too small.
	var pool []int
	if p.Racks > 1 {
		home := p.RackOf(first)
		other := rng.IntN(p.Racks - 1)
		if other >= home {
			other++
		}
		for i := range n {
			if p.RackOf(i) == other {
				pool = append(pool, i)
			}
		}
	}
	if len(pool) < p.Replicas-1 {
		pool = pool[:0]
		for i := range n {
			if i != first {
				pool = append(pool, i)
			}
		}
	}
	// A partial Fisher-Yates shuffle draws distinct nodes uniformly.
	for i := 0; i < p.Replicas-1; i++ {
		j := i + rng.IntN(len(pool)-i)
		pool[i], pool[j] = pool[j], pool[i]
		out = append(out, pool[i])
	}
	return out
}

// PreferencesSummary echoes a run's preferences and how skewed they came
// out, in the Summary.
type PreferencesSummary struct {
	Nodes            int     `json:"nodes"`
	Racks            int     `json:"racks"`
	Replicas         int     `json:"replicas"`
	Blocks           int     `json:"blocks"`
	Zipf             float64 `json:"zipf"`
	DelayThresholdMs float64 `json:"delay_threshold_ms"`
	InputBytes       int64   `json:"input_bytes"`
	// HottestBlockShare is the fraction of the run's tasks reading the
	// most read block.
	HottestBlockShare float64 `json:"hottest_block_share"`
	// TasksPreferring counts, per node, the run's tasks whose preferences
	// name it (a task names Replicas nodes).
	TasksPreferring map[string]int `json:"tasks_preferring"`
}

// Summarize describes pl as generated from p.
func (p Preferences) Summarize(pl Placement) PreferencesSummary {
	s := PreferencesSummary{
		Nodes: len(p.Nodes), Racks: p.Racks, Replicas: p.Replicas, Blocks: p.Blocks, Zipf: p.Zipf,
		DelayThresholdMs: float64(p.DelayThreshold) / float64(time.Millisecond), InputBytes: p.InputBytes,
		TasksPreferring: map[string]int{},
	}
	reads := make([]int, p.Blocks)
	total := 0
	for _, job := range pl.Block {
		for _, b := range job {
			reads[b]++
			total++
			for _, n := range pl.Replicas[b] {
				s.TasksPreferring[p.Nodes[n]]++
			}
		}
	}
	if total > 0 {
		s.HottestBlockShare = float64(slices.Max(reads)) / float64(total)
	}
	return s
}
