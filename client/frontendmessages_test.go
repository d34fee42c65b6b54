package client

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// frontendMessages hands each message to OnMessage in order, as that many
// frontendMessage calls would, and forgets a job once all its tasks have
// reported.
func TestFrontendMessagesInOrder(t *testing.T) {
	var mu sync.Mutex
	var got []string
	f := &Frontend{inFlight: make(map[string]*jobState), cfg: FrontendConfig{OnMessage: func(m Message) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, m.Task.RequestID+"/"+m.Task.TaskID+"/"+string(m.Body))
	}}}
	f.track(Job{RequestID: "a", Tasks: []Task{{ID: "t0"}, {ID: "t1"}}}, "s")
	f.track(Job{RequestID: "b", Tasks: []Task{{ID: "t0"}, {ID: "t1"}}}, "s")
	msg := func(req, task, body string) *sparrowrpc.TFrontendMessage {
		return &sparrowrpc.TFrontendMessage{TaskId: &sparrowrpc.TFullTaskId{RequestId: req, TaskId: task}, Message: []byte(body)}
	}
	h := (*frontendHandler)(f)
	if err := h.FrontendMessages(context.Background(), []*sparrowrpc.TFrontendMessage{
		msg("a", "t1", "x"), msg("b", "t0", "y"), nil, msg("a", "t0", "z"),
	}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"a/t1/x", "b/t0/y", "a/t0/z"}; !slices.Equal(got, want) {
		t.Fatalf("OnMessage got %v, want %v", got, want)
	}
	if in := f.InFlight(); !slices.Equal(in, []string{"b"}) {
		t.Fatalf("jobs in flight %v, want [b]: a has reported every task", in)
	}
}

// recordingScheduler records the frontendFeatures of each job.
type recordingScheduler struct {
	fakeScheduler
	mu       sync.Mutex
	features []*int32
}

func (r *recordingScheduler) SubmitJob(ctx context.Context, req *sparrowrpc.TSchedulingRequest) error {
	r.mu.Lock()
	r.features = append(r.features, req.FrontendFeatures)
	r.mu.Unlock()
	return r.fakeScheduler.SubmitJob(ctx, req)
}

// Every job a Frontend submits names its address and advertises
// frontendMessages.
func TestFrontendAdvertisesMessages(t *testing.T) {
	var s recordingScheduler
	srv := startSchedulerHandler(t, &s)
	fe, err := NewFrontend(context.Background(), FrontendConfig{
		App: "app", Schedulers: []string{srv}, Listen: "127.0.0.1:0",
		Heartbeat: -1, Timeout: 2 * time.Second, OnMessage: func(Message) {}, Log: zerolog.Nop(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer fe.Close()
	if _, err := fe.Submit(context.Background(), Job{Tasks: []Task{{ID: "t"}}}); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var jobs int
	for _, f := range s.features {
		if f == nil {
			continue // the empty job that checks a session
		}
		jobs++
		if *f&sparrowrpc.FRONTEND_MESSAGES == 0 {
			t.Fatalf("job advertised features %d, want the FRONTEND_MESSAGES bit", *f)
		}
	}
	if jobs != 1 {
		t.Fatalf("%d jobs advertised features, want 1 (features seen: %v)", jobs, s.features)
	}
}
