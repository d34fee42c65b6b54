package live

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/bench/policy"
	"github.com/sparrowfleet/sparrow/internal/report"
)

// The smoke tests run each experiment on a tiny fleet for a few seconds
// and check a property that must hold however slow the machine is; no
// wall-clock speed is asserted.

func tinyCommon(t *testing.T, nodes int) Common {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a loopback fleet; skipped with -short")
	}
	return Common{
		Fleet:       FleetConfig{Schedulers: 1, NodeMonitors: nodes, Slots: 2, ProbeRatio: 2, Seed: 3, Log: zerolog.Nop()},
		TasksPerJob: 4, TaskDuration: 50 * time.Millisecond, Seed: 3,
		Progress: func(p Progress) { t.Log(p) },
	}
}

func TestFairnessSmoke(t *testing.T) {
	o := FairnessOptions{Common: tinyCommon(t, 4), Interval: 2 * time.Second, Bin: 500 * time.Millisecond,
		Weights: [2]float64{1, 3}, User0Load: 1, User1Loads: []float64{0, 0.5}}
	var progress []string
	o.Progress = func(p Progress) { progress = append(progress, p.String()) }
	r, err := Fairness(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	checkFairnessOutputs(t, r, strings.Join(progress, "\n"))
	if len(r.Intervals) != 2 || len(r.Shares) != 8 {
		t.Fatalf("%d intervals and %d bins, want 2 and 8", len(r.Intervals), len(r.Shares))
	}
	idle, busy := r.Intervals[0].Measured, r.Intervals[1].Measured
	t.Logf("user0 %.3f -> %.3f, user1 %.3f -> %.3f", idle[0], busy[0], idle[1], busy[1])
	if idle[1] != 0 {
		t.Errorf("user1 ran (share %.3f) before it submitted anything", idle[1])
	}
	if busy[1] < 0.1 {
		t.Errorf("user1's share with demand 0.5 is only %.3f", busy[1])
	}
	if idle[0] <= busy[0] {
		t.Errorf("user0's share did not drop when user1 arrived: %.3f then %.3f", idle[0], busy[0])
	}
	if r.Groups[1].Submitted == 0 || r.Groups[0].Submitted == 0 {
		t.Fatalf("nothing submitted: %+v", r.Groups)
	}
}

func TestPrioritySmoke(t *testing.T) {
	o := PriorityOptions{Common: tinyCommon(t, 4), HPLoad: 0.25, LPLoads: []float64{1.5},
		Duration: 3 * time.Second, Drain: 2 * time.Second}
	r, err := Priority(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	row := r.Rows[0]
	t.Logf("HP %+v\nLP %+v", row.HP.Response, row.LP.LowerBound)
	if row.HP.Submitted == 0 || row.LP.Submitted == 0 {
		t.Fatalf("nothing submitted: HP %d LP %d", row.HP.Submitted, row.LP.Submitted)
	}
	// LP offers 1.5 of the fleet for 3 s and gets at most 2 s more: some
	// of it must be left over, while HP, served first, should finish.
	if row.LP.Incomplete == 0 {
		t.Errorf("an overloaded LP user finished everything (%d jobs)", row.LP.Submitted)
	}
	if row.HP.Completed < row.HP.Submitted*9/10 {
		t.Errorf("HP finished only %d of %d jobs", row.HP.Completed, row.HP.Submitted)
	}
	if row.HP.Response.N > 0 && row.HP.Response.P50 >= row.LP.LowerBound.P50 {
		t.Errorf("HP median %.0f ms is not below LP's lower-bound median %.0f ms", row.HP.Response.P50, row.LP.LowerBound.P50)
	}
	if row.Paper != nil {
		t.Error("an LP load of 1.5 has no paper row")
	}
}

func TestConstraintsSmoke(t *testing.T) {
	o := ConstraintsOptions{Common: tinyCommon(t, 5), Queue: "fifo", AttrFraction: 0.2, AttrKey: "gpu", AttrValue: "yes",
		ConstrainedLoad: 0.4, FreeLoad: 0.3, Duration: 3 * time.Second, Drain: 3 * time.Second}
	r, err := Constraints(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if r.Params.AttrNodes != 1 {
		t.Fatalf("%d attribute nodes, want 1 of 5", r.Params.AttrNodes)
	}
	c, f := r.Placement[0], r.Placement[1]
	t.Logf("placement %+v %+v; groups %+v", c, f, r.Groups)
	if c.OnAttrNodes == 0 {
		t.Fatal("no constrained task ran")
	}
	if c.OnOtherNodes != 0 {
		t.Errorf("%d constrained tasks ran on nodes without the attribute", c.OnOtherNodes)
	}
	if f.OnOtherNodes == 0 {
		t.Error("no unconstrained task ran on the other nodes")
	}
	if r.Groups[0].Completed == 0 || r.Groups[1].Completed == 0 {
		t.Errorf("a group completed nothing: %+v", r.Groups)
	}
}

// checkFairnessOutputs prints r as `sparrow bench fairness --json --plot`
// does and checks the table, the JSON last line, the PNG plot and the
// progress lines.
func checkFairnessOutputs(t *testing.T, r policy.FairnessReport, progress string) {
	t.Helper()
	plot := filepath.Join(t.TempDir(), "f.png")
	var out bytes.Buffer
	if err := report.Write(&out, &bytes.Buffer{}, r, report.TableThenJSON, plot); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var j struct {
		Experiment string `json:"experiment"`
		Params     struct {
			Weights []float64 `json:"weights"`
		} `json:"params"`
		Intervals []struct {
			Measured []float64 `json:"measured_mean"`
		} `json:"intervals"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &j); err != nil {
		t.Fatalf("last line is not JSON: %v\n%s", err, out.String())
	}
	if j.Experiment != "fairness" || len(j.Params.Weights) != 2 || j.Params.Weights[1] != 3 || len(j.Intervals) != 2 {
		t.Fatalf("JSON: %+v", j)
	}
	if !strings.Contains(out.String(), "mean absolute deviation") || !strings.Contains(progress, "user1:") {
		t.Errorf("table or progress missing:\nstdout:\n%s\nprogress:\n%s", out.String(), progress)
	}
	f, err := os.Open(plot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Fatalf("plot is not a PNG: %v", err)
	}
}
