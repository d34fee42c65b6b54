package shortjobs

import "hash/fnv"

// ShortOnly reports whether the node named name is in the short-only share
// of the cluster: a hash of the name, mapped to [0, 1), below share. Every
// scheduler computes the same answer from the name alone.
func ShortOnly(name string, share float64) bool {
	if share <= 0 {
		return false
	}
	h := fnv.New64a()
	h.Write([]byte(name))
	// FNV-1a's high bits vary little between short names that differ in
	// their last characters (n1, n2, ...); the splitmix64 finaliser
	// spreads every input bit over all output bits.
	x := h.Sum64()
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	x ^= x >> 31
	// The top 53 bits as a fraction in [0, 1).
	return float64(x>>11)/(1<<53) < share
}

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
