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

// FetchTask implements GetTaskService.fetchTask: getTask, answered again
// the same way when the node monitor asks again with the same fetch ID
// because its first call failed. A task handed out in a call whose answer
// was lost (a cut connection, an answer later than the node monitor's
// timeout) is then launched once, where it was counted launched, instead
// of never while the scheduler counts it running there
// (docs/RELIABILITY.md, finding 8).
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
	key := fetchKey{addr, fetchID}
	s.mu.Lock()
	if f, ok := s.fetches[key]; ok {
		defer s.mu.Unlock()
		if f.pending {
			// The node monitor gave up on a call still being answered; it
			// asks again after a pause, by when the answer is recorded.
			return nil, fmt.Errorf("fetchTask %d of %s for request %s: still being answered; ask again", fetchID, addr, requestID)
		}
		s.stats.FetchesAskedAgain++
		if fetch, tracked := s.running[addr][f.task]; tracked && fetch == fetchID {
			return []*sparrowrpc.TTaskLaunchSpec{f.spec}, nil
		}
		delete(s.fetches, key)
		return []*sparrowrpc.TTaskLaunchSpec{}, nil
	}
	s.fetches[key] = fetched{pending: true}
	s.mu.Unlock()
	return s.getTask(requestID, addr, fetchID), nil
}

// fetchAnswered records the answer to fetch (0: a getTask, nothing to
// record) of node monitor addr: task t, with spec, if one was handed out
// (spec not nil) and is tracked there; else it forgets the fetch. Called
// with s.mu held.
func (s *Scheduler) fetchAnswered(addr string, fetch int64, t runningTask, spec *sparrowrpc.TTaskLaunchSpec) {
	if fetch == 0 {
		return
	}
	key := fetchKey{addr, fetch}
	if f, tracked := s.running[addr][t]; spec != nil && tracked && f == fetch {
		s.fetches[key] = fetched{task: t, spec: spec}
		return
	}
	delete(s.fetches, key)
}

// forgetFetch drops the record of fetch (0: none) of node monitor addr,
// whose task is no longer tracked there. Called with s.mu held.
func (s *Scheduler) forgetFetch(addr string, fetch int64) {
	if fetch != 0 {
		delete(s.fetches, fetchKey{addr, fetch})
	}
}
