package scheduler

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// schedulerFeatures are the extensions this scheduler serves, sent with every
// reservation (TEnqueueTaskReservationsRequest.schedulerFeatures) so that
// a node monitor calls them only on a scheduler that has them. Read-only.
var schedulerFeatures = int32(sparrowrpc.SCHEDULER_TASKS_DONE)

// TasksDone implements SchedulerService's extension: TaskDone for several
// tasks in one call. Every task is recorded finished first, then the
// messages are delivered, in parallel; the call answers once all are,
// with an error naming those that failed.
func (s *Scheduler) TasksDone(ctx context.Context, tasks []*sparrowrpc.TTaskDone, nm *sparrowrpc.THostPort) error {
	if nm == nil {
		return fmt.Errorf("tasksDone: missing node monitor address")
	}
	ids := make([]*sparrowrpc.TFullTaskId, 0, len(tasks))
	var errs []error
	for i, t := range tasks {
		if t == nil || t.TaskId == nil {
			errs = append(errs, fmt.Errorf("tasksDone: task %d of %d has no task id", i, len(tasks)))
			continue
		}
		ids = append(ids, t.TaskId)
	}
	if err := s.TasksFinished(ctx, nm, ids); err != nil {
		return fmt.Errorf("tasksDone: %w", err)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	deliver := func(t *sparrowrpc.TTaskDone) {
		if err := s.SendFrontendMessage(ctx, t.App, t.TaskId, t.Status, t.Message); err != nil {
			mu.Lock()
			errs = append(errs, fmt.Errorf("task %q of request %q: %w", t.TaskId.TaskId, t.TaskId.RequestId, err))
			mu.Unlock()
		}
	}
	// The first message is delivered on this goroutine, the others
	// beside it.
	var first *sparrowrpc.TTaskDone
	for _, t := range tasks {
		switch {
		case t == nil || t.TaskId == nil:
		case first == nil:
			first = t
		default:
			wg.Go(func() { deliver(t) })
		}
	}
	if first != nil {
		deliver(first)
	}
	wg.Wait()
	return errors.Join(errs...)
}
