package fleetstatus

import (
	"testing"
	"time"
)

func TestResyncDue(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name            string
		synced          time.Time
		wait            time.Duration
		before, members int
		after           time.Duration
		want            bool
	}{
		{"never synced", time.Time{}, 0, 0, 1, 0, true},
		{"wait not passed, view steady", t0, 4 * time.Second, 5, 5, 3 * time.Second, false},
		{"wait passed", t0, 4 * time.Second, 5, 5, 4 * time.Second, true},
		{"view grew, a second passed", t0, 16 * time.Second, 2, 3, time.Second, true},
		{"view shrank, a second passed", t0, 16 * time.Second, 3, 2, 2 * time.Second, true},
		{"view grew, under a second", t0, 16 * time.Second, 2, 3, 500 * time.Millisecond, false},
		{"steady fleet, long wait", t0, resyncEvery, 1000, 1000, 29 * time.Second, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := resyncDue(tc.synced, tc.wait, tc.before, tc.members, t0.Add(tc.after)); got != tc.want {
				t.Errorf("resyncDue = %v, want %v", got, tc.want)
			}
		})
	}
}
