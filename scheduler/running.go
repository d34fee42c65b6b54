package scheduler

import (
	"time"

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
// forgotten first. It has no lock: its owner serialises calls.
type lostSet struct {
	limit int // tasks remembered at most; 0 means maxLostRemembered
	set   map[runningTask]struct{}
	ring  []runningTask
	next  int
}

func (l *lostSet) add(t runningTask) {
	if l.set == nil {
		l.set = make(map[runningTask]struct{})
	}
	limit := l.limit
	if limit <= 0 {
		limit = maxLostRemembered
	}
	if len(l.ring) < limit {
		l.ring = append(l.ring, t)
	} else {
		delete(l.set, l.ring[l.next])
		l.ring[l.next] = t
		l.next = (l.next + 1) % limit
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

// handout is how a tracked task was handed out: by which fetch (0 for
// none), and when its job was submitted here (Unix nanoseconds), so that
// its finished report measures the task's response.
type handout struct {
	fetch     int64
	submitted int64
}

// runningBook is the lost-node bookkeeping: the tasks this scheduler
// launched on each node monitor and not yet reported finished (with the
// fetch that handed each out, 0 for none, and its job's submission), so that they can be reported
// lost with their node, and the tasks so reported, whose later messages
// are dropped so that a frontend never hears "lost" and then "done". It
// keeps the fetch memory (fetchBook, fetch.go) with them: a fetch that
// handed out a task is remembered while that task is tracked here as
// handed out by it, and forgotten when it finishes or is lost.
//
// It has no lock of its own: it is not safe for concurrent use, and its
// owner serialises every call.
type runningBook struct {
	byNode  map[string]map[runningTask]handout
	tracked int // entries in byNode
	lost    lostSet
	fetches fetchBook
	// untracked counts launches not tracked (the bound was hit), dropped
	// the messages about tasks already reported lost, and lostTasks the
	// running tasks reported lost with their node.
	untracked, dropped, lostTasks uint64
}

// track records t launched on node addr, handed out by fetch (0: none),
// of a job submitted at submitted, unless maxTracked tasks are tracked
// already.
func (b *runningBook) track(addr string, t runningTask, fetch int64, submitted time.Time) {
	if b.tracked >= maxTracked {
		b.untracked++
		return
	}
	if b.byNode == nil {
		b.byNode = make(map[string]map[runningTask]handout)
	}
	m := b.byNode[addr]
	if m == nil {
		m = make(map[runningTask]handout)
		b.byNode[addr] = m
	}
	m[t] = handout{fetch: fetch, submitted: submitted.UnixNano()}
	b.tracked++
}

// fetchOf returns the fetch that handed out t, tracked as running on
// addr, and whether it is tracked there.
func (b *runningBook) fetchOf(addr string, t runningTask) (int64, bool) {
	h, ok := b.byNode[addr][t]
	return h.fetch, ok
}

// finished forgets t, which addr reports finished, and the fetch that
// handed it out, if it was tracked there; it returns that fetch and when
// t's job was submitted.
func (b *runningBook) finished(addr string, t runningTask) (fetch int64, submitted time.Time, ok bool) {
	m := b.byNode[addr]
	h, ok := m[t]
	if !ok {
		return 0, time.Time{}, false
	}
	delete(m, t)
	b.tracked--
	if len(m) == 0 {
		delete(b.byNode, addr)
	}
	b.fetches.forget(addr, h.fetch)
	return h.fetch, time.Unix(0, h.submitted), true
}

// fetchAgain looks up fetch of node monitor addr. known is false for a
// fetch not asked about before, which is then recorded as being
// answered. Otherwise pending says it is still being answered, and spec
// is the task it handed out, to hand out again, or nil when that task is
// no longer tracked there as handed out by it (the fetch is then
// forgotten: it is answered empty).
func (b *runningBook) fetchAgain(addr string, fetch int64) (known, pending bool, spec *sparrowrpc.TTaskLaunchSpec) {
	f, ok := b.fetches.begin(fetchKey{addr, fetch})
	switch {
	case !ok:
		return false, false, nil
	case f.pending:
		return true, true, nil
	}
	if by, tracked := b.fetchOf(addr, f.task); tracked && by == fetch {
		return true, false, f.spec
	}
	b.fetches.forget(addr, fetch)
	return true, false, nil
}

// fetchAnswered records the answer to fetch (0: a getTask) of node
// monitor addr: task t, with spec, if one was handed out and is tracked
// there as handed out by this fetch.
func (b *runningBook) fetchAnswered(addr string, fetch int64, t runningTask, spec *sparrowrpc.TTaskLaunchSpec) {
	f, tracked := b.fetchOf(addr, t)
	b.fetches.answered(addr, fetch, t, spec, tracked && f == fetch)
}

// on returns how many tasks are tracked as running on addr.
func (b *runningBook) on(addr string) int { return len(b.byNode[addr]) }

// snapshot returns the tasks tracked as running on addr now (an empty,
// non-nil set if none).
func (b *runningBook) snapshot(addr string) map[runningTask]struct{} {
	out := make(map[runningTask]struct{}, len(b.byNode[addr]))
	for t := range b.byNode[addr] {
		out[t] = struct{}{}
	}
	return out
}

// nodeLost forgets the tasks running on addr, a node monitor declared
// lost, and their fetches, remembers them as lost, and returns them with
// their fetches. With
// only non-nil, just the tasks of only that are still tracked there are
// lost: those running when the node monitor was seen to go, not those a
// new process at the same address launched since.
func (b *runningBook) nodeLost(addr string, only map[runningTask]struct{}) map[runningTask]handout {
	lost := b.byNode[addr]
	if only == nil {
		delete(b.byNode, addr)
	} else {
		on := lost
		lost = make(map[runningTask]handout)
		for t, h := range on {
			if _, ok := only[t]; ok {
				lost[t] = h
				delete(on, t)
			}
		}
		if len(on) == 0 {
			delete(b.byNode, addr)
		}
	}
	b.tracked -= len(lost)
	b.lostTasks += uint64(len(lost))
	for t, h := range lost {
		b.lost.add(t)
		b.fetches.forget(addr, h.fetch)
	}
	return lost
}

// late reports whether t was reported lost, counting the message about
// it that is then dropped.
func (b *runningBook) late(t runningTask) bool {
	if !b.lost.has(t) {
		return false
	}
	b.dropped++
	return true
}

// statsInto fills the book's counters in st.
func (b *runningBook) statsInto(st *Stats) {
	st.RunningTracked = b.tracked
	st.Untracked = b.untracked
	st.LateDropped = b.dropped
	st.TasksLost = b.lostTasks
	st.FetchesAskedAgain = b.fetches.askedAgain
}
