package fairness

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// TestConstrainedUsersGetCloserToCMMF is a scaled-down live run on one
// node monitor x 2 slots per type: Hadoop and Spark until 3.5 s, then all
// four users until 7 s. Tasks last 400 ms, so that a fleet starved of CPU
// (under -race on a loaded 2-core machine) still keeps its 8 slots busy:
// Choosy serves the lowest cluster-wide share, so Hadoop running less
// than it could elsewhere would rightly take Spark's node. CMMF gives Spark a quarter in
// both phases and CUDA a quarter in the last; per-node fair queues give
// Spark an eighth and CUDA a twelfth (§4.1's independent allocation).
// Choosy must bring Spark clearly closer while only Hadoop competes for
// its node; the CMMF weights must bring Spark and CUDA closer. (Choosy is
// not checked with all four: on 8 slots, its guarantee, within 2n = 8
// slots of CMMF (Theorem 4), is the whole cluster, and with counts a
// period old Hadoop, CUDA and MPI oscillate; docs/experiments/fairness.md shows it on
// the full run.) The margins are wide so that a loaded 2-core machine
// passes: the point is the ordering, not the numbers.
func TestConstrainedUsersGetCloserToCMMF(t *testing.T) {
	if testing.Short() {
		t.Skip("live fleet; skipped with -short")
	}
	s := time.Second
	events := []Event{
		{At: 0, User: "hadoop", Arrive: true},
		{At: 0, User: "spark", Arrive: true},
		{At: 7 * s / 2, User: "cuda", Arrive: true},
		{At: 7 * s / 2, User: "mpi", Arrive: true},
	}
	end := 7 * s
	cfg := Config{NodesPerType: 1, Slots: 2, TaskDuration: 400 * time.Millisecond, TasksPerJob: 2, Backlog: 4,
		Period: 200 * time.Millisecond, Bin: 500 * time.Millisecond, Settle: 3 * s / 2, Seed: 1, Log: zerolog.Nop()}
	cfg.Defaults()
	phases, err := Phases(events, end, PaperUsers, PaperTypes, cfg.NodesPerType*cfg.Slots)
	if err != nil {
		t.Fatal(err)
	}
	if len(phases) != 2 {
		t.Fatalf("want 2 phases, got %+v", phases)
	}
	// deviation returns Spark's converged deviation beside Hadoop
	// and CUDA's among all four.
	deviation := func(setup Setup) (spark, cuda float64) {
		m, err := Measure(context.Background(), cfg, setup, PaperUsers, PaperTypes, events, end)
		if err != nil {
			t.Fatal(err)
		}
		shares := Analyze(cfg, setup, m, PaperUsers, phases).Shares
		// The comparison assumes backlogged users keeping every slot busy.
		// A fleet starved of CPU (the race detector on a loaded machine)
		// cannot, and Choosy then rightly gives Spark's node to the user
		// running least: that is a measurement that did not happen, not a
		// failure.
		if busy := meanBusy(shares, cfg.Bin, phases[0], cfg.Settle); busy < 0.85 {
			t.Skipf("%s: the fleet kept only %.0f%% of its slots busy with two backlogged users; too starved of CPU to compare shares", setup.Name, 100*busy)
		}
		two := ConvergedDeviation(shares, cfg.Bin, phases[:1], cfg.Settle)
		four := ConvergedDeviation(shares, cfg.Bin, phases[1:], cfg.Settle)
		var line string
		for i, u := range PaperUsers {
			line += fmt.Sprintf(" %s %.3f/%.3f", u.Name, two.PerUser[i], four.PerUser[i])
		}
		t.Logf("%s: deviation with two users / with four:%s", setup.Name, line)
		if two.Bins[1] == 0 || four.Bins[2] == 0 {
			t.Fatalf("%s: no converged bins for spark or cuda", setup.Name)
		}
		return two.PerUser[1], four.PerUser[2]
	}
	fairSpark, fairCUDA := deviation(Setups[0])
	if fairSpark < 0.06 || fairCUDA < 0.06 {
		t.Errorf("per-node fair queues: Spark's deviation %.3f, CUDA's %.3f; want about 0.125 and 0.167 (they get 1/8 and 1/12 instead of 1/4)", fairSpark, fairCUDA)
	}
	if spark, _ := deviation(Setups[1]); !(spark < 0.6*fairSpark) {
		t.Errorf("choosy: Spark's deviation %.3f; want well below per-node fair queues' %.3f", spark, fairSpark)
	}
	if spark, cuda := deviation(Setups[2]); !(spark < 0.6*fairSpark) || !(cuda < 0.6*fairCUDA) {
		t.Errorf("cmmf-weights: Spark's deviation %.3f, CUDA's %.3f; want well below per-node fair queues' %.3f and %.3f", spark, cuda, fairSpark, fairCUDA)
	}
}

// meanBusy is the cluster's mean busy fraction over p's converged bins.
func meanBusy(shares [][]float64, bin time.Duration, p Phase, settle time.Duration) float64 {
	sum, n := 0.0, 0
	for k := ceilDiv(p.Start+settle, bin); k < len(shares) && time.Duration(k+1)*bin <= p.End; k++ {
		for _, v := range shares[k] {
			sum += v
		}
		n++
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}
