package scheduler

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/core/shortjobs"
	"github.com/sparrowfleet/sparrow/internal/batch"
	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// methodUpdateRemainingWork is the extension's name, as rpc.Capabilities
// records it.
const methodUpdateRemainingWork = "updateRemainingWork"

// workRefreshWindow is how long a node monitor's first queued update
// waits for others to share its call, and maxWorkUpdates the most
// updates one call carries. An update only reorders a queue whose
// reservations wait at least a task's duration, so holding it a few
// milliseconds for others to the same node monitor costs little.
const (
	workRefreshWindow = 10 * time.Millisecond
	maxWorkUpdates    = 256
)

// workRefresher sends jobs' remaining work to the node monitors holding
// their queued reservations (shortjobs.Config.WorkRefresh), batched per
// node monitor: the updates queued for one within workRefreshWindow of
// the first go together in one call, and within a call only a job's
// latest update is sent. A node monitor that answers UNKNOWN_METHOD (one
// built before the extension) is sent no more until forget. An update is
// a hint: one whose call fails is counted and dropped, since a node
// monitor that launches one of the job's tasks learns its remaining work
// from the answer anyway.
//
// Safe for concurrent use: queue and caps have their own locks, the
// counters are atomic and the rest is set once.
type workRefresher struct {
	nodes NodeMonitors
	queue *batch.Windowed[string, *sparrowrpc.TRemainingWork]
	caps  rpc.Capabilities
	log   *zerolog.Logger

	sent, failed, calls atomic.Uint64
}

func newWorkRefresher(nodes NodeMonitors, log *zerolog.Logger) *workRefresher {
	w := &workRefresher{nodes: nodes, log: log}
	w.queue = batch.NewWindowed(workRefreshWindow, maxWorkUpdates, w.sendBatch)
	return w
}

// send queues request's remaining work, in seconds, for each node monitor
// of addrs. It makes no call itself, so it may be called under the
// scheduler's lock.
func (w *workRefresher) send(addrs []string, request string, work float64) {
	for _, a := range addrs {
		if w.caps.Lacks(a, methodUpdateRemainingWork) {
			continue
		}
		w.queue.Add(a, &sparrowrpc.TRemainingWork{RequestId: request, RemainingWork: work})
	}
}

// sendBatch is the batcher's sender for addr.
func (w *workRefresher) sendBatch(addr string, items []*sparrowrpc.TRemainingWork) {
	if w.caps.Lacks(addr, methodUpdateRemainingWork) {
		return
	}
	items = latestPerRequest(items)
	err := w.nodes.UpdateRemainingWork(context.Background(), addr, items)
	w.calls.Add(1)
	switch {
	case err == nil:
		w.sent.Add(uint64(len(items)))
	case rpc.IsUnknownMethod(err):
		w.caps.MarkLacking(addr, methodUpdateRemainingWork)
		w.failed.Add(uint64(len(items)))
	default:
		w.failed.Add(uint64(len(items)))
		w.log.Debug().Err(err).Str("node", addr).Int("updates", len(items)).Msg("remaining-work update failed")
	}
}

// latestPerRequest keeps, of updates in the order they were queued, the
// last one of each request, in the order of those last ones. It reuses
// updates' array.
func latestPerRequest(updates []*sparrowrpc.TRemainingWork) []*sparrowrpc.TRemainingWork {
	if len(updates) < 2 {
		return updates
	}
	last := make(map[string]int, len(updates))
	for i, u := range updates {
		last[u.RequestId] = i
	}
	if len(last) == len(updates) {
		return updates
	}
	out := updates[:0]
	for i, u := range updates {
		if last[u.RequestId] == i {
			out = append(out, u)
		}
	}
	return out
}

// statsInto copies the counters into st.
func (w *workRefresher) statsInto(st *Stats) {
	st.WorkUpdatesSent, st.WorkUpdatesFailed, st.WorkUpdateCalls = w.sent.Load(), w.failed.Load(), w.calls.Load()
}

// forget drops what is known of addr's methods, for a node monitor that
// restarted, perhaps upgraded.
func (w *workRefresher) forget(addr string) { w.caps.Forget(addr) }

// close sends the queued updates at once and waits for their calls;
// updates queued later are sent at once.
func (w *workRefresher) close() { w.queue.Close() }

// refreshWorkLocked queues r's remaining work for the node monitors
// holding its queued reservations when the task just handed to addr took
// r's unlaunched tasks into another shortjobs.WorkStep
// (shortjobs.Config.WorkRefresh), so that their queues order r by its
// progress rather than by its count when the reservation arrived. addr
// is left out: it learns the remaining work from the answer. A job
// without an estimate has no remaining work to send.
func (s *Scheduler) refreshWorkLocked(r *request, addr string) {
	p := s.short
	if p == nil || !p.cfg.WorkRefresh || r.short.est <= 0 {
		return
	}
	left := r.Unlaunched()
	if left == 0 || shortjobs.WorkStep(left) == shortjobs.WorkStep(left+1) {
		// Settled before listing the holders, which most hand-outs
		// would do for nothing.
		return
	}
	p.targets = shortjobs.RefreshTargets(p.targets[:0], s.holdersLocked(r), addr, left+1, left)
	s.workSend.send(p.targets, r.ID, r.short.est*float64(left))
}

// holdersLocked lists the node monitors holding r's queued reservations,
// in the policy's scratch slice.
func (s *Scheduler) holdersLocked(r *request) []string {
	p := s.short
	p.holders = p.holders[:0]
	for _, h := range r.Outstanding() {
		p.holders = append(p.holders, h.Node.Addr)
	}
	return p.holders
}
