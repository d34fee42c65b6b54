package planreport

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sparrowfleet/sparrow/core/planner"
)

// TestSolveJoin plans the ETH report's Join: the plan is no worse than
// the greedy schedule, every task is placed once, the exhaustive spread
// holds the plan, and the Gantt chart is written.
func TestSolveJoin(t *testing.T) {
	p := planner.JoinOnFrank([2]string{"F2", "F3"}, "F1")
	gantt := filepath.Join(t.TempDir(), "gantt.svg")
	out, err := Solve(p, Options{MaxNodes: 100000, Plot: gantt, Exhaustive: true})
	if err != nil {
		t.Fatal(err)
	}
	if out.Makespan > out.Greedy || len(out.Tasks) != len(p.Graph.Tasks) {
		t.Errorf("plan %v s (greedy %v s) with %d of %d tasks", out.Makespan, out.Greedy, len(out.Tasks), len(p.Graph.Tasks))
	}
	if e := out.Exhaustive; e == nil || e.Min > out.Makespan+1e-9 || e.Median < e.Min || e.Max < e.Median {
		t.Errorf("exhaustive %+v against plan %v", e, out.Makespan)
	}
	if st, err := os.Stat(gantt); err != nil || st.Size() == 0 {
		t.Errorf("gantt chart not written: %v", err)
	}
}
