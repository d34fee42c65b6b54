package nodemonitor

import (
	"fmt"

	"github.com/sparrowfleet/sparrow/core/fairshare"
	"github.com/sparrowfleet/sparrow/core/queue"
	"github.com/sparrowfleet/sparrow/core/slots"
)

// Usage returns each user's queued reservations and running tasks here,
// for the coordinator's report.
func (n *NodeMonitor) Usage() map[string]slots.Usage {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.core.Usage()
}

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

// ApplyGuidance installs a version of the coordinator's guidance: a Choosy
// queue takes the cluster-wide running counts; a weighted queue, when
// g.Weights is set, takes the CMMF weights of this node's machine type,
// with fairshare.MinWeight for users queued here that CMMF gives nothing
// of this type (their configured weights return with DropGuidance). It
// reports whether anything changed.
func (n *NodeMonitor) ApplyGuidance(g Guidance) (bool, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if c, ok := n.core.Queue().(*queue.Choosy); ok {
		ok, err := c.SetGuidance(g.Version, g.Running, g.Alloc)
		if err != nil {
			return false, fmt.Errorf("coordinator guidance v%d: %w", g.Version, err)
		}
		// Choosy divides counts by the users' base weights; CMMF weights
		// are for weighted fair queues only.
		return ok, nil
	}
	if g.Weights == nil {
		return false, nil
	}
	if _, ok := n.core.Queue().(queue.Weights); !ok {
		return false, fmt.Errorf("coordinator weights: the %T queue discipline has no weights", n.core.Queue())
	}
	if n.baseWeights == nil {
		n.baseWeights = map[string]float64{}
	}
	n.guided = g.Weights
	for u := range n.core.Usage() {
		n.guideWeightLocked(u)
	}
	for u := range g.Weights {
		n.guideWeightLocked(u)
	}
	return true, nil
}

// guideWeightLocked gives user its weight under the guidance in force:
// its CMMF weight on this node's type, or the floor when CMMF gives it
// none here, remembering its configured weight first. Called with n.mu
// held and n.guided set, on a queue with weights.
func (n *NodeMonitor) guideWeightLocked(user string) {
	q, ok := n.core.Queue().(queue.Weights)
	if !ok {
		return
	}
	if _, saved := n.baseWeights[user]; !saved {
		n.baseWeights[user] = q.Weight(user)
	}
	// Weights come from our own decoder as finite and >= 0, so the
	// floored value is always valid.
	q.SetWeight(user, max(n.guided[user], fairshare.MinWeight))
}

// DropGuidance returns to local decisions, as without a coordinator: a
// Choosy queue serves as weighted fair queuing, and weights the
// coordinator changed return to their configured values.
func (n *NodeMonitor) DropGuidance() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if c, ok := n.core.Queue().(*queue.Choosy); ok {
		c.ClearShares()
	}
	if q, ok := n.core.Queue().(queue.Weights); ok {
		for u, w := range n.baseWeights {
			q.SetWeight(u, w)
		}
	}
	n.baseWeights, n.guided = nil, nil
}
