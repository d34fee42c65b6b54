package scheduler

import "time"

// Sweep gives extra reservations to requests whose deadline has passed
// with tasks still unlaunched: some node monitor holds a reservation but is
// not asking for work (alive but stuck, or partitioned before gossip
// noticed). The old reservations stay, so a slow node keeps its place in
// line; whichever node asks first gets the task. The daemon calls Sweep
// periodically; tests call it with a chosen time.
func (s *Scheduler) Sweep(now time.Time) {
	if s.cfg.ReservationTimeout <= 0 {
		return
	}
	s.mu.Lock()
	var due []*request
	for _, r := range s.requests {
		if !r.deadline.IsZero() && now.After(r.deadline) && !r.Launched() {
			r.deadline = now.Add(s.cfg.ReservationTimeout)
			due = append(due, r)
		}
	}
	s.mu.Unlock()
	for _, r := range due {
		s.mu.Lock()
		if s.requests[r.ID] != r {
			s.mu.Unlock()
			continue
		}
		s.log.Warn().Str("request", r.ID).Int("unlaunched", r.Unlaunched()).
			Dur("waited", s.cfg.ReservationTimeout).Msg("reservations unanswered; placing more elsewhere")
		// Nodes already holding this request's reservations are the ones
		// not answering; look elsewhere.
		if r.failed == nil {
			r.failed = make(map[string]bool)
		}
		for _, p := range r.Outstanding() {
			r.failed[p.Node.Addr] = true
		}
		s.reprobe(r, r.UnlaunchedTasks())
	}
}
