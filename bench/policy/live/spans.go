package live

import (
	"time"

	"github.com/sparrowfleet/sparrow/bench/policy"
	"github.com/sparrowfleet/sparrow/client"
)

// SpanBook records each task's run on an executor as a policy.Span: the
// node that launched it (Launched, on the executor's RPC goroutine before
// the task starts), then when its executor started and ended it. Times are
// offsets from T0. It is not safe for concurrent use: the recorders that
// embed it call it under their own lock.
type SpanBook struct {
	// T0 is the measurement's start; Stopped ends recording (Ended
	// ignores later ends, so a snapshot is not changed after it is
	// taken).
	T0      time.Time
	Stopped bool
	nodeOf  map[string]int
	running map[string]running
	spans   []policy.Span
}

func taskKey(requestID, taskID string) string { return requestID + "/" + taskID }

// Launched records which node launched t.
func (b *SpanBook) Launched(node int, t client.LaunchedTask) {
	if b.nodeOf == nil {
		b.nodeOf = map[string]int{}
	}
	b.nodeOf[taskKey(t.Ref.RequestID, t.Ref.TaskID)] = node
}

// Started records that t's executor started it at now (node -1 if its
// launch was not recorded).
func (b *SpanBook) Started(t client.LaunchedTask, now time.Time) {
	k := taskKey(t.Ref.RequestID, t.Ref.TaskID)
	node, ok := b.nodeOf[k]
	if !ok {
		node = -1
	}
	delete(b.nodeOf, k)
	if b.running == nil {
		b.running = map[string]running{}
	}
	b.running[k] = running{user: t.User.Name, node: node, start: now}
}

// Ended records that t's executor finished it at now, closing its span.
func (b *SpanBook) Ended(t client.LaunchedTask, now time.Time) {
	k := taskKey(t.Ref.RequestID, t.Ref.TaskID)
	run, ok := b.running[k]
	if !ok || b.Stopped {
		return
	}
	delete(b.running, k)
	b.spans = append(b.spans, policy.Span{User: run.user, Node: run.node, Start: run.start.Sub(b.T0), End: now.Sub(b.T0)})
}

// RunningByUser counts the tasks running now, per user.
func (b *SpanBook) RunningByUser() map[string]int {
	n := make(map[string]int)
	for _, run := range b.running {
		n[run.user]++
	}
	return n
}

// Stop ends recording at end and returns every span, the tasks still
// running cut at end.
func (b *SpanBook) Stop(end time.Time) []policy.Span {
	b.Stopped = true
	out := append([]policy.Span(nil), b.spans...)
	for _, run := range b.running {
		out = append(out, policy.Span{User: run.user, Node: run.node, Start: run.start.Sub(b.T0), End: end.Sub(b.T0)})
	}
	return out
}
