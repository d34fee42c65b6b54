package scheduler

import (
	"context"
	"fmt"

	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// fetchKey names one fetch of one node monitor (GetTaskService.fetchTask).
type fetchKey struct {
	node string // the node monitor's InternalService address
	id   int64
}

// fetched is the state of a fetch: being answered (pending), or the task
// it handed out, with the spec to hand out again.
type fetched struct {
	pending bool
	task    runningTask
	spec    *sparrowrpc.TTaskLaunchSpec
}

// fetchBook is the fetch memory: the fetchTask fetches being answered,
// and those that handed out a task still tracked as running on their
// node monitor, to answer a node monitor that asks again the same way.
// The runningBook that tracks those tasks keeps it.
//
// It has no lock of its own: it is not safe for concurrent use, and its
// owner serialises every call.
type fetchBook struct {
	m          map[fetchKey]fetched
	askedAgain uint64 // fetches asked about again once answered
}

// begin returns the state of fetch key if it is known, counting an ask
// about one already answered; an unknown fetch is recorded as being
// answered.
func (b *fetchBook) begin(key fetchKey) (fetched, bool) {
	if f, ok := b.m[key]; ok {
		if !f.pending {
			b.askedAgain++
		}
		return f, true
	}
	if b.m == nil {
		b.m = make(map[fetchKey]fetched)
	}
	b.m[key] = fetched{pending: true}
	return fetched{}, false
}

// answered records the answer to fetch (0: a getTask, nothing to record)
// of node monitor addr: task t, with spec, if kept (a task was handed out
// and is tracked there as handed out by this fetch); else it forgets the
// fetch.
func (b *fetchBook) answered(addr string, fetch int64, t runningTask, spec *sparrowrpc.TTaskLaunchSpec, kept bool) {
	if fetch == 0 {
		return
	}
	if spec != nil && kept {
		b.m[fetchKey{addr, fetch}] = fetched{task: t, spec: spec}
		return
	}
	b.forget(addr, fetch)
}

// forget drops the record of fetch (0: none) of node monitor addr.
func (b *fetchBook) forget(addr string, fetch int64) {
	if fetch != 0 {
		delete(b.m, fetchKey{addr, fetch})
	}
}

// len returns how many fetches are remembered.
func (b *fetchBook) len() int { return len(b.m) }

// FetchTask implements GetTaskService.fetchTask: getTask, answered again
// the same way when the node monitor asks again with the same fetch ID
// because its first call failed. A task handed out in a call whose answer
// was lost (a cut connection, an answer later than the node monitor's
// timeout) is then launched once, where it was counted launched, instead
// of never while the scheduler counts it running there.
//
// The fetch is remembered while its task is tracked as running on that
// node monitor: until the node monitor reports it finished (which it can
// only do after it got the answer) or is declared lost, when the task is
// reported lost and a later ask gets an empty answer, so a task is never
// reported lost and launched. A fetch that handed out nothing is
// forgotten at once: asked again, it is answered afresh, which loses and
// duplicates nothing.
func (s *Scheduler) FetchTask(ctx context.Context, requestID string, nm *sparrowrpc.THostPort, fetchID int64) ([]*sparrowrpc.TTaskLaunchSpec, error) {
	if fetchID == 0 {
		return nil, fmt.Errorf("fetchTask: fetch id 0 is reserved for none")
	}
	addr := rpc.HostPortString(nm)
	s.mu.Lock()
	known, pending, spec := s.running.fetchAgain(addr, fetchID)
	s.mu.Unlock()
	switch {
	case !known:
		return s.getTask(requestID, addr, fetchID), nil
	case pending:
		// The node monitor gave up on a call still being answered; it
		// asks again after a pause, by when the answer is recorded.
		return nil, fmt.Errorf("fetchTask %d of %s for request %s: still being answered; ask again", fetchID, addr, requestID)
	case spec != nil:
		return []*sparrowrpc.TTaskLaunchSpec{spec}, nil
	}
	return []*sparrowrpc.TTaskLaunchSpec{}, nil
}
