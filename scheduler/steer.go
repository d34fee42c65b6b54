package scheduler

import (
	mrand "math/rand/v2"
	"time"

	"github.com/sparrowfleet/sparrow/core/placement"
)

// steerBook is steering (Config.SteerAfter): which node monitors serve
// each user's reservations and which sit on them (placement.Steer). A
// user's new reservations go mostly to node monitors not sitting on its
// others, and a request whose reservations have waited SteerAfter gets
// more on node monitors that serve its user lately. Under coordinator
// guidance that gives a user nothing on a machine type, its tasks would
// otherwise wait there while the node monitors that serve it idle.
//
// With after <= 0 it is off: candidates are returned unchanged, nothing
// is recorded and no request is due.
//
// It has no lock of its own: it is not safe for concurrent use, and its
// owner serialises every call.
type steerBook struct {
	after time.Duration
	steer placement.Steer
}

func newSteerBook(after time.Duration) steerBook {
	return steerBook{after: after, steer: placement.Steer{After: after}}
}

// on reports whether steering is enabled.
func (b *steerBook) on() bool { return b.after > 0 }

// candidates returns the node monitors among nodes to sample user's new
// reservations from (placement.Steer.Candidates), drawing from rng.
func (b *steerBook) candidates(rng *mrand.Rand, user string, nodes []placement.Node, now time.Time) []placement.Node {
	if !b.on() {
		return nodes
	}
	return b.steer.Candidates(rng, user, nodes, now)
}

// placed records r's reservations probes, sent at now, and makes r due
// again SteerAfter after now.
func (b *steerBook) placed(r *request, probes []placement.Probe, now time.Time) {
	r.steered = now
	if !b.on() {
		return
	}
	for _, p := range probes {
		b.steer.Probed(r.user.User, p.Node.Addr, now)
	}
}

// served records that node monitor addr served a reservation of r's
// user at now.
func (b *steerBook) served(r *request, addr string, now time.Time) {
	if b.on() {
		b.steer.Served(r.user.User, addr, now)
	}
}

// due reports whether r may get steered reservations at now: it has
// unlaunched tasks, none of which may relax its preferences (the relaxer
// places those), and SteerAfter has passed since its reservations were
// last placed by submission or by steering.
func (b *steerBook) due(r *request, now time.Time) bool {
	return b.on() && !r.Launched() && r.loc == nil && now.Sub(r.steered) >= b.after
}

// serving returns the node monitors among nodes that served user lately
// (placement.Steer.Serving): where a request of user whose reservations
// sit elsewhere gets new ones.
func (b *steerBook) serving(user string, nodes []placement.Node, now time.Time) []placement.Node {
	if !b.on() {
		return nil
	}
	return b.steer.Serving(user, nodes, now)
}
