package scheduler

import (
	"time"

	"github.com/sparrowfleet/sparrow/core/placement"
)

// Sweep gives extra reservations to requests whose deadline has passed
// with tasks still unlaunched: some node monitor holds a reservation but is
// not asking for work (alive but stuck, or partitioned before gossip
// noticed). The old reservations stay, so a slow node keeps its place in
// line; whichever node asks first gets the task. Sweep only ever adds: if
// every candidate already holds a reservation (a small, overloaded fleet,
// where waiting is simply queueing), it does nothing, and it never fails a
// request. Nor does it while the fleet is saturated (a node monitor
// refused reservations as full within the last ReservationTimeout): then
// unanswered reservations are queued ones, and more of them would only
// meet full queues. The daemon calls Sweep periodically; tests call it
// with a chosen time. It also sweeps the links to frontends
// (frontendlink.go).
func (s *Scheduler) Sweep(now time.Time) {
	s.sweepFrontends(now)
	s.steerStranded(now)
	if s.cfg.ReservationTimeout <= 0 {
		return
	}
	s.mu.Lock()
	saturated := !s.lastFull.IsZero() && now.Sub(s.lastFull) < s.cfg.ReservationTimeout
	var due []*request
	for _, r := range s.requests {
		if !r.deadline.IsZero() && now.After(r.deadline) && !r.Launched() {
			r.deadline = now.Add(s.cfg.ReservationTimeout)
			if saturated {
				s.stats.SweepsSaturated++
				continue
			}
			due = append(due, r)
		}
	}
	s.mu.Unlock()
	for _, r := range due {
		s.sweepOne(r)
	}
}

func (s *Scheduler) sweepOne(r *request) {
	s.mu.Lock()
	if s.requests[r.ID] != r || r.reprobe >= maxReprobes {
		s.mu.Unlock()
		return
	}
	var candidates []placement.Node
	for _, n := range s.view.Candidates(r.app) {
		if !r.failed[n.Addr] && !r.Holds(n.Addr) {
			candidates = append(candidates, n)
		}
	}
	candidates, _ = placement.Filter(candidates, r.cons)
	probes, err := s.sampler.Plan(s.rng, candidates, r.UnlaunchedTasks(), r.ratio)
	if err != nil || len(probes) == 0 {
		s.mu.Unlock()
		return
	}
	r.reprobe++
	s.stats.Reprobes++
	r.AddProbes(probes)
	s.mu.Unlock()
	s.log.Warn().Str("request", r.ID).Int("unlaunched", r.Unlaunched()).Int("nodes", len(probes)).
		Dur("waited", s.cfg.ReservationTimeout).Msg("reservations unanswered; placing more elsewhere")
	s.enqueue(r, probes)
}
