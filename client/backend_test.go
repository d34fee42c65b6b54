package client

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// fakeNodeMonitor records what an executor reports, per task.
type fakeNodeMonitor struct {
	mu sync.Mutex
	// features are the bits of each registerBackendWithFeatures call;
	// plain counts registerBackend calls.
	features []int32
	plain    int
	finished map[string]int // tasksFinished reports
	messages map[string]int // sendFrontendMessage calls
	done     map[string]int // taskDone calls
	status   map[string]int32
	bodies   map[string]string
}

func newFakeNodeMonitor() *fakeNodeMonitor {
	return &fakeNodeMonitor{finished: map[string]int{}, messages: map[string]int{}, done: map[string]int{},
		status: map[string]int32{}, bodies: map[string]string{}}
}

func (f *fakeNodeMonitor) RegisterBackend(context.Context, string, string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.plain++
	return true, nil
}

func (f *fakeNodeMonitor) RegisterBackendWithFeatures(_ context.Context, _, _ string, features int32) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.features = append(f.features, features)
	return true, nil
}

func (f *fakeNodeMonitor) TasksFinished(_ context.Context, tasks []*sparrowrpc.TFullTaskId) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, t := range tasks {
		f.finished[t.TaskId]++
	}
	return nil
}

func (f *fakeNodeMonitor) SendFrontendMessage(_ context.Context, _ string, id *sparrowrpc.TFullTaskId, _ int32, _ []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.messages[id.TaskId]++
	return nil
}

func (f *fakeNodeMonitor) TaskDone(_ context.Context, _ string, id *sparrowrpc.TFullTaskId, status int32, body []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.done[id.TaskId]++
	f.status[id.TaskId] = status
	f.bodies[id.TaskId] = string(body)
	return nil
}

// counts returns copies of the three tallies.
func (f *fakeNodeMonitor) counts() (finished, messages, done map[string]int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cp := func(m map[string]int) map[string]int {
		out := make(map[string]int, len(m))
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	return cp(f.finished), cp(f.messages), cp(f.done)
}

// An executor ends each task with one taskDone call on a node monitor that
// has it, and with the original tasksFinished and sendFrontendMessage on
// one that answers UNKNOWN_METHOD (an original Sparrow node monitor):
// either way every task is reported finished and its message sent, once.
func TestBackendEndsTasks(t *testing.T) {
	const tasks = 20
	for _, original := range []bool{false, true} {
		t.Run(fmt.Sprintf("original=%v", original), func(t *testing.T) {
			nm := newFakeNodeMonitor()
			proc := sparrowrpc.NewNodeMonitorServiceProcessor(nm)
			if original {
				delete(proc.ProcessorMap(), "taskDone")
			}
			srv, err := rpc.Listen("127.0.0.1:0", rpc.Config{}, zerolog.Nop())
			if err != nil {
				t.Fatal(err)
			}
			go srv.Serve(proc)
			t.Cleanup(func() { srv.Close() })

			b, err := NewBackend(context.Background(), BackendConfig{
				App: "app", NodeMonitor: srv.Addr(), Listen: "127.0.0.1:0",
				Run: func(context.Context, LaunchedTask) ([]byte, error) { return []byte("ok"), nil },
				Log: zerolog.Nop(),
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Close() })
			launcher := rpc.NewPool(rpc.Config{}, sparrowrpc.NewBackendServiceClient)
			t.Cleanup(launcher.Close)
			for i := range tasks {
				id := &sparrowrpc.TFullTaskId{TaskId: fmt.Sprint(i), RequestId: "r", AppId: "app",
					SchedulerAddress: &sparrowrpc.THostPort{Host: "127.0.0.1", Port: 20503}}
				err := launcher.Call(context.Background(), b.Addr(), func(ctx context.Context, c *sparrowrpc.BackendServiceClient) error {
					return c.LaunchTask(ctx, nil, id, &sparrowrpc.TUserGroupInfo{})
				})
				if err != nil {
					t.Fatalf("launch %d: %v", i, err)
				}
			}

			// Every task ends; wait for it, with a deadline.
			deadline := time.Now().Add(20 * time.Second)
			for {
				finished, messages, done := nm.counts()
				ended := len(done)
				if original {
					ended = min(len(finished), len(messages))
				}
				if ended == tasks {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("after 20 s: %d finished reports, %d messages, %d taskDone calls for %d tasks", len(finished), len(messages), len(done), tasks)
				}
				time.Sleep(5 * time.Millisecond) // polling a condition, with a deadline
			}
			finished, messages, done := nm.counts()
			for i := range tasks {
				id := fmt.Sprint(i)
				want := [3]int{0, 0, 1} // finished, messages, taskDone
				if original {
					want = [3]int{1, 1, 0}
				}
				if got := [3]int{finished[id], messages[id], done[id]}; got != want {
					t.Errorf("task %s: tasksFinished, sendFrontendMessage, taskDone = %v, want %v", id, got, want)
				}
			}
		})
	}
}
