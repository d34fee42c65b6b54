package client

import (
	"context"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// An executor that runs its tasks registers with
// registerBackendWithFeatures, BACKEND_LAUNCH_AND_WAIT and
// BACKEND_LAUNCH_BATCH; with a node
// monitor that answers UNKNOWN_METHOD (an original one) it registers with
// registerBackend. An executor without Run registers with no features.
func TestBackendRegistersFeatures(t *testing.T) {
	run := func(context.Context, LaunchedTask) ([]byte, error) { return nil, nil }
	for _, tt := range []struct {
		name         string
		original     bool
		run          TaskFunc
		wantFeatures []int32
		wantPlain    int
	}{
		{name: "node monitor with the extension", run: run, wantFeatures: []int32{sparrowrpc.BACKEND_LAUNCH_AND_WAIT | sparrowrpc.BACKEND_LAUNCH_BATCH}},
		{name: "original node monitor", original: true, run: run, wantPlain: 1},
		{name: "executor without Run", run: nil, wantPlain: 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			nm := newFakeNodeMonitor()
			proc := sparrowrpc.NewNodeMonitorServiceProcessor(nm)
			if tt.original {
				delete(proc.ProcessorMap(), "registerBackendWithFeatures")
			}
			srv, err := rpc.Listen("127.0.0.1:0", rpc.Config{}, zerolog.Nop())
			if err != nil {
				t.Fatal(err)
			}
			go srv.Serve(proc)
			t.Cleanup(func() { srv.Close() })
			cfg := BackendConfig{App: "app", NodeMonitor: srv.Addr(), Listen: "127.0.0.1:0", Run: tt.run, Watch: -1, Log: zerolog.Nop()}
			if tt.run == nil {
				cfg.OnLaunch = func(LaunchedTask) {}
			}
			b, err := NewBackend(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Close() })
			nm.mu.Lock()
			defer nm.mu.Unlock()
			if !slices.Equal(nm.features, tt.wantFeatures) || nm.plain != tt.wantPlain {
				t.Errorf("registerBackendWithFeatures %v, registerBackend %d times; want %v, %d", nm.features, nm.plain, tt.wantFeatures, tt.wantPlain)
			}
		})
	}
}

// launchTaskAndWait answers with the end of a task that ends within the
// wait, and the executor then sends no taskDone for it; a task still
// running when the wait ends reports itself with taskDone, once.
func TestBackendLaunchAndWait(t *testing.T) {
	nm := newFakeNodeMonitor()
	release := make(chan struct{})
	b, err := NewBackend(context.Background(), BackendConfig{
		App: "app", NodeMonitor: startNodeMonitor(t, nm), Listen: "127.0.0.1:0", Watch: -1, Log: zerolog.Nop(),
		Run: func(_ context.Context, lt LaunchedTask) ([]byte, error) {
			if string(lt.Message) == "slow" {
				<-release
			}
			return []byte("ok " + lt.Ref.TaskID), nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	p := rpc.NewPool(rpc.Config{}, sparrowrpc.NewExtendedBackendServiceClient)
	t.Cleanup(p.Close)
	launchWait := func(task, msg string, waitMicros int32) *sparrowrpc.TLaunchReply {
		t.Helper()
		id := &sparrowrpc.TFullTaskId{TaskId: task, RequestId: "r", AppId: "app",
			SchedulerAddress: &sparrowrpc.THostPort{Host: "127.0.0.1", Port: 20503}}
		var reply *sparrowrpc.TLaunchReply
		err := p.Call(context.Background(), b.Addr(), func(ctx context.Context, c *sparrowrpc.ExtendedBackendServiceClient) (err error) {
			reply, err = c.LaunchTaskAndWait(ctx, []byte(msg), id, &sparrowrpc.TUserGroupInfo{}, waitMicros)
			return err
		})
		if err != nil {
			t.Fatalf("launchTaskAndWait %s: %v", task, err)
		}
		return reply
	}

	// A quick task, waited for as long as it takes (the executor's cap).
	quick := launchWait("quick", "", int32(maxLaunchWait.Microseconds()))
	if !quick.Done || quick.GetStatus() != StatusOK || string(quick.Message) != "ok quick" {
		t.Errorf("quick task's answer %+v, want done, status OK, message \"ok quick\"", quick)
	}
	// A task that blocks until released: the wait ends first.
	if slow := launchWait("slow", "slow", 1000); slow.Done {
		t.Errorf("slow task's answer %+v, want not done", slow)
	}
	close(release)
	waitUntil(t, "the slow task's taskDone", func() bool {
		_, _, done := nm.counts()
		return done["slow"] == 1
	})
	if err := b.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	finished, messages, done := nm.counts()
	if done["quick"] != 0 || finished["quick"] != 0 || messages["quick"] != 0 {
		t.Errorf("the quick task, answered in its launch, was also reported: taskDone %d, tasksFinished %d, sendFrontendMessage %d",
			done["quick"], finished["quick"], messages["quick"])
	}
	if done["slow"] != 1 {
		t.Errorf("slow task reported by taskDone %d times, want 1", done["slow"])
	}
}

// launchTasksAndWait launches every task of its batch and answers, in
// order, with the end of each that ends within the wait; one still running
// reports itself with taskDone, once. A batch with a task without an id is
// refused whole: none of its tasks runs.
func TestBackendLaunchTasksAndWait(t *testing.T) {
	nm := newFakeNodeMonitor()
	release := make(chan struct{})
	var mu sync.Mutex
	ran := map[string]int{}
	b, err := NewBackend(context.Background(), BackendConfig{
		App: "app", NodeMonitor: startNodeMonitor(t, nm), Listen: "127.0.0.1:0", Watch: -1, Log: zerolog.Nop(),
		Run: func(_ context.Context, lt LaunchedTask) ([]byte, error) {
			mu.Lock()
			ran[lt.Ref.TaskID]++
			mu.Unlock()
			if string(lt.Message) == "slow" {
				<-release
			}
			return []byte("ok " + lt.Ref.TaskID), nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	p := rpc.NewPool(rpc.Config{}, sparrowrpc.NewExtendedBackendServiceClient)
	t.Cleanup(p.Close)
	item := func(task, msg string) *sparrowrpc.TLaunchItem {
		return &sparrowrpc.TLaunchItem{Message: []byte(msg), User: &sparrowrpc.TUserGroupInfo{}, TaskId: &sparrowrpc.TFullTaskId{
			TaskId: task, RequestId: "r", AppId: "app", SchedulerAddress: &sparrowrpc.THostPort{Host: "127.0.0.1", Port: 20503}}}
	}
	launch := func(items []*sparrowrpc.TLaunchItem) ([]*sparrowrpc.TLaunchReply, error) {
		var replies []*sparrowrpc.TLaunchReply
		err := p.Call(context.Background(), b.Addr(), func(ctx context.Context, c *sparrowrpc.ExtendedBackendServiceClient) (err error) {
			replies, err = c.LaunchTasksAndWait(ctx, items, int32(maxLaunchWait.Microseconds()))
			return err
		})
		return replies, err
	}

	if _, err := launch([]*sparrowrpc.TLaunchItem{item("bad0", ""), {Message: []byte("no id")}}); err == nil {
		t.Error("a batch with a task without an id was accepted")
	}
	replies, err := launch([]*sparrowrpc.TLaunchItem{item("q0", ""), item("slow", "slow"), item("q1", "")})
	if err != nil {
		t.Fatalf("launchTasksAndWait: %v", err)
	}
	if len(replies) != 3 {
		t.Fatalf("%d answers to a batch of 3", len(replies))
	}
	for i, task := range []string{"q0", "", "q1"} {
		r := replies[i]
		if task == "" {
			if r.Done {
				t.Errorf("the slow task's answer %+v, want not done", r)
			}
			continue
		}
		if !r.Done || r.GetStatus() != StatusOK || string(r.Message) != "ok "+task {
			t.Errorf("answer %d %+v, want done, status OK, message %q", i, r, "ok "+task)
		}
	}
	close(release)
	waitUntil(t, "the slow task's taskDone", func() bool {
		_, _, done := nm.counts()
		return done["slow"] == 1
	})
	if err := b.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	finished, messages, done := nm.counts()
	for _, task := range []string{"q0", "q1"} {
		if done[task]+finished[task]+messages[task] != 0 {
			t.Errorf("task %s, answered in its launch, was also reported", task)
		}
	}
	if done["slow"] != 1 {
		t.Errorf("slow task reported by taskDone %d times, want 1", done["slow"])
	}
	mu.Lock()
	defer mu.Unlock()
	if want := map[string]int{"q0": 1, "slow": 1, "q1": 1}; !maps.Equal(ran, want) {
		t.Errorf("tasks run %v, want %v (none of the refused batch)", ran, want)
	}
}
