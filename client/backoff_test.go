package client

import (
	"errors"
	"testing"
	"time"
)

func TestBackoffCeiling(t *testing.T) {
	b := Backoff{Base: 100 * time.Millisecond, Max: 10 * time.Second}
	for _, tc := range []struct {
		b     Backoff
		retry int
		want  time.Duration
	}{
		{b, 0, 0},
		{b, -3, 0},
		{b, 1, 100 * time.Millisecond},
		{b, 2, 200 * time.Millisecond},
		{b, 3, 400 * time.Millisecond},
		{b, 7, 6400 * time.Millisecond},
		{b, 8, 10 * time.Second}, // 12.8 s capped
		{b, 1000, 10 * time.Second},
		{Backoff{Base: time.Second}, 200, 0}, // no cap: must stop before overflowing (checked below)
		{Backoff{Base: 0, Max: time.Second}, 5, 0},
		{Backoff{Base: 3 * time.Second, Max: time.Second}, 1, time.Second}, // base above the cap
	} {
		got := tc.b.Ceiling(tc.retry)
		if tc.b.Max == 0 && tc.retry == 200 {
			// Without a cap the ceiling just must not overflow.
			if got <= 0 {
				t.Errorf("%+v.Ceiling(%d) = %v: overflowed", tc.b, tc.retry, got)
			}
			continue
		}
		if got != tc.want {
			t.Errorf("%+v.Ceiling(%d) = %v, want %v", tc.b, tc.retry, got, tc.want)
		}
	}
}

func TestBackoffDelay(t *testing.T) {
	b := Backoff{Base: 100 * time.Millisecond, Max: 10 * time.Second}
	for _, tc := range []struct {
		retry     int
		suggested time.Duration
		u         float64
		want      time.Duration
	}{
		{1, 0, 0, 0},
		{1, 0, 0.5, 50 * time.Millisecond},
		{2, 0, 0.5, 100 * time.Millisecond},
		{3, 0, 0.25, 100 * time.Millisecond},
		{20, 0, 0.5, 5 * time.Second},                      // half the cap
		{1, 2 * time.Second, 0, 2 * time.Second},           // the suggestion is a floor
		{1, 2 * time.Second, 0.5, 2050 * time.Millisecond}, // jitter on top of it
		{20, time.Minute, 0.1, time.Minute + time.Second},  // the cap bounds the drawn part only
		{1, 0, 1, 0},    // u out of range: treated as 0
		{1, 0, -0.5, 0}, // likewise
	} {
		if got := b.Delay(tc.retry, tc.suggested, tc.u); got != tc.want {
			t.Errorf("Delay(%d, %v, %v) = %v, want %v", tc.retry, tc.suggested, tc.u, got, tc.want)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		msg  string
		want time.Duration
		ok   bool
	}{
		{"fleet saturated; retry after 2s", 2 * time.Second, true},
		{"fleet saturated: retry after 250ms.", 250 * time.Millisecond, true},
		{"Retry After 1m30s, please", 90 * time.Second, true},
		{"submit x: refused by scheduler 1.2.3.4:20503: saturated (retry after 1.5)", 1500 * time.Millisecond, true},
		{"retry after 3", 3 * time.Second, true},
		{"retry after 0s", 0, true},
		{"retry after 1s; then retry after 4s", 4 * time.Second, true}, // the last one
		{"retry after \"2s\"", 0, false},
		{"no scheduler answered", 0, false},
		{"retry after", 0, false},
		{"retry after ", 0, false},
		{"retry after soon", 0, false},
		{"retry after -2s", 0, false},
		{"retry after -1", 0, false},
		{"retry after 10m", 0, false}, // beyond five minutes
		{"retry after 1e9", 0, false},
		{"retry after inf", 0, false},
		{"retry after NaN", 0, false},
		{"retry after 0x10", 0, false},
		{"retry afterwards 2s", 0, false},
		{"\xfcretrY After 2s", 2 * time.Second, true},     // invalid UTF-8 before it (found by the fuzzer)
		{"ÉCHEC İ retry after 2s", 2 * time.Second, true}, // non-ASCII whose lower case changes length
	} {
		got, ok := ParseRetryAfter(tc.msg)
		if ok != tc.ok || got != tc.want {
			t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", tc.msg, got, ok, tc.want, tc.ok)
		}
	}
}

// FuzzParseRetryAfter: whatever parses is a delay in [0, 5 min], found
// after a "retry after"; a refusal carrying one is a SaturatedError with
// that delay.
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"retry after 2s", "RETRY AFTER 1.5", "retry after", "retry after -1s", "x retry after 9999999999999h", "retry after 1e2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := ParseRetryAfter(s)
		var sat *SaturatedError
		if isSat := errors.As(refusalError("s", "r", "a", textRefusal(s)), &sat); ok && (!isSat || sat.RetryAfter != d) {
			t.Fatalf("refusal %q: saturated %v (%+v), want a SaturatedError after %v", s, isSat, sat, d)
		}
		if !ok {
			if d != 0 {
				t.Fatalf("ParseRetryAfter(%q) = %v, false: want 0 when not found", s, d)
			}
			return
		}
		if d < 0 || d > maxSuggested {
			t.Fatalf("ParseRetryAfter(%q) = %v, outside [0, %v]", s, d, maxSuggested)
		}
	})
}
