package refusal

import (
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// Every kind New builds is read back by Classify as the same kind and
// delay, whatever its message says.
func TestNewClassifyRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		kind      Kind
		after     time.Duration
		wantAfter time.Duration
	}{
		{Invalid, 0, 0},
		{Saturated, 1200 * time.Millisecond, 1200 * time.Millisecond},
		{Draining, 100 * time.Millisecond, 100 * time.Millisecond},
		{UnknownApp, 0, 0},
		{Unplaceable, 0, 0},
		{Saturated, MaxRetryAfter + time.Second, 0},
	} {
		e := New(tc.kind, tc.after, "text that says %s", "fleet saturated; retry after 7s")
		if !e.IsSetCode() || e.IsSetRetryAfterMs() != (tc.after > 0) {
			t.Errorf("%v: code set %v, retryAfterMs set %v", tc.kind, e.IsSetCode(), e.IsSetRetryAfterMs())
		}
		if got, after := Classify(e); got != tc.kind || after != tc.wantAfter {
			t.Errorf("%v after %v: Classify = %v, %v; want %v, %v", tc.kind, tc.after, got, after, tc.kind, tc.wantAfter)
		}
	}
}

// The table: the IDL's codes, each known and named, and no other.
func TestKinds(t *testing.T) {
	for _, tc := range []struct {
		kind      Kind
		code      int32
		name      string
		retryable bool
	}{
		{Invalid, sparrowrpc.REFUSAL_INVALID, "invalid", false},
		{Saturated, sparrowrpc.REFUSAL_SATURATED, "saturated", true},
		{Draining, sparrowrpc.REFUSAL_DRAINING, "draining", true},
		{UnknownApp, sparrowrpc.REFUSAL_UNKNOWN_APP, "unknown app", false},
		{Unplaceable, sparrowrpc.REFUSAL_UNPLACEABLE, "unplaceable", false},
	} {
		if int32(tc.kind) != tc.code || !tc.kind.Known() || tc.kind.String() != tc.name || tc.kind.Retryable() != tc.retryable {
			t.Errorf("kind %d: code %d, known %v, name %q, retryable %v", tc.kind, tc.code, tc.kind.Known(), tc.kind.String(), tc.kind.Retryable())
		}
	}
	for _, k := range []Kind{0, 6, -1} {
		if k.Known() || k.String() == "" {
			t.Errorf("code %d: known %v, name %q", k, k.Known(), k.String())
		}
	}
}

// Without a code the message decides: the schedulers' texts, verbatim in
// form.
func TestByText(t *testing.T) {
	for _, tc := range []struct {
		msg   string
		kind  Kind
		after time.Duration
	}{
		{"fleet saturated: this scheduler is shutting down and accepts no new jobs; retry after 100ms", Draining, 100 * time.Millisecond},
		{"fleet saturated: node monitors refused request \"r\"'s reservations as full and the call was held 30s, the most allowed (--max-hold); retry after 1.2s", Saturated, 1200 * time.Millisecond},
		{"busy; retry after 2", Saturated, 2 * time.Second},
		{"no live node monitor hosts app \"web\"", UnknownApp, 0},
		{"app \"web\": no live node monitor satisfies constraint \"zone=eu\"", Unplaceable, 0},
		{"duplicate task id \"3\"", Invalid, 0},
		{"", Invalid, 0},
	} {
		if kind, after := Classify(&sparrowrpc.IncompleteRequestException{Message: tc.msg}); kind != tc.kind || after != tc.after {
			t.Errorf("%q: %v, %v; want %v, %v", tc.msg, kind, after, tc.kind, tc.after)
		}
	}
}

// FuzzByText: any message is classified as a known kind, with a delay in
// [0, MaxRetryAfter] only for a retryable one.
func FuzzByText(f *testing.F) {
	for _, s := range []string{"fleet saturated; retry after 2s", "no live node monitor hosts app \"a\"", "x no live node monitor", "retry after 1e2", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		kind, after := ByText(s)
		if !kind.Known() {
			t.Fatalf("%q: unknown kind %v", s, kind)
		}
		if after < 0 || after > MaxRetryAfter || (after > 0 && !kind.Retryable()) {
			t.Fatalf("%q: kind %v with delay %v", s, kind, after)
		}
	})
}
