package client

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/internal/batch"
	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// Backend defaults.
const (
	DefaultBackendListen = ":20101"
	DefaultNodeMonitor   = "127.0.0.1:20501"
)

// LaunchedTask is a task the node monitor launched on this executor.
type LaunchedTask struct {
	Ref     TaskRef
	Message []byte
	User    User
}

// TaskFunc runs one task. Its result becomes the task's frontend message
// (status StatusOK); an error becomes a StatusFailed message with the
// error's text. Either way the task is then reported finished.
type TaskFunc func(ctx context.Context, t LaunchedTask) ([]byte, error)

// BackendConfig configures a Backend.
type BackendConfig struct {
	App string
	// NodeMonitor is the local NodeMonitorService address.
	NodeMonitor string
	// Listen is where the BackendService listens; AdvertiseHost replaces a
	// wildcard host in the address given to the node monitor (default
	// 127.0.0.1, as executors run beside their node monitor).
	Listen        string
	AdvertiseHost string
	// Run runs each launched task on its own goroutine. If nil, OnLaunch
	// must be set and the application reports completion itself with
	// Finished.
	Run TaskFunc
	// OnLaunch, if set, is called synchronously for each launch before Run
	// starts; it must be quick.
	OnLaunch func(LaunchedTask)
	// RegisterBackoff spaces registration attempts while the node
	// monitor does not answer (it may start after the executor); the
	// context given to NewBackend bounds them. Default
	// DefaultRegisterBackoff.
	RegisterBackoff Backoff
	// Watch is how often the node monitor is checked once the connection
	// the executor holds open to it has ended, to register again after it
	// restarts (a restarted node monitor has forgotten its executors).
	// Default DefaultWatch; negative never watches.
	Watch time.Duration
	RPC   RPCConfig
	Log   zerolog.Logger
}

// Backend is an executor: it serves launchTask for one app on one node,
// stays registered with its node monitor across the node monitor's
// restarts, and shuts down gracefully (Shutdown). Safe for concurrent
// use.
type Backend struct {
	cfg  BackendConfig
	addr string
	srv  *rpc.Server
	nm   *rpc.Pool[*sparrowrpc.NodeMonitorServiceClient]
	log  zerolog.Logger
	// ctx is the running tasks' context; stop cancels it.
	ctx  context.Context
	stop context.CancelFunc
	// stopWatch ends the registration watch; watchDone is closed once it
	// has.
	stopWatch context.CancelFunc
	watchDone chan struct{}
	running   atomic.Int64
	closeOnce sync.Once
	closeErr  error
	// finish batches Run's finished reports to the node monitor.
	finish *batch.Batcher[struct{}, TaskRef]
	// noTaskDone is set once the node monitor has answered taskDone with
	// UNKNOWN_METHOD (an original Sparrow node monitor): from then on a
	// task's end costs the original tasksFinished and sendFrontendMessage.
	noTaskDone atomic.Bool
	// noFeatures is set once the node monitor has answered
	// registerBackendWithFeatures with UNKNOWN_METHOD: from then on the
	// executor registers with the original registerBackend.
	noFeatures atomic.Bool

	mu     sync.Mutex // orders wg.Add against Close's wg.Wait
	closed bool
	wg     sync.WaitGroup
}

// NewBackend starts the BackendService and registers it with the node
// monitor, trying again (cfg.RegisterBackoff) while the node monitor does
// not answer, until ctx ends: give ctx a deadline to bound the wait.
// Once registered it watches the node monitor (cfg.Watch) and registers
// again after a restart, until Shutdown or Close.
func NewBackend(ctx context.Context, cfg BackendConfig) (*Backend, error) {
	if cfg.App == "" {
		return nil, fmt.Errorf("backend: missing app")
	}
	if cfg.Run == nil && cfg.OnLaunch == nil {
		return nil, fmt.Errorf("backend: set Run or OnLaunch")
	}
	if cfg.NodeMonitor == "" {
		cfg.NodeMonitor = DefaultNodeMonitor
	}
	if cfg.Listen == "" {
		cfg.Listen = DefaultBackendListen
	}
	if cfg.AdvertiseHost == "" {
		cfg.AdvertiseHost = "127.0.0.1"
	}
	if cfg.RegisterBackoff.Base <= 0 {
		cfg.RegisterBackoff = DefaultRegisterBackoff
	}
	if cfg.Watch == 0 {
		cfg.Watch = DefaultWatch
	}
	srv, err := rpc.Listen(cfg.Listen, cfg.RPC.internal(), cfg.Log)
	if err != nil {
		return nil, fmt.Errorf("backend: %w", err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	watchCtx, stopWatch := context.WithCancel(context.Background())
	b := &Backend{
		cfg:  cfg,
		addr: rpc.Advertised(srv.Addr(), cfg.AdvertiseHost),
		srv:  srv,
		nm:   rpc.NewPool(cfg.RPC.dialing(&cfg.Log), sparrowrpc.NewNodeMonitorServiceClient),
		log:  cfg.Log.With().Str("component", "backend").Str("app", cfg.App).Logger(),
		ctx:  runCtx,
		stop: stop,

		stopWatch: stopWatch,
		watchDone: make(chan struct{}),
	}
	b.finish = batch.New(func(_ struct{}, refs []TaskRef) {
		// Sent again while every connection is busy, until Close: a
		// report not sent leaves its slots taken.
		err := rpc.UntilSent(b.ctx, func() error { return b.Finished(context.Background(), refs...) }, nil)
		if err != nil {
			b.log.Error().Err(err).Int("tasks", len(refs)).Msg("could not report tasks finished")
		}
	})
	go srv.Serve(sparrowrpc.NewExtendedBackendServiceProcessor((*backendHandler)(b)))
	var last string
	err = registerWithRetry(ctx, b.Register, cfg.RegisterBackoff, func(attempt int, err error) {
		if err.Error() != last {
			b.log.Info().Err(err).Int("attempt", attempt).Msg("node monitor not answering yet; retrying")
			last = err.Error()
		}
	})
	if err != nil {
		close(b.watchDone)
		b.Close()
		return nil, err
	}
	b.log.Info().Str("backend", b.addr).Str("node_monitor", cfg.NodeMonitor).Msg("registered with the node monitor")
	if cfg.Watch > 0 {
		go func() {
			defer close(b.watchDone)
			hold := func(ctx context.Context) error { return b.nm.Hold(ctx, cfg.NodeMonitor, nil) }
			watchRegistration(watchCtx, cfg.Watch, hold, dialProbe(cfg.NodeMonitor), b.Register,
				b.log.With().Str("node_monitor", cfg.NodeMonitor).Logger())
		}()
	} else {
		close(b.watchDone)
	}
	return b, nil
}

// Addr returns the BackendService address given to the node monitor.
func (b *Backend) Addr() string { return b.addr }

// maxLaunchWait bounds how long a launchTaskAndWait call waits for its
// task, whatever the node monitor asks.
const maxLaunchWait = 100 * time.Millisecond

// launchWait is how long a launch call waits for its tasks: waitMicros,
// at most maxLaunchWait.
func launchWait(waitMicros int32) time.Duration {
	return min(time.Duration(waitMicros)*time.Microsecond, maxLaunchWait)
}

// features are the extensions this executor serves, as
// registerBackendWithFeatures' bits: launchTaskAndWait and
// launchTasksAndWait when it runs tasks itself (Run), since only then does
// it see them end.
func (b *Backend) features() int32 {
	if b.cfg.Run == nil {
		return 0
	}
	return sparrowrpc.BACKEND_LAUNCH_AND_WAIT | sparrowrpc.BACKEND_LAUNCH_BATCH
}

// Register (re-)registers the executor with its node monitor, with the
// extensions it serves (registerBackendWithFeatures), or with the
// original registerBackend to a node monitor without that method.
func (b *Backend) Register(ctx context.Context) error {
	return b.nm.Call(ctx, b.cfg.NodeMonitor, func(ctx context.Context, c *sparrowrpc.NodeMonitorServiceClient) error {
		var ok bool
		var err error
		if f := b.features(); f != 0 && !b.noFeatures.Load() {
			ok, err = c.RegisterBackendWithFeatures(ctx, b.cfg.App, b.addr, f)
			if rpc.IsUnknownMethod(err) {
				b.noFeatures.Store(true)
				b.log.Info().Msg("node monitor has no registerBackendWithFeatures; registering with registerBackend")
				ok, err = c.RegisterBackend(ctx, b.cfg.App, b.addr)
			}
		} else {
			ok, err = c.RegisterBackend(ctx, b.cfg.App, b.addr)
		}
		if err != nil {
			return fmt.Errorf("register backend for app %q with node monitor %s: %w", b.cfg.App, b.cfg.NodeMonitor, err)
		}
		if !ok {
			return fmt.Errorf("node monitor %s: backend for app %q: %w", b.cfg.NodeMonitor, b.cfg.App, errRegistrationRefused)
		}
		return nil
	})
}

// Finished reports tasks done, freeing their slots.
func (b *Backend) Finished(ctx context.Context, refs ...TaskRef) error {
	ids := make([]*sparrowrpc.TFullTaskId, len(refs))
	for i, r := range refs {
		ids[i] = r.wire()
	}
	return b.nm.Call(ctx, b.cfg.NodeMonitor, func(ctx context.Context, c *sparrowrpc.NodeMonitorServiceClient) error {
		return c.TasksFinished(ctx, ids)
	})
}

// SendFrontendMessage sends a message about a task to its job's frontend,
// through the node monitor and the task's scheduler.
func (b *Backend) SendFrontendMessage(ctx context.Context, ref TaskRef, status int32, body []byte) error {
	return b.nm.Call(ctx, b.cfg.NodeMonitor, func(ctx context.Context, c *sparrowrpc.NodeMonitorServiceClient) error {
		return c.SendFrontendMessage(ctx, ref.App, ref.wire(), status, body)
	})
}

// Running is how many tasks Run is running.
func (b *Backend) Running() int { return int(b.running.Load()) }

// Shutdown stops the executor gracefully: it refuses new launches at
// once, lets the tasks Run is running finish and report, then closes the
// executor. If ctx ends first, the running tasks' contexts are cancelled
// (each is then reported failed, unless Run returns a result anyway), and
// Shutdown returns ctx's error once they have reported. Tasks an
// OnLaunch-only executor reports itself are not waited for.
func (b *Backend) Shutdown(ctx context.Context) error {
	b.refuseLaunches()
	done := make(chan struct{})
	go func() {
		b.wg.Wait()
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = context.Cause(ctx)
		b.log.Warn().Int("running", b.Running()).Msg("shutdown deadline reached; cancelling running tasks")
		b.stop()
		<-done
	}
	return errors.Join(err, b.Close())
}

// refuseLaunches makes every launch from now on fail, and stops the
// registration watch.
func (b *Backend) refuseLaunches() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.stopWatch()
	<-b.watchDone
}

// Close stops serving, cancels running tasks' contexts and waits for them
// to report. Shutdown is the graceful way to stop.
func (b *Backend) Close() error {
	b.closeOnce.Do(func() {
		b.refuseLaunches()
		b.stop()
		b.closeErr = b.srv.Close()
		b.wg.Wait()
		b.finish.Wait()
		b.nm.Close()
	})
	return b.closeErr
}

// run runs t and reports its end: to the launch call waiting for it, if
// given one (h) that is still waiting, else to the node monitor.
func (b *Backend) run(t LaunchedTask, h *handoff) {
	defer b.wg.Done()
	defer b.running.Add(-1)
	body, err := b.cfg.Run(b.ctx, t)
	status := StatusOK
	if err != nil {
		status, body = StatusFailed, []byte(err.Error())
	}
	if h != nil && h.finish(taskEnd{status: status, body: body}) {
		return
	}
	if !b.noTaskDone.Load() {
		// One call frees the slot and, then, relays the message.
		err = rpc.UntilSent(b.ctx, func() error { return b.taskDone(t.Ref, status, body) }, nil)
		switch {
		case err == nil:
			return
		case rpc.IsUnknownMethod(err):
			if !b.noTaskDone.Swap(true) {
				b.log.Info().Msg("node monitor has no taskDone; ending tasks with tasksFinished and sendFrontendMessage")
			}
		default:
			// The call may have reached the node monitor or not. The
			// finished report is idempotent, so it is sent again; the
			// message is not, since it may have been relayed.
			b.finish.Add(struct{}{}, t.Ref)
			b.log.Warn().Err(err).Str("task", t.Ref.TaskID).Msg("frontend message not sent")
			return
		}
	}
	// The slot is freed (in a batch with other finishes) while the message
	// makes its three hops to the frontend, rather than after it. A
	// message that found every connection to the node monitor busy was
	// never sent: it is sent again (until Close), not dropped, which would
	// leave its job waiting for it forever.
	b.finish.Add(struct{}{}, t.Ref)
	err = rpc.UntilSent(b.ctx, func() error {
		return b.SendFrontendMessage(context.Background(), t.Ref, status, body)
	}, nil)
	if err != nil {
		b.log.Warn().Err(err).Str("task", t.Ref.TaskID).Msg("frontend message not sent")
	}
}

// taskDone reports a task finished and sends its message in one call
// (NodeMonitorService.taskDone, an extension).
func (b *Backend) taskDone(ref TaskRef, status int32, body []byte) error {
	return b.nm.Call(context.Background(), b.cfg.NodeMonitor, func(ctx context.Context, c *sparrowrpc.NodeMonitorServiceClient) error {
		return c.TaskDone(ctx, ref.App, ref.wire(), status, body)
	})
}

// backendHandler serves BackendService for a Backend.
type backendHandler Backend

func (h *backendHandler) LaunchTask(ctx context.Context, message []byte, taskID *sparrowrpc.TFullTaskId, user *sparrowrpc.TUserGroupInfo) error {
	return (*Backend)(h).launch("launchTask", message, taskID, user, nil)
}

// LaunchTaskAndWait implements BackendService's extension: launchTask,
// then wait up to waitMicros (at most maxLaunchWait) for the task to end
// and answer with its end, which is then reported no other way. A task
// still running when the wait ends reports itself with taskDone, as after
// launchTask; so does every task of an executor without Run.
func (h *backendHandler) LaunchTaskAndWait(ctx context.Context, message []byte, taskID *sparrowrpc.TFullTaskId, user *sparrowrpc.TUserGroupInfo, waitMicros int32) (*sparrowrpc.TLaunchReply, error) {
	b := (*Backend)(h)
	var hand *handoff
	if b.cfg.Run != nil && waitMicros > 0 {
		hand = newHandoff()
	}
	if err := b.launch("launchTaskAndWait", message, taskID, user, hand); err != nil {
		return nil, err
	}
	if hand == nil {
		return &sparrowrpc.TLaunchReply{}, nil
	}
	wait := launchWait(waitMicros)
	return awaitReply(hand, wait, b.ctx.Done()), nil
}

// awaitReply waits up to wait for the task behind hand to end and returns
// the answer that says so, or that it runs on.
func awaitReply(hand *handoff, wait time.Duration, stop <-chan struct{}) *sparrowrpc.TLaunchReply {
	end, ok := hand.await(wait, stop)
	if !ok {
		return &sparrowrpc.TLaunchReply{}
	}
	return &sparrowrpc.TLaunchReply{Done: true, Status: &end.status, Message: end.body}
}

// LaunchTasksAndWait implements BackendService's extension:
// launchTaskAndWait for each of tasks, all launched before any is waited
// for, under one wait of waitMicros (at most maxLaunchWait) from the
// call's start. Every task is checked before any is launched, and all are
// launched under one hold of mu, so a malformed batch, or one that finds
// the executor closing, launches none.
func (h *backendHandler) LaunchTasksAndWait(ctx context.Context, tasks []*sparrowrpc.TLaunchItem, waitMicros int32) ([]*sparrowrpc.TLaunchReply, error) {
	b := (*Backend)(h)
	for i, t := range tasks {
		if t == nil || t.TaskId == nil || t.TaskId.TaskId == "" {
			return nil, fmt.Errorf("launchTasksAndWait: task %d has no task id", i)
		}
	}
	waiting := b.cfg.Run != nil && waitMicros > 0
	deadline := time.Now().Add(launchWait(waitMicros))
	hands := make([]*handoff, len(tasks))
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, b.closingError("launchTasksAndWait")
	}
	for i, t := range tasks {
		if waiting {
			hands[i] = newHandoff()
		}
		b.startLocked(launchedTask(t.Message, t.TaskId, t.User), hands[i])
	}
	b.mu.Unlock()
	replies := make([]*sparrowrpc.TLaunchReply, len(tasks))
	for i, hand := range hands {
		if hand == nil {
			replies[i] = &sparrowrpc.TLaunchReply{}
			continue
		}
		replies[i] = awaitReply(hand, max(time.Until(deadline), 0), b.ctx.Done())
	}
	return replies, nil
}

// launch starts a launched task (method names the call in errors); its
// end goes to hand first, if given.
func (b *Backend) launch(method string, message []byte, taskID *sparrowrpc.TFullTaskId, user *sparrowrpc.TUserGroupInfo, hand *handoff) error {
	if taskID == nil {
		return fmt.Errorf("%s: missing task id", method)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return b.closingError(method)
	}
	b.startLocked(launchedTask(message, taskID, user), hand)
	return nil
}

// closingError is the error of a launch that finds the executor closed.
func (b *Backend) closingError(method string) error {
	return fmt.Errorf("%s: executor for app %q is shutting down", method, b.cfg.App)
}

// launchedTask is the task a launch call names; taskID is not nil.
func launchedTask(message []byte, taskID *sparrowrpc.TFullTaskId, user *sparrowrpc.TUserGroupInfo) LaunchedTask {
	t := LaunchedTask{Ref: refFromWire(taskID), Message: message}
	if user != nil {
		t.User = User{Name: user.User, Group: user.Group, Priority: user.Priority}
	}
	return t
}

// startLocked hands t to OnLaunch and runs it, if the executor runs tasks;
// its end goes to hand first, if given. Call it with mu held, not closed.
func (b *Backend) startLocked(t LaunchedTask, hand *handoff) {
	if b.cfg.OnLaunch != nil {
		b.cfg.OnLaunch(t)
	}
	if b.cfg.Run != nil {
		b.wg.Add(1)
		b.running.Add(1)
		go b.run(t, hand)
	}
}
