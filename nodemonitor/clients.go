package nodemonitor

import (
	"context"
	"fmt"
	"time"

	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// Schedulers is how a NodeMonitor calls schedulers: gt names a
// scheduler's GetTaskService address, svc its SchedulerService address.
// The node monitor's own InternalService address goes with every call
// that needs it. Implementations are safe for concurrent use; the Thrift
// one is thriftSchedulers, and tests use fakes.
type Schedulers interface {
	// GetTask is the original protocol's getTask.
	GetTask(gt, requestID string) ([]*sparrowrpc.TTaskLaunchSpec, error)
	// FetchTask is getTask with a fetch ID, answered the same way when
	// asked again with the same ID.
	FetchTask(gt, requestID string, fetchID int64) ([]*sparrowrpc.TTaskLaunchSpec, error)
	// TasksFinished is the oneway finished report.
	TasksFinished(gt string, ids []*sparrowrpc.TFullTaskId) error
	// SendFrontendMessage relays an executor's message about a task.
	SendFrontendMessage(svc, app string, id *sparrowrpc.TFullTaskId, status int32, msg []byte) error
	// TaskDone is SendFrontendMessage with the task's finished report.
	TaskDone(svc, app string, id *sparrowrpc.TFullTaskId, status int32, msg []byte) error
	// TasksDone is TaskDone for several tasks in one call.
	TasksDone(svc string, tasks []*sparrowrpc.TTaskDone) error
	// Close releases connections; later calls fail.
	Close()
}

// Executors is how a NodeMonitor calls the executors registered with it,
// each at its BackendService address. Implementations are safe for
// concurrent use.
type Executors interface {
	LaunchTask(addr string, msg []byte, id *sparrowrpc.TFullTaskId, user *sparrowrpc.TUserGroupInfo) error
	// LaunchTaskAndWait is LaunchTask for an executor registered with
	// BACKEND_LAUNCH_AND_WAIT: it answers with the task's end if the task
	// ends within wait.
	LaunchTaskAndWait(addr string, msg []byte, id *sparrowrpc.TFullTaskId, user *sparrowrpc.TUserGroupInfo, wait time.Duration) (*sparrowrpc.TLaunchReply, error)
	// LaunchTasksAndWait is LaunchTaskAndWait for several tasks in one
	// call, to an executor registered with BACKEND_LAUNCH_BATCH: one
	// answer per task, in order.
	LaunchTasksAndWait(addr string, tasks []*sparrowrpc.TLaunchItem, wait time.Duration) ([]*sparrowrpc.TLaunchReply, error)
	// Alive checks, within timeout, that the executor accepts connections.
	Alive(addr string, timeout time.Duration) error
	// Forget drops pooled connections to addr, for an executor that
	// registered again (perhaps a new process at the same address).
	Forget(addr string)
	Close()
}

// relayBusyFor is how long a relay keeps trying while every connection to
// the scheduler is busy (rpc.UntilSent): less than the executor's default
// call timeout, so that an executor waiting on the relay hears the outcome.
const relayBusyFor = 3 * time.Second

// thriftSchedulers calls schedulers over pooled Thrift connections.
type thriftSchedulers struct {
	self    *sparrowrpc.THostPort
	getTask *rpc.Pool[*sparrowrpc.GetTaskServiceClient]
	sched   *rpc.Pool[*sparrowrpc.SchedulerServiceClient]
}

// newThriftSchedulers returns Schedulers over Thrift; getTaskTimeout
// bounds the GetTaskService calls.
func newThriftSchedulers(cfg rpc.Config, getTaskTimeout time.Duration, self *sparrowrpc.THostPort) *thriftSchedulers {
	gtCfg := cfg
	gtCfg.CallTimeout = getTaskTimeout
	return &thriftSchedulers{
		self:    self,
		getTask: rpc.NewPool(gtCfg, sparrowrpc.NewGetTaskServiceClient),
		sched:   rpc.NewPool(cfg, sparrowrpc.NewSchedulerServiceClient),
	}
}

func (t *thriftSchedulers) GetTask(gt, requestID string) (specs []*sparrowrpc.TTaskLaunchSpec, err error) {
	err = t.getTask.Call(context.Background(), gt, func(ctx context.Context, c *sparrowrpc.GetTaskServiceClient) error {
		specs, err = c.GetTask(ctx, requestID, t.self)
		return err
	})
	return specs, err
}

func (t *thriftSchedulers) FetchTask(gt, requestID string, fetchID int64) (specs []*sparrowrpc.TTaskLaunchSpec, err error) {
	err = t.getTask.Call(context.Background(), gt, func(ctx context.Context, c *sparrowrpc.GetTaskServiceClient) error {
		specs, err = c.FetchTask(ctx, requestID, t.self, fetchID)
		return err
	})
	return specs, err
}

func (t *thriftSchedulers) TasksFinished(gt string, ids []*sparrowrpc.TFullTaskId) error {
	return t.getTask.Call(context.Background(), gt, func(ctx context.Context, c *sparrowrpc.GetTaskServiceClient) error {
		return c.TasksFinished(ctx, t.self, ids)
	})
}

func (t *thriftSchedulers) SendFrontendMessage(svc, app string, id *sparrowrpc.TFullTaskId, status int32, msg []byte) error {
	return t.call(svc, func(ctx context.Context, c *sparrowrpc.SchedulerServiceClient) error {
		return c.SendFrontendMessage(ctx, app, id, status, msg)
	})
}

func (t *thriftSchedulers) TaskDone(svc, app string, id *sparrowrpc.TFullTaskId, status int32, msg []byte) error {
	return t.call(svc, func(ctx context.Context, c *sparrowrpc.SchedulerServiceClient) error {
		return c.TaskDone(ctx, app, id, status, msg, t.self)
	})
}

func (t *thriftSchedulers) TasksDone(svc string, tasks []*sparrowrpc.TTaskDone) error {
	return t.call(svc, func(ctx context.Context, c *sparrowrpc.SchedulerServiceClient) error {
		return c.TasksDone(ctx, tasks, t.self)
	})
}

// call calls the SchedulerService at svc, trying again for up to
// relayBusyFor while every pooled connection is busy (the call never
// left).
func (t *thriftSchedulers) call(svc string, fn func(context.Context, *sparrowrpc.SchedulerServiceClient) error) error {
	busy, cancel := context.WithTimeout(context.Background(), relayBusyFor)
	defer cancel()
	return rpc.UntilSent(busy, func() error {
		return t.sched.Call(context.Background(), svc, fn)
	}, nil)
}

func (t *thriftSchedulers) Close() {
	t.getTask.Close()
	t.sched.Close()
}

// thriftExecutors calls executors over pooled Thrift connections.
type thriftExecutors struct {
	pool *rpc.Pool[*sparrowrpc.ExtendedBackendServiceClient]
}

func newThriftExecutors(cfg rpc.Config) *thriftExecutors {
	return &thriftExecutors{pool: rpc.NewPool(cfg, sparrowrpc.NewExtendedBackendServiceClient)}
}

func (t *thriftExecutors) LaunchTask(addr string, msg []byte, id *sparrowrpc.TFullTaskId, user *sparrowrpc.TUserGroupInfo) error {
	return t.pool.Call(context.Background(), addr, func(ctx context.Context, c *sparrowrpc.ExtendedBackendServiceClient) error {
		return c.LaunchTask(ctx, msg, id, user)
	})
}

func (t *thriftExecutors) LaunchTaskAndWait(addr string, msg []byte, id *sparrowrpc.TFullTaskId, user *sparrowrpc.TUserGroupInfo, wait time.Duration) (reply *sparrowrpc.TLaunchReply, err error) {
	err = t.pool.Call(context.Background(), addr, func(ctx context.Context, c *sparrowrpc.ExtendedBackendServiceClient) error {
		reply, err = c.LaunchTaskAndWait(ctx, msg, id, user, int32(wait/time.Microsecond))
		return err
	})
	return reply, err
}

func (t *thriftExecutors) LaunchTasksAndWait(addr string, tasks []*sparrowrpc.TLaunchItem, wait time.Duration) (replies []*sparrowrpc.TLaunchReply, err error) {
	err = t.pool.Call(context.Background(), addr, func(ctx context.Context, c *sparrowrpc.ExtendedBackendServiceClient) error {
		replies, err = c.LaunchTasksAndWait(ctx, tasks, int32(wait/time.Microsecond))
		return err
	})
	return replies, err
}

func (t *thriftExecutors) Alive(addr string, timeout time.Duration) error {
	if err := t.pool.Reachable(context.Background(), addr, timeout); err != nil {
		return fmt.Errorf("executor at %s stopped accepting connections: %w", addr, err)
	}
	return nil
}

// Hold holds a connection to the executor at addr open until it ends
// (rpc.Pool.Hold), for the liveness watch (executorWatch).
func (t *thriftExecutors) Hold(ctx context.Context, addr string, opened func()) error {
	return t.pool.Hold(ctx, addr, opened)
}

func (t *thriftExecutors) Forget(addr string) { t.pool.Forget(addr) }
func (t *thriftExecutors) Close()             { t.pool.Close() }
