package scheduler

import (
	"context"
	"time"

	"github.com/sparrowfleet/sparrow/internal/membership"
	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// Node loss, as the daemon sees it through gossip.
//
// memberlist declares a member dead when it misses probes, and also when a
// peer that was itself partitioned comes back and gossips its stale
// verdict; the member refutes that within a gossip round or two and is
// live again. Reporting its running tasks lost at once would make their
// frontends run them a second time while the first run goes on. So the
// daemon re-places the node monitor's queued reservations at once
// (NodeGone), waits Config.NodeLostGrace, and reports the running tasks
// lost (NodeLost) only if the node monitor is not live again as the same
// process.

// sameProcessLive reports whether member m, declared dead, is among live
// as the same process: the same name, address and start nonce
// (membership.Meta.Boot). A node monitor without a Boot (an older build)
// is never taken for live again.
func sameProcessLive(m membership.Member, live []membership.Member) bool {
	if m.Meta.Boot == "" {
		return false
	}
	for _, c := range live {
		if c.Name == m.Name && c.Meta.Internal == m.Meta.Internal && c.Meta.Boot == m.Meta.Boot {
			return true
		}
	}
	return false
}

// addressLive reports whether a live node monitor serves InternalService
// at addr: a new process restarted at the old one's address.
func addressLive(addr string, live []membership.Member) bool {
	for _, c := range live {
		if c.Meta.Internal == addr {
			return true
		}
	}
	return false
}

// nodeLeft handles a node monitor's leave or death event: reservations
// now, running tasks after the grace unless it was a false death. Run on
// its own goroutine; returns early if the daemon closes.
func (d *Daemon) nodeLeft(m membership.Member) {
	addr := m.Meta.Internal
	// A node monitor restarted at the same address (a rolling upgrade)
	// launches tasks of its own during the grace: only those running when
	// this one went can be lost with it.
	d.mu.Lock()
	running := d.running.snapshot(addr)
	d.mu.Unlock()
	d.NodeGone(addr)
	if g := d.Scheduler.cfg.NodeLostGrace; g > 0 {
		t := time.NewTimer(g)
		defer t.Stop()
		select {
		case <-t.C:
		case <-d.stop:
			return
		}
		live := d.Cluster.Members(membership.RoleNodeMonitor)
		if sameProcessLive(m, live) {
			d.log.Info().Str("node", addr).Str("member", m.Name).Dur("grace", g).
				Msg("node monitor declared dead is live again as the same process; its running tasks are kept")
			return
		}
		if !addressLive(addr, live) {
			// No new process took the address: every task tracked there,
			// including offers in doubt counted launched since it went,
			// went with the old one.
			running = nil
		}
	}
	d.nodeLostOf(addr, running)
}

// TasksFinished implements GetTaskService: a node monitor reports tasks
// this scheduler placed there that have finished, so they are no longer
// at risk if that node is lost.
func (s *Scheduler) TasksFinished(ctx context.Context, nm *sparrowrpc.THostPort, tasks []*sparrowrpc.TFullTaskId) error {
	addr := rpc.HostPortString(nm)
	s.mu.Lock()
	defer s.mu.Unlock()
	ended := 0
	for _, t := range tasks {
		if t == nil {
			continue
		}
		rt := runningTask{app: t.AppId, request: t.RequestId, task: t.TaskId}
		if _, submitted, ok := s.running.finished(addr, rt); ok {
			s.stats.ResponseSeconds.Observe(ResponseBuckets, s.now().Sub(submitted).Seconds())
			s.front.jobs.taskEnded(t.AppId, t.RequestId, s.now())
			ended++
		}
		s.short.finished(rt, s.now())
	}
	s.offers.finished(addr, ended)
	return nil
}

// NodeGone places elsewhere, at once, the reservations queued on a node
// monitor that died or left, for every request with unlaunched tasks. Its
// running tasks stay tracked: NodeLost reports them, once it is clear the
// node monitor is not coming back (the daemon waits NodeLostGrace).
func (s *Scheduler) NodeGone(addr string) {
	// A node monitor that comes back at the address may be a newer
	// build, with the extensions this one lacked.
	s.offers.caps.Forget(addr)
	s.workSend.forget(addr)
	s.mu.Lock()
	affected := s.book.holding(addr)
	s.mu.Unlock()
	if len(affected) > 0 {
		s.log.Warn().Str("node", addr).Int("requests_replaced", len(affected)).
			Msg("node monitor gone; its reservations placed elsewhere")
	}
	s.replaceAll(affected, addr)
}

// replaceAll places the reservations each request held on addr elsewhere.
// It takes s.mu for each request.
func (s *Scheduler) replaceAll(rs []*request, addr string) {
	for _, r := range rs {
		s.mu.Lock()
		s.replaceAndUnlock(r, addr)
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
func (s *Scheduler) NodeLost(addr string) { s.nodeLostOf(addr, nil) }

// nodeLostOf is NodeLost reporting, of the tasks running on addr, only
// those in only (all of them if only is nil).
func (s *Scheduler) nodeLostOf(addr string, only map[runningTask]struct{}) {
	s.mu.Lock()
	var before map[runningTask]struct{}
	if only != nil {
		before = s.running.snapshot(addr)
	}
	s.settleDoubtsLostLocked(addr)
	if only != nil {
		// Offers in doubt settled just now ran, if at all, on the process
		// that went: they are lost with it.
		for t := range s.running.snapshot(addr) {
			if _, ok := before[t]; !ok {
				only[t] = struct{}{}
			}
		}
	}
	lost := s.running.nodeLost(addr, only)
	affected := s.book.holding(addr)
	s.mu.Unlock()

	if len(lost) > 0 || len(affected) > 0 {
		s.log.Warn().Str("node", addr).Int("running_lost", len(lost)).Int("requests_replaced", len(affected)).
			Msg("node monitor lost")
	}
	s.replaceAll(affected, addr)
	s.reportLost(addr, lost)
}

// reportLost delivers STATUS_TASK_LOST for the tasks lost with addr.
func (s *Scheduler) reportLost(addr string, lost map[runningTask]handout) {
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
