package shortjobs

import (
	"hash/fnv"
	"math"
	"slices"
)

// NodeHash returns the hash of a node's name that picks the short-only
// share (Partition): FNV-1a, its bits spread by the splitmix64 finaliser
// (FNV-1a's high bits vary little between short names that differ in
// their last characters: n1, n2, ...).
func NodeHash(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	x := h.Sum64()
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// ShortOnlyCount returns how many of n nodes run short jobs only under
// share: share·n rounded up, so that a share above zero keeps at least
// one node for short jobs however small the fleet; 0 for share 0.
func ShortOnlyCount(n int, share float64) int {
	if n <= 0 || !(share > 0) {
		return 0
	}
	// The tolerance keeps products like 0.07·100 = 7.000000000000001 at
	// the count they name.
	k := int(math.Ceil(share*float64(n) - 1e-9))
	return min(max(k, 1), n)
}

// Partition is the short-only share of a set of nodes: the
// ShortOnlyCount of them whose NodeHash is smallest. Every scheduler that
// knows the same nodes picks the same ones without talking to the others,
// and a node joining or leaving moves at most one other node into or out
// of the share. The zero value has no short-only node.
type Partition struct {
	k     int
	bound uint64 // the k-th smallest hash
}

// NewPartition returns the partition of the nodes whose hashes (NodeHash)
// are given, under share; it sorts hashes.
func NewPartition(hashes []uint64, share float64) Partition {
	k := ShortOnlyCount(len(hashes), share)
	if k == 0 {
		return Partition{}
	}
	slices.Sort(hashes)
	return Partition{k: k, bound: hashes[k-1]}
}

// ShortOnly reports whether the node whose NodeHash is h is short-only.
func (p Partition) ShortOnly(h uint64) bool { return p.k > 0 && h <= p.bound }

// Count returns how many nodes the partition made short-only.
func (p Partition) Count() int { return p.k }

// Steer appends to dst the indices of the candidate nodes for a job of
// class c with tasks tasks, among nodes 0..len(shortOnly)-1:
//
//   - Long: every node not short-only (every node, if all are).
//   - Short: every node whose advertised long work is zero, if there are
//     at least tasks of them (one per task); otherwise every node, as
//     plain batch sampling.
//
// shortOnly[i] says whether node i is short-only and longWork[i] whether
// it advertises long work, as this scheduler last heard; both have one
// entry per node. It returns dst and whether the job was steered (its
// candidates are fewer than all nodes).
func Steer(dst []int32, c Class, tasks int, shortOnly, longWork []bool) ([]int32, bool) {
	start := len(dst)
	n := len(shortOnly)
	if c == Long {
		for i := range n {
			if !shortOnly[i] {
				dst = append(dst, int32(i))
			}
		}
	} else {
		for i := range n {
			if !longWork[i] {
				dst = append(dst, int32(i))
			}
		}
		if len(dst)-start < tasks {
			dst = dst[:start]
		}
	}
	if got := len(dst) - start; got == 0 || got == n {
		dst = dst[:start]
		for i := range n {
			dst = append(dst, int32(i))
		}
		return dst, false
	}
	return dst, true
}
