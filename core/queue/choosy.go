package queue

import (
	"fmt"
	"math"
)

// Choosy serves, when a slot frees, the queued reservation of the user
// with the lowest weighted cluster-wide share among the users with work
// queued here: the online rule of Ghodsi et al., "Choosy" (EuroSys 2013,
// §6), run at each node monitor. The paper's Choosy is a central
// allocator that sees every user's allocation; here the cluster-wide
// running counts come from the coordinator, refreshed every period, and
// between refreshes the node accounts its own launches and finishes
// (Launched, Finished), so that a burst of frees here does not all go to
// one user whose count the coordinator has not seen grow yet.
//
// A user's share is (cluster running count + local launches - local
// finishes since the last refresh) / weight. Ties go to the user weighted
// fair queuing would serve first, so the order is deterministic.
//
// Without a refresh (no coordinator, or ClearShares after its counts went
// stale) Choosy is exactly the weighted fair queue Fair: per-node fairness,
// the fleet's behaviour without a coordinator.
//
// Choosy implements Discipline, Weights and Accounting; create it with
// NewChoosy. It is not safe for concurrent use.
type Choosy struct {
	*Fair
	running map[string]float64 // cluster-wide running counts, per user
	local   map[string]int     // launches minus finishes here since then
	fresh   bool               // running holds a snapshot in force
	version uint64
}

var (
	_ Discipline = (*Choosy)(nil)
	_ Weights    = (*Choosy)(nil)
	_ Accounting = (*Choosy)(nil)
)

// Accounting is implemented by disciplines that need to know when tasks
// start and end on this node, not just which reservation was served: a
// popped reservation may find no task left at its scheduler.
type Accounting interface {
	// Launched records that a task of user started on this node.
	Launched(user string)
	// Finished records that a task of user ended on this node.
	Finished(user string)
}

// NewChoosy returns an empty Choosy queue, in its fallback (weighted fair)
// mode until the first SetShares. Users absent from weights get
// defaultWeight.
func NewChoosy(defaultWeight float64, weights map[string]float64) (*Choosy, error) {
	f, err := NewFair(defaultWeight, weights)
	if err != nil {
		return nil, err
	}
	return &Choosy{Fair: f, local: map[string]int{}}, nil
}

// SetShares installs the coordinator's cluster-wide running counts, as of
// version (which must grow: an older or equal version is ignored, so a
// reordered gossip message cannot roll counts back). Counts must be finite
// and >= 0. The node's own accounting restarts from them. It returns
// whether the snapshot was installed.
func (c *Choosy) SetShares(version uint64, running map[string]float64) (bool, error) {
	if c.fresh && version <= c.version {
		return false, nil
	}
	for u, n := range running {
		if math.IsNaN(n) || math.IsInf(n, 0) || n < 0 {
			return false, fmt.Errorf("queue: running count %v of user %q is not a finite number >= 0", n, u)
		}
	}
	c.running = make(map[string]float64, len(running))
	for u, n := range running {
		c.running[u] = n
	}
	clear(c.local)
	c.fresh, c.version = true, version
	return true, nil
}

// ClearShares drops the coordinator's counts: Choosy serves as Fair does
// until the next SetShares. Called when the counts have gone stale. The
// fair queue starts afresh: what the users were served by cluster-wide
// share does not count in the per-node order that follows.
func (c *Choosy) ClearShares() {
	if c.fresh {
		c.Fair.forgetHistory()
	}
	c.running, c.fresh = nil, false
	clear(c.local)
}

// Coordinated reports whether a snapshot is in force, and its version.
func (c *Choosy) Coordinated() (uint64, bool) { return c.version, c.fresh }

// Launched implements Accounting.
func (c *Choosy) Launched(user string) {
	if c.fresh {
		c.local[user]++
	}
}

// Finished implements Accounting.
func (c *Choosy) Finished(user string) {
	if c.fresh {
		c.local[user]--
	}
}

// Share returns user's current weighted cluster-wide share as Choosy sees
// it, and false when no snapshot is in force.
func (c *Choosy) Share(user string) (float64, bool) {
	if !c.fresh {
		return 0, false
	}
	n := max(c.running[user]+float64(c.local[user]), 0)
	return n / c.weights.get(user), true
}

// Pop serves the head reservation of the backlogged user with the lowest
// share, or, without a snapshot, as Fair does.
func (c *Choosy) Pop() (Reservation, bool) {
	if len(c.active.fs) == 0 {
		return Reservation{}, false
	}
	if !c.fresh {
		return c.Fair.Pop()
	}
	best := c.active.fs[0]
	bestShare, _ := c.Share(best.user)
	for _, fl := range c.active.fs[1:] {
		s, _ := c.Share(fl.user)
		if s < bestShare || (s == bestShare && c.active.less(fl, best)) {
			best, bestShare = fl, s
		}
	}
	return c.serve(best), true
}
