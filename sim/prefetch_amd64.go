package sim

// prefetch asks the CPU to start loading the lines 64-byte cache lines from
// address p, without waiting for them (prefetch_amd64.s). The engine knows which node
// monitors the next events and reservations touch, at random among
// thousands and so rarely in cache; starting those loads early lets their
// latencies overlap with work instead of following one another. It is a
// hint only: results never depend on it.
//
//go:noescape
func prefetch(p, lines uintptr)

// prefetch2 is prefetch of the one line at a and the one at b, in one call.
//
//go:noescape
func prefetch2(a, b uintptr)
