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
// messages are delivered, those of one job together (deliverTogether) and
// jobs in parallel; the call answers once all are, with an error naming
// those that failed.
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
	deliver := func(g doneGroup) {
		for i, err := range s.deliverTogether(ctx, g.app, g.request, g.msgs) {
			if err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("task %q of request %q: %w", g.msgs[i].TaskId.TaskId, g.request, err))
				mu.Unlock()
			}
		}
	}
	// The first job's messages are delivered on this goroutine, the
	// others' beside it.
	groups := s.groupDone(tasks)
	for _, g := range groups[min(1, len(groups)):] {
		wg.Go(func() { deliver(g) })
	}
	if len(groups) > 0 {
		deliver(groups[0])
	}
	wg.Wait()
	return errors.Join(errs...)
}

// doneGroup is the messages of one job's tasks in a tasksDone call.
type doneGroup struct {
	app, request string
	msgs         []*sparrowrpc.TFrontendMessage
}

// groupDone groups tasks' messages by job, in the order the jobs first
// appear, leaving out tasks without an id and those already reported lost
// (lateMessage).
func (s *Scheduler) groupDone(tasks []*sparrowrpc.TTaskDone) []doneGroup {
	var groups []doneGroup
	index := make(map[[2]string]int)
	for _, t := range tasks {
		if t == nil || t.TaskId == nil || s.lateMessage(t.TaskId) {
			continue
		}
		m := &sparrowrpc.TFrontendMessage{TaskId: t.TaskId, Status: t.Status, Message: t.Message}
		job := [2]string{t.App, t.TaskId.RequestId}
		k, ok := index[job]
		if !ok {
			k = len(groups)
			index[job] = k
			groups = append(groups, doneGroup{app: t.App, request: t.TaskId.RequestId})
		}
		groups[k].msgs = append(groups[k].msgs, m)
	}
	return groups
}
