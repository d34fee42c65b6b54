package driver

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/client"
	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// holdingScheduler is a SchedulerService, over real Thrift on loopback,
// for a saturated fleet that holds every submitJob call until released,
// then runs its tasks at once: it reports each OK to the frontend and
// answers the call.
type holdingScheduler struct {
	fronts  *rpc.Pool[*sparrowrpc.FrontendServiceClient]
	release chan struct{}

	mu       sync.Mutex
	frontend string
	submits  int
	inFlight int
	most     int // the most calls held at once
}

func (s *holdingScheduler) RegisterFrontend(_ context.Context, _ string, addr string) (bool, error) {
	s.mu.Lock()
	s.frontend = addr
	s.mu.Unlock()
	return true, nil
}

func (s *holdingScheduler) SubmitJob(ctx context.Context, req *sparrowrpc.TSchedulingRequest) error {
	s.mu.Lock()
	s.submits++
	s.inFlight++
	s.most = max(s.most, s.inFlight)
	addr := s.frontend
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()
	select {
	case <-s.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	for _, t := range req.Tasks {
		id := &sparrowrpc.TFullTaskId{TaskId: t.TaskId, RequestId: req.GetRequestId(), AppId: req.App}
		err := s.fronts.Call(ctx, addr, func(ctx context.Context, c *sparrowrpc.FrontendServiceClient) error {
			return c.FrontendMessage(ctx, id, client.StatusOK, nil)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (s *holdingScheduler) SendFrontendMessage(context.Context, string, *sparrowrpc.TFullTaskId, int32, []byte) error {
	return nil
}
func (s *holdingScheduler) TaskDone(context.Context, string, *sparrowrpc.TFullTaskId, int32, []byte, *sparrowrpc.THostPort) error {
	return nil
}

func (s *holdingScheduler) TasksDone(context.Context, []*sparrowrpc.TTaskDone, *sparrowrpc.THostPort) error {
	return nil
}

func (s *holdingScheduler) state() (submits, inFlight, most int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.submits, s.inFlight, s.most
}

// Against a fleet that holds submitJob calls, the driver keeps at most
// MaxInFlight in flight and makes its other arrivals wait, instead of
// failing them as busy and resubmitting: once the fleet frees up every
// job completes with exactly one attempt and no submit error.
func TestHeldSubmitsSlowArrivals(t *testing.T) {
	const jobs, tasks, inFlight = 12, 2, 3
	sched := &holdingScheduler{release: make(chan struct{})}
	sched.fronts = rpc.NewPool(rpc.Config{}, sparrowrpc.NewFrontendServiceClient)
	t.Cleanup(sched.fronts.Close)
	srv, err := rpc.Listen("127.0.0.1:0", rpc.Config{}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(sparrowrpc.NewSchedulerServiceProcessor(sched))
	t.Cleanup(func() { srv.Close() })

	cfg := Config{
		App: "app", Schedulers: []string{srv.Addr()}, Listen: "127.0.0.1:0", AdvertiseHost: "127.0.0.1",
		Jobs: jobs, Tasks: tasks, TaskDuration: time.Millisecond, Rate: 1000,
		Deadline: time.Minute, Timeout: 30 * time.Second, Heartbeat: -1, Seed: 5,
		MaxInFlight: inFlight, Log: zerolog.Nop(),
	}
	waiting := make(chan struct{})
	var once sync.Once
	cfg.onSlotWait = func() { once.Do(func() { close(waiting) }) }
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	done := make(chan Summary, 1)
	go func() {
		s, err := Run(ctx, cfg)
		if err != nil {
			t.Errorf("run: %v", err)
		}
		done <- s
	}()

	// All slots fill with held calls; the arrival loop must wait.
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, n, _ := sched.state(); n == inFlight {
			break
		}
		if time.Now().After(deadline) {
			submits, n, _ := sched.state()
			t.Fatalf("after 20 s the fleet holds %d calls (%d submitted), want %d", n, submits, inFlight)
		}
		time.Sleep(5 * time.Millisecond) // polling a condition, with a deadline
	}
	// Release only once an arrival is waiting for a slot: released
	// earlier, the fourth arrival could find a slot free (CI saw that).
	select {
	case <-waiting:
	case <-time.After(20 * time.Second):
		t.Fatal("after 20 s no arrival waits for a submit slot, with every slot held")
	}
	close(sched.release)
	s := <-done

	submits, _, most := sched.state()
	if most != inFlight {
		t.Errorf("at most %d calls held at once, want exactly MaxInFlight = %d", most, inFlight)
	}
	if !s.OK || s.JobsCompleted != jobs || s.TasksCompleted != jobs*tasks {
		t.Errorf("run ok %v (%s), %d of %d jobs and %d of %d tasks completed", s.OK, s.Error, s.JobsCompleted, jobs, s.TasksCompleted, jobs*tasks)
	}
	if submits != jobs || s.AttemptsSubmitted != jobs || s.SubmitErrors != 0 || s.ResubmittedJobs != 0 {
		t.Errorf("%d submitJob calls, %d attempts, %d submit errors, %d resubmitted jobs; want %d, %d, 0, 0",
			submits, s.AttemptsSubmitted, s.SubmitErrors, s.ResubmittedJobs, jobs, jobs)
	}
	if s.BackpressureWaits == 0 {
		t.Errorf("no arrival waited for a submit slot, want some (%d jobs, %d slots, every call held)", jobs, inFlight)
	}
	t.Logf("backpressure: %d waits, %.3f s in all; busy retries %d", s.BackpressureWaits, s.BackpressureWaitS, s.BusyRetries)
}
