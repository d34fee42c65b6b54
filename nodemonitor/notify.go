package nodemonitor

import (
	"context"
	"sync"

	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// finishedNotifier tells schedulers which of their tasks finished here,
// batching per scheduler: at most one call per scheduler is in flight, and
// reports that arrive meanwhile go in the next call. This keeps the extra
// RPC off the slot loop and amortises it under load. Safe for concurrent
// use.
type finishedNotifier struct {
	send func(getTaskAddr string, ids []*sparrowrpc.TFullTaskId)

	mu      sync.Mutex
	pending map[string][]*sparrowrpc.TFullTaskId
	busy    map[string]bool
	wg      sync.WaitGroup
}

func newFinishedNotifier(send func(string, []*sparrowrpc.TFullTaskId)) *finishedNotifier {
	return &finishedNotifier{send: send, pending: map[string][]*sparrowrpc.TFullTaskId{}, busy: map[string]bool{}}
}

func (f *finishedNotifier) add(getTaskAddr string, id *sparrowrpc.TFullTaskId) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pending[getTaskAddr] = append(f.pending[getTaskAddr], id)
	if !f.busy[getTaskAddr] {
		f.busy[getTaskAddr] = true
		f.wg.Add(1)
		go f.flush(getTaskAddr)
	}
}

func (f *finishedNotifier) flush(addr string) {
	defer f.wg.Done()
	for {
		f.mu.Lock()
		ids := f.pending[addr]
		delete(f.pending, addr)
		if len(ids) == 0 {
			delete(f.busy, addr)
			f.mu.Unlock()
			return
		}
		f.mu.Unlock()
		f.send(addr, ids)
	}
}

// wait blocks until every pending report has been sent (or failed).
func (f *finishedNotifier) wait() { f.wg.Wait() }

// sendFinished is the notifier's transport: a oneway tasksFinished call.
// A failure only means the scheduler may later report a finished task as
// lost if this node dies, so it is logged, not retried.
func (n *NodeMonitor) sendFinished(addr string, ids []*sparrowrpc.TFullTaskId) {
	err := n.getTask.Call(context.Background(), addr, func(ctx context.Context, c *sparrowrpc.GetTaskServiceClient) error {
		return c.TasksFinished(ctx, n.self, ids)
	})
	if err != nil {
		n.log.Debug().Err(err).Str("scheduler", addr).Int("tasks", len(ids)).Msg("tasksFinished report not delivered")
	}
}
