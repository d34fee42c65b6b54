package placement

import (
	"math/rand/v2"
	"time"
)

// Steer remembers, per user, which nodes serve that user's reservations
// and which sit on them, and steers the user's next reservations away
// from the latter. A node sits on a user's reservations when one was sent
// there more than After ago and none has been served there since: under
// guidance that gives the user (almost) nothing on the node's machine
// type, say, or behind a long queue. Late binding hands a job's tasks to
// whichever of its reservations is served first, so a job whose
// reservations wait where the user is not served keeps its tasks
// waiting too, while the nodes that would serve them idle.
//
// Candidates keeps every node that is not sitting on the user's
// reservations, plus a few that are (about one in Explore of the kept
// ones, at least one), so that a node that starts serving the user again
// (its guidance changed) is found. A node is judged afresh once its
// verdict is older than After + Retry. With no node kept, or every node
// kept, the candidates are unchanged.
//
// Steer is deterministic (time and randomness are passed in) and not
// safe for concurrent use: the scheduler holds its lock.
type Steer struct {
	// After is how long a reservation may wait on a node without that
	// node serving the user before it counts as sitting on them; > 0.
	After time.Duration
	// Retry is how long after that the node is probed as any other; 0
	// means After.
	Retry time.Duration
	// Explore: about one kept node in Explore is added back from those
	// sitting on the user's reservations; 0 means DefaultExplore.
	Explore int

	users map[string]map[string]*nodeRecord
	calls int
}

// DefaultExplore is Steer.Explore's default.
const DefaultExplore = 2

// nodeRecord is what Steer knows about one (user, node).
type nodeRecord struct {
	// waiting is when a reservation was sent to the node with none of
	// the user's served there since (zero: none waiting).
	waiting time.Time
	// served is the last service (zero: none remembered).
	served time.Time
	// touched is the last probe or service, for forgetting.
	touched time.Time
}

// Probed records that a reservation of user was sent to addr at now.
func (s *Steer) Probed(user, addr string, now time.Time) {
	r := s.record(user, addr, now)
	if r.waiting.IsZero() {
		r.waiting = now
	}
}

// Served records that addr served a reservation of user at now.
func (s *Steer) Served(user, addr string, now time.Time) {
	r := s.record(user, addr, now)
	r.waiting, r.served = time.Time{}, now
}

// Serving returns the nodes among nodes that served user within After +
// Retry (as long as a verdict lasts) before now: where a job of user whose reservations sit elsewhere can be
// given new ones. It does not modify nodes.
func (s *Steer) Serving(user string, nodes []Node, now time.Time) []Node {
	m := s.users[user]
	if s.After <= 0 || m == nil {
		return nil
	}
	var out []Node
	for _, n := range nodes {
		if r := m[n.Addr]; r != nil && !r.served.IsZero() && !r.served.After(now) && now.Sub(r.served) <= s.After+s.retry() {
			out = append(out, n)
		}
	}
	return out
}

func (s *Steer) record(user, addr string, now time.Time) *nodeRecord {
	s.calls++
	if s.calls%forgetEvery == 0 {
		s.forget(now)
	}
	if s.users == nil {
		s.users = map[string]map[string]*nodeRecord{}
	}
	m := s.users[user]
	if m == nil {
		m = map[string]*nodeRecord{}
		s.users[user] = m
	}
	r := m[addr]
	if r == nil {
		r = &nodeRecord{}
		m[addr] = r
	}
	r.touched = now
	return r
}

// forgetEvery is how many records pass between sweeps of stale ones.
const forgetEvery = 4096

// forget drops records untouched for longer than a verdict lasts: they
// would judge nothing.
func (s *Steer) forget(now time.Time) {
	horizon := s.After + s.retry()
	for u, m := range s.users {
		for a, r := range m {
			if now.Sub(r.touched) > horizon {
				delete(m, a)
			}
		}
		if len(m) == 0 {
			delete(s.users, u)
		}
	}
}

func (s *Steer) retry() time.Duration {
	if s.Retry > 0 {
		return s.Retry
	}
	return s.After
}

// sitting reports whether addr sits on user's reservations at now; a
// verdict older than After + Retry is dropped, so that the next
// reservation there is judged afresh.
func (s *Steer) sitting(user, addr string, now time.Time) bool {
	r := s.users[user][addr]
	if r == nil || r.waiting.IsZero() {
		return false
	}
	waited := now.Sub(r.waiting)
	if waited > s.After+s.retry() {
		r.waiting = time.Time{}
		return false
	}
	return waited > s.After
}

// Candidates returns the nodes among nodes to sample user's next
// reservations from (see the type comment). It does not modify nodes.
func (s *Steer) Candidates(rng *rand.Rand, user string, nodes []Node, now time.Time) []Node {
	if s.After <= 0 || s.users[user] == nil {
		return nodes
	}
	var kept, sat []Node
	for _, n := range nodes {
		if s.sitting(user, n.Addr, now) {
			sat = append(sat, n)
		} else {
			kept = append(kept, n)
		}
	}
	if len(kept) == 0 || len(sat) == 0 {
		return nodes
	}
	explore := s.Explore
	if explore <= 0 {
		explore = DefaultExplore
	}
	k := min(max(1, len(kept)/explore), len(sat))
	for i := range k {
		j := i + rng.IntN(len(sat)-i)
		sat[i], sat[j] = sat[j], sat[i]
		kept = append(kept, sat[i])
	}
	return kept
}
