package scheduler

import (
	"time"

	"github.com/sparrowfleet/sparrow/core/placement"
)

// steerStranded (Config.SteerAfter > 0, every Sweep) gives each request
// that has had unlaunched tasks for SteerAfter since it was placed (or
// last given reservations here) one more reservation per unlaunched task,
// on node monitors that served its user within SteerAfter and hold none
// of its reservations (placement.Steer.Serving). Its reservations sit
// where the user is not being served, under coordinator guidance that
// gives it nothing there say, while nodes that serve it may idle; new
// jobs are steered at submission, this moves the ones already placed.
// The old reservations stay, as with Sweep: whichever node asks first
// gets the task, and the rest are cancelled once all have launched.
func (s *Scheduler) steerStranded(now time.Time) {
	if s.cfg.SteerAfter <= 0 {
		return
	}
	type move struct {
		r      *request
		probes []placement.Probe
	}
	var moves []move
	s.mu.Lock()
	for _, r := range s.requests {
		if r.Launched() || r.loc != nil || now.Sub(r.steered) < s.cfg.SteerAfter {
			continue
		}
		r.steered = now
		var cands []placement.Node
		for _, n := range s.view.Candidates(r.app) {
			if !r.failed[n.Addr] && !r.Holds(n.Addr) {
				cands = append(cands, n)
			}
		}
		cands, _ = placement.Filter(cands, r.cons)
		cands = s.steer.Serving(r.user.User, cands, now)
		if len(cands) == 0 {
			continue
		}
		probes, err := s.sampler.Plan(s.rng, cands, r.UnlaunchedTasks(), 1)
		if err != nil || len(probes) == 0 {
			continue
		}
		for _, p := range probes {
			s.steer.Probed(r.user.User, p.Node.Addr, now)
		}
		r.AddProbes(probes)
		s.stats.Steered += uint64(len(probes))
		moves = append(moves, move{r: r, probes: probes})
	}
	s.mu.Unlock()
	for _, m := range moves {
		s.enqueue(m.r, m.probes)
	}
}
