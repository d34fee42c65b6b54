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
	if s.cfg.ReservationTimeout <= 0 {
		return
	}
	s.mu.Lock()
	saturated := s.hold.saturated(now, s.cfg.ReservationTimeout)
	due := s.book.overdue(now, s.cfg.ReservationTimeout)
	if saturated {
		s.stats.SweepsSaturated += uint64(len(due))
		due = nil
	}
	s.mu.Unlock()
	for _, r := range due {
		s.sweepOne(r)
	}
}

func (s *Scheduler) sweepOne(r *request) {
	s.mu.Lock()
	if !s.book.live(r) || r.reprobe >= maxReprobes {
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
	probes, err := s.place.plan(candidates, r.UnlaunchedTasks(), r.ratio)
	if err != nil || len(probes) == 0 {
		s.mu.Unlock()
		return
	}
	r.reprobe++
	s.stats.Reprobes++
	r.AddProbes(probes)
	unlaunched := r.Unlaunched()
	s.mu.Unlock()
	s.log.Warn().Str("request", r.ID).Int("unlaunched", unlaunched).Int("nodes", len(probes)).
		Dur("waited", s.cfg.ReservationTimeout).Msg("reservations unanswered; placing more elsewhere")
	s.enqueue(r, probes)
}
