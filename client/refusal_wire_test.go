package client

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/internal/refusal"
	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// refusingScheduler refuses every job with the exception it is given.
type refusingScheduler struct {
	fakeScheduler
	refusal *sparrowrpc.IncompleteRequestException
}

func (r *refusingScheduler) SubmitJob(_ context.Context, req *sparrowrpc.TSchedulingRequest) error {
	if len(req.Tasks) == 0 {
		return nil
	}
	return r.refusal
}

// Submit types a refusal that came over the wire by its code, and one
// without a code (an older scheduler, the original Java one) by its
// message.
func TestSubmitTypesWireRefusals(t *testing.T) {
	for _, tc := range []struct {
		name    string
		refusal *sparrowrpc.IncompleteRequestException
		check   func(error) bool
		after   time.Duration
	}{
		{"saturated by code", refusal.New(refusal.Saturated, 300*time.Millisecond, "held too long"), isA[*SaturatedError], 300 * time.Millisecond},
		{"unknown app by code", refusal.New(refusal.UnknownApp, 0, "nobody runs it"), isA[*UnknownAppError], 0},
		{"unplaceable by code", refusal.New(refusal.Unplaceable, 0, "zone=eu"), isA[*UnplaceableError], 0},
		{"invalid by code", refusal.New(refusal.Invalid, 0, "duplicate task id"), isA[*InvalidRequestError], 0},
		{"saturated by text", textRefusal("fleet saturated: the call was held 30s; retry after 2s"), isA[*SaturatedError], 2 * time.Second},
		{"unknown app by text", textRefusal("no live node monitor hosts app \"app\""), isA[*UnknownAppError], 0},
		{"unplaceable by text", textRefusal("app \"app\": no live node monitor satisfies constraint \"zone=eu\""), isA[*UnplaceableError], 0},
		{"invalid by text", textRefusal("duplicate task id \"1\""), isA[*InvalidRequestError], 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sched := &refusingScheduler{refusal: tc.refusal}
			srv := startSchedulerHandler(t, sched)
			fe, err := NewFrontend(context.Background(), FrontendConfig{
				App: "app", Schedulers: []string{srv}, Listen: "127.0.0.1:0",
				Heartbeat: -1, Timeout: 5 * time.Second, OnMessage: func(Message) {}, Log: zerolog.Nop(),
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { fe.Close() })
			_, err = fe.Submit(context.Background(), Job{Tasks: []Task{{ID: "1"}}})
			if !tc.check(err) {
				t.Fatalf("Submit: %v (%T)", err, err)
			}
			if _, after := retryable(err); after != tc.after {
				t.Errorf("suggested delay %v, want %v", after, tc.after)
			}
		})
	}
}

// startSchedulerHandler serves h as a SchedulerService on a loopback port.
func startSchedulerHandler(t *testing.T, h sparrowrpc.SchedulerService) string {
	t.Helper()
	srv, err := rpc.Listen("127.0.0.1:0", rpc.Config{}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(sparrowrpc.NewSchedulerServiceProcessor(h))
	t.Cleanup(func() { srv.Close() })
	return srv.Addr()
}
