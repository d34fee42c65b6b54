package nodemonitor

import (
	"fmt"
	"net"
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

// reporter tells schedulers what became of their tasks here: finished
// (batched, oneway tasksFinished per scheduler), failed, and executors'
// messages, relayed with the finished report in one taskDone call to a
// scheduler that has it, or, to a scheduler that said it serves tasksDone
// (features), gathered per scheduler over doneWindow into tasksDone calls.
//
// Lock contract: it has no lock of its own; the batchers, caps and
// features lock themselves. Safe for concurrent use.
type reporter struct {
	scheds   Schedulers
	dir      SchedulerDirectory
	caps     *rpc.Capabilities
	features *schedulerFeatures
	log      zerolog.Logger
	batch    *batch.Batcher[string, *sparrowrpc.TFullTaskId]
	dones    *batch.Windowed[string, pendingDone]
}

// pendingDone is a task's end waiting for its scheduler's next tasksDone
// call; result, if not nil, receives that call's outcome.
type pendingDone struct {
	done   *sparrowrpc.TTaskDone
	result chan<- error
}

// maxTasksDone bounds the tasks in one tasksDone call.
const maxTasksDone = 64

func newReporter(scheds Schedulers, dir SchedulerDirectory, caps *rpc.Capabilities, features *schedulerFeatures, doneWindow time.Duration, log zerolog.Logger) *reporter {
	r := &reporter{scheds: scheds, dir: dir, caps: caps, features: features, log: log}
	r.batch = batch.New(r.sendFinished)
	r.dones = batch.NewWindowed(doneWindow, maxTasksDone, r.sendDones)
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

// wait sends the tasks' ends still gathering at once, and returns once
// they and every queued finished report were sent.
func (r *reporter) wait() {
	r.dones.Close()
	r.batch.Wait()
}

// sendDones reports a batch of tasks' ends to the scheduler at svc in one
// tasksDone call, and passes its outcome to each task's waiter. A
// scheduler that answers UNKNOWN_METHOD (replaced at its address by one
// without the extension) gets each task's taskDone, or the original
// calls, from then on.
func (r *reporter) sendDones(svc string, items []pendingDone) {
	tasks := make([]*sparrowrpc.TTaskDone, len(items))
	for i, it := range items {
		tasks[i] = it.done
	}
	err := r.scheds.TasksDone(svc, tasks)
	if rpc.IsUnknownMethod(err) {
		r.caps.MarkLacking(svc, methodTasksDone)
		r.log.Info().Str("scheduler", svc).Msg("scheduler has no tasksDone; sending taskDone per task")
		for _, it := range items {
			d := it.done
			err := r.done(d.App, d.TaskId, d.Status, d.Message, true, it.result != nil)
			if it.result != nil {
				it.result <- err
			}
		}
		return
	}
	if err != nil {
		err = fmt.Errorf("report %d finished tasks and relay their messages to scheduler %s: %w", len(items), svc, err)
	}
	waited := false
	for _, it := range items {
		if it.result != nil {
			it.result <- err
			waited = true
		}
	}
	if err != nil && !waited {
		r.log.Warn().Err(err).Msg("tasksDone failed")
	}
}

// relay passes an executor's message about a task to the scheduler named
// in its task id (sendFrontendMessage).
func (r *reporter) relay(app string, id *sparrowrpc.TFullTaskId, status int32, msg []byte) error {
	svc := rpc.HostPortString(id.SchedulerAddress)
	if err := r.scheds.SendFrontendMessage(svc, app, id, status, msg); err != nil {
		return fmt.Errorf("relay frontend message for task %q to scheduler %s: %w", id.TaskId, svc, err)
	}
	return nil
}

// done reports a task finished with its message: gathered into the
// scheduler's next tasksDone call if it serves that, else one taskDone
// call, or, to a scheduler that answered taskDone UNKNOWN_METHOD, a
// tasksFinished report and a sendFrontendMessage. If wait, it returns
// once the message is relayed, with the outcome; else a message gathered
// for tasksDone is on its way when it returns, and its failure is logged.
// Only a task freed here is reported finished (freed); the message is
// relayed either way.
func (r *reporter) done(app string, id *sparrowrpc.TFullTaskId, status int32, msg []byte, freed, wait bool) error {
	svc := rpc.HostPortString(id.SchedulerAddress)
	if freed && r.features.has(svc, sparrowrpc.SCHEDULER_TASKS_DONE) && !r.caps.Lacks(svc, methodTasksDone) {
		d := pendingDone{done: &sparrowrpc.TTaskDone{App: app, TaskId: id, Status: status, Message: msg}}
		if !wait {
			r.dones.Add(svc, d)
			return nil
		}
		result := make(chan error, 1)
		d.result = result
		r.dones.Add(svc, d)
		return <-result
	}
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
