package client

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/internal/refusal"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// textRefusal is a refusal with no code, as an older scheduler or the
// original Java one sends.
func textRefusal(msg string) *sparrowrpc.IncompleteRequestException {
	return &sparrowrpc.IncompleteRequestException{Message: msg}
}

// Each refusal without a code (the messages schedulers send, verbatim in
// form) maps by its text to one typed error, found by errors.As through
// wrapping, and keeps the text a log reader saw before.
func TestRefusalErrorByText(t *testing.T) {
	type kind int
	const (
		saturated kind = iota
		unknownApp
		unplaceable
		invalid
	)
	for _, tc := range []struct {
		msg      string
		want     kind
		after    time.Duration
		draining bool
	}{
		{"fleet saturated: this scheduler is shutting down and accepts no new jobs; retry after 100ms", saturated, 100 * time.Millisecond, true},
		{"fleet saturated: node monitors refused request \"r-1\"'s reservations as full and this scheduler is shutting down; retry after 1s", saturated, time.Second, true},
		{"fleet saturated: node monitors refused request \"r-1\"'s reservations as full and the call was held 30s, the most allowed (--max-hold); retry after 1.2s", saturated, 1200 * time.Millisecond, false},
		{"fleet saturated: the expected queue wait of the job's 4 tasks exceeds --max-queue-wait 2s and 64 submitJob calls are already held, the most allowed (--max-held-jobs); retry after 350ms", saturated, 350 * time.Millisecond, false},
		{"fleet saturated", saturated, 0, false},
		{"busy; retry after 2s", saturated, 2 * time.Second, false},
		{"no live node monitor hosts app \"web\"", unknownApp, 0, false},
		{"app \"web\": no live node monitor satisfies constraint \"zone=eu\"", unplaceable, 0, false},
		{"app \"web\": no live node monitor satisfies constraints zone=eu, gpu exists together", unplaceable, 0, false},
		{"app \"web\": task \"t0\": none of its preferred nodes [10.0.0.9] or racks [] is live: no live node monitor can run the task", unplaceable, 0, false},
		{"missing app", invalid, 0, false},
		{"job has 200000 tasks, over the limit of 100000", invalid, 0, false},
		{"duplicate task id \"3\"", invalid, 0, false},
		{"request id \"r-1\" is already in use", invalid, 0, false},
		{"probe ratio 0.5 is below 1", invalid, 0, false},
		{"", invalid, 0, false},
	} {
		err := fmt.Errorf("wrapped: %w", refusalError("10.0.0.1:20503", "r-1", "web", textRefusal(tc.msg)))
		var (
			sat *SaturatedError
			ua  *UnknownAppError
			up  *UnplaceableError
			inv *InvalidRequestError
		)
		got := map[kind]bool{
			saturated: errors.As(err, &sat), unknownApp: errors.As(err, &ua),
			unplaceable: errors.As(err, &up), invalid: errors.As(err, &inv),
		}
		for k, ok := range got {
			if ok != (k == tc.want) {
				t.Errorf("%q: errors.As kind %d = %v, want kind %d only", tc.msg, k, ok, tc.want)
			}
		}
		if sat != nil && sat.RetryAfter != tc.after {
			t.Errorf("%q: RetryAfter %v, want %v", tc.msg, sat.RetryAfter, tc.after)
		}
		if sat != nil && sat.SchedulerDraining != tc.draining {
			t.Errorf("%q: SchedulerDraining %v, want %v", tc.msg, sat.SchedulerDraining, tc.draining)
		}
		if ua != nil && ua.App != "web" {
			t.Errorf("%q: App %q, want web", tc.msg, ua.App)
		}
		if want := "wrapped: submit r-1: refused by scheduler 10.0.0.1:20503: " + tc.msg; err.Error() != want {
			t.Errorf("text %q, want %q", err.Error(), want)
		}
		if again, after := retryable(err); again != (tc.want == saturated) || after != tc.after {
			t.Errorf("%q: retryable = %v, %v", tc.msg, again, after)
		}
	}
}

// A refusal with a code is typed by its code, whatever its message says,
// and its delay is retryAfterMs, not a delay in the message.
func TestRefusalErrorByCode(t *testing.T) {
	for _, tc := range []struct {
		name     string
		kind     refusal.Kind
		msg      string
		after    time.Duration
		check    func(error) bool
		draining bool
	}{
		{"saturated", refusal.Saturated, "fleet saturated; retry after 9s", 250 * time.Millisecond, isA[*SaturatedError], false},
		{"draining", refusal.Draining, "fleet saturated: shutting down", 100 * time.Millisecond, isA[*SaturatedError], true},
		{"saturated without delay", refusal.Saturated, "full", 0, isA[*SaturatedError], false},
		{"unknown app, whatever the text", refusal.UnknownApp, "fleet saturated; retry after 1s", 0, isA[*UnknownAppError], false},
		{"unplaceable", refusal.Unplaceable, "no executor of the app", 0, isA[*UnplaceableError], false},
		{"invalid", refusal.Invalid, "no live node monitor hosts app \"web\"", 0, isA[*InvalidRequestError], false},
		{"unknown code", refusal.Kind(99), "fleet saturated", 0, isA[*InvalidRequestError], false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := fmt.Errorf("wrapped: %w", refusalError("s:1", "r-1", "web", refusal.New(tc.kind, tc.after, "%s", tc.msg)))
			if !tc.check(err) {
				t.Fatalf("%v: wrong type %T", err, errors.Unwrap(err))
			}
			var sat *SaturatedError
			if errors.As(err, &sat) && (sat.RetryAfter != tc.after || sat.SchedulerDraining != tc.draining) {
				t.Errorf("RetryAfter %v, SchedulerDraining %v; want %v, %v", sat.RetryAfter, sat.SchedulerDraining, tc.after, tc.draining)
			}
			if again, _ := retryable(err); again != tc.kind.Retryable() {
				t.Errorf("retryable %v, want %v", again, tc.kind.Retryable())
			}
		})
	}
}

func isA[T error](err error) bool {
	var target T
	return errors.As(err, &target)
}

func TestUnreachableError(t *testing.T) {
	cause := errors.New("dial tcp 10.0.0.1:20503: connection refused")
	for _, tc := range []struct {
		err  *UnreachableError
		text string
	}{
		{&UnreachableError{Schedulers: []string{"10.0.0.1:20503"}, Err: cause}, "no scheduler answered: " + cause.Error()},
		{&UnreachableError{RequestID: "r-7"}, "submit r-7: no scheduler answered"},
	} {
		err := fmt.Errorf("x: %w", tc.err)
		var un *UnreachableError
		if !errors.As(err, &un) || !errors.Is(err, ErrNoScheduler) {
			t.Errorf("%v: not an UnreachableError wrapping ErrNoScheduler", err)
		}
		if tc.err.Err != nil && !errors.Is(err, cause) {
			t.Errorf("%v: does not wrap its cause", err)
		}
		if tc.err.Error() != tc.text {
			t.Errorf("text %q, want %q", tc.err.Error(), tc.text)
		}
		if again, after := retryable(err); !again || after != 0 {
			t.Errorf("%v: retryable = %v, %v; want true, 0", err, again, after)
		}
	}
	if again, _ := retryable(fmt.Errorf("submit r: %w", ErrInDoubt)); again {
		t.Error("a job in doubt is retryable: it could run twice")
	}
}
