package nodemonitor

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/core/queue"
	"github.com/sparrowfleet/sparrow/core/slots"
	"github.com/sparrowfleet/sparrow/internal/batch"
	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// DefaultGetTaskPort is where a scheduler serves getTask when the
// membership view does not say otherwise.
const DefaultGetTaskPort = "20507"

// SchedulerDirectory maps a scheduler's SchedulerService address, as named
// in reservations, to its GetTaskService address.
type SchedulerDirectory interface {
	GetTaskAddr(schedulerService string) (string, bool)
}

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
	// whenever an executor registers, so the daemon can re-advertise it.
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
	// scheduler may have handed out a task (fetch.go). Default
	// DefaultFetchRetryFor.
	FetchRetryFor time.Duration
	RPC           rpc.Config
	Log           zerolog.Logger
}

// DefaultGetTaskTimeout is Config.GetTaskTimeout's default.
const DefaultGetTaskTimeout = time.Second

// NodeMonitor implements NodeMonitorService and InternalService. Safe for
// concurrent use: one mutex guards the slot machine and no RPC is made while
// it is held.
type NodeMonitor struct {
	cfg  Config
	self *sparrowrpc.THostPort
	dir  SchedulerDirectory
	log  zerolog.Logger

	getTask  *rpc.Pool[*sparrowrpc.GetTaskServiceClient]
	sched    *rpc.Pool[*sparrowrpc.SchedulerServiceClient]
	backends *rpc.Pool[*sparrowrpc.BackendServiceClient]

	// notify batches finished-task reports per scheduler GetTaskService.
	notify *batch.Batcher[string, *sparrowrpc.TFullTaskId]

	mu       sync.Mutex
	core     *slots.Core
	backend  map[string]string // app -> BackendService address
	misses   map[string]int    // app -> failed executor checks in a row
	launches uint64
	// goneScheds holds SchedulerService addresses gossip has declared dead
	// or departed: their reservations are released without a getTask, which
	// would only wait out its timeout while holding a slot.
	goneScheds map[string]bool
	// noFetchTask holds GetTaskService addresses that answered fetchTask
	// with UNKNOWN_METHOD: they get getTask.
	noFetchTask map[string]bool
	// fetchIDs numbers fetches (fetch.go).
	fetchIDs atomic.Int64
	// noTaskDone holds SchedulerService addresses that answered taskDone
	// with UNKNOWN_METHOD: they get tasksFinished and sendFrontendMessage.
	noTaskDone map[string]bool
	// baseWeights are the configured weights of users whose weights the
	// coordinator's guidance replaced, to restore when it goes stale.
	baseWeights map[string]float64
	// guided are the coordinator's CMMF weights in force for this node's
	// type (nil: none), so that a user first queued here after the
	// guidance arrived gets its guided weight (or the floor) at once
	// rather than its configured one until the next period.
	guided map[string]float64
	// clock measures the mean task run time for the coordinator's
	// locality prices (taskclock.go).
	clock taskClock
	// offers remembers recent offers' answers (offerledger.go).
	offers offerLedger
	// boot is this NodeMonitor's start nonce, sent with offers' answers
	// (TOfferOutcome.boot).
	boot string
}

// New returns a NodeMonitor that finds schedulers' getTask addresses in dir.
func New(cfg Config, dir SchedulerDirectory) (*NodeMonitor, error) {
	q := cfg.Queue
	if q == nil {
		q = queue.NewFIFO()
	}
	core, err := slots.New(cfg.Slots, q)
	if err != nil {
		return nil, fmt.Errorf("node monitor: %w", err)
	}
	core.SetMaxQueued(cfg.MaxQueued)
	self, err := rpc.ParseHostPort(cfg.Internal)
	if err != nil {
		return nil, fmt.Errorf("node monitor internal address: %w", err)
	}
	if cfg.GetTaskTimeout <= 0 {
		cfg.GetTaskTimeout = DefaultGetTaskTimeout
	}
	if cfg.FetchRetryFor <= 0 {
		cfg.FetchRetryFor = DefaultFetchRetryFor
	}
	gtCfg := cfg.RPC
	gtCfg.CallTimeout = cfg.GetTaskTimeout
	var nonce [8]byte
	_, _ = rand.Read(nonce[:]) // never fails (crypto/rand)
	n := &NodeMonitor{
		cfg: cfg, self: self, dir: dir, boot: hex.EncodeToString(nonce[:]),
		log:      cfg.Log.With().Str("component", "nodemonitor").Str("node", cfg.Internal).Logger(),
		getTask:  rpc.NewPool(gtCfg, sparrowrpc.NewGetTaskServiceClient),
		sched:    rpc.NewPool(cfg.RPC, sparrowrpc.NewSchedulerServiceClient),
		backends: rpc.NewPool(cfg.RPC, sparrowrpc.NewBackendServiceClient),
		core:     core,
		backend:  make(map[string]string),
		misses:   make(map[string]int),

		goneScheds:  make(map[string]bool),
		noTaskDone:  make(map[string]bool),
		noFetchTask: make(map[string]bool),
		clock:       newTaskClock(time.Now()),
	}
	n.fetchIDs.Store(int64(binary.LittleEndian.Uint64(nonce[:]) >> 1))
	n.notify = batch.New(n.sendFinished)
	return n, nil
}

// Close waits for pending finished reports and releases the node
// monitor's connections.
func (n *NodeMonitor) Close() {
	n.notify.Wait()
	n.getTask.Close()
	n.sched.Close()
	n.backends.Close()
}

// State is a snapshot of the slot machine, for tests and status output.
type State struct {
	Slots, Free, Fetching, Running, Queued int
	Launches                               uint64
	Apps                                   []string
}

// State returns a snapshot of the node monitor's slots and queue.
func (n *NodeMonitor) State() State {
	n.mu.Lock()
	defer n.mu.Unlock()
	apps := n.core.Apps()
	slices.Sort(apps)
	return State{
		Slots: n.core.Slots(), Free: n.core.Free(), Fetching: n.core.Fetching(),
		Running: n.core.Running(), Queued: n.core.Queued(), Launches: n.launches, Apps: apps,
	}
}

// Queue returns the reservation queue discipline, so that weights can be
// changed at run time. Callers must not use it concurrently with the node
// monitor; use WithQueue.
func (n *NodeMonitor) WithQueue(fn func(q queue.Discipline)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	fn(n.core.Queue())
}

// RegisterBackend implements NodeMonitorService: an executor for app
// listens at listenSocket on this machine.
func (n *NodeMonitor) RegisterBackend(ctx context.Context, app, listenSocket string) (bool, error) {
	if app == "" {
		return false, fmt.Errorf("registerBackend: missing app")
	}
	if _, err := rpc.ParseHostPort(listenSocket); err != nil {
		return false, fmt.Errorf("registerBackend for app %q: %w", app, err)
	}
	n.mu.Lock()
	n.backend[app] = listenSocket
	delete(n.misses, app)
	n.core.AddApp(app)
	apps := n.core.Apps()
	n.mu.Unlock()
	// It may be a restarted executor at the same address: drop pooled
	// connections to the old process.
	n.backends.Forget(listenSocket)
	slices.Sort(apps)
	n.log.Info().Str("app", app).Str("backend", listenSocket).Msg("executor registered")
	if n.cfg.OnAppsChanged != nil {
		n.cfg.OnAppsChanged(apps)
	}
	return true, nil
}

// EnqueueTaskReservations implements InternalService. It returns false,
// refusing the reservations, when no executor for the app is registered
// here or the queue is full; the scheduler then places them elsewhere.
func (n *NodeMonitor) EnqueueTaskReservations(ctx context.Context, req *sparrowrpc.TEnqueueTaskReservationsRequest) (bool, error) {
	r, err := reservationOf(req, "enqueueTaskReservations")
	if err != nil {
		return false, err
	}
	if !n.enqueue(r, int(req.NumTasks)) {
		return false, nil
	}
	n.drive()
	return true, nil
}

// EnqueueTaskReservationsWithOffer implements InternalService's extension:
// the reservations are queued as EnqueueTaskReservations queues them, and
// if one of them reaches a free slot at once, that slot runs the offered
// task, launched here without asking the scheduler (getTask): the
// scheduler set the task aside for this node monitor until it hears the
// answer. Otherwise the offer is declined and every reservation waits for
// its getTask as usual; so it is, too, while a coordinator guides the
// queue's weights, since a slot taken by an offer skips the queue's
// choice.
func (n *NodeMonitor) EnqueueTaskReservationsWithOffer(ctx context.Context, req *sparrowrpc.TEnqueueTaskReservationsRequest, offer *sparrowrpc.TTaskLaunchSpec) (*sparrowrpc.TEnqueueOfferReply, error) {
	r, err := reservationOf(req, "enqueueTaskReservationsWithOffer")
	if err != nil {
		return nil, err
	}
	if offer == nil || offer.TaskId == "" {
		return nil, fmt.Errorf("enqueueTaskReservationsWithOffer: offer without a task id")
	}
	if !n.enqueue(r, int(req.NumTasks)) {
		return &sparrowrpc.TEnqueueOfferReply{}, nil
	}
	key := slots.TaskKey{RequestID: r.RequestID, TaskID: offer.TaskId}
	n.mu.Lock()
	mine := &r
	_, asked := n.offers.decided(key)
	guided := n.guided != nil
	if guided || asked {
		// A free slot is not given away ahead of the coordinator's
		// weights: the reservation waits for getTask like any other.
		// Nor is an offer taken that its scheduler already heard was
		// unseen (OfferOutcome), or that came twice.
		mine = nil
	}
	ready, took, ok := n.readyLocked(mine)
	if !asked {
		outcome := int32(sparrowrpc.OFFER_DECLINED)
		if ok {
			outcome = sparrowrpc.OFFER_TAKEN
		}
		n.offers.record(key, outcome, time.Now())
	}
	n.mu.Unlock()
	for _, x := range ready {
		go n.fetch(x)
	}
	if ok {
		// The answer goes back while the executor is called.
		go n.launch(took, offer)
	}
	reply := &sparrowrpc.TEnqueueOfferReply{Accepted: true, Launched: ok, Boot: &n.boot}
	if guided {
		reply.Guided = &guided
	}
	return reply, nil
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
	key := slots.TaskKey{RequestID: requestID, TaskID: taskID}
	n.mu.Lock()
	defer n.mu.Unlock()
	outcome, ok := n.offers.decided(key)
	if !ok {
		outcome = int32(sparrowrpc.OFFER_UNSEEN)
		n.offers.record(key, outcome, time.Now())
	}
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

// enqueue queues count reservations like r; false if they were refused.
func (n *NodeMonitor) enqueue(r queue.Reservation, count int) bool {
	n.mu.Lock()
	if n.guided != nil {
		n.guideWeightLocked(r.User)
	}
	err := n.core.Enqueue(r, count)
	n.mu.Unlock()
	if err != nil {
		n.log.Debug().Err(err).Msg("reservations refused")
		return false
	}
	return true
}

// CancelTaskReservations implements InternalService: the request's tasks
// have all launched, so its queued reservations here are dropped.
func (n *NodeMonitor) CancelTaskReservations(ctx context.Context, req *sparrowrpc.TCancelTaskReservationsRequest) error {
	if req == nil {
		return nil
	}
	n.mu.Lock()
	n.core.Cancel(req.RequestId)
	n.mu.Unlock()
	return nil
}

// TasksFinished implements NodeMonitorService: executors report finished
// tasks, freeing their slots. Unknown tasks are ignored, so a repeated
// report cannot free a slot twice.
func (n *NodeMonitor) TasksFinished(ctx context.Context, tasks []*sparrowrpc.TFullTaskId) error {
	for _, t := range n.free(tasks) {
		n.reportFinished(t)
	}
	return nil
}

// free frees the slots of those of tasks running here, starts fetches
// for the reservations they can take, and returns the tasks it freed.
func (n *NodeMonitor) free(tasks []*sparrowrpc.TFullTaskId) []*sparrowrpc.TFullTaskId {
	var freed []*sparrowrpc.TFullTaskId
	now := time.Now()
	n.mu.Lock()
	for _, t := range tasks {
		if t != nil && n.core.Finished(slots.TaskKey{RequestID: t.RequestId, TaskID: t.TaskId}) {
			freed = append(freed, t)
		}
	}
	n.clock.observe(now, n.core.Running(), len(freed))
	n.mu.Unlock()
	if len(freed) < len(tasks) {
		n.log.Debug().Int("reported", len(tasks)).Int("freed", len(freed)).Msg("finished report named tasks not running here")
	}
	if len(freed) > 0 {
		n.drive()
	}
	return freed
}

// reportFinished queues t for its scheduler's batched, oneway
// tasksFinished report (sendFinished).
func (n *NodeMonitor) reportFinished(t *sparrowrpc.TFullTaskId) {
	n.notify.Add(n.getTaskAddr(rpc.HostPortString(t.SchedulerAddress)), t)
}

// SendFrontendMessage implements NodeMonitorService: an executor's message
// about a task goes to the scheduler named in its task id, which passes it
// on to the app's frontend.
func (n *NodeMonitor) SendFrontendMessage(ctx context.Context, app string, taskID *sparrowrpc.TFullTaskId, status int32, message []byte) error {
	if taskID == nil || taskID.SchedulerAddress == nil {
		return fmt.Errorf("sendFrontendMessage: task id without a scheduler address")
	}
	return n.relay(app, taskID, status, message)
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
// two from then on.
func (n *NodeMonitor) TaskDone(ctx context.Context, app string, taskID *sparrowrpc.TFullTaskId, status int32, message []byte) error {
	if taskID == nil || taskID.SchedulerAddress == nil {
		return fmt.Errorf("taskDone: task id without a scheduler address")
	}
	freed := len(n.free([]*sparrowrpc.TFullTaskId{taskID})) > 0
	addr := rpc.HostPortString(taskID.SchedulerAddress)
	if freed && !n.oldScheduler(addr) {
		err := n.relayFinished(app, taskID, status, message)
		if !rpc.IsUnknownMethod(err) {
			return err
		}
		n.mu.Lock()
		n.noTaskDone[addr] = true
		n.mu.Unlock()
		n.log.Info().Str("scheduler", addr).Msg("scheduler has no taskDone; sending tasksFinished and sendFrontendMessage")
	}
	if freed {
		n.reportFinished(taskID)
	}
	return n.relay(app, taskID, status, message)
}

// oldScheduler reports whether the scheduler at addr answered taskDone
// with UNKNOWN_METHOD.
func (n *NodeMonitor) oldScheduler(addr string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.noTaskDone[addr]
}

// relayBusyFor is how long a relay keeps trying while every connection to
// the scheduler is busy (rpc.UntilSent): less than the executor's default
// call timeout, so that an executor waiting on the relay hears the outcome.
const relayBusyFor = 3 * time.Second

// relay passes an executor's message about a task to the scheduler named
// in its task id (sendFrontendMessage).
func (n *NodeMonitor) relay(app string, taskID *sparrowrpc.TFullTaskId, status int32, message []byte) error {
	return n.callScheduler(taskID, "relay frontend message", func(ctx context.Context, c *sparrowrpc.SchedulerServiceClient) error {
		return c.SendFrontendMessage(ctx, app, taskID, status, message)
	})
}

// relayFinished is relay with the task's finished report in the same call
// (SchedulerService.taskDone).
func (n *NodeMonitor) relayFinished(app string, taskID *sparrowrpc.TFullTaskId, status int32, message []byte) error {
	return n.callScheduler(taskID, "report finished and relay frontend message", func(ctx context.Context, c *sparrowrpc.SchedulerServiceClient) error {
		return c.TaskDone(ctx, app, taskID, status, message, n.self)
	})
}

// callScheduler calls the SchedulerService named in taskID, trying again
// for up to relayBusyFor while every pooled connection is busy (the call
// never left); what names the call in errors.
func (n *NodeMonitor) callScheduler(taskID *sparrowrpc.TFullTaskId, what string, call func(context.Context, *sparrowrpc.SchedulerServiceClient) error) error {
	addr := rpc.HostPortString(taskID.SchedulerAddress)
	busy, cancel := context.WithTimeout(context.Background(), relayBusyFor)
	defer cancel()
	err := rpc.UntilSent(busy, func() error {
		return n.sched.Call(context.Background(), addr, call)
	}, nil)
	if err != nil {
		return fmt.Errorf("%s for task %q to scheduler %s: %w", what, taskID.TaskId, addr, err)
	}
	return nil
}

// drive starts a fetch for every reservation that a free slot can take.
func (n *NodeMonitor) drive() {
	n.mu.Lock()
	ready, _, _ := n.readyLocked(nil)
	n.mu.Unlock()
	for _, r := range ready {
		go n.fetch(r)
	}
}

// readyLocked takes every reservation that a free slot can take off the
// queue. If offer is set, the first of them for offer's request and
// scheduler is returned apart, as took with ok set, for the caller to run
// the offered task in its slot; the rest are returned in ready, to fetch.
// Called with n.mu held.
func (n *NodeMonitor) readyLocked(offer *queue.Reservation) (ready []queue.Reservation, took queue.Reservation, ok bool) {
	for {
		r, more := n.core.Next()
		if !more {
			return ready, took, ok
		}
		if n.goneScheds[r.Scheduler] {
			// Its scheduler is gone: free the slot without a call.
			n.core.Released()
			continue
		}
		if offer != nil && !ok && r.RequestID == offer.RequestID && r.Scheduler == offer.Scheduler {
			took, ok = r, true
			continue
		}
		ready = append(ready, r)
	}
}

func (n *NodeMonitor) getTaskAddr(scheduler string) string {
	if n.dir != nil {
		if a, ok := n.dir.GetTaskAddr(scheduler); ok {
			return a
		}
	}
	host, _, err := net.SplitHostPort(scheduler)
	if err != nil {
		return scheduler
	}
	return net.JoinHostPort(host, DefaultGetTaskPort)
}

// SchedulerGone records that the scheduler serving at service (its
// SchedulerService address) died or left: its queued reservations will be
// released as they come up, without calling it.
func (n *NodeMonitor) SchedulerGone(service string) {
	n.mu.Lock()
	n.goneScheds[service] = true
	n.mu.Unlock()
}

// SchedulerBack undoes SchedulerGone when the scheduler rejoins.
func (n *NodeMonitor) SchedulerBack(service string) {
	n.mu.Lock()
	delete(n.goneScheds, service)
	n.mu.Unlock()
}

// fetch runs one reservation that reached a free slot: getTask, then
// launchTask. The slot is held throughout and freed on every failure path.
func (n *NodeMonitor) fetch(r queue.Reservation) {
	gt := n.getTaskAddr(r.Scheduler)
	specs, err := n.askForTask(r, gt)
	if err != nil || len(specs) == 0 {
		if err != nil {
			n.log.Warn().Err(err).Str("request", r.RequestID).Str("scheduler", gt).Msg("getTask failed; dropping reservation")
		}
		n.mu.Lock()
		n.core.Released()
		n.mu.Unlock()
		n.drive()
		return
	}
	if len(specs) > 1 {
		// Our schedulers hand out one task per reservation; a slot can run
		// only one, so the rest are reported failed rather than dropped.
		n.log.Error().Int("tasks", len(specs)).Str("request", r.RequestID).Msg("getTask returned several tasks for one slot")
		for _, extra := range specs[1:] {
			n.finished(r.Scheduler, slots.TaskKey{RequestID: r.RequestID, TaskID: extra.TaskId}, r.App)
			n.reportFailed(r, extra.TaskId, "node monitor got several tasks for one reservation")
		}
	}
	n.launch(r, specs[0])
}

func fullID(scheduler string, key slots.TaskKey, app string) *sparrowrpc.TFullTaskId {
	sched, _ := rpc.ParseHostPort(scheduler)
	return &sparrowrpc.TFullTaskId{TaskId: key.TaskID, RequestId: key.RequestID, AppId: app, SchedulerAddress: sched}
}

func (n *NodeMonitor) launch(r queue.Reservation, spec *sparrowrpc.TTaskLaunchSpec) {
	key := slots.TaskKey{RequestID: r.RequestID, TaskID: spec.TaskId}
	now := time.Now()
	n.mu.Lock()
	started := n.core.Start(key, r)
	backend, hasBackend := n.backend[r.App]
	if started {
		n.launches++
		n.clock.observe(now, n.core.Running(), 0)
	}
	n.mu.Unlock()
	if !started {
		n.log.Error().Str("request", r.RequestID).Str("task", spec.TaskId).Msg("task already running here; not launching it twice")
		n.drive()
		return
	}
	if !hasBackend {
		// The executor was lost between fetch and launch.
		n.mu.Lock()
		n.core.Finished(key)
		n.clock.observe(time.Now(), n.core.Running(), 1)
		n.mu.Unlock()
		n.finished(r.Scheduler, key, r.App)
		n.reportFailed(r, spec.TaskId, fmt.Sprintf("no executor registered for app %q", r.App))
		n.drive()
		return
	}
	id := fullID(r.Scheduler, key, r.App)
	user := &sparrowrpc.TUserGroupInfo{User: r.User, Group: r.Group, Priority: r.Priority}
	err := n.backends.Call(context.Background(), backend, func(ctx context.Context, c *sparrowrpc.BackendServiceClient) error {
		return c.LaunchTask(ctx, spec.Message, id, user)
	})
	if err != nil {
		// This task, and any other the executor was running, fail with it.
		n.executorLost(r.App, backend, fmt.Errorf("launchTask of %s/%s: %w", r.RequestID, spec.TaskId, err))
	}
}

func (n *NodeMonitor) reportFailed(r queue.Reservation, taskID, why string) {
	id := fullID(r.Scheduler, slots.TaskKey{RequestID: r.RequestID, TaskID: taskID}, r.App)
	if err := n.relay(r.App, id, sparrowrpc.STATUS_TASK_FAILED, []byte(why)); err != nil {
		n.log.Error().Err(err).Str("task", taskID).Msg("could not report failed task")
	}
}

// SetWeights changes users' fair-share weights at run time. It fails,
// changing nothing, if the discipline has no weights or a weight is bad.
func (n *NodeMonitor) SetWeights(weights map[string]float64) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	q, ok := n.core.Queue().(queue.Weights)
	if !ok {
		return fmt.Errorf("set weights: the %T queue discipline has no weights", n.core.Queue())
	}
	for user, w := range weights {
		if err := queue.CheckWeight(w); err != nil {
			return fmt.Errorf("set weights: user %q: %w", user, err)
		}
	}
	for user, w := range weights {
		if err := q.SetWeight(user, w); err != nil {
			return fmt.Errorf("set weights: user %q: %w", user, err)
		}
	}
	return nil
}
