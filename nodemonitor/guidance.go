package nodemonitor

import (
	"fmt"
	"iter"

	"github.com/sparrowfleet/sparrow/core/fairshare"
	"github.com/sparrowfleet/sparrow/core/queue"
	"github.com/sparrowfleet/sparrow/core/slots"
)

// Guidance is what the coordinator tells this node in one version.
type Guidance struct {
	Version uint64
	// Running is every user's cluster-wide running count (for Choosy).
	Running map[string]float64
	// Weights are this node's machine type's CMMF weights; nil unless the
	// node applies CMMF weights to its weighted fair queue.
	Weights map[string]float64
	// Alloc is this node's machine type's CMMF allocation in slots, per
	// user, for a Choosy queue's node quotas (queue.Choosy.SetGuidance).
	Alloc map[string]float64
}

// weightGuide puts the coordinator's guidance on a queue discipline: the
// cluster-wide running counts on a Choosy queue, or the CMMF weights on a
// weighted queue, remembering each user's configured weight to restore
// when the guidance goes. A user first queued after the guidance arrived
// gets its guided weight (or the floor) at once, through guide.
//
// Not safe for concurrent use: its owner, slotTable, holds its own lock
// around every call, and passes the queue it guards.
type weightGuide struct {
	// base holds the configured weights of users whose weights the
	// guidance replaced.
	base map[string]float64
	// guided holds the CMMF weights in force (nil: none).
	guided map[string]float64
}

// active reports whether CMMF weights are in force.
func (g *weightGuide) active() bool { return g.guided != nil }

// apply installs a version of guidance on q: a Choosy queue takes the
// cluster-wide running counts and this type's allocation (its node
// quotas); a weighted queue, when gd.Weights is set, takes the CMMF
// weights, with fairshare.MinWeight for users (those of users, and those
// gd names) that CMMF gives nothing here. It reports
// whether anything changed.
func (g *weightGuide) apply(q queue.Discipline, gd Guidance, users iter.Seq[string]) (bool, error) {
	if c, ok := q.(*queue.Choosy); ok {
		ok, err := c.SetGuidance(gd.Version, gd.Running, gd.Alloc)
		if err != nil {
			return false, fmt.Errorf("coordinator guidance v%d: %w", gd.Version, err)
		}
		// Choosy divides counts by the users' base weights; CMMF weights
		// are for weighted fair queues only.
		return ok, nil
	}
	if gd.Weights == nil {
		return false, nil
	}
	if _, ok := q.(queue.Weights); !ok {
		return false, fmt.Errorf("coordinator weights: the %T queue discipline has no weights", q)
	}
	if g.base == nil {
		g.base = map[string]float64{}
	}
	g.guided = gd.Weights
	for u := range users {
		g.guide(q, u)
	}
	for u := range gd.Weights {
		g.guide(q, u)
	}
	return true, nil
}

// guide gives user its weight under the guidance in force, if any: its
// CMMF weight, or the floor when CMMF gives it none here, remembering its
// configured weight first.
func (g *weightGuide) guide(q queue.Discipline, user string) {
	if g.guided == nil {
		return
	}
	w, ok := q.(queue.Weights)
	if !ok {
		return
	}
	if _, saved := g.base[user]; !saved {
		g.base[user] = w.Weight(user)
	}
	// Weights come from our own decoder as finite and >= 0, so the
	// floored value is always valid.
	w.SetWeight(user, max(g.guided[user], fairshare.MinWeight))
}

// drop returns q to local decisions: a Choosy queue serves as weighted
// fair queuing, and weights the guidance changed return to their
// configured values.
func (g *weightGuide) drop(q queue.Discipline) {
	if c, ok := q.(*queue.Choosy); ok {
		c.ClearShares()
	}
	if w, ok := q.(queue.Weights); ok {
		for u, v := range g.base {
			w.SetWeight(u, v)
		}
	}
	g.base, g.guided = nil, nil
}

// Usage returns each user's queued reservations and running tasks here,
// for the coordinator's report.
func (n *NodeMonitor) Usage() map[string]slots.Usage { return n.slots.usage() }

// ApplyGuidance installs a version of the coordinator's guidance: a Choosy
// queue takes the cluster-wide running counts; a weighted queue, when
// g.Weights is set, takes the CMMF weights of this node's machine type,
// with fairshare.MinWeight for users queued here that CMMF gives nothing
// of this type (their configured weights return with DropGuidance). It
// reports whether anything changed.
func (n *NodeMonitor) ApplyGuidance(g Guidance) (bool, error) { return n.slots.applyGuidance(g) }

// DropGuidance returns to local decisions, as without a coordinator: a
// Choosy queue serves as weighted fair queuing, and weights the
// coordinator changed return to their configured values.
func (n *NodeMonitor) DropGuidance() { n.slots.dropGuidance() }

// SetWeights changes users' fair-share weights at run time. It fails,
// changing nothing, if the discipline has no weights or a weight is bad.
func (n *NodeMonitor) SetWeights(weights map[string]float64) error {
	return n.slots.setWeights(weights)
}
