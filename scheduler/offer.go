package scheduler

import (
	"context"
	"errors"
	"time"

	"github.com/sparrowfleet/sparrow/core/placement"
	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// Offers (on unless Config.NoOffers): a new job's first reservations
// carry its tasks, one each, or several to a node monitor with free slots
// (below) (InternalService.enqueueTaskReservationsWithOffer). A node monitor with a
// slot free at once launches the offered task without the getTask round
// trip, which on an idle fleet is two of a task's five hops from submit
// to launch; a busy one declines, and the task goes to whichever
// reservation asks first, as late binding would have sent it.
//
// An offered task is handed to no other node monitor until its answer
// arrives (placement.Request.Offer). A getTask that finds only offered
// tasks left waits for their answers (awaitOffersLocked), rather than answer
// empty and spend a reservation the task may yet need. An offer whose call
// failed after it was sent may have launched: it is counted launched on
// that node monitor, as a task whose getTask answer was lost is, so no
// task can run twice; if the node monitor is lost, the task is reported
// lost with it.

// Backup reservations: when the offers cover every task of a job, the
// job's other reservations (the rest of its d·m) are kept back and sent
// only if an offer is declined. On a fleet with free slots every offer is
// taken, and those reservations would only wake node monitors to ask for
// tasks already launched, or be cancelled: four calls at the scheduler
// and four at node monitors per four-task job, and on a two-core machine
// the CPU the offered node monitors need to launch at once. A declined
// offer queues its reservation where it was declined, and the backups go
// out then, a round trip later than they would have: under load the task
// still has d·m reservations to choose among, one round trip behind.

// Several tasks per call: a node monitor answers an offer with how many
// of its slots are left free, and the next offers to it carry that many of
// a job's tasks in one call (up to Config.OfferBatch), each with a
// reservation of its own. On a fleet with free slots a job's tasks then
// launch in a call or two instead of one per task, and their ends come
// back together. A node monitor that has not said is offered one task per
// call; one that has fewer free slots than it said launches what fits and
// declines the rest, whose reservations queue there (and the job's backups
// go out) as for any declined offer.

// splitBackupsLocked returns the probes to send now and the backups to keep
// back: if offers (planOffersLocked) will cover each of r's tasks, the
// first probes that can carry them, each as many as its node monitor
// takes at once (offerBook.batch), are sent, and the rest wait, shrunk by
// the reservations those probes gained so that r keeps as many in all.
// Otherwise every probe is sent. Call it before r.AddProbes.
func (s *Scheduler) splitBackupsLocked(r *request, probes []placement.Probe) (now, backup []placement.Probe) {
	m := r.Unlaunched()
	if s.cfg.NoOffers || r.loc != nil || r.HasConstrained() || len(probes) <= m {
		return probes, nil
	}
	now = make([]placement.Probe, 0, m)
	covered, gained := 0, 0
	for _, p := range probes {
		if covered < m && s.offers.offersTo(p.Node.Addr, time.Now) {
			k := min(s.offers.batch(p.Node.Addr, s.cfg.OfferBatch), m-covered)
			if k > p.Count {
				gained += k - p.Count
				p.Count = k
			}
			covered += min(p.Count, m-covered)
			now = append(now, p)
		} else {
			backup = append(backup, p)
		}
	}
	if covered < m {
		return probes, nil
	}
	return now, shrinkProbes(backup, gained)
}

// shrinkProbes removes n reservations from the end of probes, dropping
// probes left with none.
func shrinkProbes(probes []placement.Probe, n int) []placement.Probe {
	for n > 0 && len(probes) > 0 {
		last := &probes[len(probes)-1]
		cut := min(n, last.Count)
		last.Count -= cut
		n -= cut
		if last.Count == 0 {
			probes = probes[:len(probes)-1]
		}
	}
	return probes
}

// sendBackupsLocked sends r's backup reservations, if any are kept back and r
// is still placing.
func (s *Scheduler) sendBackupsLocked(r *request) {
	b := r.backup
	if b == nil || !s.book.live(r) {
		return
	}
	r.backup = nil
	r.AddProbes(b)
	s.gate.adm.admitted(b)
	s.offers.backups += uint64(len(b))
	s.enqueueAs(r, b, countHeldLocked(r, b))
}

// offerWait bounds how long a getTask waits for offers to be answered. An
// answer takes a round trip. The wait must end well inside the node
// monitor's getTask timeout (1 s by default): an answer it no longer reads
// would hand out a task that then never runs. An offer in doubt
// (resolveOffer) is not waited for at all.
const offerWait = 250 * time.Millisecond

// planOffersLocked sets aside tasks to send with the probes' reservations:
// for each probe in turn, as many as its node monitor takes at once
// (offerBook.batch) and it has reservations, until every task is offered.
// offers[k] lists probe k's; nil means no probe has one. Jobs with
// constrained or relaxable tasks make no offers, nor do node monitors that
// lack the method. Call it after r.AddProbes(probes).
func (s *Scheduler) planOffersLocked(r *request, probes []placement.Probe) [][]int {
	if s.cfg.NoOffers || r.loc != nil || r.HasConstrained() {
		return nil
	}
	var offers [][]int
	// The probes are in node order; starting at a random one keeps the
	// offers of jobs placed on a mostly idle fleet from all going to the
	// same first few node monitors.
	start := 0
	if len(probes) > 1 {
		start = int(s.place.int63n(int64(len(probes))))
	}
placing:
	for j := range probes {
		k := (start + j) % len(probes)
		p := probes[k]
		if !s.offers.offersTo(p.Node.Addr, time.Now) {
			continue
		}
		n := min(p.Count, s.offers.batch(p.Node.Addr, s.cfg.OfferBatch))
		for range n {
			i, ok := r.Offer(p.Node.Addr)
			if !ok {
				break placing
			}
			if offers == nil {
				offers = make([][]int, len(probes))
			}
			offers[k] = append(offers[k], i)
			if b := s.offers.bootOf(p.Node.Addr); b != "" {
				if r.offerBoot == nil {
					r.offerBoot = make(map[int]string)
				}
				r.offerBoot[i] = b
			}
			s.offers.made++
			s.offers.offered(p.Node.Addr, 1)
		}
	}
	if offers != nil {
		r.short.offerLeft = r.Unlaunched() - r.Offered()
	}
	return offers
}

// guidedOfferPause is how long a node monitor that declined an offer
// because a coordinator guides its queue weights gets plain reservations
// before it is offered tasks again. Guidance lasts while a coordinator
// runs, so offers would only be declined, each costing the job's backup
// reservations a round trip; a pause, not forever, so that a node monitor
// whose coordinator is gone takes offers again.
const guidedOfferPause = 30 * time.Second

// offerAnswer is what a node monitor answered an offer call: whether it
// accepted the reservations, which offered tasks it launched (in the
// call's order), whether it declined because a coordinator guides its
// queues, its start nonce, and its free slots left (-1: not said).
type offerAnswer struct {
	accepted bool
	launched []bool
	guided   bool
	boot     string
	free     int
}

// offerCall sends msg with r's tasks offers offered, and returns the
// answer. An answer without moreLaunched (a node monitor that knows only
// one offer per call) declines every task after the first.
func (s *Scheduler) offerCall(r *request, msg *sparrowrpc.TEnqueueTaskReservationsRequest, addr string, offers []int) (offerAnswer, error) {
	specs := make([]*sparrowrpc.TTaskLaunchSpec, len(offers))
	for k, i := range offers {
		spec := r.specs[i]
		specs[k] = &sparrowrpc.TTaskLaunchSpec{TaskId: spec.TaskId, Message: spec.Message}
		s.short.offer(specs[k], r.short)
	}
	ans := offerAnswer{launched: make([]bool, len(offers)), free: -1}
	rep, err := s.peers.nodes.EnqueueTaskReservationsWithOffer(context.Background(), addr, msg, specs)
	if err != nil {
		return ans, err
	}
	ans.accepted, ans.boot = rep.GetAccepted(), rep.GetBoot()
	if ans.accepted {
		ans.launched[0] = rep.GetLaunched()
		copy(ans.launched[1:], rep.GetMoreLaunched())
	}
	ans.guided = rep.GetGuided() && !ans.launched[0]
	if rep.IsSetFreeSlots() {
		ans.free = int(rep.GetFreeSlots())
	}
	return ans, nil
}

// offersAnsweredLocked settles r's tasks offers, sent to addr, from the
// call's answer or error, and records the node monitor's free slots. It
// reports resend when the node monitor has no such method: the
// reservations must go again without the offers.
func (s *Scheduler) offersAnsweredLocked(r *request, addr string, offers []int, ans offerAnswer, err error) (resend bool) {
	if err == nil && ans.accepted {
		s.offers.setFree(addr, ans.free)
	}
	for k, i := range offers {
		if s.offerAnsweredLocked(r, addr, i, ans.launched[k], err) {
			resend = true
		}
	}
	return resend
}

// offerAnsweredLocked settles offered task offer of r, sent to addr, from the
// call's outcome. It reports resend when the node monitor has no such
// method: the reservations must go again without the offer.
func (s *Scheduler) offerAnsweredLocked(r *request, addr string, offer int, launched bool, err error) (resend bool) {
	var dial *rpc.DialError
	switch {
	case err == nil && launched:
		s.offerTakenLocked(r, addr, offer)
	case err == nil, errors.Is(err, rpc.ErrBusy), errors.As(err, &dial):
		// Declined, or never sent.
		s.offerDeclinedLocked(r, offer)
	case rpc.IsUnknownMethod(err):
		s.offers.caps.MarkLacking(addr, methodOffer)
		s.offerDeclinedLocked(r, offer)
		return true
	case s.offers.caps.Lacks(addr, methodOfferOutcome):
		// Sent, and perhaps launched, and the node monitor cannot be
		// asked: counted launched there.
		s.offerTakenOnLocked(r, addr, offer)
	default:
		// Sent, and perhaps launched: the task stays set aside while the
		// node monitor is asked (resolveOffer).
		s.doubtLocked(r, addr, offer)
	}
	return false
}

// offerTakenLocked records offered task i launched on addr.
func (s *Scheduler) offerTakenLocked(r *request, addr string, i int) {
	r.OfferTaken(addr, i)
	s.offerDoneLocked(r)
	s.offers.taken++
	s.launchedLocked(r, i, addr, 0)
	s.short.handedOut(runningTask{app: r.app, request: r.ID, task: r.specs[i].TaskId}, r.short, s.now())
	for _, p := range s.forgetLaunchedLocked(r) {
		go s.cancel(r.ID, p.Node.Addr)
	}
	s.heldGetTaskLocked(r)
}

// offerTakenOnLocked counts offered task i of r launched on addr when the
// node monitor could not say: if addr is no longer a live member, its loss
// may already have been handled (an offer's call can fail after the
// node's loss was), and nothing else would report the task; so it is
// reported lost at once, as the node's running tasks were.
func (s *Scheduler) offerTakenOnLocked(r *request, addr string, i int) {
	s.offerTakenLocked(r, addr, i)
	if _, live := s.view.Node(addr); live {
		return
	}
	t := runningTask{app: r.app, request: r.ID, task: r.specs[i].TaskId}
	lost := s.running.nodeLost(addr, map[runningTask]struct{}{t: {}})
	if len(lost) > 0 {
		s.log.Warn().Str("node", addr).Str("request", r.ID).Str("task", t.task).
			Msg("offer in doubt on a node monitor no longer live; reported lost")
	}
	s.reportLost(addr, lost)
}

// offerDeclinedLocked returns offered task i to r's tasks to hand out; if r was
// given up meanwhile, the task is reported failed as r's other unlaunched
// tasks were.
func (s *Scheduler) offerDeclinedLocked(r *request, i int) {
	r.OfferDeclined(i)
	s.offerDoneLocked(r)
	s.sendBackupsLocked(r)
	refusing := r.hold != nil && r.hold.fail != nil // no message for a refused job
	if !s.book.live(r) && r.gaveUp != nil && !refusing {
		spec := r.specs[i]
		id := &sparrowrpc.TFullTaskId{TaskId: spec.TaskId, RequestId: r.ID, AppId: r.app, SchedulerAddress: s.self}
		cause := r.gaveUp
		go func() { _ = s.deliver(r.app, id, sparrowrpc.STATUS_TASK_FAILED, []byte(cause.Error())) }()
	}
}

// offerDoneLocked wakes getTask calls and the held call waiting for r's offers
// to be answered.
func (s *Scheduler) offerDoneLocked(r *request) {
	if r.offerWake != nil {
		close(r.offerWake)
		r.offerWake = nil
	}
	if r.hold != nil {
		r.hold.signal()
	}
}

// awaitOffersLocked waits until all of r's offers are answered, r is gone, or
// offerWait passes, so that a getTask never takes a reservation a declined
// task may need, and tasks go out in submission order. An answer takes a
// round trip, and a getTask usually comes a queue wait after its enqueue,
// so this is seldom a wait at all.
func (s *Scheduler) awaitOffersLocked(r *request) {
	var deadline time.Time
	for s.book.live(r) && awaitingLocked(r) > 0 {
		now := time.Now()
		if deadline.IsZero() {
			deadline = now.Add(offerWait)
			if s.offers.waitHook != nil {
				s.offers.waitHook()
			}
		} else if !now.Before(deadline) {
			return
		}
		if r.offerWake == nil {
			r.offerWake = make(chan struct{})
		}
		wake := r.offerWake
		s.mu.Unlock()
		t := time.NewTimer(deadline.Sub(now))
		select {
		case <-wake:
		case <-t.C:
		}
		t.Stop()
		s.mu.Lock()
	}
}

// Offers in doubt: an offer whose call failed after it was sent may have
// been taken. Counting it launched there is safe (it never runs twice),
// but if the node monitor lives and had declined, the task would never
// run and nothing would say so. So the scheduler asks the node monitor
// (InternalService.offerOutcome), whose "no" is final: an offer it has not
// seen yet is declined if it comes. Until the answer, the task stays set
// aside, as an offer awaiting its answer does ("unseen" is believed only
// from the node monitor process the offer was sent to: resolveOffer). If
// the node monitor is lost meanwhile, the task is counted launched there
// and reported lost with its running tasks; if it cannot be asked
// (UNKNOWN_METHOD, or no answer within maxDoubt), the task is counted
// launched there, and reported lost at once if the node monitor is no
// longer a live member (offerTakenOnLocked).

// offerDoubt is one offer in doubt.
type offerDoubt struct {
	r     *request
	offer int
}

// maxDoubt bounds how long a scheduler keeps asking about an offer in
// doubtLocked before it counts the task launched on that node monitor.
const maxDoubt = 30 * time.Second

// doubtRetry is the first pause between questions about an offer in
// doubt; it doubles up to a second.
const doubtRetry = 50 * time.Millisecond

// doubtLocked sets offered task offer of r, sent to addr, aside until the node
// monitor says whether it took it.
func (s *Scheduler) doubtLocked(r *request, addr string, offer int) {
	s.offers.doubt(addr, offerDoubt{r, offer})
	r.doubted++
	go s.resolveOffer(r, addr, offer, doubtRetry, time.Now().Add(maxDoubt))
}

// settleDoubtLocked forgets offer d on addr, which is in doubt.
func (s *Scheduler) settleDoubtLocked(addr string, d offerDoubt) {
	s.offers.settle(addr, d)
	d.r.doubted--
}

// awaitingLocked returns how many of r's offers await an answer that is not in
// doubt.
func awaitingLocked(r *request) int { return r.Offered() - r.doubted }

// resolveOffer asks addr whether it took offered task offer of r, and
// settles the doubt by its answer; on a failed call it asks again after
// wait, until deadline. "Unseen" is trusted only from the process the
// offer was sent to: one whose start nonce equals the one the node
// monitor gave before the offer was sent. A node monitor restarted
// meanwhile cannot know what its previous process did, so then the task is
// counted launched there (and reported lost once the old process is).
func (s *Scheduler) resolveOffer(r *request, addr string, offer int, wait time.Duration, deadline time.Time) {
	ans, err := s.peers.nodes.OfferOutcome(context.Background(), addr, r.ID, r.specs[offer].TaskId)
	s.mu.Lock()
	defer s.mu.Unlock()
	d := offerDoubt{r, offer}
	if !s.offers.inDoubtOn(addr, d) {
		return // settled by NodeLost
	}
	if err == nil && ans == nil {
		err = errors.New("offerOutcome: empty answer")
	}
	switch {
	case err == nil:
		s.settleDoubtLocked(addr, d)
		sentBoot := r.offerBoot[offer]
		delete(r.offerBoot, offer)
		s.offers.setBoot(addr, ans.Boot)
		switch {
		case ans.Outcome == sparrowrpc.OFFER_TAKEN:
			s.offerTakenLocked(r, addr, offer)
		case ans.Outcome == sparrowrpc.OFFER_DECLINED,
			ans.Outcome == sparrowrpc.OFFER_UNSEEN && sentBoot != "" && ans.Boot == sentBoot:
			s.offers.declined++
			s.offerDeclinedLocked(r, offer)
		default:
			s.log.Warn().Str("node", addr).Str("request", r.ID).Str("task", r.specs[offer].TaskId).
				Msg("offer in doubt unseen by a node monitor that may have restarted since; counted launched there")
			s.offerTakenLocked(r, addr, offer)
		}
	case rpc.IsUnknownMethod(err):
		s.offers.caps.MarkLacking(addr, methodOfferOutcome)
		s.settleDoubtLocked(addr, d)
		s.offerTakenOnLocked(r, addr, offer)
	case !time.Now().Before(deadline):
		s.log.Warn().Err(err).Str("node", addr).Str("request", r.ID).Str("task", r.specs[offer].TaskId).
			Msg("offer still in doubt; counted launched on that node monitor")
		s.settleDoubtLocked(addr, d)
		s.offerTakenOnLocked(r, addr, offer)
	default:
		next := min(2*wait, time.Second)
		time.AfterFunc(wait, func() { s.resolveOffer(r, addr, offer, next, deadline) })
	}
}

// settleDoubtsLostLocked counts every offer in doubt on addr, a node monitor
// declared lost, launched there, so that it is reported lost with the
// node's running tasks: it may have started.
func (s *Scheduler) settleDoubtsLostLocked(addr string) {
	for _, d := range s.offers.nodeLost(addr) {
		d.r.doubted--
		s.offerTakenLocked(d.r, addr, d.offer)
	}
}
