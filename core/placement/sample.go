package placement

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
)

// MaxProbeRatio bounds d. A larger ratio only floods node monitors with
// reservations that will be cancelled; it is almost certainly a client bug.
const MaxProbeRatio = 100

// Probe asks one node monitor to hold Count reservations for a request.
type Probe struct {
	Node  Node
	Count int
}

// ErrNoCandidates means no live node could take the task.
var ErrNoCandidates = errors.New("no live node monitor can run the task")

// CheckProbeRatio returns an error naming the problem if d is not a usable
// probe ratio.
func CheckProbeRatio(d float64) error {
	switch {
	case math.IsNaN(d) || math.IsInf(d, 0):
		return fmt.Errorf("probe ratio %v is not a finite number", d)
	case d < 1:
		return fmt.Errorf("probe ratio %v is below 1", d)
	case d > MaxProbeRatio:
		return fmt.Errorf("probe ratio %v is above the maximum of %d", d, MaxProbeRatio)
	}
	return nil
}

// Reservations returns ceil(d*m), the number of reservations batch sampling
// places for m tasks.
func Reservations(d float64, m int) int {
	// The epsilon keeps 2.0*3 from becoming 7 through rounding error.
	return int(math.Ceil(d*float64(m) - 1e-9))
}

// Sampler draws distinct random nodes. It keeps a scratch permutation between
// calls so that drawing k of n nodes costs O(k), not O(n), when n is stable,
// which matters to the simulator at 10,000 nodes. Not safe for concurrent use.
type Sampler struct {
	perm []int32
	// cnt[i] is node i's reservation count while Plan runs, and all zero
	// between calls; touched lists the nodes with a non-zero count. They
	// replace a per-call map, the largest cost of Plan at 10,000 nodes.
	cnt     []int32
	touched []int
	// seen has bit i set while cnt[i] is non-zero, so that a dense plan
	// lists its nodes in order a word of 64 nodes at a time
	// (appendScanned) rather than testing every count, a branch the CPU
	// mispredicts at about every picked node.
	seen  []uint64
	picks []Pick // Plan's scratch for PlanPicks
}

// pick returns k distinct indices in [0,n) when k <= n. When k > n every
// index appears once and the extra k-n are spread as evenly as possible: each
// index gets k/n or k/n+1. The result maps index to count.
func (s *Sampler) pick(rng *rand.Rand, n, k int, add func(idx, count int)) {
	if n <= 0 || k <= 0 {
		return
	}
	base, extra := 0, k
	if k >= n {
		base, extra = k/n, k%n
	}
	s.shuffleFront(rng, n, extra)
	if base == 0 {
		for _, idx := range s.perm[:extra] {
			add(int(idx), 1)
		}
		return
	}
	for idx := 0; idx < n; idx++ {
		add(idx, base)
	}
	for _, idx := range s.perm[:extra] {
		add(int(idx), 1)
	}
}

// shuffleFront makes s.perm[:k] a uniform random k-subset of [0,n), k <= n,
// by a partial Fisher-Yates shuffle of the permutation s.perm of [0,n).
// The slice stays a permutation, so no reset is needed next time.
func (s *Sampler) shuffleFront(rng *rand.Rand, n, k int) {
	if len(s.perm) != n {
		s.perm = make([]int32, n)
		for i := range s.perm {
			s.perm[i] = int32(i)
		}
	}
	perm := s.perm
	for i := 0; i < k; i++ {
		j := i + rng.IntN(n-i)
		perm[i], perm[j] = perm[j], perm[i]
	}
}

// Plan chooses where a job's reservations go, from the live candidate nodes.
//
// Unconstrained tasks use batch sampling: ceil(d*u) reservations for u such
// tasks, on distinct nodes chosen uniformly at random, spread evenly when
// there are fewer nodes than reservations. Each constrained task uses
// per-task sampling: ceil(d) reservations on distinct nodes drawn from the
// candidates it allows. Reservations on the same node are merged into one
// probe. It fails, naming the task, if a constrained task allows no
// candidate, and fails if there are tasks but no candidates at all.
func (s *Sampler) Plan(rng *rand.Rand, nodes []Node, tasks []Task, d float64) ([]Probe, error) {
	picks, err := s.PlanPicks(s.picks[:0], rng, nodes, tasks, d)
	s.picks = picks[:0]
	if err != nil || len(picks) == 0 {
		return nil, err
	}
	probes := make([]Probe, len(picks))
	for j, p := range picks {
		probes[j] = Probe{Node: nodes[p.Node], Count: int(p.Count)}
	}
	return probes, nil
}

// Pick is a probe by position: Count reservations on nodes[Node] of the
// candidate slice given to PlanPicks.
type Pick struct {
	Node  int32
	Count int32
}

// PlanPicks is Plan answering with node indices into nodes instead of
// copies of the nodes, appended to dst: Plan is PlanPicks with
// Probe{Node: nodes[p.Node], Count: p.Count} for each pick p, drawing the
// same random numbers. A caller that keeps its nodes in a slice (the
// simulator) then neither copies nor allocates per probe.
func (s *Sampler) PlanPicks(dst []Pick, rng *rand.Rand, nodes []Node, tasks []Task, d float64) ([]Pick, error) {
	if err := CheckProbeRatio(d); err != nil {
		return dst, err
	}
	if len(tasks) == 0 {
		return dst, nil
	}
	if len(nodes) == 0 {
		return dst, ErrNoCandidates
	}
	if len(nodes) > math.MaxInt32 {
		return dst, fmt.Errorf("%d candidate nodes is more than a Pick can index", len(nodes))
	}
	s.resize(len(nodes))
	add := s.add
	unconstrained := 0
	var allowed []int
	var index *nodeIndex
	perTask := Reservations(d, 1)
	for i := range tasks {
		t := &tasks[i]
		if !t.Constrained() {
			unconstrained++
			continue
		}
		if index == nil {
			index = newNodeIndex(nodes)
		}
		allowed = index.allowed(*t, allowed[:0])
		if len(allowed) == 0 {
			s.resetCounts()
			return dst, fmt.Errorf("task %q: none of its preferred nodes %v or racks %v is live: %w",
				t.ID, t.Nodes, t.Racks, ErrNoCandidates)
		}
		// A separate sampler: its permutation is over this task's allowed
		// list, not over all nodes.
		var sub Sampler
		sub.pick(rng, len(allowed), perTask, func(idx, c int) { add(allowed[idx], c) })
	}
	k := Reservations(d, unconstrained)
	if unconstrained == len(tasks) && k < len(nodes) {
		return s.appendDistinct(dst, rng, len(nodes), k), nil
	}
	s.pick(rng, len(nodes), k, add)

	// Node order keeps the result deterministic for a seed.
	if len(s.touched)*denseScan >= len(s.cnt) {
		return s.appendScanned(dst), nil
	}
	return s.appendSorted(dst), nil
}

// denseScan: PlanPicks lists the picked nodes by scanning every node's
// count once they are at least 1/denseScan of the nodes (a 500-task job
// at d = 2 picks 1,000 of 10,000), which costs O(nodes) instead of the
// O(k log k) of sorting the k picked nodes. Both give the same picks.
const denseScan = 16

// resize readies the counts for n candidate nodes, all zero.
func (s *Sampler) resize(n int) {
	if len(s.cnt) != n {
		s.cnt = make([]int32, n)
		s.seen = make([]uint64, (n+63)/64)
	}
	s.touched = s.touched[:0]
}

// add counts c more reservations on node idx.
func (s *Sampler) add(idx, c int) {
	if s.cnt[idx] == 0 {
		s.touched = append(s.touched, idx)
		s.seen[idx>>6] |= 1 << (idx & 63)
	}
	s.cnt[idx] += int32(c)
}

// appendSorted appends a pick per touched node, in node order, by sorting
// touched, and restores the all-zero counts.
func (s *Sampler) appendSorted(dst []Pick) []Pick {
	slices.Sort(s.touched)
	for _, i := range s.touched {
		dst = append(dst, Pick{Node: int32(i), Count: s.cnt[i]})
	}
	s.resetCounts()
	return dst
}

// appendScanned is appendSorted by a scan of seen: its set bits are
// exactly the touched nodes, in node order.
func (s *Sampler) appendScanned(dst []Pick) []Pick {
	for w, word := range s.seen {
		for word != 0 {
			i := w<<6 | bits.TrailingZeros64(word)
			word &= word - 1
			dst = append(dst, Pick{Node: int32(i), Count: s.cnt[i]})
			s.cnt[i] = 0
		}
		s.seen[w] = 0
	}
	s.touched = s.touched[:0]
	return dst
}

// appendDistinct is PlanPicks for k < n reservations of unconstrained
// tasks alone: pick's k distinct nodes, each of count 1, appended in node
// order, drawing the same random numbers. Every count is 1, so it lists
// the picked nodes straight from the permutation, without counting them.
func (s *Sampler) appendDistinct(dst []Pick, rng *rand.Rand, n, k int) []Pick {
	s.shuffleFront(rng, n, k)
	picked := s.perm[:k]
	if k*denseScan < n {
		from := len(dst)
		for _, i := range picked {
			dst = append(dst, Pick{Node: i, Count: 1})
		}
		slices.SortFunc(dst[from:], func(a, b Pick) int { return int(a.Node - b.Node) })
		return dst
	}
	for _, i := range picked {
		s.seen[i>>6] |= 1 << (i & 63)
	}
	for w, word := range s.seen {
		for word != 0 {
			dst = append(dst, Pick{Node: int32(w<<6 | bits.TrailingZeros64(word)), Count: 1})
			word &= word - 1
		}
		s.seen[w] = 0
	}
	return dst
}

// resetCounts restores the all-zero cnt and seen invariant.
func (s *Sampler) resetCounts() {
	for _, i := range s.touched {
		s.cnt[i] = 0
		s.seen[i>>6] = 0
	}
	s.touched = s.touched[:0]
}

// nodeIndex finds the nodes a constrained task allows by the keys its
// preferences name, so that a task costs O(its preferences), not O(nodes):
// a 500-task data-local job on 10,000 nodes would otherwise make five
// million Allows calls.
type nodeIndex struct {
	byHost, byName, byRack map[string][]int
	seen                   map[int]bool
}

func newNodeIndex(nodes []Node) *nodeIndex {
	x := &nodeIndex{byHost: map[string][]int{}, byName: map[string][]int{}, byRack: map[string][]int{}, seen: map[int]bool{}}
	for i, n := range nodes {
		x.byHost[n.Host] = append(x.byHost[n.Host], i)
		if n.Name != "" {
			x.byName[n.Name] = append(x.byName[n.Name], i)
		}
		if rack, ok := n.Attrs[RackAttr]; ok {
			x.byRack[rack] = append(x.byRack[rack], i)
		}
	}
	return x
}

// allowed appends to out the indices of the nodes t allows, each once, in
// ascending order (so that results do not depend on map order).
func (x *nodeIndex) allowed(t Task, out []int) []int {
	clear(x.seen)
	add := func(idxs []int) {
		for _, i := range idxs {
			if !x.seen[i] {
				x.seen[i] = true
				out = append(out, i)
			}
		}
	}
	for _, h := range t.Nodes {
		add(x.byHost[h])
		add(x.byName[h])
	}
	for _, r := range t.Racks {
		add(x.byRack[r])
	}
	slices.Sort(out)
	return out
}
