package nodemonitor

import (
	"slices"
	"testing"
	"testing/synctest"

	"github.com/sparrowfleet/sparrow/core/shortjobs"
	sparrowrpc "github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// With long-job steering the node monitor gossips a new advert whenever
// the level of its long work, running and queued, changes (queueing,
// cancelling, finishing), and not for short work; without it, only when
// its long work goes between none and some, with level 0.
func TestLongWorkLevelAdverts(t *testing.T) {
	for _, tc := range []struct {
		name          string
		longSteer     bool
		counts, level []byte
	}{
		// L runs (1 long task: level 1), Q queues 2 long reservations
		// (3: level 2), S queues a short one (no change), Q is
		// cancelled (level 1), L ends and S runs (none).
		{"levels", true, []byte{1, 1, 1, 0}, []byte{1, 2, 1, 0}},
		{"busy only", false, []byte{1, 0}, []byte{0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a := newAwareHarnessWith(t, 1, shortjobs.Config{Cutoff: 10, StarveLimit: 4, LongSteer: tc.longSteer})
				a.job(t, "L", 1, 100, 1, "t1")
				a.job(t, "Q", 1, 100, 2)
				a.job(t, "S", 0, 1, 1, "t1")
				if err := a.nm.CancelTaskReservations(t.Context(), &sparrowrpc.TCancelTaskReservationsRequest{RequestId: "Q"}); err != nil {
					t.Fatal(err)
				}
				a.finish("L", "t1")
				synctest.Wait()
				a.finish("S", "t1")
				synctest.Wait()
				if got := a.execs.launchOrder(); !slices.Equal(got, []string{"L/t1", "S/t1"}) {
					t.Fatalf("launched %v, want L/t1 then S/t1", got)
				}
				if got := a.gossiped(); !slices.Equal(got, tc.counts) {
					t.Errorf("adverts' long-work counts %v, want %v", got, tc.counts)
				}
				if got := a.gossipedLevels(); !slices.Equal(got, tc.level) {
					t.Errorf("adverts' levels %v, want %v", got, tc.level)
				}
			})
		})
	}
}
