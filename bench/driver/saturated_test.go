package driver

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/client"
	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// saturatedScheduler is a SchedulerService, served over real Thrift on
// loopback, for a fleet that can run nothing: it refuses every submit
// (refuse) or accepts it and reports every task lost (status 1001) to the
// registered frontend before answering.
type saturatedScheduler struct {
	refuse string // the refusal message; "" accepts and loses every task
	fronts *rpc.Pool[*sparrowrpc.FrontendServiceClient]

	mu       sync.Mutex
	frontend string
	submits  int // submitJob calls
	tasks    int // tasks in them
}

func (s *saturatedScheduler) RegisterFrontend(_ context.Context, _ string, addr string) (bool, error) {
	s.mu.Lock()
	s.frontend = addr
	s.mu.Unlock()
	return true, nil
}

func (s *saturatedScheduler) SubmitJob(ctx context.Context, req *sparrowrpc.TSchedulingRequest) error {
	s.mu.Lock()
	s.submits++
	s.tasks += len(req.Tasks)
	addr := s.frontend
	s.mu.Unlock()
	if s.refuse != "" {
		return &sparrowrpc.IncompleteRequestException{Message: s.refuse}
	}
	for _, t := range req.Tasks {
		id := &sparrowrpc.TFullTaskId{TaskId: t.TaskId, RequestId: req.GetRequestId(), AppId: req.App}
		err := s.fronts.Call(ctx, addr, func(ctx context.Context, c *sparrowrpc.FrontendServiceClient) error {
			return c.FrontendMessage(ctx, id, client.StatusLost, []byte("node monitor lost"))
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (s *saturatedScheduler) SendFrontendMessage(context.Context, string, *sparrowrpc.TFullTaskId, int32, []byte) error {
	return nil
}
func (s *saturatedScheduler) TaskDone(context.Context, string, *sparrowrpc.TFullTaskId, int32, []byte, *sparrowrpc.THostPort) error {
	return nil
}

func (s *saturatedScheduler) TasksDone(context.Context, []*sparrowrpc.TTaskDone, *sparrowrpc.THostPort) error {
	return nil
}

func (s *saturatedScheduler) counts() (submits, tasks int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.submits, s.tasks
}

func startSaturated(t *testing.T, s *saturatedScheduler) string {
	t.Helper()
	s.fronts = rpc.NewPool(rpc.Config{}, sparrowrpc.NewFrontendServiceClient)
	t.Cleanup(s.fronts.Close)
	srv, err := rpc.Listen("127.0.0.1:0", rpc.Config{}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(sparrowrpc.NewSchedulerServiceProcessor(s))
	t.Cleanup(func() { srv.Close() })
	return srv.Addr()
}

// Against a fleet that fails everything, the driver does not storm: the
// tasks it resubmits stay within the budget (attempts per task ≤ 1 +
// budget), every job is failed by the budget, and the run ends at once
// with an error naming the budget rather than at its deadline.
func TestSaturatedFleetNoRetryStorm(t *testing.T) {
	const jobs, tasks = 30, 2
	for _, tc := range []struct {
		name   string
		refuse string
	}{
		{name: "every task lost"},
		{name: "every submit refused", refuse: "fleet saturated; retry after 3ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sched := &saturatedScheduler{refuse: tc.refuse}
			addr := startSaturated(t, sched)
			cfg := Config{
				App: "app", Schedulers: []string{addr}, Listen: "127.0.0.1:0", AdvertiseHost: "127.0.0.1",
				Jobs: jobs, Tasks: tasks, TaskDuration: 10 * time.Millisecond, Rate: 500,
				Deadline: time.Minute, Timeout: 5 * time.Second, Heartbeat: -1, Seed: 3,
				RetryBase: time.Millisecond, RetryMax: 20 * time.Millisecond,
				RetryBudget: 0.1, RetryWindow: time.Hour, RetryBudgetMin: 4,
				Log: zerolog.Nop(),
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			s, err := Run(ctx, cfg)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			// The whole run is inside one window: the budget is
			// max(4, 10% of 60 first-attempt tasks) = 6 resubmitted tasks.
			const budget = 6
			if s.OK || !strings.Contains(s.Error, "retry budget exhausted") || !strings.Contains(s.Error, "--retry-budget") {
				t.Errorf("run ok %v, error %q: want it failed by the retry budget", s.OK, s.Error)
			}
			if s.DeadlineHit {
				t.Errorf("the run ended at its deadline, not when every job had failed: %s", s.Error)
			}
			if !s.RetryBudgetExhausted || s.RetryBudgetExhaustedAt == "" || s.JobsFailedByBudget != jobs || s.JobsCompleted != 0 {
				t.Errorf("budget exhausted %v at %q, %d jobs failed by it, %d completed; want all %d failed",
					s.RetryBudgetExhausted, s.RetryBudgetExhaustedAt, s.JobsFailedByBudget, s.JobsCompleted, jobs)
			}
			if s.ResubmittedTasks > budget || s.AttemptTasks != s.TasksSubmitted+s.ResubmittedTasks {
				t.Errorf("%d tasks resubmitted, %d attempted of %d: want at most %d resubmitted",
					s.ResubmittedTasks, s.AttemptTasks, s.TasksSubmitted, budget)
			}
			if s.ResubmittedTasks == 0 {
				t.Errorf("nothing resubmitted: the floor should have let a few tasks retry")
			}
			_, seen := sched.counts()
			if perTask := float64(seen) / float64(jobs*tasks); perTask > 1+float64(budget)/(jobs*tasks) {
				t.Errorf("the scheduler saw %d task attempts for %d tasks (%.2f per task): want at most %d",
					seen, jobs*tasks, perTask, jobs*tasks+budget)
			}
			if s.TasksFailedByBudget == 0 || s.RetryDelayMs.N != s.ResubmittedJobs {
				t.Errorf("%d tasks failed by the budget, %d delays for %d resubmitted jobs",
					s.TasksFailedByBudget, s.RetryDelayMs.N, s.ResubmittedJobs)
			}
			if tc.refuse != "" {
				// Every resubmission waited the 3 ms the refusal suggested.
				if s.SubmitErrors == 0 || s.RetryAfterHonoured != s.ResubmittedJobs || s.RetryDelayMs.Mean < 3 {
					t.Errorf("%d submit errors, %d of %d resubmissions waited the suggested delay, mean delay %.2f ms",
						s.SubmitErrors, s.RetryAfterHonoured, s.ResubmittedJobs, s.RetryDelayMs.Mean)
				}
			} else if s.LostReports != s.AttemptTasks {
				t.Errorf("%d lost reports for %d task attempts", s.LostReports, s.AttemptTasks)
			}
		})
	}
}
