package scheduler

import (
	"context"

	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// maxTracked bounds the launched-but-unfinished tasks a scheduler
// remembers; past it, new launches are not tracked (and so would not be
// reported lost), which is logged.
const maxTracked = 1 << 20

// maxLostRemembered bounds the set of tasks reported lost whose later
// messages are dropped.
const maxLostRemembered = 100_000

// lostSet remembers the tasks most recently reported lost, oldest
// forgotten first. Not safe for concurrent use.
type lostSet struct {
	set  map[runningTask]struct{}
	ring []runningTask
	next int
}

func (l *lostSet) add(t runningTask) {
	if l.set == nil {
		l.set = make(map[runningTask]struct{})
	}
	if len(l.ring) < maxLostRemembered {
		l.ring = append(l.ring, t)
	} else {
		delete(l.set, l.ring[l.next])
		l.ring[l.next] = t
		l.next = (l.next + 1) % maxLostRemembered
	}
	l.set[t] = struct{}{}
}

func (l *lostSet) has(t runningTask) bool {
	_, ok := l.set[t]
	return ok
}

// runningTask is a task launched on a node monitor and not yet reported
// finished.
type runningTask struct {
	app, request, task string
}

// track records a launch on node addr, handed out by fetch (0: none).
// Called with s.mu held.
func (s *Scheduler) track(addr string, t runningTask, fetch int64) {
	if s.tracked >= maxTracked {
		s.stats.Untracked++
		return
	}
	m := s.running[addr]
	if m == nil {
		m = make(map[runningTask]int64)
		s.running[addr] = m
	}
	m[t] = fetch
	s.tracked++
}

// TasksFinished implements GetTaskService: a node monitor reports tasks
// this scheduler placed there that have finished, so they are no longer
// at risk if that node is lost.
func (s *Scheduler) TasksFinished(ctx context.Context, nm *sparrowrpc.THostPort, tasks []*sparrowrpc.TFullTaskId) error {
	addr := rpc.HostPortString(nm)
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.running[addr]
	for _, t := range tasks {
		if t == nil {
			continue
		}
		k := runningTask{app: t.AppId, request: t.RequestId, task: t.TaskId}
		if fetch, ok := m[k]; ok {
			delete(m, k)
			s.tracked--
			s.forgetFetch(addr, fetch)
		}
	}
	if len(m) == 0 {
		delete(s.running, addr)
	}
	return nil
}

// NodeGone places elsewhere, at once, the reservations queued on a node
// monitor that died or left, for every request with unlaunched tasks. Its
// running tasks stay tracked: NodeLost reports them, once it is clear the
// node monitor is not coming back (the daemon waits NodeLostGrace).
func (s *Scheduler) NodeGone(addr string) {
	s.mu.Lock()
	affected := s.holdingLocked(addr)
	s.mu.Unlock()
	if len(affected) > 0 {
		s.log.Warn().Str("node", addr).Int("requests_replaced", len(affected)).
			Msg("node monitor gone; its reservations placed elsewhere")
	}
	s.replaceAll(affected, addr)
}

// holdingLocked returns the requests holding reservations on addr. Called
// with s.mu held.
func (s *Scheduler) holdingLocked(addr string) []*request {
	var out []*request
	for _, r := range s.requests {
		if r.Holds(addr) {
			out = append(out, r)
		}
	}
	return out
}

// replaceAll places the reservations each request held on addr elsewhere.
// Called without s.mu; takes it for each request (replace releases it).
func (s *Scheduler) replaceAll(rs []*request, addr string) {
	for _, r := range rs {
		s.mu.Lock()
		s.replace(r, addr)
	}
}

// NodeLost handles a node monitor that died or left: its reservations are
// placed again elsewhere for every request with unlaunched tasks, and the
// tasks that were running there are reported to their frontends as lost
// (STATUS_TASK_LOST), so applications can resubmit them. The fleet does
// not resubmit them itself, since tasks need not be idempotent. "Lost" is
// final: if the node was not dead after all (gossip can be wrong about a
// starved or partitioned node), later messages about those tasks are
// dropped, so a frontend never hears "lost" and then "done".
func (s *Scheduler) NodeLost(addr string) {
	s.mu.Lock()
	s.settleDoubtsLost(addr)
	lost := s.running[addr]
	delete(s.running, addr)
	s.tracked -= len(lost)
	affected := s.holdingLocked(addr)
	s.stats.TasksLost += uint64(len(lost))
	for t, fetch := range lost {
		s.lost.add(t)
		s.forgetFetch(addr, fetch)
	}
	s.mu.Unlock()

	if len(lost) > 0 || len(affected) > 0 {
		s.log.Warn().Str("node", addr).Int("running_lost", len(lost)).Int("requests_replaced", len(affected)).
			Msg("node monitor lost")
	}
	s.replaceAll(affected, addr)
	if len(lost) == 0 {
		return
	}
	// One goroutine per lost node delivers its reports in turn, through
	// the links' in-flight bound, rather than one goroutine per task: a
	// node running many tasks whose frontend is gone must not cost a
	// goroutine and a dial each (frontendlink.go).
	ids := make([]*sparrowrpc.TFullTaskId, 0, len(lost))
	for t := range lost {
		ids = append(ids, &sparrowrpc.TFullTaskId{TaskId: t.task, RequestId: t.request, AppId: t.app, SchedulerAddress: s.self})
	}
	body := []byte("node monitor " + addr + " was lost while the task ran")
	go func() {
		for _, id := range ids {
			_ = s.deliver(id.AppId, id, sparrowrpc.STATUS_TASK_LOST, body) // deliver counts failures
		}
	}()
}
