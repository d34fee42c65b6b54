package scheduler

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/core/placement"
	"github.com/sparrowfleet/sparrow/core/shortjobs"
	"github.com/sparrowfleet/sparrow/internal/metrics"
	"github.com/sparrowfleet/sparrow/internal/refusal"
	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// DefaultProbeRatio is d when neither the request nor the config sets it.
const DefaultProbeRatio = 2.0

// DefaultNodeLostGrace is how long a scheduler waits, after gossip
// declares a node monitor dead, before it reports the tasks running there
// lost (Config.NodeLostGrace).
const DefaultNodeLostGrace = time.Second

// DefaultOfferBatch is Config.OfferBatch's default: at most this many
// tasks offered to one node monitor in one call. A node monitor's free
// slots bound it first; the bound keeps one large job on an idle fleet
// from landing on a few node monitors' slots when it could spread.
const DefaultOfferBatch = 8

// DefaultReservationTimeout bounds how long a request's reservations may go
// unanswered before more are placed.
const DefaultReservationTimeout = 30 * time.Second

// maxReprobes bounds how many times one request re-places reservations
// after enqueues fail, so that a request cannot loop over a failing fleet.
const maxReprobes = 8

// Config configures a Scheduler.
type Config struct {
	// Address is this scheduler's advertised SchedulerService "host:port".
	// Node monitors send frontend messages there and name it in task ids.
	Address string
	// ProbeRatio is the default d; 0 means DefaultProbeRatio.
	ProbeRatio float64
	// ConstrainedProbeRatio is the default d for jobs with constraints or
	// placement preferences; 0 means ProbeRatio.
	ConstrainedProbeRatio float64
	// NoCancel disables cancelling leftover reservations once a request's
	// tasks have all launched.
	NoCancel bool
	// NoOffers sends every reservation plain, for a getTask to fetch its
	// task, as original Sparrow does. By default a new job's first
	// reservations each carry a task, for an idle node monitor to launch
	// at once (offer.go, which says what that trades).
	NoOffers bool
	// OfferBatch bounds the tasks offered to one node monitor in one call:
	// a node monitor is offered as many of a job's tasks as it said it had
	// free slots in its last answer to an offer (one while it has not
	// said), up to this many, and the job's other reservations shrink by
	// as many, so that its total stays d·m. 0 means DefaultOfferBatch; 1
	// offers one task per call.
	OfferBatch int
	// Seed seeds placement randomness; 0 draws a random seed.
	Seed uint64
	// SteerAfter, when > 0, steers a user's new jobs away from node
	// monitors that have held one of that user's reservations this long
	// without serving any, and gives a request whose reservations have
	// waited this long more on node monitors serving its user (steer.go):
	// under coordinator guidance that gives the user nothing on their
	// machine type, its jobs' tasks would wait there while its own nodes
	// idle. 0 turns it off.
	SteerAfter time.Duration
	// ReservationTimeout is how long a request may wait with unlaunched
	// tasks before it gets extra reservations elsewhere (old ones stay, so
	// no node loses its queue position). 0 means DefaultReservationTimeout;
	// negative disables it.
	ReservationTimeout time.Duration
	// NodeLostGrace is how long the daemon waits, after gossip declares a
	// node monitor dead, before reporting its running tasks lost; a node
	// monitor back by then as the same process (membership.Meta.Boot) was
	// never dead, and its tasks are kept. Its queued reservations are
	// placed elsewhere at once either way. 0 means DefaultNodeLostGrace;
	// negative reports at once.
	NodeLostGrace time.Duration
	// LocalityStale is how long the coordinator's prices guide relaxable
	// tasks after they arrive (locality.go); 0 means DefaultLocalityStale.
	LocalityStale time.Duration
	// LocalityInputBytes is a relaxable task's input size when its
	// request gives none; 0 means DefaultLocalityInputBytes.
	LocalityInputBytes int64
	// MaxHeldJobs bounds the submitJob calls held on a saturated fleet
	// (hold.go); 0 disables holding: submitJob answers once the
	// reservations are on their way, and refused ones are re-placed and
	// at worst reported failed later.
	MaxHeldJobs int
	// MaxHold bounds how long one call is held; 0 means DefaultMaxHold.
	MaxHold time.Duration
	// MaxQueueWait, when > 0, holds a job at submission while the
	// expected queue wait of its best candidates exceeds it
	// (admission.go); 0 disables admission by expected wait.
	MaxQueueWait time.Duration
	// LoadStale is how long a node monitor's load report counts; 0 means
	// DefaultLoadStale.
	LoadStale time.Duration
	// FrontendMaxInflight bounds the messages in flight to one frontend
	// (frontendlink.go); a message past it waits up to the call timeout
	// for a slot and is then dropped and counted. 0 means
	// DefaultFrontendMaxInflight.
	FrontendMaxInflight int
	// FrontendDeadAfter is how long a frontend may stay unreachable
	// before its apps are deregistered; 0 means
	// DefaultFrontendDeadAfter, negative never deregisters.
	FrontendDeadAfter time.Duration
	// ShortJobs, if set, runs the long-task-aware policy (shortjobs.go):
	// jobs are classed short or long, short jobs steered to node monitors
	// advertising no long work (the view must be a LongWorkView for
	// that), and reservations and getTask answers carry the policy's
	// fields. Nil keeps plain Sparrow.
	ShortJobs *shortjobs.Config
	// PullAfter, when > 0 with ShortJobs, answers pulls (pull.go): a
	// short job that still has unlaunched tasks this long after
	// submission joins the backlog, whose least remaining work the daemon
	// gossips, and a node monitor's pull (a getTask whose request id is
	// shortjobs.PullRequestID) gets a task of the backlogged job with the
	// least remaining work among those with a task the node may run, as a
	// reservation there would. 0 answers no pull.
	PullAfter time.Duration
	// RPC bounds the scheduler's outgoing calls.
	RPC rpc.Config
	Log zerolog.Logger
}

// Scheduler implements SchedulerService and GetTaskService. It wires the
// parts (doc.go) and makes the decisions that need more than one of them.
//
// Safe for concurrent use. The wiring is fixed by New and read without
// mu. mu serialises every call to a part and every access to a request's
// state; no RPC is made while it is held. A method whose name ends in
// Locked runs with mu held and returns with it held (admitLocked and
// awaitOffersLocked release it while they wait); one ending in AndUnlock
// runs with mu held and releases it; every other method takes mu itself
// if it needs it.
type Scheduler struct {
	wiring

	mu      sync.Mutex
	place   placer            // seeded randomness for placement and jitter
	pipe    placementPipeline // every placement decision's stages (pipeline.go)
	book    requestBook       // the request book (requests.go)
	running runningBook       // lost-node bookkeeping and fetch memory (running.go, fetch.go)
	offers  offerBook         // offers and offers in doubt (offerbook.go)
	relax   relaxer           // locality relaxation (relaxer.go)
	gate    gate              // holds, admission by expected wait and the drain (gate.go)
	front   frontendBook      // frontend links (frontendbook.go)
	steer   steerBook         // steering by who serves each user (steer.go)
	short   *shortPolicy      // the long-task-aware policy, nil when off (shortjobs.go)
	pull    *pullBook         // the short backlog answering pulls, nil when off (pull.go)
	stats   Stats             // the counts of the decisions made here

	// frontSend sends messages to frontends (frontendbatch.go), and
	// workSend jobs' remaining work to node monitors (workrefresh.go);
	// each has its own lock.
	frontSend *frontendSender
	workSend  *workRefresher
}

// wiring is what a Scheduler is given: its config, its own address, the
// view of live node monitors, its log, its clock and its peers. New sets
// it and nothing changes it once the scheduler serves (tests replace the
// clock and the log before), so it is read without a lock; the view and
// the peers are safe for concurrent use.
type wiring struct {
	cfg   Config
	self  *sparrowrpc.THostPort
	view  NodeView
	log   zerolog.Logger
	now   func() time.Time // the clock; tests replace it
	peers peers            // calls to node monitors and frontends (peers.go)
}

// placer is the scheduler's seeded randomness: where reservations go,
// and jitter. It has no lock of its own: it is not safe for concurrent
// use, and its owner serialises every call.
type placer struct {
	rng     *mrand.Rand
	sampler placement.Sampler
}

// int63n returns a uniform number in [0, n); n must be positive.
func (p *placer) int63n(n int64) int64 { return p.rng.Int64N(n) }

// Stats counts what a scheduler has done; read with Stats().
type Stats struct {
	JobsSubmitted  uint64
	TasksSubmitted uint64
	TasksLaunched  uint64
	// LaunchDelaySeconds sums, over the launches counted in
	// TasksLaunched, each task's scheduling delay: from its job's
	// submission to this scheduler to the task's hand-out.
	LaunchDelaySeconds float64
	// LaunchDelay is the same delays' distribution over DelayBuckets.
	LaunchDelay metrics.Distribution
	// ResponseSeconds is the distribution, over ResponseBuckets, of the
	// tracked tasks' response: from their job's submission here to their
	// node monitor's finished report. Tasks reported lost, and launches
	// past the tracking bound (Untracked), are not in it.
	ResponseSeconds metrics.Distribution
	EmptyGetTasks   uint64
	Reservations    uint64
	EnqueueFailures uint64
	// EnqueueBusy counts enqueues put off because every connection of
	// the scheduler's own pool to the node was in use; they are sent
	// again, not counted as failures.
	EnqueueBusy   uint64
	Cancellations uint64
	Reprobes      uint64 // rounds of extra reservations placed
	// Steered counts reservations added on node monitors serving a
	// request's user while its others sat elsewhere (Config.SteerAfter).
	Steered uint64
	// SweepsSaturated counts requests past their reservation timeout
	// given no extra reservations because the fleet was saturated.
	SweepsSaturated uint64
	TasksLost       uint64 // running tasks reported lost with their node
	LateDropped     uint64 // messages about tasks already reported lost
	Untracked       uint64 // launches not tracked: the tracking bound was hit
	// OffersMade counts tasks offered with reservations; OffersTaken
	// those launched at once by the node monitor (or whose answer was
	// lost after sending and counted launched there). OffersInDoubt
	// counts offers whose calls failed after they were sent, and
	// DoubtsDeclined those the node monitor then said it had not taken.
	OffersMade, OffersTaken       uint64
	OffersInDoubt, DoubtsDeclined uint64
	// FetchesAskedAgain counts fetchTask calls asking again about a fetch
	// already answered (the node monitor did not get the answer).
	FetchesAskedAgain uint64
	// BackupsSent counts backup reservations kept back while a job's
	// every task was offered and sent when an offer was declined; those
	// never sent are not counted anywhere.
	BackupsSent uint64
	// StickyFetches counts getTask calls, under the long-task-aware
	// policy, from a node monitor holding no reservation of the request
	// (a freed slot asking its job for another task).
	StickyFetches uint64
	// OverrunLong counts short jobs that stated no estimate taken as
	// long once a task of theirs ran for the cutoff
	// (shortjobs.Config.Overrun), and OverrunDeclined the getTask calls
	// from the short-only share such a job then answered with no task.
	OverrunLong, OverrunDeclined uint64
	// WorkUpdatesSent and WorkUpdatesFailed count the jobs' remaining-work
	// updates delivered to node monitors holding their reservations
	// (shortjobs.Config.WorkRefresh) and those dropped because their call
	// failed or the node monitor lacks the method; WorkUpdateCalls counts
	// the calls that carried them.
	WorkUpdatesSent, WorkUpdatesFailed, WorkUpdateCalls uint64
	// PullsAnswered counts pulls answered (Config.PullAfter), and
	// PulledTasks those that got a task.
	PullsAnswered, PulledTasks uint64
	ActiveRequests             int
	RunningTracked             int
	// Locality counts preference relaxation and launch locality.
	Locality LocalityStats
	// Hold counts submitJob calls held on a saturated fleet.
	Hold HoldStats
	// Frontend counts messages to frontends, dropped ones by reason.
	Frontend FrontendStats
}

// New returns a Scheduler that samples node monitors from view and calls
// them, and frontends, over Thrift.
func New(cfg Config, view NodeView) (*Scheduler, error) {
	return newWith(cfg, view, nil, nil)
}

// newWith is New calling node monitors through nodes and frontends
// through fronts; nil means over Thrift.
func newWith(cfg Config, view NodeView, nodes NodeMonitors, fronts Frontends) (*Scheduler, error) {
	if cfg.ProbeRatio == 0 {
		cfg.ProbeRatio = DefaultProbeRatio
	}
	if cfg.NodeLostGrace == 0 {
		cfg.NodeLostGrace = DefaultNodeLostGrace
	}
	if cfg.OfferBatch == 0 {
		cfg.OfferBatch = DefaultOfferBatch
	}
	if cfg.OfferBatch < 0 {
		return nil, fmt.Errorf("offer batch %d: want at least 1 (0: the default, %d)", cfg.OfferBatch, DefaultOfferBatch)
	}
	if cfg.ReservationTimeout == 0 {
		cfg.ReservationTimeout = DefaultReservationTimeout
	}
	if cfg.LocalityStale <= 0 {
		cfg.LocalityStale = DefaultLocalityStale
	}
	if cfg.LocalityInputBytes <= 0 {
		cfg.LocalityInputBytes = DefaultLocalityInputBytes
	}
	if cfg.MaxHold <= 0 {
		cfg.MaxHold = DefaultMaxHold
	}
	if cfg.LoadStale <= 0 {
		cfg.LoadStale = DefaultLoadStale
	}
	if err := placement.CheckProbeRatio(cfg.ProbeRatio); err != nil {
		return nil, fmt.Errorf("default %w", err)
	}
	if cfg.ConstrainedProbeRatio == 0 {
		cfg.ConstrainedProbeRatio = cfg.ProbeRatio
	}
	if err := placement.CheckProbeRatio(cfg.ConstrainedProbeRatio); err != nil {
		return nil, fmt.Errorf("default constrained %w", err)
	}
	self, err := rpc.ParseHostPort(cfg.Address)
	if err != nil {
		return nil, fmt.Errorf("scheduler address: %w", err)
	}
	short, err := newShortPolicy(cfg.ShortJobs)
	if err != nil {
		return nil, fmt.Errorf("scheduler: %w", err)
	}
	seed := cfg.Seed
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("seed randomness: %w", err)
	}
	if seed == 0 {
		seed = binary.LittleEndian.Uint64(b[:8])
	}
	if cfg.RPC.DialLog == nil {
		cfg.RPC.DialLog = &cfg.Log
	}
	if nodes == nil {
		nodes = newThriftNodes(cfg.RPC)
	}
	if fronts == nil {
		fronts = newThriftFrontends(cfg.RPC)
	}
	s := &Scheduler{
		wiring: wiring{
			cfg:   cfg,
			self:  self,
			view:  view,
			log:   cfg.Log.With().Str("component", "scheduler").Logger(),
			now:   time.Now,
			peers: peers{nodes: nodes, fronts: fronts},
		},
		place: placer{rng: mrand.New(mrand.NewPCG(seed, seed^0x9e3779b97f4a7c15))},
		book:  newRequestBook(hex.EncodeToString(b[8:14])),
		relax: newRelaxer(cfg.LocalityStale),
		steer: newSteerBook(cfg.SteerAfter),
		gate: gate{
			hold: holdBook{maxHeld: cfg.MaxHeldJobs, maxHold: cfg.MaxHold},
			adm:  admissionBook{maxWait: cfg.MaxQueueWait, stale: cfg.LoadStale, share: 1 / cfg.ProbeRatio},
		},
		short: short,
		pull:  newPullBook(cfg.PullAfter, short),
	}
	s.frontSend = newFrontendSender(fronts)
	s.workSend = newWorkRefresher(nodes, &s.log)
	s.pipe = placementPipeline{view: view, short: short, steer: &s.steer, rand: &s.place}
	s.front = newFrontendBook(cfg.FrontendMaxInflight, cfg.FrontendDeadAfter, func(d time.Duration) time.Duration {
		if d <= 0 {
			return 0
		}
		return time.Duration(s.place.int63n(int64(d))) // under s.mu, as every call of the book
	})
	return s, nil
}

// Close sends the frontend messages and remaining-work updates queued,
// then releases the scheduler's connections.
func (s *Scheduler) Close() {
	s.frontSend.wait()
	s.workSend.close()
	s.peers.nodes.Close()
	s.peers.fronts.Close()
}

// Stats returns a snapshot of the scheduler's counters.
func (s *Scheduler) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.LaunchDelay, st.ResponseSeconds = s.stats.LaunchDelay.Clone(), s.stats.ResponseSeconds.Clone()
	st.ActiveRequests = s.book.len()
	if s.pull != nil {
		st.PullsAnswered, st.PulledTasks = s.pull.answered, s.pull.pulled
	}
	s.running.statsInto(&st)
	s.offers.statsInto(&st)
	s.workSend.statsInto(&st)
	st.Locality = s.relax.snapshot(s.now())
	st.Hold = s.gate.snapshot()
	st.Frontend = s.front.snapshot()
	return st
}

// refused is a refusal of kind, with a suggested retry delay (0: none)
// and a message, from the table shared with the client (internal/refusal).
func refused(kind refusal.Kind, retryAfter time.Duration, format string, args ...any) error {
	return refusal.New(kind, retryAfter, format, args...)
}

// SubmitJob implements SchedulerService. It validates the request, places
// ceil(d·m) reservations and returns once they are on their way, or, with
// Config.MaxHeldJobs > 0, once node monitors have accepted them (a
// saturated fleet holds the call: hold.go); tasks are then handed out by
// GetTask. A bad request is refused whole with an
// IncompleteRequestException naming the fault, and so is a job the
// saturated fleet could not place within the hold's bounds. With
// Config.MaxQueueWait it is first held, unplaced, while the expected
// queue wait of its candidates is too long (admission.go).
func (s *Scheduler) SubmitJob(ctx context.Context, req *sparrowrpc.TSchedulingRequest) error {
	job, err := ParseRequest(req, Ratios{Default: s.cfg.ProbeRatio, Constrained: s.cfg.ConstrainedProbeRatio})
	if err != nil {
		s.log.Info().Err(err).Msg("refused scheduling request")
		return refused(refusal.Invalid, 0, "%v", err)
	}
	if len(job.Tasks) == 0 {
		return nil
	}
	candidates, err := s.pipe.feasible(job.App, job.Constraints)
	if err != nil {
		return err
	}

	if s.gate.draining.Load() {
		return drainRefusal()
	}
	s.mu.Lock()
	if candidates, err = s.admitLocked(ctx, job.App, job.Constraints, candidates, len(job.Tasks)); err != nil {
		s.mu.Unlock()
		return err
	}
	if s.gate.draining.Load() {
		s.mu.Unlock()
		return drainRefusal()
	}
	if job.FrontendAddress != "" {
		if err := s.front.jobs.room(); err != nil {
			s.mu.Unlock()
			return refused(refusal.Saturated, time.Second, "app %q: %v; retry after 1s", job.App, err)
		}
	}
	id, err := s.book.newID(job.RequestID)
	if err != nil {
		s.mu.Unlock()
		return refused(refusal.Invalid, 0, "%v", err)
	}
	sub, err := s.submitLocked(job, req.GetTaskSeconds(), id, candidates)
	s.mu.Unlock()
	if err != nil {
		return err
	}

	s.log.Debug().Str("request", id).Str("app", job.App).Int("tasks", len(job.Tasks)).
		Int("nodes", len(sub.sends)).Msg("job submitted")
	if r := sub.r; r.hold != nil {
		// The held call waits for the node monitors' answers anyway: the
		// last batch is sent from this goroutine, sparing a goroutine's
		// start and hand-over per job.
		if n := len(sub.sends); n > 0 {
			s.sendReservations(sub.sends[:n-1])
			b := sub.sends[n-1]
			s.enqueueOne(b.r, b.probe, b.counted, b.offers)
		}
		err := s.await(ctx, r)
		if err != nil && job.FrontendAddress != "" {
			// Refused whole: none of its tasks will have a message.
			s.mu.Lock()
			s.front.jobs.withdraw(job.App, id)
			s.mu.Unlock()
		}
		return err
	}
	s.sendReservations(sub.sends)
	return nil
}

// submission is SubmitJob's decision: the request it accepted and the
// reservations to send for it.
type submission struct {
	r     *request
	sends []reservationBatch
}

// submitLocked decides the placement of job, accepted as request id, whose
// request states taskSeconds per task (0: none), on candidates (the
// pipeline's feasible node monitors, as admission last looked at them):
// it records the request and returns what is to be sent, or the refusal
// of a job that cannot be placed.
func (s *Scheduler) submitLocked(job Job, taskSeconds float64, id string, candidates []placement.Node) (submission, error) {
	now := s.now()
	r := &request{
		Request: placement.NewRequest(id, job.Tasks),
		app:     job.App, cons: job.Constraints, user: job.User, specs: job.Specs, ratio: job.ProbeRatio,
		submitted: now,
		short:     s.short.classify(taskSeconds, job.App, len(job.Tasks)),
	}
	probes, _, err := s.pipe.place(r, placeOptions{
		tasks: job.Tasks, ratio: job.ProbeRatio, feasible: candidates, user: userSpread, now: now,
	})
	if err != nil {
		return submission{}, refused(refusal.Unplaceable, 0, "app %q: %v", job.App, err)
	}
	if s.cfg.ReservationTimeout > 0 {
		r.deadline = time.Now().Add(s.cfg.ReservationTimeout)
	}
	if s.cfg.MaxHeldJobs > 0 {
		r.hold = newHoldState(time.Now())
	}
	if len(job.Relax) > 0 {
		r.loc = newRelaxState(job, now, s.cfg.LocalityInputBytes)
	}
	probes, r.backup = s.splitBackupsLocked(r, probes)
	s.steer.placed(r, probes, now)
	r.AddProbes(probes)
	s.gate.adm.admitted(probes)
	counted := countHeldLocked(r, probes)
	s.book.add(r)
	s.addJobFrontendLocked(job, id)
	s.pullSubmittedLocked(r)
	offers := s.planOffersLocked(r, probes)
	var relaxed []placement.Probe
	if r.loc != nil {
		if s.relax.fresh(now) {
			relaxed = s.relaxLocked(r, now, true)
		}
		s.scheduleRelaxLocked(r, now)
	}
	s.stats.JobsSubmitted++
	s.stats.TasksSubmitted += uint64(len(job.Tasks))
	sends := appendBatches(nil, r, probes, offers, counted)
	return submission{r: r, sends: appendBatches(sends, r, relaxed, nil, false)}, nil
}

// addJobFrontendLocked keeps the frontend address job, accepted as request
// id, named, if any (frontendjobs.go). SubmitJob checked for room under
// the same hold of mu.
func (s *Scheduler) addJobFrontendLocked(job Job, id string) {
	if job.FrontendAddress == "" {
		return
	}
	batched := job.FrontendFeatures&sparrowrpc.FRONTEND_MESSAGES != 0
	revived, err := s.front.addJob(job.App, id, job.FrontendAddress, len(job.Tasks), batched)
	if err != nil {
		s.log.Error().Err(err).Str("request", id).Msg("job's frontend address not kept; its messages go by its app's registration")
		return
	}
	if revived {
		// As for a registration: the connections kept to the address may
		// be to a process that has gone.
		s.peers.fronts.Forget(job.FrontendAddress)
		s.frontSend.forget(job.FrontendAddress)
	}
}

// busyRetry is the least pause before an enqueue our own pool could not
// send is sent again; the pause is drawn from [busyRetry, 2·busyRetry).
const busyRetry = 10 * time.Millisecond

// enqueue sends each probe's reservations to its node monitor, in
// parallel. A held call (hold.go) does not wait for their answers.
func (s *Scheduler) enqueue(r *request, probes []placement.Probe) {
	s.enqueueAs(r, probes, false)
}

// enqueueOne sends p, with the tasks of r listed in offers offered (none
// if empty); counted says r's held call waits for the answer.
func (s *Scheduler) enqueueOne(r *request, p placement.Probe, counted bool, offers []int) {
	msg := &sparrowrpc.TEnqueueTaskReservationsRequest{
		AppId: r.app, User: r.user, RequestId: r.ID, SchedulerAddress: s.self, NumTasks: int32(p.Count),
		SchedulerFeatures: &schedulerFeatures,
	}
	s.short.reservation(msg, r.short)
	var ans offerAnswer
	var err error
	if len(offers) > 0 {
		ans, err = s.offerCall(r, msg, p.Node.Addr, offers)
	} else {
		ans.accepted, err = s.peers.nodes.EnqueueTaskReservations(context.Background(), p.Node.Addr, msg)
	}
	accepted := ans.accepted
	s.mu.Lock()
	if ans.guided {
		s.offers.pause(p.Node.Addr, time.Now().Add(guidedOfferPause))
	}
	s.offers.setBoot(p.Node.Addr, ans.boot)
	if len(offers) > 0 && s.offersAnsweredLocked(r, p.Node.Addr, offers, ans, err) {
		s.mu.Unlock()
		s.enqueueOne(r, p, counted, nil)
		return
	}
	if errors.Is(err, rpc.ErrBusy) && s.book.live(r) {
		// The call never left: every connection of our own pool to the
		// node was in use. That says nothing about the node, so it is not
		// struck off for the request (a task whose preferred nodes were
		// all struck off so would fail): the same probe is sent again
		// after a short jittered pause, while the request lives.
		s.stats.EnqueueBusy++
		pause := busyRetry + time.Duration(s.place.int63n(int64(busyRetry)))
		s.mu.Unlock()
		time.AfterFunc(pause, func() { s.enqueueOne(r, p, counted, nil) })
		return
	}
	s.stats.Reservations += uint64(p.Count)
	if err == nil && !accepted {
		s.gate.hold.sawFull(s.now()) // the fleet is saturated (sweep.go)
	}
	if handled, withdraw := s.enqueuedLocked(r, p, counted, accepted, err); handled {
		if withdraw {
			s.stats.Cancellations++
		}
		s.mu.Unlock()
		if withdraw {
			s.cancel(r.ID, p.Node.Addr)
		}
		return
	}
	if err == nil && accepted {
		s.mu.Unlock()
		return
	}
	s.stats.EnqueueFailures++
	s.log.Warn().Err(err).Bool("refused", err == nil).Str("request", r.ID).Str("node", p.Node.Addr).
		Msg("enqueue failed; re-placing its reservations")
	s.replaceAndUnlock(r, p.Node.Addr)
}

// replaceAndUnlock drops addr's reservations for r, if addr is not empty, and
// probes again for the tasks left without one.
func (s *Scheduler) replaceAndUnlock(r *request, addr string) {
	if !s.book.live(r) {
		s.mu.Unlock()
		return
	}
	if addr != "" {
		r.DropNode(addr)
		if r.failed == nil {
			r.failed = make(map[string]bool)
		}
		r.failed[addr] = true
	}
	s.reprobeAndUnlock(r, r.Uncovered())
}

// reprobeAndUnlock places reservations for tasks on live nodes that have not failed
// for r. If that is impossible, or r has been re-probed too often, its
// unlaunched tasks are reported failed and r is dropped.
func (s *Scheduler) reprobeAndUnlock(r *request, tasks []placement.Task) {
	if len(tasks) == 0 {
		s.mu.Unlock()
		return
	}
	r.reprobe++
	s.stats.Reprobes++
	var probes []placement.Probe
	var err error
	if r.reprobe > maxReprobes {
		err = fmt.Errorf("gave up after %d rounds of re-placing reservations", maxReprobes)
	} else {
		// Node monitors already holding some may take more: a failed
		// enqueue's reservations are replaced wherever the request may go.
		probes, _, err = s.pipe.place(r, placeOptions{tasks: tasks, ratio: r.ratio})
	}
	if err != nil {
		s.book.remove(r)
		s.relax.remove(r)
		r.gaveUp = err
		if s.failHeldLocked(r, err) {
			s.mu.Unlock() // the held call refuses the job with err
			return
		}
		// Read under s.mu: an offer of r may be settled on another
		// goroutine as soon as it is released.
		unlaunched := r.Unlaunched()
		s.mu.Unlock()
		s.log.Error().Err(err).Str("request", r.ID).Int("unlaunched", unlaunched).
			Msg("cannot place the request's remaining tasks; reporting them failed to the frontend")
		s.failUnlaunched(r, err)
		return
	}
	r.AddProbes(probes)
	counted := countHeldLocked(r, probes)
	s.mu.Unlock()
	s.enqueueAs(r, probes, counted)
}

// failUnlaunched tells the frontend that r's unlaunched tasks will not run.
// A task offered and not yet answered is reported when its offer is
// declined (offerDeclinedLocked), and not at all if it is taken.
func (s *Scheduler) failUnlaunched(r *request, cause error) {
	var fail []*sparrowrpc.TTaskSpec
	s.mu.Lock()
	for i, spec := range r.specs {
		if !r.IsLaunched(i) && !r.IsOffered(i) {
			fail = append(fail, spec)
		}
	}
	s.mu.Unlock()
	for _, spec := range fail {
		id := &sparrowrpc.TFullTaskId{TaskId: spec.TaskId, RequestId: r.ID, AppId: r.app, SchedulerAddress: s.self}
		_ = s.deliver(r.app, id, sparrowrpc.STATUS_TASK_FAILED, []byte(cause.Error())) // deliver counts failures
	}
}

// GetTask implements GetTaskService: late binding. The first node monitors
// to ask get the request's tasks; later ones get an empty list. Once every
// task has launched, the request is forgotten and its leftover reservations
// are cancelled.
func (s *Scheduler) GetTask(ctx context.Context, requestID string, nm *sparrowrpc.THostPort) ([]*sparrowrpc.TTaskLaunchSpec, error) {
	return s.getTask(requestID, rpc.HostPortString(nm), 0), nil
}

// getTask answers node monitor addr's getTask, or its fetchTask fetch
// (0: a getTask), which it records in the fetch memory with the task handed out.
func (s *Scheduler) getTask(requestID, addr string, fetch int64) []*sparrowrpc.TTaskLaunchSpec {
	if _, pull := shortjobs.PullScheduler(requestID); pull {
		return s.answerPull(addr, fetch)
	}
	s.mu.Lock()
	r, ok := s.book.get(requestID)
	if ok && awaitingLocked(r) > 0 {
		s.awaitOffersLocked(r)
		r, ok = s.book.get(requestID)
	}
	if !ok {
		s.stats.EmptyGetTasks++
		s.heldGetTaskLocked(nil)
		s.running.fetchAnswered(addr, fetch, runningTask{}, nil)
		s.mu.Unlock()
		return []*sparrowrpc.TTaskLaunchSpec{}
	}
	var spec *sparrowrpc.TTaskLaunchSpec
	var task runningTask
	var idx int
	var got bool
	if s.overrunDeclinesLocked(r, addr) {
		// A sticky fetch holds no reservation to use up.
		r.Decline(addr)
		s.stats.OverrunDeclined++
	} else {
		idx, got = r.Assign(addr)
		if !got {
			idx, got = s.stickyLocked(r, addr)
		}
	}
	if got {
		s.launchedLocked(r, idx, addr, fetch)
		spec = &sparrowrpc.TTaskLaunchSpec{TaskId: r.specs[idx].TaskId, Message: r.specs[idx].Message}
		task = runningTask{app: r.app, request: r.ID, task: spec.TaskId}
		s.short.answer(spec, r.short, r.Unlaunched(), task, s.now())
	} else {
		s.stats.EmptyGetTasks++
	}
	s.running.fetchAnswered(addr, fetch, task, spec)
	// Sharing probes across constrained tasks can use up the last
	// reservation another constrained task could run on; that task must be
	// probed for again or the job would never finish.
	var strand []placement.Task
	if !r.Launched() && r.HasConstrained() && !r.Holds(addr) {
		strand = r.Uncovered()
	}
	cancel := s.forgetLaunchedLocked(r)
	s.heldGetTaskLocked(r)
	s.mu.Unlock()

	for _, p := range cancel {
		go s.cancel(requestID, p.Node.Addr)
	}
	if len(strand) > 0 {
		s.mu.Lock()
		if s.book.live(r) {
			s.reprobeAndUnlock(r, r.Uncovered())
		} else {
			s.mu.Unlock()
		}
	}
	if !got {
		return []*sparrowrpc.TTaskLaunchSpec{}
	}
	return []*sparrowrpc.TTaskLaunchSpec{spec}
}

// launchedLocked records task idx of r handed to addr, by getTask (of fetch, 0
// for none) or a taken offer: tracked as running there, and counted.
func (s *Scheduler) launchedLocked(r *request, idx int, addr string, fetch int64) {
	s.steer.served(r, addr, s.now())
	s.running.track(addr, runningTask{app: r.app, request: r.ID, task: r.specs[idx].TaskId}, fetch, r.submitted)
	s.relax.countLaunch(r, idx, addr)
	s.stats.TasksLaunched++
	delay := s.now().Sub(r.submitted).Seconds()
	s.stats.LaunchDelaySeconds += delay
	s.stats.LaunchDelay.Observe(DelayBuckets, delay)
	s.pullLaunchedLocked(r)
	s.refreshWorkLocked(r, addr)
}

// forgetLaunchedLocked drops r once every task has launched, and returns the
// leftover reservations to cancel (none with NoCancel).
func (s *Scheduler) forgetLaunchedLocked(r *request) []placement.Probe {
	if !r.Launched() || !s.book.remove(r) {
		return nil
	}
	s.relax.remove(r)
	if s.cfg.NoCancel {
		return nil
	}
	cancel := r.Outstanding()
	s.stats.Cancellations += uint64(len(cancel))
	return cancel
}

func (s *Scheduler) cancel(requestID, addr string) {
	err := s.peers.nodes.CancelTaskReservations(context.Background(), addr, &sparrowrpc.TCancelTaskReservationsRequest{RequestId: requestID})
	if err != nil {
		// Harmless: the node's getTask for this request will get nothing.
		s.log.Debug().Err(err).Str("request", requestID).Str("node", addr).Msg("cancel failed")
	}
}
