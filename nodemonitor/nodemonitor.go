package nodemonitor

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/core/queue"
	"github.com/sparrowfleet/sparrow/core/shortjobs"
	"github.com/sparrowfleet/sparrow/core/slots"
	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// Config configures a NodeMonitor.
type Config struct {
	// Slots is how many tasks run at once.
	Slots int
	// Queue orders reservations; nil means FIFO.
	Queue queue.Discipline
	// Internal is this node monitor's advertised InternalService
	// "host:port"; it names the node in getTask calls.
	Internal string
	// OnAppsChanged is called, outside any lock, with the sorted app list
	// whenever it changes, so the daemon can re-advertise it.
	OnAppsChanged func(apps []string)
	// MaxQueued bounds queued reservations (default
	// slots.DefaultMaxQueued); past it reservations are refused and placed
	// elsewhere.
	MaxQueued int
	// GetTaskTimeout bounds a getTask call, so that a reservation from a
	// dead or partitioned scheduler frees its slot promptly. Default 1s.
	GetTaskTimeout time.Duration
	// FetchRetryFor bounds how long a getTask (fetchTask) whose call failed
	// after it was sent is asked about again, holding its slot, because the
	// scheduler may have handed out a task (fetcher). Default
	// DefaultFetchRetryFor.
	FetchRetryFor time.Duration
	// ShortJobs, if set, runs the long-task-aware policy
	// (core/shortjobs; shortjobs.go): the SRPT queue with sticky fetches
	// replaces Queue, and the node's long work is advertised through
	// OnLongWork; with ShortJobs.LongSteer the advert carries the level
	// of its long work, running and queued. Nil keeps plain Sparrow.
	ShortJobs *shortjobs.Config
	// OnLongWork is called, outside any lock and in order, with the
	// two-byte long-work advert (shortjobs.Monitor.Advert2) whenever it
	// changes between none and some or, with ShortJobs.LongSteer, its
	// level changes (shortjobs.Monitor.AdvertChanged), so that the daemon
	// can gossip it. It must not call back into the NodeMonitor.
	OnLongWork func(advert [2]byte)
	// PullRetry, when > 0 with ShortJobs, runs pulls (pull.go): while a
	// scheduler advertises a short backlog of an app this node hosts
	// (PullHeard), one pull reservation for it waits in the queue with
	// the advert as its remaining work, and the slot that serves it asks
	// the scheduler for a task of any backlogged job of the apps here; a
	// pull that got none is queued again after PullRetry or at the
	// scheduler's next advert. 0: no pulls.
	PullRetry time.Duration
	// LaunchWait is how long an executor that offers it
	// (BACKEND_LAUNCH_AND_WAIT) is asked to wait for a launched task to
	// end, so that the launch's answer reports a quick task's end and the
	// executor sends no taskDone. Default DefaultLaunchWait; negative:
	// launch with the original launchTask only.
	LaunchWait time.Duration
	// DoneWindow is how long a finished task's report and message wait
	// for others to the same scheduler, to go in one tasksDone call, to a
	// scheduler that serves it. 0, the default: no wait; a call gathers
	// the tasks that ended while the one before it was in flight. A
	// window delays each task's message to its frontend, and the
	// scheduler's record of the task's end, by up to its length.
	DoneWindow time.Duration
	RPC        rpc.Config
	Log        zerolog.Logger
}

// DefaultGetTaskTimeout is Config.GetTaskTimeout's default.
const DefaultGetTaskTimeout = time.Second

// DefaultLaunchWait is Config.LaunchWait's default: long enough for a task
// that ends at once to be reported with its launch on a busy machine, short
// enough that a longer task's launch answer is not held up noticeably.
const DefaultLaunchWait = 2 * time.Millisecond

// NodeMonitor implements NodeMonitorService and InternalService by wiring
// its parts: the slot table (slots, queue, weights, drain), the executor
// registry, the fetcher (getTask and fetchTask), the reporter (finished
// tasks and relayed messages), the offer ledger and the set of schedulers
// gossip declared gone. Each part locks itself; the NodeMonitor's one lock
// (advMu) only orders app-list and long-work advertisements, and every RPC is made
// outside all locks. Safe for
// concurrent use.
type NodeMonitor struct {
	cfg  Config
	boot string // start nonce, sent with offers' answers (TOfferOutcome.boot)
	log  zerolog.Logger

	slots     *slotTable
	execs     *executorRegistry
	executors Executors
	fetch     *fetcher
	report    *reporter
	offers    offerLedger
	gone      schedulerSet
	features  schedulerFeatures
	closers   []func()
	// advMu is held while Config.OnAppsChanged or Config.OnLongWork runs
	// (appsChanged, advertise), which must not call back into the
	// NodeMonitor.
	advMu sync.Mutex
}

// New returns a NodeMonitor that calls schedulers and executors over
// Thrift and finds schedulers' getTask addresses in dir.
func New(cfg Config, dir SchedulerDirectory) (*NodeMonitor, error) {
	self, err := rpc.ParseHostPort(cfg.Internal)
	if err != nil {
		return nil, fmt.Errorf("node monitor internal address: %w", err)
	}
	if cfg.GetTaskTimeout <= 0 {
		cfg.GetTaskTimeout = DefaultGetTaskTimeout
	}
	if cfg.RPC.DialLog == nil {
		cfg.RPC.DialLog = &cfg.Log
	}
	return newNodeMonitor(cfg, dir, newThriftSchedulers(cfg.RPC, cfg.GetTaskTimeout, self), newThriftExecutors(cfg.RPC))
}

// newNodeMonitor returns a NodeMonitor that calls schedulers and executors
// through scheds and execs, which it closes on Close.
func newNodeMonitor(cfg Config, dir SchedulerDirectory, scheds Schedulers, execs Executors) (*NodeMonitor, error) {
	if _, err := rpc.ParseHostPort(cfg.Internal); err != nil {
		return nil, fmt.Errorf("node monitor internal address: %w", err)
	}
	var short *shortWork
	if cfg.ShortJobs != nil {
		if err := cfg.ShortJobs.Validate(); err != nil {
			return nil, fmt.Errorf("node monitor: %w", err)
		}
		short = newShortWork(*cfg.ShortJobs, cfg.Slots)
	}
	table, err := newSlotTable(cfg.Slots, cfg.Queue, cfg.MaxQueued, time.Now(), short)
	if err != nil {
		return nil, fmt.Errorf("node monitor: %w", err)
	}
	if short != nil && cfg.PullRetry > 0 {
		table.pull = newPulls(cfg.PullRetry, time.Now())
		short.pull = table.pull.p
	}
	if cfg.FetchRetryFor <= 0 {
		cfg.FetchRetryFor = DefaultFetchRetryFor
	}
	if cfg.LaunchWait == 0 {
		cfg.LaunchWait = DefaultLaunchWait
	}
	var nonce [8]byte
	_, _ = rand.Read(nonce[:]) // never fails (crypto/rand)
	log := cfg.Log.With().Str("component", "nodemonitor").Str("node", cfg.Internal).Logger()
	caps := &rpc.Capabilities{}
	n := &NodeMonitor{
		cfg: cfg, boot: hex.EncodeToString(nonce[:]), log: log,
		slots: table, execs: newExecutorRegistry(), executors: execs,
		closers: []func(){scheds.Close, execs.Close},
	}
	n.report = newReporter(scheds, dir, caps, &n.features, cfg.DoneWindow, log)
	if table.pull != nil {
		table.pull.wake = n.pullWake
	}
	if short != nil {
		short.wake = n.overrunWake
	}
	n.fetch = &fetcher{scheds: scheds, caps: caps, gone: &n.gone, retryFor: cfg.FetchRetryFor, log: log}
	n.fetch.ids.Store(int64(binary.LittleEndian.Uint64(nonce[:]) >> 1))
	return n, nil
}

// Close waits for pending finished reports and releases the node
// monitor's connections.
func (n *NodeMonitor) Close() {
	n.slots.stopPulls()
	n.report.wait()
	for _, c := range n.closers {
		c()
	}
}

func (n *NodeMonitor) now() time.Time { return time.Now() }

// overrunWake runs on the overrun watch's timer: short tasks that have run
// for the cutoff now count as long work, and a changed advert is gossiped.
func (n *NodeMonitor) overrunWake() {
	if n.slots.overrunDue(n.now()) {
		n.advertise()
	}
}

// State is a snapshot of the slot machine, for tests and status output.
type State struct {
	Slots, Free, Fetching, Running, Queued int
	// Launches counts the tasks launched here; Finished, Failed and Lost
	// those of them that ended, by how (see outcome): the three and
	// Running add up to Launches.
	Launches, Finished, Failed, Lost uint64
	Apps                             []string
	// Draining is set from the start of a drain (Drain); Paused while
	// the node takes no work (SetPaused). Apps is empty in either.
	Draining, Paused bool
	// PullTasks and PullsEmpty count the pulls (Config.PullRetry) whose
	// answer launched a task here and those that launched none.
	PullTasks, PullsEmpty uint64
	// WorkUpdates counts the schedulers' updates of a job's remaining
	// work (updateRemainingWork) that reordered reservations queued here.
	WorkUpdates uint64
}

// State returns a snapshot of the node monitor's slots and queue.
func (n *NodeMonitor) State() State { return n.slots.state() }

// appsChanged passes the app list to Config.OnAppsChanged. Calls are
// serialised by advMu, each reading the list afresh, so that the last
// one passes the list in force however callers raced.
func (n *NodeMonitor) appsChanged() {
	if n.cfg.OnAppsChanged == nil {
		return
	}
	n.advMu.Lock()
	defer n.advMu.Unlock()
	n.cfg.OnAppsChanged(n.slots.apps())
}

// RegisterBackend implements NodeMonitorService: an executor for app
// listens at listenSocket on this machine. A draining node records the
// executor, so that tasks fetched already can launch, but offers no app.
func (n *NodeMonitor) RegisterBackend(ctx context.Context, app, listenSocket string) (bool, error) {
	return n.registerBackend("registerBackend", app, listenSocket, 0)
}

// RegisterBackendWithFeatures implements NodeMonitorService's extension:
// RegisterBackend from an executor that serves the extensions named by
// features (sparrowrpc.BACKEND_* bits); bits this node monitor does not
// know are ignored.
func (n *NodeMonitor) RegisterBackendWithFeatures(ctx context.Context, app, listenSocket string, features int32) (bool, error) {
	return n.registerBackend("registerBackendWithFeatures", app, listenSocket, features)
}

func (n *NodeMonitor) registerBackend(method, app, listenSocket string, features int32) (bool, error) {
	if app == "" {
		return false, fmt.Errorf("%s: missing app", method)
	}
	if _, err := rpc.ParseHostPort(listenSocket); err != nil {
		return false, fmt.Errorf("%s for app %q: %w", method, app, err)
	}
	n.execs.register(app, listenSocket, features)
	pulled := n.slots.addApp(app, n.now())
	// It may be a restarted executor at the same address: drop pooled
	// connections to the old process.
	n.executors.Forget(listenSocket)
	n.log.Info().Str("app", app).Str("backend", listenSocket).Int32("features", features).Msg("executor registered")
	n.appsChanged()
	if pulled {
		n.drive()
	}
	return true, nil
}

// EnqueueTaskReservations implements InternalService. It returns false,
// refusing the reservations, when no executor for the app is registered
// here, the queue is full or the node drains or is paused; the scheduler then places
// them elsewhere.
func (n *NodeMonitor) EnqueueTaskReservations(ctx context.Context, req *sparrowrpc.TEnqueueTaskReservationsRequest) (bool, error) {
	r, err := reservationOf(req, "enqueueTaskReservations")
	if err != nil {
		return false, err
	}
	n.features.heard(r.Scheduler, req.SchedulerFeatures)
	if !n.enqueue(r, int(req.NumTasks), hintOf(req)) {
		return false, nil
	}
	n.drive()
	return true, nil
}

// EnqueueTaskReservationsWithOffer implements InternalService's extension:
// the reservations are queued as EnqueueTaskReservations queues them, and
// as many of them as reach a free slot at once, up to the tasks offered
// (offer, then moreOffers), run offered tasks, launched here without
// asking the scheduler (getTask): the scheduler set the tasks aside for
// this node monitor until it hears the answer. The other offers are
// declined, and every other reservation waits for its getTask as usual;
// every offer is declined while a coordinator guides the queue's weights,
// since a slot taken by an offer skips the queue's choice, and so is an
// offer its scheduler already heard was unseen (OfferOutcome) or that came
// twice.
func (n *NodeMonitor) EnqueueTaskReservationsWithOffer(ctx context.Context, req *sparrowrpc.TEnqueueTaskReservationsRequest, offer *sparrowrpc.TTaskLaunchSpec, moreOffers []*sparrowrpc.TTaskLaunchSpec) (*sparrowrpc.TEnqueueOfferReply, error) {
	r, err := reservationOf(req, "enqueueTaskReservationsWithOffer")
	if err != nil {
		return nil, err
	}
	offers := append([]*sparrowrpc.TTaskLaunchSpec{offer}, moreOffers...)
	keys := make([]slots.TaskKey, len(offers))
	for i, o := range offers {
		if o == nil || o.TaskId == "" {
			return nil, fmt.Errorf("enqueueTaskReservationsWithOffer: offer %d without a task id", i)
		}
		keys[i] = slots.TaskKey{RequestID: r.RequestID, TaskID: o.TaskId}
	}
	n.features.heard(r.Scheduler, req.SchedulerFeatures)
	if !n.enqueue(r, int(req.NumTasks), hintOf(req)) {
		return &sparrowrpc.TEnqueueOfferReply{}, nil
	}
	guided := n.slots.guided()
	var ready, took []queue.Reservation
	var free int
	launched := n.offers.decideAll(keys, n.now(), func(fresh []bool) []bool {
		want := 0
		if !guided {
			want = countTrue(fresh)
		}
		var mine *queue.Reservation
		if want > 0 {
			mine = &r
		}
		ready, took, free = n.slots.ready(mine, want, &n.gone)
		runs := make([]bool, len(fresh))
		for i, left := 0, len(took); i < len(fresh) && left > 0; i++ {
			if fresh[i] && !guided {
				runs[i] = true
				left--
			}
		}
		return runs
	})
	n.advertise()
	for _, x := range ready {
		go n.run(x)
	}
	var launches []offeredLaunch
	for i, ran := range launched {
		if ran {
			launches = append(launches, offeredLaunch{took[len(launches)], offers[i]})
		}
	}
	if len(launches) > 0 {
		// The answer goes back while the executor is called.
		go n.launchOffered(launches)
	}
	free32 := int32(free)
	reply := &sparrowrpc.TEnqueueOfferReply{Accepted: true, Launched: launched[0], Boot: &n.boot, FreeSlots: &free32}
	if len(moreOffers) > 0 {
		reply.MoreLaunched = launched[1:]
	}
	if guided {
		reply.Guided = &guided
	}
	return reply, nil
}

// offeredLaunch is an offered task that a slot took, held for r.
type offeredLaunch struct {
	r    queue.Reservation
	spec *sparrowrpc.TTaskLaunchSpec
}

// key is the task's key in the slot table.
func (l offeredLaunch) key() slots.TaskKey {
	return slots.TaskKey{RequestID: l.r.RequestID, TaskID: l.spec.TaskId}
}

// countTrue returns how many of bs are true.
func countTrue(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// OfferOutcome implements InternalService's extension: what this node
// monitor did with the offer of taskID of requestID, for a scheduler whose
// enqueueTaskReservationsWithOffer call failed after it was sent. An offer
// not seen (yet) is answered OFFER_UNSEEN and remembered so, and declined
// if it arrives later: the answer is final either way. The answer carries
// this process's start nonce, so that the scheduler can tell whether the
// process that says "unseen" is the one it sent the offer to.
func (n *NodeMonitor) OfferOutcome(ctx context.Context, requestID, taskID string) (*sparrowrpc.TOfferOutcome, error) {
	if requestID == "" || taskID == "" {
		return nil, fmt.Errorf("offerOutcome: missing request id or task id")
	}
	outcome := n.offers.ask(slots.TaskKey{RequestID: requestID, TaskID: taskID}, n.now())
	return &sparrowrpc.TOfferOutcome{Outcome: outcome, Boot: n.boot}, nil
}

// reservationOf checks an enqueue request and returns the reservation it
// asks for; method names the call in the error.
func reservationOf(req *sparrowrpc.TEnqueueTaskReservationsRequest, method string) (queue.Reservation, error) {
	if req == nil || req.RequestId == "" || req.SchedulerAddress == nil {
		return queue.Reservation{}, fmt.Errorf("%s: missing request id or scheduler address", method)
	}
	r := queue.Reservation{RequestID: req.RequestId, App: req.AppId, Scheduler: rpc.HostPortString(req.SchedulerAddress)}
	if u := req.User; u != nil {
		r.User, r.Group, r.Priority = u.User, u.Group, u.Priority
	}
	return r, nil
}

// enqueue queues count reservations like r, with h's word on their job;
// false if they were refused.
func (n *NodeMonitor) enqueue(r queue.Reservation, count int, h jobHint) bool {
	if err := n.slots.enqueue(r, count, h); err != nil {
		n.log.Debug().Err(err).Msg("reservations refused")
		return false
	}
	return true
}

// CancelTaskReservations implements InternalService: the request's tasks
// have all launched, so its queued reservations here are dropped.
func (n *NodeMonitor) CancelTaskReservations(ctx context.Context, req *sparrowrpc.TCancelTaskReservationsRequest) error {
	if req != nil {
		n.slots.cancel(req.RequestId)
		n.advertise()
	}
	return nil
}

// UpdateRemainingWork implements InternalService's extension: schedulers
// under the long-task-aware policy send their jobs' remaining work as
// their tasks launch, and the job's reservations queued here are
// reordered by it. Entries for requests with nothing queued here, and
// every entry without the policy, are ignored.
func (n *NodeMonitor) UpdateRemainingWork(ctx context.Context, updates []*sparrowrpc.TRemainingWork) error {
	for _, u := range updates {
		if u == nil || u.RequestId == "" {
			continue
		}
		n.slots.setWork(u.RequestId, u.RemainingWork)
	}
	return nil
}

// TasksFinished implements NodeMonitorService: executors report finished
// tasks, freeing their slots. Unknown tasks are ignored, so a repeated
// report cannot free a slot twice.
func (n *NodeMonitor) TasksFinished(ctx context.Context, tasks []*sparrowrpc.TFullTaskId) error {
	for _, t := range n.free(tasks, taskFinished) {
		n.report.finishedID(t)
	}
	return nil
}

// free frees the slots of those of tasks running here, counted ended as
// how, starts fetches for the reservations they can take, and returns the
// tasks it freed.
func (n *NodeMonitor) free(tasks []*sparrowrpc.TFullTaskId, how outcome) []*sparrowrpc.TFullTaskId {
	keys := make([]slots.TaskKey, 0, len(tasks))
	ids := make([]*sparrowrpc.TFullTaskId, 0, len(tasks))
	for _, t := range tasks {
		if t != nil {
			keys = append(keys, slots.TaskKey{RequestID: t.RequestId, TaskID: t.TaskId})
			ids = append(ids, t)
		}
	}
	var freed []*sparrowrpc.TFullTaskId
	for i, ok := range n.slots.finish(keys, n.now(), how) {
		if ok {
			freed = append(freed, ids[i])
		}
	}
	if len(freed) < len(tasks) {
		n.log.Debug().Int("reported", len(tasks)).Int("freed", len(freed)).Msg("finished report named tasks not running here")
	}
	if len(freed) > 0 {
		n.drive()
	}
	return freed
}

// SendFrontendMessage implements NodeMonitorService: an executor's message
// about a task goes to the scheduler named in its task id, which passes it
// on to the app's frontend.
func (n *NodeMonitor) SendFrontendMessage(ctx context.Context, app string, taskID *sparrowrpc.TFullTaskId, status int32, message []byte) error {
	if taskID == nil || taskID.SchedulerAddress == nil {
		return fmt.Errorf("sendFrontendMessage: task id without a scheduler address")
	}
	return n.report.relay(app, taskID, status, message)
}

// TaskDone implements NodeMonitorService's extension: one executor call
// for a finished task and its frontend message. The slot is freed first,
// as TasksFinished frees it, so the next reservation's getTask starts
// while the message travels; the call returns once the message is
// relayed, as SendFrontendMessage does, so the executor learns the relay's
// outcome. A repeated report cannot free a slot twice.
//
// The finished report and the message go to the scheduler in one
// SchedulerService.taskDone call, not a tasksFinished report and a
// sendFrontendMessage; a scheduler that answers UNKNOWN_METHOD gets the
// two from then on. To a scheduler that serves tasksDone they go
// gathered with other tasks' (reporter.done).
func (n *NodeMonitor) TaskDone(ctx context.Context, app string, taskID *sparrowrpc.TFullTaskId, status int32, message []byte) error {
	if taskID == nil || taskID.SchedulerAddress == nil {
		return fmt.Errorf("taskDone: task id without a scheduler address")
	}
	return n.ended(app, taskID, status, message, true)
}

// ended frees the slot of a task its executor reported ended with status
// and message, and reports both to its scheduler (reporter.done); if
// wait, it returns once the message is relayed.
func (n *NodeMonitor) ended(app string, taskID *sparrowrpc.TFullTaskId, status int32, message []byte, wait bool) error {
	how := taskFinished
	if status == sparrowrpc.STATUS_TASK_FAILED {
		how = taskFailed
	}
	freed := len(n.free([]*sparrowrpc.TFullTaskId{taskID}, how)) > 0
	return n.report.done(app, taskID, status, message, freed, wait)
}

// SchedulerGone records that the scheduler serving at service (its
// SchedulerService address) died or left: its queued reservations will be
// released as they come up, without calling it.
func (n *NodeMonitor) SchedulerGone(service string) { n.gone.add(service) }

// SchedulerBack undoes SchedulerGone when the scheduler rejoins.
func (n *NodeMonitor) SchedulerBack(service string) { n.gone.remove(service) }

// drive starts a fetch for every reservation that a free slot can take.
func (n *NodeMonitor) drive() {
	ready, _, _ := n.slots.ready(nil, 0, &n.gone)
	n.advertise()
	for _, r := range ready {
		go n.run(r)
	}
}

// run runs one reservation that reached a free slot: getTask, then
// launchTask. The slot is held throughout and freed on every failure path.
func (n *NodeMonitor) run(r queue.Reservation) {
	if sched, ok := shortjobs.PullScheduler(r.RequestID); ok {
		n.runPull(r, sched)
		return
	}
	gt := n.report.getTaskAddr(r.Scheduler)
	specs, err := n.fetch.ask(r, gt)
	if err != nil || len(specs) == 0 {
		if err != nil {
			n.log.Warn().Err(err).Str("request", r.RequestID).Str("scheduler", gt).Msg("getTask failed; dropping reservation")
		}
		n.slots.released(r.RequestID)
		n.drive()
		return
	}
	if len(specs) > 1 {
		// Our schedulers hand out one task per reservation; a slot can run
		// only one, so the rest are reported failed rather than dropped.
		n.log.Error().Int("tasks", len(specs)).Str("request", r.RequestID).Msg("getTask returned several tasks for one slot")
		for _, extra := range specs[1:] {
			n.report.finished(r.Scheduler, slots.TaskKey{RequestID: r.RequestID, TaskID: extra.TaskId}, r.App)
			n.report.failed(r, extra.TaskId, "node monitor got several tasks for one reservation")
		}
	}
	n.launch(r, specs[0])
}

// launchOffered runs offered tasks in the slots held for them. Several
// for an executor registered with BACKEND_LAUNCH_BATCH go in one
// launchTasksAndWait call; otherwise each is launched on its own.
func (n *NodeMonitor) launchOffered(launches []offeredLaunch) {
	started := launches[:0:0]
	for _, l := range launches {
		if !n.slots.start(l.key(), l.r, n.now(), int(l.spec.GetRemainingTasks()), l.spec.GetTaskSeconds()) {
			n.log.Error().Str("request", l.r.RequestID).Str("task", l.spec.TaskId).Msg("task already running here; not launching it twice")
			n.drive()
			continue
		}
		started = append(started, l)
	}
	if len(started) == 0 {
		return
	}
	app := started[0].r.App // one request's tasks: one app
	backend, features, ok := n.execs.lookup(app)
	if len(started) == 1 || !ok || features&sparrowrpc.BACKEND_LAUNCH_BATCH == 0 || n.cfg.LaunchWait < 0 {
		for _, l := range started[1:] {
			go n.launchStarted(l.r, l.key(), l.spec)
		}
		l := started[0]
		n.launchStarted(l.r, l.key(), l.spec)
		return
	}
	items := make([]*sparrowrpc.TLaunchItem, len(started))
	keys := make([]slots.TaskKey, len(started))
	for i, l := range started {
		keys[i] = l.key()
		items[i] = &sparrowrpc.TLaunchItem{
			Message: l.spec.Message,
			TaskId:  fullID(l.r.Scheduler, keys[i], app),
			User:    &sparrowrpc.TUserGroupInfo{User: l.r.User, Group: l.r.Group, Priority: l.r.Priority},
		}
	}
	replies, err := n.executors.LaunchTasksAndWait(backend, items, n.cfg.LaunchWait)
	if err != nil {
		n.executorLost(app, backend, keys, fmt.Errorf("launchTasksAndWait of %d tasks of %s: %w", len(items), started[0].r.RequestID, err))
		return
	}
	for i, reply := range replies {
		if i >= len(items) || reply == nil || !reply.Done {
			continue // it runs on and reports itself
		}
		if err := n.ended(app, items[i].TaskId, reply.GetStatus(), reply.GetMessage(), false); err != nil {
			n.log.Warn().Err(err).Str("task", keys[i].TaskID).Msg("frontend message not relayed")
		}
	}
}

// launch runs spec in the slot held for r, on r's app's executor.
func (n *NodeMonitor) launch(r queue.Reservation, spec *sparrowrpc.TTaskLaunchSpec) {
	key := slots.TaskKey{RequestID: r.RequestID, TaskID: spec.TaskId}
	if !n.slots.start(key, r, n.now(), int(spec.GetRemainingTasks()), spec.GetTaskSeconds()) {
		n.log.Error().Str("request", r.RequestID).Str("task", spec.TaskId).Msg("task already running here; not launching it twice")
		n.drive()
		return
	}
	n.launchStarted(r, key, spec)
}

// launchStarted runs spec, started as key in the slot held for r, on r's
// app's executor.
func (n *NodeMonitor) launchStarted(r queue.Reservation, key slots.TaskKey, spec *sparrowrpc.TTaskLaunchSpec) {
	backend, features, ok := n.execs.lookup(r.App)
	if !ok {
		// The executor was lost between fetch and launch.
		n.slots.finish([]slots.TaskKey{key}, n.now(), taskFailed)
		n.report.finished(r.Scheduler, key, r.App)
		n.report.failed(r, spec.TaskId, fmt.Sprintf("no executor registered for app %q", r.App))
		n.drive()
		return
	}
	id := fullID(r.Scheduler, key, r.App)
	user := &sparrowrpc.TUserGroupInfo{User: r.User, Group: r.Group, Priority: r.Priority}
	if features&sparrowrpc.BACKEND_LAUNCH_AND_WAIT == 0 || n.cfg.LaunchWait < 0 {
		if err := n.executors.LaunchTask(backend, spec.Message, id, user); err != nil {
			// This task, and any other the executor was running, fail with it.
			n.executorLost(r.App, backend, []slots.TaskKey{key}, fmt.Errorf("launchTask of %s/%s: %w", r.RequestID, spec.TaskId, err))
		}
		return
	}
	reply, err := n.executors.LaunchTaskAndWait(backend, spec.Message, id, user, n.cfg.LaunchWait)
	switch {
	case err != nil:
		n.executorLost(r.App, backend, []slots.TaskKey{key}, fmt.Errorf("launchTaskAndWait of %s/%s: %w", r.RequestID, spec.TaskId, err))
	case reply != nil && reply.Done:
		// The executor reports this task's end here, and only here.
		if err := n.ended(r.App, id, reply.GetStatus(), reply.GetMessage(), false); err != nil {
			n.log.Warn().Err(err).Str("task", spec.TaskId).Msg("frontend message not relayed")
		}
	}
}

// advertise passes a changed long-work advert to Config.OnLongWork. advMu
// orders the calls: the advert is read under it, so the last call made
// carries the latest advert.
func (n *NodeMonitor) advertise() {
	if n.cfg.OnLongWork == nil {
		return
	}
	n.advMu.Lock()
	defer n.advMu.Unlock()
	if b, changed := n.slots.takeAdvert(); changed {
		n.cfg.OnLongWork(b)
	}
}

// taskMillis closes the task clock's period and returns the node's mean
// task run time in ms (0: none finished yet). The coordination loop calls
// it once per report; any other caller would shorten the periods.
func (n *NodeMonitor) taskMillis() uint64 { return n.slots.taskMillis(n.now()) }
