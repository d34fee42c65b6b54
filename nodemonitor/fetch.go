package nodemonitor

import (
	"context"
	"errors"
	"syscall"
	"time"

	"github.com/sparrowfleet/sparrow/core/queue"
	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// DefaultFetchRetryFor is Config.FetchRetryFor's default.
const DefaultFetchRetryFor = 10 * time.Second

// fetchRetryFirst is the pause before a fetch is first asked about again;
// it doubles, up to fetchRetryMax, while the scheduler does not answer.
const (
	fetchRetryFirst = 50 * time.Millisecond
	fetchRetryMax   = time.Second
)

// askForTask asks r's scheduler, at gt, for a task for a slot: by
// fetchTask, asked again with the same fetch ID while a failed call may
// have handed out a task (the scheduler then answers the same way), or by
// getTask if the scheduler has no fetchTask. An error means no task was
// handed out, or that one may have been and the scheduler could not be
// asked in time: Config.FetchRetryFor, or until gossip declares it gone,
// it refuses connections (its process, and its record of the fetch, are
// gone), or the node monitor closes.
//
// Asking again is what closes the getTask side of docs/RELIABILITY.md's
// finding 8: a task whose answer was lost used to be counted running here
// by the scheduler and never run. The slot stays held meanwhile, since
// the answer may be a task.
func (n *NodeMonitor) askForTask(r queue.Reservation, gt string) ([]*sparrowrpc.TTaskLaunchSpec, error) {
	if n.noFetch(gt) {
		return n.plainGetTask(r, gt)
	}
	id := n.nextFetch()
	deadline := time.Now().Add(n.cfg.FetchRetryFor)
	wait := fetchRetryFirst
	for again := false; ; again = true {
		var specs []*sparrowrpc.TTaskLaunchSpec
		err := n.getTask.Call(context.Background(), gt, func(ctx context.Context, c *sparrowrpc.GetTaskServiceClient) error {
			var err error
			specs, err = c.FetchTask(ctx, r.RequestID, n.self, id)
			return err
		})
		switch {
		case err == nil:
			if again {
				n.log.Info().Str("request", r.RequestID).Str("scheduler", gt).Int("tasks", len(specs)).
					Msg("fetch answered when asked again")
			}
			return specs, nil
		case !again && rpc.IsUnknownMethod(err):
			n.mu.Lock()
			n.noFetchTask[gt] = true
			n.mu.Unlock()
			n.log.Info().Str("scheduler", gt).Msg("scheduler has no fetchTask; using getTask")
			return n.plainGetTask(r, gt)
		case !again && neverSent(err):
			return nil, err
		case errors.Is(err, rpc.ErrClosed), errors.Is(err, syscall.ECONNREFUSED),
			n.schedulerIsGone(r.Scheduler), !time.Now().Add(wait).Before(deadline):
			if again {
				n.log.Warn().Err(err).Str("request", r.RequestID).Str("scheduler", gt).
					Msg("fetch in doubt: gave up asking the scheduler again")
			}
			return nil, err
		}
		n.log.Debug().Err(err).Str("request", r.RequestID).Str("scheduler", gt).Dur("in", wait).
			Msg("fetch may have handed out a task; asking again")
		time.Sleep(wait)
		wait = min(2*wait, fetchRetryMax)
	}
}

// plainGetTask is the original protocol's getTask, not asked again.
func (n *NodeMonitor) plainGetTask(r queue.Reservation, gt string) ([]*sparrowrpc.TTaskLaunchSpec, error) {
	var specs []*sparrowrpc.TTaskLaunchSpec
	err := n.getTask.Call(context.Background(), gt, func(ctx context.Context, c *sparrowrpc.GetTaskServiceClient) error {
		var err error
		specs, err = c.GetTask(ctx, r.RequestID, n.self)
		return err
	})
	return specs, err
}

// neverSent reports whether err says a call was certainly not sent.
func neverSent(err error) bool {
	var de *rpc.DialError
	return errors.As(err, &de) || errors.Is(err, rpc.ErrBusy)
}

// nextFetch returns a new fetch ID: never 0, and from a range drawn at
// random when the node monitor started, so that a restarted node monitor
// does not reuse its predecessor's IDs.
func (n *NodeMonitor) nextFetch() int64 {
	for {
		if id := n.fetchIDs.Add(1); id != 0 {
			return id
		}
	}
}

// noFetch reports whether the scheduler at gt answered fetchTask with
// UNKNOWN_METHOD.
func (n *NodeMonitor) noFetch(gt string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.noFetchTask[gt]
}

// schedulerIsGone reports whether gossip declared the scheduler serving at
// service (its SchedulerService address) dead or departed.
func (n *NodeMonitor) schedulerIsGone(service string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.goneScheds[service]
}
