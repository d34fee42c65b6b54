package client_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/client"
	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// echoScheduler stands in for a scheduler in these examples: it accepts
// every job and answers each task at once with a message carrying the
// task's description, upper-cased.
type echoScheduler struct {
	frontend string
	calls    *rpc.Pool[*sparrowrpc.FrontendServiceClient]
}

func (s *echoScheduler) RegisterFrontend(_ context.Context, _ string, addr string) (bool, error) {
	s.frontend = addr
	return true, nil
}

func (s *echoScheduler) SubmitJob(ctx context.Context, req *sparrowrpc.TSchedulingRequest) error {
	for _, t := range req.Tasks {
		id := &sparrowrpc.TFullTaskId{TaskId: t.TaskId, RequestId: req.GetRequestId(), AppId: req.App}
		body := []byte(strings.ToUpper(string(t.Message)))
		go s.calls.Call(context.Background(), s.frontend, func(ctx context.Context, c *sparrowrpc.FrontendServiceClient) error {
			return c.FrontendMessage(ctx, id, client.StatusOK, body)
		})
	}
	return nil
}

func (s *echoScheduler) SendFrontendMessage(context.Context, string, *sparrowrpc.TFullTaskId, int32, []byte) error {
	return nil
}

func (s *echoScheduler) TaskDone(context.Context, string, *sparrowrpc.TFullTaskId, int32, []byte, *sparrowrpc.THostPort) error {
	return nil
}
func (s *echoScheduler) TasksDone(context.Context, []*sparrowrpc.TTaskDone, *sparrowrpc.THostPort) error {
	return nil
}

// startEchoScheduler serves an echoScheduler on a loopback port.
func startEchoScheduler() (addr string, stop func()) {
	s := &echoScheduler{calls: rpc.NewPool(rpc.Config{}, sparrowrpc.NewFrontendServiceClient)}
	srv, err := rpc.Listen("127.0.0.1:0", rpc.Config{}, zerolog.Nop())
	if err != nil {
		panic(err)
	}
	go srv.Serve(sparrowrpc.NewSchedulerServiceProcessor(s))
	return srv.Addr(), func() { srv.Close(); s.calls.Close() }
}

// A frontend submits a job and receives one message per task.
func ExampleFrontend() {
	sched, stop := startEchoScheduler()
	defer stop()

	messages := make(chan client.Message, 2)
	fe, err := client.NewFrontend(context.Background(), client.FrontendConfig{
		App:        "words",
		Schedulers: []string{sched},
		Listen:     "127.0.0.1:0",
		OnMessage:  func(m client.Message) { messages <- m },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer fe.Close()

	_, err = fe.Submit(context.Background(), client.Job{Tasks: []client.Task{
		{ID: "0", Message: []byte("hello")},
		{ID: "1", Message: []byte("world")},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	got := map[string]string{}
	for range 2 {
		m := <-messages
		got[m.Task.TaskID] = string(m.Body)
	}
	fmt.Println(got["0"], got["1"])
	// Output: HELLO WORLD
}

// A refused submission is a typed error: a saturated fleet's says how
// long the scheduler suggests waiting.
func ExampleSaturatedError() {
	var err error = fmt.Errorf("batch 7: %w", &client.SaturatedError{
		Refusal:    client.Refusal{RequestID: "r-7", Scheduler: "10.0.0.1:20503", Message: "fleet saturated"},
		RetryAfter: 250 * time.Millisecond,
	})

	var sat *client.SaturatedError
	var unknown *client.UnknownAppError
	switch {
	case errors.As(err, &sat):
		fmt.Println("saturated; retry after", sat.RetryAfter)
	case errors.As(err, &unknown):
		fmt.Println("no executor of app", unknown.App)
	}
	// Output: saturated; retry after 250ms
}

// No scheduler answering is an UnreachableError, which also matches
// ErrNoScheduler.
func ExampleUnreachableError() {
	err := fmt.Errorf("submit: %w", &client.UnreachableError{Schedulers: []string{"10.0.0.1:20503"}})
	var un *client.UnreachableError
	fmt.Println(errors.As(err, &un), errors.Is(err, client.ErrNoScheduler), un.Schedulers)
	// Output: true true [10.0.0.1:20503]
}

// A RetryPolicy makes Submit resubmit a job while the fleet is saturated
// or unreachable; WithDefaults shows the values NewFrontend will use.
func ExampleRetryPolicy() {
	p, err := client.RetryPolicy{MaxAttempts: 4, Base: 100 * time.Millisecond, Max: time.Second}.WithDefaults()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.MaxAttempts, p.Base, p.Max)
	// To use it: client.FrontendConfig{..., Retry: &p}
	// Output: 4 100ms 1s
}

// Backoff's ceiling doubles from Base up to Max; Delay draws under it and
// adds a scheduler's suggestion on top.
func ExampleBackoff() {
	b := client.Backoff{Base: 100 * time.Millisecond, Max: time.Second}
	var ceilings []time.Duration
	for retry := 1; retry <= 5; retry++ {
		ceilings = append(ceilings, b.Ceiling(retry))
	}
	fmt.Println(ceilings)
	fmt.Println(b.Delay(2, 2*time.Second, 0.5))
	// Output:
	// [100ms 200ms 400ms 800ms 1s]
	// 2.1s
}

// ParseRetryAfter reads the delay a scheduler that sends no retryAfterMs
// field suggests in its message.
func ExampleParseRetryAfter() {
	d, ok := client.ParseRetryAfter("fleet saturated: held 30s; retry after 1.5s")
	fmt.Println(d, ok)
	// Output: 1.5s true
}

// reportingNodeMonitor stands in for a node monitor in the Backend
// example: it accepts the executor and hands each task's result on.
type reportingNodeMonitor struct{ done chan string }

func (n *reportingNodeMonitor) RegisterBackend(context.Context, string, string) (bool, error) {
	return true, nil
}
func (n *reportingNodeMonitor) RegisterBackendWithFeatures(context.Context, string, string, int32) (bool, error) {
	return true, nil
}
func (n *reportingNodeMonitor) TasksFinished(context.Context, []*sparrowrpc.TFullTaskId) error {
	return nil
}
func (n *reportingNodeMonitor) SendFrontendMessage(context.Context, string, *sparrowrpc.TFullTaskId, int32, []byte) error {
	return nil
}
func (n *reportingNodeMonitor) TaskDone(_ context.Context, _ string, id *sparrowrpc.TFullTaskId, _ int32, body []byte) error {
	n.done <- id.TaskId + ": " + string(body)
	return nil
}

// An executor: Run does each launched task's work and its result goes
// back to the job's frontend; Shutdown lets running tasks finish.
func ExampleBackend() {
	nm := &reportingNodeMonitor{done: make(chan string, 1)}
	srv, err := rpc.Listen("127.0.0.1:0", rpc.Config{}, zerolog.Nop())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	go srv.Serve(sparrowrpc.NewNodeMonitorServiceProcessor(nm))

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	be, err := client.NewBackend(ctx, client.BackendConfig{
		App:         "words",
		NodeMonitor: srv.Addr(),
		Listen:      "127.0.0.1:0",
		Run: func(ctx context.Context, t client.LaunchedTask) ([]byte, error) {
			return []byte(fmt.Sprint(len(strings.Fields(string(t.Message))), " words")), nil
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	// What the node monitor does when a reservation for this app reaches
	// the front of its queue.
	launcher := rpc.NewPool(rpc.Config{}, sparrowrpc.NewBackendServiceClient)
	defer launcher.Close()
	id := &sparrowrpc.TFullTaskId{TaskId: "t0", RequestId: "r", AppId: "words"}
	launcher.Call(ctx, be.Addr(), func(ctx context.Context, c *sparrowrpc.BackendServiceClient) error {
		return c.LaunchTask(ctx, []byte("the quick brown fox"), id, &sparrowrpc.TUserGroupInfo{})
	})
	fmt.Println(<-nm.done)
	fmt.Println(be.Shutdown(ctx))
	// Output:
	// t0: 4 words
	// <nil>
}
