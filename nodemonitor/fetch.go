package nodemonitor

import (
	"errors"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rs/zerolog"

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

// methodFetchTask, methodTaskDone and methodTasksDone name the extensions whose absence a
// scheduler's UNKNOWN_METHOD answer teaches (rpc.Capabilities).
const (
	methodFetchTask = "fetchTask"
	methodTaskDone  = "taskDone"
	methodTasksDone = "tasksDone"
)

// fetcher asks schedulers for tasks for reservations that reached a free
// slot: fetchTask, asked again with the same fetch ID while a failed call
// may have handed out a task, or getTask for a scheduler without
// fetchTask.
//
// Lock contract: it has no lock of its own; its counter is atomic, and
// caps and gone lock themselves. Safe for concurrent use.
type fetcher struct {
	scheds   Schedulers
	caps     *rpc.Capabilities
	gone     *schedulerSet
	retryFor time.Duration
	log      zerolog.Logger
	// ids numbers fetches, from a random start (nextID).
	ids atomic.Int64
}

// ask asks r's scheduler, at gt, for a task for a slot. An error means no
// task was handed out, or that one may have been and the scheduler could
// not be asked in time: retryFor, or until gossip declares it gone, it
// refuses connections (its process, and its record of the fetch, are
// gone), or the node monitor closes. The slot stays held meanwhile, since
// the answer may be a task: a task whose answer was lost would otherwise
// be counted running here by the scheduler and never run.
func (f *fetcher) ask(r queue.Reservation, gt string) ([]*sparrowrpc.TTaskLaunchSpec, error) {
	if f.caps.Lacks(gt, methodFetchTask) {
		return f.scheds.GetTask(gt, r.RequestID)
	}
	id := f.nextID()
	deadline := time.Now().Add(f.retryFor)
	wait := fetchRetryFirst
	for again := false; ; again = true {
		specs, err := f.scheds.FetchTask(gt, r.RequestID, id)
		switch {
		case err == nil:
			if again {
				f.log.Info().Str("request", r.RequestID).Str("scheduler", gt).Int("tasks", len(specs)).
					Msg("fetch answered when asked again")
			}
			return specs, nil
		case !again && rpc.IsUnknownMethod(err):
			f.caps.MarkLacking(gt, methodFetchTask)
			f.log.Info().Str("scheduler", gt).Msg("scheduler has no fetchTask; using getTask")
			return f.scheds.GetTask(gt, r.RequestID)
		case !again && neverSent(err):
			return nil, err
		case errors.Is(err, rpc.ErrClosed), errors.Is(err, syscall.ECONNREFUSED),
			f.gone.has(r.Scheduler), !time.Now().Add(wait).Before(deadline):
			if again {
				f.log.Warn().Err(err).Str("request", r.RequestID).Str("scheduler", gt).
					Msg("fetch in doubt: gave up asking the scheduler again")
			}
			return nil, err
		}
		f.log.Debug().Err(err).Str("request", r.RequestID).Str("scheduler", gt).Dur("in", wait).
			Msg("fetch may have handed out a task; asking again")
		time.Sleep(wait)
		wait = min(2*wait, fetchRetryMax)
	}
}

// neverSent reports whether err says a call was certainly not sent.
func neverSent(err error) bool {
	var de *rpc.DialError
	return errors.As(err, &de) || errors.Is(err, rpc.ErrBusy)
}

// nextID returns a new fetch ID: never 0, and from a range drawn at
// random when the node monitor started, so that a restarted node monitor
// does not reuse its predecessor's IDs.
func (f *fetcher) nextID() int64 {
	for {
		if id := f.ids.Add(1); id != 0 {
			return id
		}
	}
}
