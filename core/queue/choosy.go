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
// Node quotas. Every node acts on the same counts, up to a period old, so
// ranking by share alone makes all nodes favour the same user at once and
// overshoot it, then flip at the next refresh. With the coordinator's
// CMMF allocation of this node's machine type (SetGuidance's alloc: each
// user's slots of the type), the node also holds its own part of that
// allocation: user u's quota here is its fraction of the type,
// alloc[u] / Σ alloc, of the slots in use here (the tasks running here
// plus the one being placed). Pop serves, in order:
//
//  1. users under their quota here, and users the guidance does not know
//     yet (a user just arrived has share 0, as in the paper);
//  2. a user the allocation gives nothing here whose share is below
//     Starved times the lowest share in (1): a user whose reservations
//     wait on nodes that never serve it, while its own nodes idle;
//  3. anyone queued (over quota, or allocated nothing here).
//
// Within each class the lowest share goes first. Among the users under
// quota whose shares lie within Band of the lowest, on a node with other
// tasks running, the one this node owes most goes first instead: what a
// node owes a user is the integral, over its launches and finishes, of
// the user's quota minus its tasks here (bounded by maxOwed). Since every
// node fills its own quota, the nodes of a type together split it as
// CMMF does, and no node chases a deficit that the others are filling;
// what each node owes turns fractional quotas into the right fractions of
// time from the node's own history, where shares that every node reads
// alike would make all of them give the fraction to the same user at
// once. A node placing its only task (one slot, or idle) has no split of
// its own to go by, and places it by share, as the paper's Choosy does.
// At a CMMF allocation no user of class 2 exists: a user with none of a
// type it may use has a share at least that of every user allocated some
// of it.
// Pop always serves something when anything is queued: the quotas order
// the queue, they never leave a slot idle.
//
// Without a refresh (no coordinator, or ClearShares after its counts went
// stale) Choosy is exactly the weighted fair queue Fair: per-node fairness,
// the fleet's behaviour without a coordinator. Without an allocation
// (SetShares, or a type the guidance allocates nothing of) it ranks by
// share alone.
//
// Choosy implements Discipline, Weights and Accounting; create it with
// NewChoosy. It is not safe for concurrent use.
type Choosy struct {
	*Fair
	running map[string]float64 // cluster-wide running counts, per user
	local   map[string]int     // launches minus finishes here since then
	// alloc is the CMMF allocation of this node's type, in slots, of
	// the users it gives some; nil when none is in force.
	alloc    map[string]float64
	allocSum float64
	here     map[string]int // tasks running here, per user
	hereSum  int
	// owe holds what this node owes each allocated user (see owed);
	// quotaSum and events are the running sums it is kept against.
	owe      map[string]*owing
	quotaSum float64 // Σ over events of slots in use / allocSum
	events   uint64  // launches and finishes with an allocation in force
	fresh    bool    // running holds a snapshot in force
	version  uint64
}

// Starved is the fraction of the lowest share among the users under
// their quota below which a user allocated nothing on this node's type is
// served before them (class 2 of Choosy's order). Well below 1, so that
// counts up to a period old, which differ from the allocation by a few
// tasks, never move a user onto a type CMMF keeps it off; above 0, so
// that a user whose reservations wait where it has no allocation is
// served once its share has collapsed.
const Starved = 0.5

// Band is how close to the lowest share, among the users under their
// quota, a user's share must be for what this node owes it to decide
// between them: within Band times the lowest share plus Band slots. The
// counts every node reads are up to a period old and differ from the
// allocation by a few tasks; within that band the node's own history
// decides, so nodes do not all pick the same user. Further apart, the
// lower share goes first, as in the paper's rule.
const Band = 0.5

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
	return &Choosy{Fair: f, local: map[string]int{}, here: map[string]int{}, owe: map[string]*owing{}}, nil
}

// SetShares installs the coordinator's cluster-wide running counts, as of
// version, without an allocation: SetGuidance with alloc nil.
func (c *Choosy) SetShares(version uint64, running map[string]float64) (bool, error) {
	return c.SetGuidance(version, running, nil)
}

// SetGuidance installs the coordinator's cluster-wide running counts and
// the CMMF allocation of this node's machine type (each user's slots of
// the type; nil or empty: none), as of version (which must grow: an
// older or equal version is ignored, so a reordered gossip message cannot
// roll counts back). Counts and slots must be finite and >= 0. The node's
// own accounting of launches restarts from the counts. It returns whether
// the snapshot was installed; on an error nothing changes.
func (c *Choosy) SetGuidance(version uint64, running, alloc map[string]float64) (bool, error) {
	if c.fresh && version <= c.version {
		return false, nil
	}
	for u, n := range running {
		if math.IsNaN(n) || math.IsInf(n, 0) || n < 0 {
			return false, fmt.Errorf("queue: running count %v of user %q is not a finite number >= 0", n, u)
		}
	}
	sum := 0.0
	for u, x := range alloc {
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			return false, fmt.Errorf("queue: allocation %v of user %q is not a finite number >= 0", x, u)
		}
		sum += x
	}
	c.running = make(map[string]float64, len(running))
	for u, n := range running {
		c.running[u] = n
	}
	for u := range c.alloc {
		c.owed(u) // settle what is owed under the old allocation
	}
	c.alloc, c.allocSum = nil, 0
	if sum > 0 && !math.IsInf(sum, 0) {
		c.alloc, c.allocSum = make(map[string]float64, len(alloc)), sum
		for u, x := range alloc {
			if x > 0 {
				c.alloc[u] = x
			}
		}
	}
	for u := range c.owe {
		if _, ok := c.alloc[u]; !ok {
			delete(c.owe, u)
		}
	}
	for u := range c.alloc {
		if c.owe[u] == nil {
			c.owe[u] = &owing{quotaSum: c.quotaSum, events: c.events}
		}
	}
	clear(c.local)
	c.fresh, c.version = true, version
	return true, nil
}

// ClearShares drops the coordinator's counts and allocation: Choosy
// serves as Fair does until the next SetShares. Called when the counts
// have gone stale. The fair queue starts afresh: what the users were
// served by cluster-wide share does not count in the per-node order that
// follows.
func (c *Choosy) ClearShares() {
	if c.fresh {
		c.Fair.forgetHistory()
	}
	c.running, c.alloc, c.allocSum, c.fresh = nil, nil, 0, false
	clear(c.local)
	clear(c.owe)
}

// Coordinated reports whether a snapshot is in force, and its version.
func (c *Choosy) Coordinated() (uint64, bool) { return c.version, c.fresh }

// Launched implements Accounting.
func (c *Choosy) Launched(user string) {
	c.integrate(user)
	c.here[user]++
	c.hereSum++
	if c.fresh {
		c.local[user]++
	}
}

// Finished implements Accounting. A finish without a launch (a task
// that started before this queue existed) leaves the count here at 0.
func (c *Choosy) Finished(user string) {
	c.integrate(user)
	if n := c.here[user]; n > 1 {
		c.here[user] = n - 1
		c.hereSum--
	} else if n == 1 {
		delete(c.here, user)
		c.hereSum--
	}
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

// Quota returns user's quota of this node's slots in use, as Pop reads
// it (see the type comment), and false when no allocation is in force.
func (c *Choosy) Quota(user string) (float64, bool) {
	if !c.fresh || c.alloc == nil {
		return 0, false
	}
	return float64(c.hereSum+1) * c.alloc[user] / c.allocSum, true
}

// maxOwed bounds what a node owes a user either way, in slot-events: a
// user with nothing queued here for a while is owed at most this much
// when its work returns, and one served beyond its quota yields for at
// most as long.
const maxOwed = 2

// owing is what the node owed one user when last settled, and the sums
// as of then.
type owing struct {
	owed     float64
	quotaSum float64
	events   uint64
}

// integrate counts a launch or finish of user, before it changes the
// tasks here: each allocated user is owed its quota of the slots now in
// use minus its tasks here. Launches and finishes come roughly evenly in
// time on a busy node, so what is owed follows the time integral of
// quota minus holding; its sum over users is 0. Only user's tasks here
// change, so only user is settled now; the others are settled lazily
// (owed), in O(1) per event.
func (c *Choosy) integrate(user string) {
	if !c.fresh || c.alloc == nil || c.hereSum == 0 {
		return
	}
	c.quotaSum += float64(c.hereSum) / c.allocSum
	c.events++
	if _, ok := c.alloc[user]; ok {
		c.owed(user)
	}
}

// owed settles and returns what the node owes user, an allocated user,
// bounded by maxOwed.
func (c *Choosy) owed(user string) float64 {
	o := c.owe[user]
	if o == nil {
		o = &owing{quotaSum: c.quotaSum, events: c.events}
		c.owe[user] = o
	}
	raw := o.owed + c.alloc[user]*(c.quotaSum-o.quotaSum) - float64(c.here[user])*float64(c.events-o.events)
	o.owed, o.quotaSum, o.events = min(max(raw, -maxOwed), maxOwed), c.quotaSum, c.events
	return o.owed
}

// Choosy's classes of queued users, served in this order (type comment).
const (
	classUnder = iota
	classStarved
	classRest
)

// class returns user's class, before the Starved test: classUnder or
// classRest, and whether the allocation gives user nothing here.
func (c *Choosy) class(user string) (cls int, none bool) {
	if c.alloc == nil {
		return classUnder, false
	}
	x, ok := c.alloc[user]
	if !ok {
		if _, known := c.running[user]; !known {
			return classUnder, false
		}
		return classRest, true
	}
	if float64(c.here[user]) < float64(c.hereSum+1)*x/c.allocSum {
		return classUnder, false
	}
	return classRest, false
}

// Pop serves the head reservation of the backlogged user first in
// Choosy's order (the type comment), or, without a snapshot, as Fair
// does.
func (c *Choosy) Pop() (Reservation, bool) {
	if len(c.active.fs) == 0 {
		return Reservation{}, false
	}
	if !c.fresh {
		return c.Fair.Pop()
	}
	// best[k] is the first user of class k: the lowest share, then fair
	// order. In classUnder, among the users whose shares lie within Band
	// of the lowest, the one owed most here goes first.
	var best [3]*flow
	var bestShare [3]float64
	consider := func(k int, fl *flow, s float64) {
		if best[k] == nil || s < bestShare[k] || (s == bestShare[k] && c.active.less(fl, best[k])) {
			best[k], bestShare[k] = fl, s
		}
	}
	anyNone := false
	for _, fl := range c.active.fs {
		s, _ := c.Share(fl.user)
		k, none := c.class(fl.user)
		anyNone = anyNone || none
		consider(k, fl, s)
	}
	lowestUnder := bestShare[classUnder]
	if best[classUnder] != nil && c.alloc != nil && c.hereSum > 0 {
		band := lowestUnder*(1+Band) + Band
		var chosen *flow
		var chosenOwed, chosenShare float64
		for _, fl := range c.active.fs {
			s, _ := c.Share(fl.user)
			if s > band {
				continue
			}
			if k, _ := c.class(fl.user); k != classUnder {
				continue
			}
			o := math.Inf(1) // a user not allocated yet: new, owed first
			if _, ok := c.alloc[fl.user]; ok {
				o = c.owed(fl.user)
			}
			if chosen == nil || o > chosenOwed || (o == chosenOwed && (s < chosenShare || (s == chosenShare && c.active.less(fl, chosen)))) {
				chosen, chosenOwed, chosenShare = fl, o, s
			}
		}
		best[classUnder] = chosen
	}
	if anyNone && best[classUnder] != nil {
		limit := Starved * lowestUnder
		for _, fl := range c.active.fs {
			if _, none := c.class(fl.user); none {
				if s, _ := c.Share(fl.user); s < limit {
					consider(classStarved, fl, s)
				}
			}
		}
	}
	switch {
	case best[classStarved] != nil:
		return c.serve(best[classStarved]), true
	case best[classUnder] != nil:
		return c.serve(best[classUnder]), true
	}
	return c.serve(best[classRest]), true
}
