package scheduler

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// maxFrontends bounds the app -> frontend table.
const maxFrontends = 65536

// maxLoggedApps bounds the app names one deregistration line lists.
const maxLoggedApps = 8

// RegisterFrontend implements SchedulerService: task messages for app go to
// the FrontendService at socketAddress from now on. One frontend per app,
// as in the original Sparrow: the latest registration wins.
func (s *Scheduler) RegisterFrontend(ctx context.Context, app, socketAddress string) (bool, error) {
	if app == "" || len(app) > maxAppBytes {
		return false, fmt.Errorf("registerFrontend: bad app name %q", app)
	}
	if _, err := rpc.ParseHostPort(socketAddress); err != nil {
		return false, fmt.Errorf("registerFrontend for app %q: %w", app, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.front.register(app, socketAddress); err != nil {
		return false, err
	}
	// A frontend registering may be a restarted process at the same
	// address: pooled connections to the old one would fail, and the
	// old one's failures must not hold back messages to the new one.
	s.peers.fronts.Forget(socketAddress)
	s.frontSend.forget(socketAddress)
	s.log.Info().Str("app", app).Str("frontend", socketAddress).Msg("frontend registered")
	return true, nil
}

// SendFrontendMessage implements SchedulerService: node monitors relay an
// executor's message about a task, and the scheduler passes it to the app's
// frontend. It returns an error if the message could not be delivered, so
// that the sender knows; a frontend that is down costs no call per message
// (frontendlink.go).
func (s *Scheduler) SendFrontendMessage(ctx context.Context, app string, taskID *sparrowrpc.TFullTaskId, status int32, message []byte) error {
	if s.lateMessage(taskID) {
		return nil
	}
	return s.deliverCtx(ctx, app, taskID, status, message)
}

// lateMessage reports whether a message about taskID comes after the task
// was reported lost, and is to be dropped (and logs so).
func (s *Scheduler) lateMessage(taskID *sparrowrpc.TFullTaskId) bool {
	if taskID == nil {
		return false
	}
	s.mu.Lock()
	late := s.running.late(runningTask{app: taskID.AppId, request: taskID.RequestId, task: taskID.TaskId})
	s.mu.Unlock()
	if late {
		s.log.Info().Str("request", taskID.RequestId).Str("task", taskID.TaskId).
			Msg("dropping a message about a task already reported lost")
	}
	return late
}

// deliver is deliverCtx for the scheduler's own reports (failed and lost
// tasks), which no caller waits on. Each such report ends its task here
// (frontendjobs.go).
func (s *Scheduler) deliver(app string, taskID *sparrowrpc.TFullTaskId, status int32, message []byte) error {
	err := s.deliverCtx(context.Background(), app, taskID, status, message)
	s.mu.Lock()
	s.front.jobs.taskEnded(app, taskID.GetRequestId(), s.now())
	s.mu.Unlock()
	return err
}

// deliverCtx sends one message to its job's frontend (frontendBook.lookup)
// through its link. Drops and failures are counted and summarised by the
// sweep, not logged here (but at debug level), so that a frontend that
// went away cannot flood the log.
func (s *Scheduler) deliverCtx(ctx context.Context, app string, taskID *sparrowrpc.TFullTaskId, status int32, message []byte) error {
	addr, batched, l, probe, err := s.acquire(ctx, app, taskID.GetRequestId())
	if err != nil {
		s.log.Debug().Err(err).Str("app", app).Int32("status", status).Msg("frontend message dropped")
		return err
	}
	return s.delivered(app, addr, l, probe, s.frontSend.send(addr, batched, taskID, status, message))
}

// delivered gives back the in-flight slot on addr's link (l, taken as a
// probe or not) of a message to app's frontend whose call ended with err,
// and returns err with its context.
func (s *Scheduler) delivered(app, addr string, l *frontendLink, probe bool, err error) error {
	outcome := outcomeOK
	var ae thrift.TApplicationException
	switch {
	case err == nil:
	case errors.Is(err, rpc.ErrBusy):
		outcome = outcomeBusy
	case errors.As(err, &ae) && ae.TypeId() == thrift.INTERNAL_ERROR:
		// The frontend answered, with its handler's error: it is
		// reachable, so the link is up, though the message failed.
		outcome = outcomeAnswered
	default:
		outcome = outcomeFailed
	}
	s.mu.Lock()
	s.front.links.end(addr, l, s.now(), probe, outcome)
	s.mu.Unlock()
	if err != nil {
		s.log.Debug().Err(err).Str("app", app).Str("frontend", addr).Bool("probe", probe).Msg("frontend message not delivered")
		return fmt.Errorf("deliver frontend message for app %q to %s: %w", app, addr, err)
	}
	return nil
}

// deliverTogether delivers msgs, about tasks of app's job request, and
// returns each one's error. When the job's frontend serves
// frontendMessages and its link has room for several at once, they go in
// one call; any its link has no room for at once, or all when the frontend
// takes them one by one, go each alone, in parallel, as deliverCtx sends
// them.
func (s *Scheduler) deliverTogether(ctx context.Context, app, request string, msgs []*sparrowrpc.TFrontendMessage) []error {
	errs := make([]error, len(msgs))
	alone := func(from int) *sync.WaitGroup {
		var wg sync.WaitGroup
		for i := from; i < len(msgs); i++ {
			m := msgs[i]
			wg.Go(func() { errs[i] = s.deliverCtx(ctx, app, m.TaskId, m.Status, m.Message) })
		}
		return &wg
	}
	switch len(msgs) {
	case 0:
		return errs
	case 1:
		m := msgs[0]
		errs[0] = s.deliverCtx(ctx, app, m.TaskId, m.Status, m.Message)
		return errs
	}
	addr, batched, l, probe, err := s.acquire(ctx, app, request)
	if err != nil {
		s.log.Debug().Err(err).Str("app", app).Msg("frontend message dropped")
		errs[0] = err
		alone(1).Wait()
		return errs
	}
	n := 1
	if !probe && s.frontSend.batching(addr, batched) {
		s.mu.Lock()
		n += s.front.links.beginMore(l, len(msgs)-1)
		s.mu.Unlock()
	}
	rest := alone(n)
	if n == 1 {
		m := msgs[0]
		errs[0] = s.delivered(app, addr, l, probe, s.frontSend.send(addr, batched, m.TaskId, m.Status, m.Message))
	} else {
		for i, err := range s.frontSend.sendTogether(addr, msgs[:n]) {
			errs[i] = s.delivered(app, addr, l, false, err)
		}
	}
	rest.Wait()
	return errs
}

// acquire finds the frontend of app's job request, and whether the job's
// messages go there batched, and takes an in-flight slot on its link,
// waiting for one up to the call timeout. It returns
// why not if the message is to be dropped: no frontend, the frontend is
// down (and is deregistered if down for Config.FrontendDeadAfter), or no
// slot freed.
func (s *Scheduler) acquire(ctx context.Context, app, request string) (addr string, batched bool, l *frontendLink, probe bool, err error) {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		s.mu.Lock()
		b := &s.front.links
		addr, batched, ok := s.front.lookup(app, request)
		if !ok {
			b.noFrontend(app)
			s.mu.Unlock()
			return "", false, nil, false, fmt.Errorf("no frontend registered for app %q", app)
		}
		now := s.now()
		v, l := b.begin(addr, now)
		switch v {
		case linkSend, linkProbe:
			s.mu.Unlock()
			return addr, batched, l, v == linkProbe, nil
		case linkDown:
			b.drop(addr, dropUnreachable)
			down, next := now.Sub(l.downSince), max(l.nextProbe.Sub(now), 0)
			s.mu.Unlock()
			return "", false, nil, false, fmt.Errorf("frontend %s for app %q unreachable for %v: message dropped without a call (next attempt in %v)",
				addr, app, down.Round(time.Millisecond), next.Round(time.Millisecond))
		case linkDead:
			b.drop(addr, dropUnreachable)
			down := now.Sub(l.downSince)
			s.deregisterAndUnlock(addr, now)
			return "", false, nil, false, fmt.Errorf("frontend %s for app %q unreachable for %v: deregistered, message dropped",
				addr, app, down.Round(time.Millisecond))
		case linkFull:
			free, bound := l.wait(), b.maxInflight
			b.stats.Waiting++
			s.mu.Unlock()
			if timer == nil {
				timer = time.NewTimer(s.callTimeout())
			}
			freed := false
			select {
			case <-free:
				freed = true
			case <-timer.C:
			case <-ctx.Done():
			}
			s.mu.Lock()
			b.stats.Waiting--
			if freed {
				s.mu.Unlock()
				continue
			}
			b.drop(addr, dropInflight)
			s.mu.Unlock()
			return "", false, nil, false, fmt.Errorf("%d messages already in flight to frontend %s for app %q: message dropped, no slot freed within %v (or its caller gave up)",
				bound, addr, app, s.callTimeout())
		}
	}
}

// deregisterAndUnlock removes every app registered at addr, whose frontend has
// been unreachable for Config.FrontendDeadAfter, and every job naming it,
// forgets its link and connections, and logs one line (if any app or job
// was there).
func (s *Scheduler) deregisterAndUnlock(addr string, now time.Time) {
	apps, jobs := s.front.deregister(addr)
	b := &s.front.links
	r := b.forget(addr, now)
	if len(apps) > 0 || jobs > 0 {
		b.stats.Deregistered++
	}
	s.mu.Unlock()
	s.peers.fronts.Forget(addr)
	s.frontSend.forget(addr)
	if len(apps) == 0 && jobs == 0 {
		// Its apps registered elsewhere since: nothing to tell.
		s.log.Debug().Str("frontend", addr).Uint64("dropped", r.total()).Msg("unreachable frontend address forgotten")
		return
	}
	logged := apps[:min(len(apps), maxLoggedApps)]
	s.log.Warn().Str("frontend", addr).Strs("apps", logged).Int("app_count", len(apps)).Int("jobs", jobs).
		Dur("unreachable_for", now.Sub(r.downSince)).Uint64("dropped", r.total()).
		Uint64("failed", r.dropped[dropFailed]).Uint64("unreachable", r.dropped[dropUnreachable]).
		Uint64("inflight", r.dropped[dropInflight]).
		Msg("frontend unreachable too long: its apps are deregistered, and their messages dropped until it registers again; the jobs naming it are forgotten")
}

// sweepFrontends deregisters frontends down for Config.FrontendDeadAfter,
// forgets the jobs that named their frontend and ended jobFrontendLinger
// ago, and logs, at most once per frontendLogInterval per frontend, how many
// messages were dropped since the last line and why. Sweep calls it.
func (s *Scheduler) sweepFrontends(now time.Time) {
	s.mu.Lock()
	b := &s.front.links
	for _, addr := range b.dead(now) {
		// A frontend may have registered there while s.mu was released
		// for the previous one's line.
		if b.isDead(addr, now) {
			s.deregisterAndUnlock(addr, now)
			s.mu.Lock()
		}
	}
	s.front.jobs.expire(now)
	reports := b.reports(now)
	n, app := b.noFrontendReport(now)
	s.mu.Unlock()
	for _, r := range reports {
		e := s.log.Warn().Str("frontend", r.addr).Uint64("dropped", r.total()).
			Uint64("failed", r.dropped[dropFailed]).Uint64("unreachable", r.dropped[dropUnreachable]).
			Uint64("inflight", r.dropped[dropInflight]).Bool("down", r.down)
		if r.down {
			e = e.Dur("down_for", now.Sub(r.downSince))
		}
		e.Msg("frontend messages not delivered since the last report")
	}
	if n > 0 {
		s.log.Warn().Uint64("dropped", n).Str("latest_app", app).
			Msg("frontend messages dropped since the last report: no frontend registered for their app")
	}
}

// callTimeout is the scheduler's outgoing call timeout, the longest a
// message waits for an in-flight slot.
func (s *Scheduler) callTimeout() time.Duration {
	if s.cfg.RPC.CallTimeout > 0 {
		return s.cfg.RPC.CallTimeout
	}
	return rpc.DefaultCallTimeout
}

// TaskDone implements SchedulerService's extension: a node monitor's
// tasksFinished report for one task and its sendFrontendMessage, in one
// call. The task is recorded finished first, as the oneway report would
// have done, and then the message is delivered; the call answers with
// the delivery's outcome, as sendFrontendMessage does.
func (s *Scheduler) TaskDone(ctx context.Context, app string, taskID *sparrowrpc.TFullTaskId, status int32, message []byte, nm *sparrowrpc.THostPort) error {
	if taskID == nil || nm == nil {
		return fmt.Errorf("taskDone: missing task id or node monitor address")
	}
	if err := s.TasksFinished(ctx, nm, []*sparrowrpc.TFullTaskId{taskID}); err != nil {
		return fmt.Errorf("taskDone: %w", err)
	}
	return s.SendFrontendMessage(ctx, app, taskID, status, message)
}
