package scheduler

import (
	"context"
	"fmt"
	"time"

	"github.com/sparrowfleet/sparrow/core/placement"
	"github.com/sparrowfleet/sparrow/internal/metrics"
	"github.com/sparrowfleet/sparrow/internal/refusal"
)

// Holding submitJob calls on a saturated fleet.
//
// With Config.MaxHeldJobs > 0, submitJob answers only once the job's
// reservations are placed: every node monitor sampled for it has accepted
// its share. Reservations a node monitor refuses (its queue is full,
// slots.DefaultMaxQueued) are not sent round the fleet and then, after
// maxReprobes rounds, to the frontend as failed tasks; the call is held
// instead, and the refused reservations are placed again in rounds:
// on live node monitors that hold none of the job's reservations (all of
// them if every one does), at most one round per holdMinGap, backing off
// from holdRetryMin to holdRetryMax between rounds, and brought forward
// when this scheduler sees capacity free (a node monitor's getTask takes
// a reservation off its queue; each such call wakes the longest-waiting
// held job). A closed-loop frontend, such as the original Java client
// with its 8 connections, therefore slows to the fleet's pace by itself.
// Held jobs are placed in arrival order: only the oldest places rounds
// unless it is stuck (holdBook).
//
// Held calls are bounded: at most Config.MaxHeldJobs at once, each at
// most Config.MaxHold (below the original client's 60 s socket timeout,
// past which it would lose a connection). Past either bound a job none of
// whose tasks has launched is refused, whole and synchronously, with an
// IncompleteRequestException that says the fleet is saturated and
// suggests "retry after <d>" (<d> is how long recently placed held jobs
// waited); its placed reservations are cancelled, reservations accepted
// after the refusal are cancelled as they are acknowledged, and the
// request is forgotten, so nothing is reported to the frontend later as
// failed for it and no node monitor's getTask can launch one of its tasks.
//
// A job some of whose tasks launched while it was held (its first
// reservations reached the front of a queue) is never refused: a
// frontend told "refused" would resubmit the whole job and run those
// tasks twice, while telling it "accepted" keeps every task's fate in the
// task messages it already receives. At the bound its call is answered
// as accepted, and its unplaced remainder follows the path of a call that
// was not held: re-placed elsewhere for up to maxReprobes rounds, then
// reported failed to the frontend, task by task. The refuse-or-answer
// decision and getTask's launch take the same lock, so a task launches
// only if its job was not, at that moment, refused.
//
// A node monitor that cannot be reached (not a refusal) is handled as for
// a call that is not held: marked failed for the job and its reservations re-placed
// elsewhere; if that runs out of nodes while the call is held and no task
// has launched, the job is refused synchronously with the cause instead
// of being reported failed later.
//
// The scheduler's Thrift server does not cancel a call when its client
// disconnects, so a held call whose client left runs to one of the
// bounds; its job is then refused (or answered) like any other.
//
// With Config.MaxQueueWait, a job may also be held before any of its
// reservations is placed, while its expected queue wait is too long
// (admission.go). Such a call shares the bounds, the counts, the
// capacity signal (holdBook.queue) and the refusal's form with the ones
// above; having placed nothing, it is always refused whole.

// Defaults for holding submitJob calls.
const (
	// DefaultMaxHeldJobs is the command line's default for how many
	// submitJob calls may be held at once.
	DefaultMaxHeldJobs = 1024
	// DefaultMaxHold is the longest a call is held: half the original
	// Java client's 60 s socket timeout.
	DefaultMaxHold = 30 * time.Second

	// holdRetryMin and holdRetryMax bound the wait between a held job's
	// rounds of re-placing refused reservations; it doubles from the one
	// to the other, with jitter.
	holdRetryMin = 10 * time.Millisecond
	holdRetryMax = 500 * time.Millisecond
	// holdMinGap is the least time between two rounds of one job, even
	// when capacity frees sooner.
	holdMinGap = 2 * time.Millisecond
	// retryAfterMin and retryAfterDefault shape the refusal's suggested
	// delay: how long recently placed held jobs waited, at least
	// retryAfterMin, or retryAfterDefault before any was placed.
	retryAfterMin     = 100 * time.Millisecond
	retryAfterDefault = time.Second
)

// HoldBuckets are the upper bounds, in seconds, of HoldStats.Seconds.
var HoldBuckets = []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// HoldStats counts held submitJob calls.
type HoldStats struct {
	// Held is the number of calls held now: their reservations were
	// refused as full and are being placed again.
	Held int
	// Holds counts calls that were held; Refused the jobs refused for
	// saturation past a bound; Released the partly launched jobs whose
	// call was answered at a bound with their remainder handed to
	// re-placement; Rounds the rounds of re-placing refused reservations.
	Holds, Refused, Released, Rounds uint64
	// AdmissionHolds counts jobs whose expected queue wait exceeded
	// Config.MaxQueueWait at submission (admission.go), held or, past
	// MaxHeldJobs, refused at once; AdmissionRefused those of them that
	// were refused. They are also counted in Holds (if held) and Refused.
	AdmissionHolds, AdmissionRefused uint64
	// LoadReports counts node monitors' load reports taken for admission.
	LoadReports uint64
	// Seconds is how long held calls were held, from submission to
	// answer, over HoldBuckets.
	Seconds metrics.Distribution
}

// holdingLocked reports whether r's submitJob call is still held.
func holdingLocked(r *request) bool { return r.hold != nil && r.hold.waiting }

// countHeldLocked records probes sent for r while its call is held, so that the
// call waits for their answers; it reports whether it did. Call it after r.AddProbes(probes).
func countHeldLocked(r *request, probes []placement.Probe) bool {
	if !holdingLocked(r) {
		return false
	}
	r.hold.pending += len(probes)
	return true
}

// enqueueAs sends probes, counted (see countHeldLocked) or not.
func (s *Scheduler) enqueueAs(r *request, probes []placement.Probe, counted bool) {
	s.enqueueOffers(r, probes, nil, counted)
}

// enqueueOffers is enqueueAs with probes[k] carrying the tasks offers[k]
// lists, if offers is not nil (offer.go).
func (s *Scheduler) enqueueOffers(r *request, probes []placement.Probe, offers [][]int, counted bool) {
	s.sendReservations(appendBatches(nil, r, probes, offers, counted))
}

// enqueuedLocked handles the answer to an enqueue of p for r when r has a held
// call, and reports whether it did; if not, the caller takes the path of
// an unheld job. cancel is true when p's reservations were accepted for a
// job already refused and must be withdrawn.
func (s *Scheduler) enqueuedLocked(r *request, p placement.Probe, counted, accepted bool, err error) (handled, cancel bool) {
	h := r.hold
	if h == nil {
		return false, false
	}
	if counted {
		h.pending--
		h.signal()
	}
	live := s.book.live(r)
	switch {
	case err == nil && accepted:
		if h.waiting {
			h.progress = time.Now()
		}
		return true, !live && h.withdrawn
	case err == nil && live && h.waiting:
		// Refused as full: the held call places them again.
		s.stats.EnqueueFailures++
		r.DropNode(p.Node.Addr)
		h.signal()
		return true, false
	}
	return false, false
}

// failHeldLocked takes over a held job whose re-placement gave up, if none of
// its tasks launched: its call is refused with cause rather than its
// tasks reported failed later. The caller has already forgotten r.
func (s *Scheduler) failHeldLocked(r *request, cause error) bool {
	if !holdingLocked(r) || r.Unlaunched() < len(r.specs) {
		return false
	}
	r.hold.fail = cause
	r.hold.signal()
	return true
}

// heldGetTaskLocked is getTask's signal to held calls: r's node monitor took a
// reservation off its queue, so the longest-waiting held job gets a
// round soon; and if r has now launched every task its own call is
// answered. r is nil when the request is unknown.
func (s *Scheduler) heldGetTaskLocked(r *request) {
	if r != nil && holdingLocked(r) && r.Launched() {
		r.hold.signal()
	}
	s.gate.hold.signalHead()
	s.gate.hold.wakeOldest()
}

// holdStep is what one look at a held job decided.
type holdStep struct {
	done    bool
	err     error
	send    []placement.Probe // a round of re-placed reservations, counted
	cancel  []placement.Probe // reservations to withdraw
	release bool              // hand the unplaced remainder to reprobe
	next    time.Time         // when to look again, if no signal comes first
}

// await holds r's submitJob call until its reservations are placed or a
// bound is passed, and returns the call's answer.
func (s *Scheduler) await(ctx context.Context, r *request) error {
	h := r.hold
	limit := time.NewTimer(s.cfg.MaxHold)
	defer limit.Stop()
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	defer retry.Stop()
	done := ctx.Done()
	for {
		s.mu.Lock()
		st := s.stepHeldLocked(r, time.Now())
		s.mu.Unlock()
		for _, p := range st.cancel {
			go s.cancel(r.ID, p.Node.Addr)
		}
		if len(st.send) > 0 {
			s.enqueueAs(r, st.send, true)
		}
		if st.release {
			s.mu.Lock()
			if s.book.live(r) {
				s.reprobeAndUnlock(r, r.Uncovered())
			} else {
				s.mu.Unlock()
			}
		}
		if st.done {
			return st.err
		}
		var retryC <-chan time.Time
		if !st.next.IsZero() {
			retry.Reset(max(time.Until(st.next), 0))
			retryC = retry.C
		}
		select {
		case <-h.wake:
		case <-retryC:
		case <-limit.C:
		case <-done:
			done = nil
			s.mu.Lock()
			h.gone = true
			s.mu.Unlock()
		}
		if retryC != nil && !retry.Stop() {
			select {
			case <-retry.C:
			default:
			}
		}
	}
}

// stepHeldLocked looks at r's held call at now and decides: answer it, send a
// round of reservations, or wait.
func (s *Scheduler) stepHeldLocked(r *request, now time.Time) holdStep {
	h := r.hold
	if r.Offered() > 0 && (h.fail != nil || !s.book.live(r)) {
		// A task offered may yet launch: refuse the job, or accept it,
		// once every offer is answered (offerDoneLocked signals).
		return holdStep{}
	}
	if h.fail != nil && r.Unlaunched() < len(r.specs) {
		// Re-placement gave up after an offered task launched: the job
		// is accepted and its other tasks reported failed.
		s.gate.hold.finish(r.hold, now, true)
		go s.failUnlaunched(r, h.fail)
		return holdStep{done: true}
	}
	if h.fail != nil {
		h.withdrawn = true
		s.gate.hold.finish(r.hold, now, false)
		cancel := r.Outstanding()
		s.stats.Cancellations += uint64(len(cancel))
		return holdStep{done: true, err: refused(refusal.Unplaceable, 0, "app %q: %v", r.app, h.fail), cancel: cancel}
	}
	if !s.book.live(r) || r.Launched() {
		// Every task launched, or re-placement gave up after some had
		// and reported the rest failed: the job was accepted.
		s.gate.hold.finish(r.hold, now, true)
		return holdStep{done: true}
	}
	if h.pending > 0 {
		return holdStep{} // answers are on their way
	}
	uncovered := r.Uncovered()
	if len(uncovered) == 0 {
		s.gate.hold.finish(r.hold, now, true)
		return holdStep{done: true}
	}
	// Saturated: reservations were refused as full and none is in flight.
	var over string
	if !h.held {
		if over = s.gate.hold.hold(h); over == "" {
			h.progress = now
			s.gate.hold.order(h)
		}
	}
	if over == "" && (h.gone || now.Sub(h.start) >= s.cfg.MaxHold) {
		over = fmt.Sprintf("the call was held %v, the most allowed (--max-hold)", now.Sub(h.start).Round(time.Millisecond))
	}
	if over == "" && s.gate.draining.Load() {
		over = shuttingDown
	}
	if over != "" {
		after := s.gate.hold.retryAfter()
		return s.endHeldLocked(r, now, true, refused(saturatedKind(over), after, "fleet saturated: node monitors refused request %q's reservations as full and %s; retry after %v",
			r.ID, over, after))
	}
	if now.Before(h.next) {
		s.gate.hold.queueSignal(h)
		return holdStep{next: h.next}
	}
	if !s.gate.hold.mayPlace(h, now) {
		// An older held call goes first; look again when it could be
		// stuck, unless signalled sooner (holdBook).
		s.gate.hold.queueSignal(h)
		return holdStep{next: now.Add(holdHeadStuck)}
	}
	// Node monitors that hold none of the job's reservations first: a
	// refusal drops every reservation the job has on that node.
	probes, _, err := s.pipe.place(r, placeOptions{tasks: uncovered, ratio: r.ratio, holders: holdersLast})
	if err != nil {
		return s.endHeldLocked(r, now, false, refused(refusal.Unplaceable, 0, "app %q: %v", r.app, err))
	}
	r.AddProbes(probes)
	h.pending += len(probes)
	h.last = now
	jitter := time.Duration(s.place.int63n(int64(h.backoff)/2 + 1))
	h.next = now.Add(h.backoff/2 + jitter)
	h.backoff = min(2*h.backoff, holdRetryMax)
	s.gate.hold.stats.Rounds++
	return holdStep{send: probes}
}

// endHeldLocked answers r's held call at a bound: refused with err if none of
// its tasks launched, else accepted with its remainder released to
// re-placement. saturated says whether err is a saturation refusal.
func (s *Scheduler) endHeldLocked(r *request, now time.Time, saturated bool, err error) holdStep {
	h := r.hold
	if r.Offered() > 0 {
		// A task offered may yet launch: decide once it is answered.
		return holdStep{}
	}
	if r.Unlaunched() < len(r.specs) {
		s.gate.hold.finish(r.hold, now, false)
		s.gate.hold.stats.Released++
		return holdStep{done: true, release: true}
	}
	s.book.remove(r)
	s.relax.remove(r)
	h.withdrawn = true
	s.gate.hold.finish(r.hold, now, false)
	if saturated {
		s.gate.hold.stats.Refused++
	}
	cancel := r.Outstanding()
	s.stats.Cancellations += uint64(len(cancel))
	s.log.Debug().Str("request", r.ID).Err(err).Msg("refused a held job")
	return holdStep{done: true, err: err, cancel: cancel}
}
