package nodemonitor

import (
	"context"

	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// sendFinished tells one scheduler, in one oneway tasksFinished call, which
// of its tasks finished here (batched per scheduler by n.notify, off the
// slot loop). A failure only means the scheduler may report a finished task
// as lost if this node later dies, so it is logged, not retried.
func (n *NodeMonitor) sendFinished(addr string, ids []*sparrowrpc.TFullTaskId) {
	err := n.getTask.Call(context.Background(), addr, func(ctx context.Context, c *sparrowrpc.GetTaskServiceClient) error {
		return c.TasksFinished(ctx, n.self, ids)
	})
	if err != nil {
		n.log.Debug().Err(err).Str("scheduler", addr).Int("tasks", len(ids)).Msg("tasksFinished report not delivered")
	}
}
