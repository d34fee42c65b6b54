package flowbench

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sparrowfleet/sparrow/core/flow"
	"github.com/sparrowfleet/sparrow/core/flow/gen"
)

// TestOneWithoutLEMON times a small generated graph from scratch and warm
// after churn: the cost is the solver's, the churn counts both halves,
// and LEMON's columns stay empty without its driver.
func TestOneWithoutLEMON(t *testing.T) {
	q := gen.Quincy(gen.Default(24, 3, 200), rand.New(rand.NewPCG(1, 0)))
	want, err := flow.Solve(q.Net)
	if err != nil {
		t.Fatal(err)
	}
	nodes := q.Net.NumNodes() // before the churn changes the graph
	var progress, table bytes.Buffer
	row, err := One(&progress, "small", q.Net, q, "", 2, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	if row.Cost != want.Cost || row.Nodes != nodes || row.LemonNSMs != 0 || row.ChurnTasks < 2 || row.ChurnTasks%2 != 0 {
		t.Errorf("row %+v, want cost %d and an even churn", row, want.Cost)
	}
	if err := WriteTable(&table, []Row{row}); err != nil || !strings.Contains(table.String(), "small") {
		t.Errorf("table %v:\n%s", err, table.String())
	}
	if !strings.Contains(progress.String(), "warm re-solve") {
		t.Errorf("progress:\n%s", progress.String())
	}
}
