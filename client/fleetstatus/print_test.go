package fleetstatus

import (
	"testing"
	"time"
)

func TestWatchInterval(t *testing.T) {
	for in, want := range map[string]time.Duration{"2": 2 * time.Second, "0.5": 500 * time.Millisecond, "750ms": 750 * time.Millisecond, "0": 0} {
		var w WatchInterval
		if err := w.Set(in); err != nil || time.Duration(w) != want {
			t.Errorf("--watch %s = %v, %v; want %v", in, time.Duration(w), err, want)
		}
	}
	for _, bad := range []string{"-1", "soon", "-2s"} {
		var w WatchInterval
		if err := w.Set(bad); err == nil {
			t.Errorf("--watch %s accepted", bad)
		}
	}
}
