package nodemonitor

import (
	"fmt"
	"net"

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

// reporter tells schedulers what became of their tasks here: finished
// (batched, oneway tasksFinished per scheduler), failed, and executors'
// messages, relayed with the finished report in one taskDone call to a
// scheduler that has it.
//
// Lock contract: it has no lock of its own; the batcher and caps lock
// themselves. Safe for concurrent use.
type reporter struct {
	scheds Schedulers
	dir    SchedulerDirectory
	caps   *rpc.Capabilities
	log    zerolog.Logger
	batch  *batch.Batcher[string, *sparrowrpc.TFullTaskId]
}

func newReporter(scheds Schedulers, dir SchedulerDirectory, caps *rpc.Capabilities, log zerolog.Logger) *reporter {
	r := &reporter{scheds: scheds, dir: dir, caps: caps, log: log}
	r.batch = batch.New(r.sendFinished)
	return r
}

// getTaskAddr returns the GetTaskService address of the scheduler serving
// SchedulerService at svc: from the directory, else the default port on
// its host.
func (r *reporter) getTaskAddr(svc string) string {
	if r.dir != nil {
		if a, ok := r.dir.GetTaskAddr(svc); ok {
			return a
		}
	}
	host, _, err := net.SplitHostPort(svc)
	if err != nil {
		return svc
	}
	return net.JoinHostPort(host, DefaultGetTaskPort)
}

// finished queues a report that key, of app, no longer runs here, for its
// scheduler's next batched tasksFinished.
func (r *reporter) finished(svc string, key slots.TaskKey, app string) {
	r.finishedID(fullID(svc, key, app))
}

func (r *reporter) finishedID(id *sparrowrpc.TFullTaskId) {
	r.batch.Add(r.getTaskAddr(rpc.HostPortString(id.SchedulerAddress)), id)
}

// sendFinished tells one scheduler, in one oneway tasksFinished call, which
// of its tasks finished here. A failure only means the scheduler may
// report a finished task as lost if this node later dies, so it is
// logged, not retried.
func (r *reporter) sendFinished(gt string, ids []*sparrowrpc.TFullTaskId) {
	if err := r.scheds.TasksFinished(gt, ids); err != nil {
		r.log.Debug().Err(err).Str("scheduler", gt).Int("tasks", len(ids)).Msg("tasksFinished report not delivered")
	}
}

// wait returns once every queued finished report was sent.
func (r *reporter) wait() { r.batch.Wait() }

// relay passes an executor's message about a task to the scheduler named
// in its task id (sendFrontendMessage).
func (r *reporter) relay(app string, id *sparrowrpc.TFullTaskId, status int32, msg []byte) error {
	svc := rpc.HostPortString(id.SchedulerAddress)
	if err := r.scheds.SendFrontendMessage(svc, app, id, status, msg); err != nil {
		return fmt.Errorf("relay frontend message for task %q to scheduler %s: %w", id.TaskId, svc, err)
	}
	return nil
}

// done reports a task finished with its message: one taskDone call, or,
// to a scheduler that answered taskDone UNKNOWN_METHOD, a tasksFinished
// report and a sendFrontendMessage. It returns once the message is
// relayed. Only a task freed here is reported finished (freed); the
// message is relayed either way.
func (r *reporter) done(app string, id *sparrowrpc.TFullTaskId, status int32, msg []byte, freed bool) error {
	svc := rpc.HostPortString(id.SchedulerAddress)
	if freed && !r.caps.Lacks(svc, methodTaskDone) {
		err := r.scheds.TaskDone(svc, app, id, status, msg)
		if !rpc.IsUnknownMethod(err) {
			if err != nil {
				return fmt.Errorf("report finished and relay frontend message for task %q to scheduler %s: %w", id.TaskId, svc, err)
			}
			return nil
		}
		r.caps.MarkLacking(svc, methodTaskDone)
		r.log.Info().Str("scheduler", svc).Msg("scheduler has no taskDone; sending tasksFinished and sendFrontendMessage")
	}
	if freed {
		r.finishedID(id)
	}
	return r.relay(app, id, status, msg)
}

// failed tells res's scheduler that taskID failed here, for why.
func (r *reporter) failed(res queue.Reservation, taskID, why string) {
	id := fullID(res.Scheduler, slots.TaskKey{RequestID: res.RequestID, TaskID: taskID}, res.App)
	if err := r.relay(res.App, id, sparrowrpc.STATUS_TASK_FAILED, []byte(why)); err != nil {
		r.log.Error().Err(err).Str("task", taskID).Msg("could not report failed task")
	}
}

func fullID(scheduler string, key slots.TaskKey, app string) *sparrowrpc.TFullTaskId {
	sched, _ := rpc.ParseHostPort(scheduler)
	return &sparrowrpc.TFullTaskId{TaskId: key.TaskID, RequestId: key.RequestID, AppId: app, SchedulerAddress: sched}
}
