package client

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// fakeScheduler accepts registrations and jobs.
type fakeScheduler struct {
	jobs atomic.Int64
}

func (f *fakeScheduler) RegisterFrontend(context.Context, string, string) (bool, error) {
	return true, nil
}
func (f *fakeScheduler) SubmitJob(_ context.Context, req *sparrowrpc.TSchedulingRequest) error {
	if len(req.Tasks) > 0 {
		f.jobs.Add(1)
	}
	return nil
}
func (f *fakeScheduler) SendFrontendMessage(context.Context, string, *sparrowrpc.TFullTaskId, int32, []byte) error {
	return nil
}
func (f *fakeScheduler) TaskDone(context.Context, string, *sparrowrpc.TFullTaskId, int32, []byte, *sparrowrpc.THostPort) error {
	return nil
}

func (f *fakeScheduler) TasksDone(context.Context, []*sparrowrpc.TTaskDone, *sparrowrpc.THostPort) error {
	return nil
}

func startScheduler(t *testing.T, f *fakeScheduler) *rpc.Server {
	t.Helper()
	srv, err := rpc.Listen("127.0.0.1:0", rpc.Config{}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(sparrowrpc.NewSchedulerServiceProcessor(f))
	t.Cleanup(func() { srv.Close() })
	return srv
}

// Many submits that find the scheduler gone at once cause one failover,
// not one each, and all their jobs land on the next scheduler.
func TestConcurrentFailuresFailOverOnce(t *testing.T) {
	var a, b fakeScheduler
	sa, sb := startScheduler(t, &a), startScheduler(t, &b)
	var failovers atomic.Int64
	fe, err := NewFrontend(context.Background(), FrontendConfig{
		App: "app", Schedulers: []string{sa.Addr(), sb.Addr()}, Listen: "127.0.0.1:0",
		Heartbeat: -1, Timeout: 2 * time.Second,
		OnMessage:  func(Message) {},
		OnFailover: func(Failover) { failovers.Add(1) },
		Log:        zerolog.Nop(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer fe.Close()
	sa.Close() // the first scheduler dies: connections are refused

	const n = 10
	var wg sync.WaitGroup
	var inDoubt atomic.Int64
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := fe.Submit(context.Background(), Job{Tasks: []Task{{ID: "t"}}})
			switch {
			case errors.Is(err, ErrInDoubt):
				// Sent on a pooled connection the dead scheduler had closed:
				// it may have arrived, so it is reported, not resent.
				inDoubt.Add(1)
			case err != nil:
				t.Errorf("submit: %v", err)
			}
		}()
	}
	wg.Wait()
	if got := failovers.Load(); got != 1 {
		t.Errorf("%d failovers reported for one dead scheduler, want 1", got)
	}
	if got, want := b.jobs.Load(), n-inDoubt.Load(); got != want {
		t.Errorf("the second scheduler got %d jobs, want %d (%d were in doubt)", got, want, inDoubt.Load())
	}
	if fe.Scheduler() != sb.Addr() {
		t.Errorf("frontend uses %s, want %s", fe.Scheduler(), sb.Addr())
	}
}
