package fleet

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// The k-th start waits until k times the spacing after the first, however
// late the earlier starts returned, and no spacing never waits.
func TestWaitTurnSpacesStarts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		start := time.Now()
		for _, tc := range []struct {
			k     int
			every time.Duration
			want  time.Duration // since start, when waitTurn returns
		}{
			{0, time.Second, 0},
			{1, time.Second, time.Second},
			{3, time.Second, 3 * time.Second},
			{2, time.Second, 3 * time.Second}, // its turn has passed
			{7, 0, 3 * time.Second},
		} {
			if err := waitTurn(ctx, start, tc.k, tc.every); err != nil {
				t.Fatalf("turn %d: %v", tc.k, err)
			}
			if got := time.Since(start); got != tc.want {
				t.Errorf("turn %d every %v returned at %v, want %v", tc.k, tc.every, got, tc.want)
			}
		}
	})
}

func TestWaitTurnEndsWithItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		start := time.Now()
		if err := waitTurn(ctx, start, 10, time.Second); err == nil {
			t.Fatal("a turn past its context's deadline returned no error")
		}
		if got := time.Since(start); got != 5*time.Second {
			t.Errorf("returned at %v, want at the deadline, 5s", got)
		}
	})
}
