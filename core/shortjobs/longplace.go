package shortjobs

import "math/bits"

// LongLevel is the coarse amount of long work a node holds, as its advert
// carries it: 0 for none, else 1 + the base-2 logarithm of its count of
// long tasks running or being fetched plus long reservations queued (1
// for one, 2 for two or three, 3 for four to seven, ...), at most 255.
// Coarse levels change seldom, so the advert is gossiped seldom.
func LongLevel(count int) uint8 {
	if count <= 0 {
		return 0
	}
	return uint8(min(bits.Len(uint(count)), 255))
}

// AdvertLevel reads the long-work level from an advert (Monitor.Advert2):
// its second byte, or, from a node monitor that sends only the first
// (its running count), the level of that count.
func AdvertLevel(b []byte) uint8 {
	switch {
	case len(b) >= 2:
		return b[1]
	case len(b) == 1:
		return LongLevel(int(b[0]))
	}
	return 0
}

// SteerLong appends to dst the candidate nodes for a long job that places
// want reservations (placement.Reservations of its tasks), among nodes
// 0..len(shortOnly)-1: the general nodes (not short-only) of the lowest
// advertised long-work levels, taking whole levels from the lowest until
// there are at least want candidates, or every general node if there are
// not that many. level[i] is node i's level as this scheduler last heard
// it (AdvertLevel). Placement then samples the reservations at random
// among the candidates, so schedulers that hear the same adverts do not
// all pick the same nodes. It returns dst and whether the candidates are
// fewer than the general nodes. With every node short-only it falls back
// to every node, as Steer does.
func SteerLong(dst []int32, want int, shortOnly []bool, level []uint8) ([]int32, bool) {
	var count [256]int
	general := 0
	for i, so := range shortOnly {
		if !so {
			count[level[i]]++
			general++
		}
	}
	if general == 0 {
		for i := range shortOnly {
			dst = append(dst, int32(i))
		}
		return dst, false
	}
	top, got := 0, 0
	for top = range count {
		got += count[top]
		if got >= want {
			break
		}
	}
	for i, so := range shortOnly {
		if !so && int(level[i]) <= top {
			dst = append(dst, int32(i))
		}
	}
	return dst, got < general
}

// WorkStep is the coarse step of a job's remaining tasks at which its
// scheduler tells the nodes holding its queued reservations the job's new
// remaining work (Monitor.Queued): the base-2 logarithm of the count,
// rounded up, so that a job of m tasks sends about log2(m) updates to
// each node holding its reservations, and none while its count stays in
// one step.
func WorkStep(remaining int) int {
	if remaining <= 0 {
		return 0
	}
	return bits.Len(uint(remaining-1)) + 1
}

// RefreshTargets returns the nodes to which a scheduler sends a job's
// remaining work after one of its tasks was handed out, leaving before
// tasks unlaunched and after: nil unless the count crossed into another
// WorkStep; otherwise holders (the nodes holding the job's queued
// reservations) without exclude (the node that got the task, which
// learns the remaining work from the answer). It reuses dst.
func RefreshTargets[N comparable](dst, holders []N, exclude N, before, after int) []N {
	dst = dst[:0]
	if WorkStep(before) == WorkStep(after) || after <= 0 {
		return dst
	}
	for _, h := range holders {
		if h != exclude {
			dst = append(dst, h)
		}
	}
	return dst
}
