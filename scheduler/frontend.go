package scheduler

import (
	"context"
	"fmt"

	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// maxFrontends bounds the app -> frontend table.
const maxFrontends = 65536

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
	if _, ok := s.frontends[app]; !ok && len(s.frontends) >= maxFrontends {
		return false, fmt.Errorf("registerFrontend: too many apps (%d)", maxFrontends)
	}
	s.frontends[app] = socketAddress
	// A frontend registering may be a restarted process at the same
	// address: pooled connections to the old one would fail.
	s.fronts.Forget(socketAddress)
	s.log.Info().Str("app", app).Str("frontend", socketAddress).Msg("frontend registered")
	return true, nil
}

// SendFrontendMessage implements SchedulerService: node monitors relay an
// executor's message about a task, and the scheduler passes it to the app's
// frontend. It returns an error if the message could not be delivered, so
// that the sender knows.
func (s *Scheduler) SendFrontendMessage(ctx context.Context, app string, taskID *sparrowrpc.TFullTaskId, status int32, message []byte) error {
	if taskID != nil {
		s.mu.Lock()
		late := s.lost.has(runningTask{app: taskID.AppId, request: taskID.RequestId, task: taskID.TaskId})
		if late {
			s.stats.LateDropped++
		}
		s.mu.Unlock()
		if late {
			s.log.Info().Str("request", taskID.RequestId).Str("task", taskID.TaskId).
				Msg("dropping a message about a task already reported lost")
			return nil
		}
	}
	return s.deliver(app, taskID, status, message)
}

func (s *Scheduler) deliver(app string, taskID *sparrowrpc.TFullTaskId, status int32, message []byte) error {
	s.mu.Lock()
	addr, ok := s.frontends[app]
	s.mu.Unlock()
	if !ok {
		s.log.Warn().Str("app", app).Int32("status", status).Msg("frontend message dropped: no frontend registered for app")
		return fmt.Errorf("no frontend registered for app %q", app)
	}
	err := s.fronts.Call(context.Background(), addr, func(ctx context.Context, c *sparrowrpc.FrontendServiceClient) error {
		return c.FrontendMessage(ctx, taskID, status, message)
	})
	if err != nil {
		s.log.Warn().Err(err).Str("app", app).Str("frontend", addr).Msg("frontend message not delivered")
		return fmt.Errorf("deliver frontend message for app %q to %s: %w", app, addr, err)
	}
	return nil
}
