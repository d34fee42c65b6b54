package scheduler

import (
	"time"

	"github.com/sparrowfleet/sparrow/internal/refusal"
)

// DefaultDrainTimeout is how long a scheduler's drain waits, by default,
// for the jobs it accepted to launch and their tasks to finish.
const DefaultDrainTimeout = 30 * time.Second

// drainPoll is how often a drain looks whether the scheduler's work is
// done. The book and the running tasks change under s.mu on many paths;
// looking at them every drainPoll keeps those paths free of drain code.
const drainPoll = 10 * time.Millisecond

// DrainResult says what a drain left undone when it returned.
type DrainResult struct {
	// Unlaunched is how many tasks of accepted jobs had not launched.
	Unlaunched int
	// Running is how many launched tasks had not been reported finished
	// by their node monitors.
	Running int
	// Waited is how long the drain waited.
	Waited time.Duration
}

// Drain takes the scheduler out of service without losing what it
// accepted. From the call on, submitJob is refused at once with a
// saturation refusal that suggests a retry delay, so a client submits
// again (to this scheduler until it stops answering, then to another),
// and held submitJob calls are answered: a job none of whose tasks
// launched is refused the same way, one with a launched task is accepted
// and its remainder placed as for a call that was not held (hold.go).
// GetTask, the offers' outcomes and the frontend messages go on being
// served, so the jobs accepted launch; Drain returns once none of them
// has a task left to launch and every launched task has been reported
// finished by its node monitor (so that its frontend message passed
// through this scheduler), or once timeout passes. The scheduler does not
// come back from a drain: the daemon leaves gossip and stops next.
func (s *Scheduler) Drain(timeout time.Duration) DrainResult {
	start := time.Now()
	s.mu.Lock()
	s.gate.drain()
	s.mu.Unlock()
	s.log.Info().Dur("timeout", timeout).Msg("draining: refusing new jobs, waiting for accepted ones to launch and finish")
	limit := time.NewTimer(timeout)
	defer limit.Stop()
	tick := time.NewTicker(drainPoll)
	defer tick.Stop()
	var res DrainResult
	for {
		s.mu.Lock()
		res.Unlaunched, res.Running = s.book.unlaunched(), s.running.tracked
		s.mu.Unlock()
		if res.Unlaunched == 0 && res.Running == 0 {
			break
		}
		select {
		case <-tick.C:
			continue
		case <-limit.C:
		}
		break
	}
	res.Waited = time.Since(start)
	ev := s.log.Info()
	if res.Unlaunched > 0 || res.Running > 0 {
		ev = s.log.Warn()
	}
	ev.Int("unlaunched", res.Unlaunched).Int("running", res.Running).Dur("waited", res.Waited).Msg("drained")
	return res
}

// Draining reports whether Drain has been called.
func (s *Scheduler) Draining() bool { return s.gate.draining.Load() }

// drainRefusal is submitJob's answer while the scheduler drains.
func drainRefusal() error {
	return refused(refusal.Draining, retryAfterMin, "fleet saturated: %s and accepts no new jobs; retry after %v", shuttingDown, retryAfterMin)
}

// shuttingDown is the reason in a draining scheduler's refusals; peers
// that read no refusal code find it in the message (refusal.DrainingText).
const shuttingDown = refusal.DrainingText

// saturatedKind is the kind of a saturated fleet's refusal whose reason
// past the hold's bounds is over: Draining when the scheduler is shutting
// down, else Saturated.
func saturatedKind(over string) refusal.Kind {
	if over == shuttingDown {
		return refusal.Draining
	}
	return refusal.Saturated
}
