package client

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// Each refusal a scheduler sends (its messages, verbatim in form) maps to
// one typed error, found by errors.As through wrapping, and keeps the
// text a log reader saw before.
func TestRefusalError(t *testing.T) {
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
		err := fmt.Errorf("wrapped: %w", refusalError("10.0.0.1:20503", "r-1", "web", tc.msg))
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
