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
// (frontendlink.go) and steers stranded requests (steerStranded).
func (s *Scheduler) Sweep(now time.Time) {
	s.sweepFrontends(now)
	s.steerStranded(now)
	if s.cfg.ReservationTimeout <= 0 {
		return
	}
	s.mu.Lock()
	saturated := s.gate.hold.saturated(now, s.cfg.ReservationTimeout)
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
	probes, err := s.sweepPlanLocked(r, placeOptions{ratio: r.ratio})
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

// sweepPlanLocked plans extra reservations for r's unlaunched tasks under
// o, on node monitors that may take more of them: wherever the pipeline
// places r (its constraints, not failed it, and under the long-task-aware
// policy never the short-only share for a long job, unless every
// candidate is short-only) that hold none of its reservations. The
// policy picks among all the candidates before the holders are dropped,
// so that a long job whose reservations already sit on every node open
// to it gets no more, rather than spilling onto the short-only share.
func (s *Scheduler) sweepPlanLocked(r *request, o placeOptions) ([]placement.Probe, error) {
	o.tasks, o.holders = r.UnlaunchedTasks(), holdersDropped
	probes, _, err := s.pipe.place(r, o)
	return probes, err
}

// steerStranded gives each request due for steering (steerBook.due) one
// more reservation per unlaunched task, on node monitors that served its
// user lately and hold none of its reservations (steerBook.serving). Its
// reservations sit where its user is not being served, under coordinator
// guidance that gives the user nothing there say, while node monitors
// that serve it may idle; new jobs are steered at submission, this moves
// the ones already placed. The old reservations stay, as with the
// reservation timeout: whichever node monitor asks first gets the task,
// and the rest are cancelled once all have launched.
func (s *Scheduler) steerStranded(now time.Time) {
	type move struct {
		r      *request
		probes []placement.Probe
	}
	var moves []move
	s.mu.Lock()
	if !s.steer.on() {
		s.mu.Unlock()
		return
	}
	for r := range s.book.all() {
		if !s.steer.due(r, now) {
			continue
		}
		// With no node monitor serving its user, nothing is placed.
		probes, _ := s.sweepPlanLocked(r, placeOptions{ratio: 1, user: userServing, now: now})
		s.steer.placed(r, probes, now)
		if len(probes) == 0 {
			continue
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
