package locality

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Topology is the fleet's shape: node monitors 0..Nodes-1 split into Racks
// contiguous racks of (nearly) equal size.
type Topology struct {
	Nodes, Racks int
}

// Validate rejects a topology the replica placement cannot use: HDFS's
// placement needs a second rack holding two nodes.
func (t Topology) Validate() error {
	switch {
	case t.Racks < 2:
		return fmt.Errorf("topology: %d racks, want at least 2 (replicas span two racks)", t.Racks)
	case t.Nodes < 2*t.Racks:
		return fmt.Errorf("topology: %d nodes in %d racks, want at least 2 per rack", t.Nodes, t.Racks)
	}
	return nil
}

// RackOf returns node's rack.
func (t Topology) RackOf(node int) int { return node * t.Racks / t.Nodes }

// RackNodes returns the nodes of rack r, ascending.
func (t Topology) RackNodes(r int) []int {
	var out []int
	for n := 0; n < t.Nodes; n++ {
		if t.RackOf(n) == r {
			out = append(out, n)
		}
	}
	return out
}

// NodeName is node monitor n's gossip member name in the fleet (bench/fleet
// names them so); tasks name their preferred nodes by it.
func NodeName(n int) string { return "nodemonitor-" + strconv.Itoa(n) }

// RackName is rack r's value of the node attribute "rack".
func RackName(r int) string { return "rack-" + strconv.Itoa(r) }

// Block is an input block: its size and the nodes holding its 3 replicas.
type Block struct {
	Bytes    int64  `json:"bytes"`
	Replicas [3]int `json:"replicas"`
}

// PlaceReplicas places one block HDFS-style: the first replica on a node
// drawn uniformly, the other two on two distinct nodes of one other rack,
// also drawn uniformly. The topology must be valid.
func PlaceReplicas(rng *rand.Rand, t Topology) [3]int {
	first := rng.IntN(t.Nodes)
	home := t.RackOf(first)
	other := rng.IntN(t.Racks - 1)
	if other >= home {
		other++
	}
	nodes := t.RackNodes(other)
	i := rng.IntN(len(nodes))
	j := rng.IntN(len(nodes) - 1)
	if j >= i {
		j++
	}
	return [3]int{first, nodes[i], nodes[j]}
}

// Zipf draws ranks 0..n-1 with P(k) ∝ (k+1)^-s by inversion of the
// cumulative distribution, for any s ≥ 0 (math/rand/v2's Zipf wants s > 1).
type Zipf struct {
	cdf []float64 // cdf[k] = P(rank ≤ k); cdf[n-1] = 1
}

// NewZipf tabulates the distribution over n ranks with exponent s.
func NewZipf(n int, s float64) (*Zipf, error) {
	if n < 1 || !(s >= 0) || math.IsInf(s, 0) {
		return nil, fmt.Errorf("zipf: want n ≥ 1 and finite s ≥ 0, got n=%d s=%g", n, s)
	}
	z := &Zipf{cdf: make([]float64, n)}
	sum := 0.0
	for k := range n {
		sum += math.Pow(float64(k+1), -s)
		z.cdf[k] = sum
	}
	for k := range z.cdf {
		z.cdf[k] /= sum
	}
	z.cdf[n-1] = 1
	return z, nil
}

// Prob returns P(rank = k).
func (z *Zipf) Prob(k int) float64 {
	if k == 0 {
		return z.cdf[0]
	}
	return z.cdf[k] - z.cdf[k-1]
}

// Draw returns one rank.
func (z *Zipf) Draw(rng *rand.Rand) int {
	u := rng.Float64()
	return sort.Search(len(z.cdf), func(k int) bool { return z.cdf[k] > u })
}

// WorkloadConfig is the job trace's shape. Every mode of the experiment
// runs the same trace, generated from the same seed.
type WorkloadConfig struct {
	Topology Topology
	// Slots per node monitor.
	Slots int
	// Blocks in the catalogue, each BlockBytes, popularity Zipf(ZipfS) by
	// block index (block 0 the most popular).
	Blocks     int
	BlockBytes int64
	ZipfS      float64
	// TasksPerJob tasks per job, each reading one block drawn by
	// popularity.
	TasksPerJob int
	// Load is the offered load as a fraction of all slots, counting each
	// task at its node-local run time CPU (a task that reads remotely
	// runs longer, so the load the fleet sees is higher).
	Load float64
	CPU  time.Duration
	// Duration is how long jobs arrive (Poisson).
	Duration time.Duration
	Seed     uint64
}

// Validate names the first unusable field.
func (c WorkloadConfig) Validate() error {
	if err := c.Topology.Validate(); err != nil {
		return err
	}
	switch {
	case c.Slots < 1 || c.Blocks < 1 || c.TasksPerJob < 1:
		return fmt.Errorf("workload: slots, blocks and tasks per job must be at least 1")
	case c.BlockBytes < 0:
		return fmt.Errorf("workload: negative block size %d", c.BlockBytes)
	case !(c.Load > 0) || math.IsInf(c.Load, 0):
		return fmt.Errorf("workload: load %g is not positive", c.Load)
	case c.CPU <= 0 || c.Duration <= 0:
		return fmt.Errorf("workload: task CPU time %v and duration %v must be positive", c.CPU, c.Duration)
	}
	return nil
}

// JobsPerSecond is the Poisson arrival rate that offers Load: slots × load
// busy slots, each job keeping TasksPerJob slots busy for CPU.
func (c WorkloadConfig) JobsPerSecond() float64 {
	slots := float64(c.Topology.Nodes * c.Slots)
	return c.Load * slots / (float64(c.TasksPerJob) * c.CPU.Seconds())
}

// Job is one job of the trace: when it arrives (from the run's start) and
// the block each of its tasks reads.
type Job struct {
	At     time.Duration `json:"at"`
	Blocks []int         `json:"blocks"`
}

// Trace is the workload every mode runs.
type Trace struct {
	Blocks []Block `json:"-"`
	Jobs   []Job   `json:"-"`
}

// Generate makes the trace for c, deterministically from c.Seed: the
// replica placement first, then arrivals and block draws.
func Generate(c WorkloadConfig) (Trace, error) {
	if err := c.Validate(); err != nil {
		return Trace{}, err
	}
	rng := rand.New(rand.NewPCG(c.Seed, c.Seed^0x5eed10ca1))
	tr := Trace{Blocks: make([]Block, c.Blocks)}
	for b := range tr.Blocks {
		tr.Blocks[b] = Block{Bytes: c.BlockBytes, Replicas: PlaceReplicas(rng, c.Topology)}
	}
	z, err := NewZipf(c.Blocks, c.ZipfS)
	if err != nil {
		return Trace{}, err
	}
	mean := float64(time.Second) / c.JobsPerSecond()
	at := time.Duration(0)
	for {
		at += time.Duration(rng.ExpFloat64() * mean)
		if at >= c.Duration {
			break
		}
		j := Job{At: at, Blocks: make([]int, c.TasksPerJob)}
		for k := range j.Blocks {
			j.Blocks[k] = z.Draw(rng)
		}
		tr.Jobs = append(tr.Jobs, j)
	}
	return tr, nil
}

// Locality is where a task ran relative to its input's replicas.
type Locality int

// The localities, from cheapest to dearest.
const (
	NodeLocal Locality = iota // on a node holding a replica: no transfer
	RackLocal                 // in a rack holding a replica: through the rack switch
	Elsewhere                 // in another rack: across the core switch
)

func (l Locality) String() string {
	switch l {
	case NodeLocal:
		return "node-local"
	case RackLocal:
		return "rack-local"
	case Elsewhere:
		return "elsewhere"
	}
	return "locality(" + strconv.Itoa(int(l)) + ")"
}

// Classify says where node is relative to replicas.
func Classify(t Topology, node int, replicas [3]int) Locality {
	if slices.Contains(replicas[:], node) {
		return NodeLocal
	}
	r := t.RackOf(node)
	for _, n := range replicas {
		if t.RackOf(n) == r {
			return RackLocal
		}
	}
	return Elsewhere
}

// ReadModel is the scaled-down network: a rack-local read streams at
// RackBandwidth, a read across the core at CoreBandwidth (bytes per
// second), a node-local read costs nothing. There is no contention: each
// read gets its link's full bandwidth.
type ReadModel struct {
	RackBandwidth, CoreBandwidth float64
}

// Validate rejects non-positive bandwidths.
func (m ReadModel) Validate() error {
	if !(m.RackBandwidth > 0) || !(m.CoreBandwidth > 0) || math.IsInf(m.RackBandwidth, 0) || math.IsInf(m.CoreBandwidth, 0) {
		return fmt.Errorf("read model: bandwidths must be positive and finite, got rack %g and core %g B/s", m.RackBandwidth, m.CoreBandwidth)
	}
	return nil
}

// ReadTime is how long reading bytes from where takes.
func (m ReadModel) ReadTime(bytes int64, where Locality) time.Duration {
	var bw float64
	switch where {
	case NodeLocal:
		return 0
	case RackLocal:
		bw = m.RackBandwidth
	default:
		bw = m.CoreBandwidth
	}
	return time.Duration(float64(bytes) / bw * float64(time.Second))
}

// TaskInput is what a task's message tells its executor: the block it
// reads, the block's size and replicas, and its CPU time.
type TaskInput struct {
	Block    int
	Bytes    int64
	Replicas [3]int
	CPU      time.Duration
}

// Encode is the task message: "block=B bytes=N replicas=a,b,c cpu=D".
func (in TaskInput) Encode() []byte {
	return fmt.Appendf(nil, "block=%d bytes=%d replicas=%d,%d,%d cpu=%s",
		in.Block, in.Bytes, in.Replicas[0], in.Replicas[1], in.Replicas[2], in.CPU)
}

// ParseTaskInput reads a message written by Encode.
func ParseTaskInput(msg []byte) (TaskInput, error) {
	var in TaskInput
	seen := map[string]bool{}
	for _, f := range strings.Fields(string(msg)) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return in, fmt.Errorf("task input %q: field %q is not key=value", msg, f)
		}
		var err error
		switch k {
		case "block":
			in.Block, err = strconv.Atoi(v)
		case "bytes":
			in.Bytes, err = strconv.ParseInt(v, 10, 64)
		case "replicas":
			parts := strings.Split(v, ",")
			if len(parts) != 3 {
				return in, fmt.Errorf("task input %q: want 3 replicas, got %q", msg, v)
			}
			for i, p := range parts {
				if in.Replicas[i], err = strconv.Atoi(p); err != nil {
					break
				}
			}
		case "cpu":
			in.CPU, err = time.ParseDuration(v)
		default:
			return in, fmt.Errorf("task input %q: unknown field %q", msg, k)
		}
		if err != nil {
			return in, fmt.Errorf("task input %q: field %s: %w", msg, k, err)
		}
		seen[k] = true
	}
	if len(seen) != 4 {
		return in, fmt.Errorf("task input %q: want block, bytes, replicas and cpu", msg)
	}
	return in, nil
}
