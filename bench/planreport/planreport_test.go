package planreport

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sparrowfleet/sparrow/core/planner"
)

// TestSolveJoin plans the ETH report's Join with both searches: the plan
// is no worse than the greedy schedule, every task is placed once, and
// the Gantt chart is written. The exhaustive spread evaluates every
// assignment under the priority order, so the search over orders may
// beat its best, and the assignment-only search must equal it.
func TestSolveJoin(t *testing.T) {
	for _, tc := range []struct {
		name           string
		assignmentOnly bool
	}{
		{"orders and assignments", false},
		{"assignments only", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := planner.JoinOnFrank([2]string{"F2", "F3"}, "F1")
			gantt := filepath.Join(t.TempDir(), "gantt.svg")
			out, err := Solve(p, Options{MaxNodes: 100000, Plot: gantt, Exhaustive: true, AssignmentOnly: tc.assignmentOnly})
			if err != nil {
				t.Fatal(err)
			}
			if out.Makespan > out.Greedy || len(out.Tasks) != len(p.Graph.Tasks) {
				t.Errorf("plan %v s (greedy %v s) with %d of %d tasks", out.Makespan, out.Greedy, len(out.Tasks), len(p.Graph.Tasks))
			}
			e := out.Exhaustive
			if e == nil || e.Median < e.Min || e.Max < e.Median || out.Makespan > e.Min+1e-9 ||
				(tc.assignmentOnly && out.Makespan < e.Min-1e-9) {
				t.Errorf("exhaustive %+v against plan %v", e, out.Makespan)
			}
			if st, err := os.Stat(gantt); err != nil || st.Size() == 0 {
				t.Errorf("gantt chart not written: %v", err)
			}
		})
	}
}
