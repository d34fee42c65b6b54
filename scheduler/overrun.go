package scheduler

import (
	"time"

	"github.com/sparrowfleet/sparrow/core/placement"
	"github.com/sparrowfleet/sparrow/core/shortjobs"
)

// overrunWatch is the scheduler's side of the overrun rule
// (shortjobs.Config.Overrun): it keeps the tasks handed out of short jobs
// that stated no estimate, in hand-out order, and gives back those handed
// out at least the cutoff ago, so that the owner can take the jobs of the
// ones still running as long. Each task is looked at once, so a watch
// costs O(1) per task, amortised. It holds at most maxTracked tasks; a
// task handed out while it is full is not watched.
//
// It has no lock of its own: it is not safe for concurrent use, and its
// owner serialises every call. A nil *overrunWatch is the rule off.
type overrunWatch struct {
	cutoff time.Duration
	// watched, from index head on, are the tasks in hand-out order; their
	// times never decrease (the scheduler's clock never goes back).
	watched []handOut
	head    int
}

// handOut is a watched task and when it was handed out.
type handOut struct {
	task runningTask
	at   time.Time
}

func newOverrunWatch(cfg shortjobs.Config) *overrunWatch {
	if !cfg.Overrun {
		return nil
	}
	return &overrunWatch{cutoff: time.Duration(cfg.Cutoff * float64(time.Second))}
}

// handedOut watches t, a task of a short job that stated no estimate,
// handed out at at.
func (w *overrunWatch) handedOut(t runningTask, at time.Time) {
	if w == nil || len(w.watched)-w.head >= maxTracked {
		return
	}
	w.watched = append(w.watched, handOut{task: t, at: at})
}

// due appends to out the watched tasks handed out at least the cutoff
// before now, oldest first, and stops watching them.
func (w *overrunWatch) due(out []handOut, now time.Time) []handOut {
	if w == nil {
		return out
	}
	for w.head < len(w.watched) && !now.Before(w.watched[w.head].at.Add(w.cutoff)) {
		out = append(out, w.watched[w.head])
		w.watched[w.head] = handOut{}
		w.head++
	}
	if 2*w.head >= len(w.watched) {
		// Moving the rest down costs no more than the tasks taken off
		// since the last move.
		n := copy(w.watched, w.watched[w.head:])
		clear(w.watched[n:])
		w.watched, w.head = w.watched[:n], 0
	}
	return out
}

// len returns how many tasks are watched.
func (w *overrunWatch) len() int {
	if w == nil {
		return 0
	}
	return len(w.watched) - w.head
}

// OverrunTick returns how often the daemon should run OverrunSweep: a
// tenth of the cutoff, between 10 ms and a second, so that a job is taken
// long within a tenth of the cutoff of its overrun, or a second when the
// cutoff is longer; 0 when the overrun rule is off.
func (s *Scheduler) OverrunTick() time.Duration {
	if s.short == nil || s.short.watch == nil {
		return 0
	}
	return min(max(s.short.watch.cutoff/10, 10*time.Millisecond), time.Second)
}

// OverrunSweep takes as long every live short job that stated no
// estimate and has a task still running, by this scheduler's account,
// the cutoff after it was handed out (shortjobs.Config.Overrun): one task
// that long says the job is not a short one. From then on its remaining
// work is counted at shortjobs.OverrunEstimate per task, in getTask
// answers and the backlog, and sent to the node monitors holding its
// reservations (under shortjobs.Config.WorkRefresh); it leaves the pull
// backlog; re-placements keep it off the short-only share as any long
// job's; and node monitors of the short-only share get none of its tasks
// while it holds a reservation elsewhere (overrunDeclinesLocked).
func (s *Scheduler) OverrunSweep(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.short
	if p == nil || p.watch == nil {
		return
	}
	p.dueScratch = p.watch.due(p.dueScratch[:0], now)
	for _, h := range p.dueScratch {
		if !p.runningSince(h.task, h.at) {
			continue
		}
		r, ok := s.book.get(h.task.request)
		if !ok || !r.short.guessed || r.short.class != shortjobs.Short {
			continue
		}
		r.short.class = shortjobs.Long
		r.short.est = shortjobs.OverrunEstimate(p.cfg.Cutoff)
		r.short.work = r.short.est * float64(r.Unlaunched())
		if s.pull != nil {
			s.pull.remove(r)
		}
		if p.cfg.WorkRefresh {
			s.workSend.send(s.holdersLocked(r), r.ID, r.short.work)
		}
		s.stats.OverrunLong++
		s.log.Info().Str("request", r.ID).Str("app", r.app).Int("unlaunched", r.Unlaunched()).
			Msg("a task of this job, which stated no estimate, ran for the cutoff: taking it as long")
	}
	clear(p.dueScratch)
}

// overrunDeclinesLocked reports whether addr's getTask for r gets no task
// because r was taken long by its overrun (OverrunSweep) and addr is a
// node monitor of r's app's short-only share, while r holds a reservation
// on a node monitor outside it: a long job runs off the short-only share
// when it can, and is never left waiting on reservations it will not use.
func (s *Scheduler) overrunDeclinesLocked(r *request, addr string) bool {
	if s.short == nil || !r.short.guessed || r.short.class != shortjobs.Long {
		return false
	}
	part := s.short.partition(r.app, s.view.Candidates(r.app))
	n, ok := s.view.Node(addr)
	if !ok || !part.ShortOnly(shortjobs.NodeHash(n.Name)) {
		return false
	}
	return heldOutside(r.Outstanding(), part)
}

// heldOutside reports whether any of held is on a node outside the
// short-only share part.
func heldOutside(held []placement.Probe, part shortjobs.Partition) bool {
	for _, p := range held {
		if !part.ShortOnly(shortjobs.NodeHash(p.Node.Name)) {
			return true
		}
	}
	return false
}
