package locality

import (
	"bytes"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLogBase(t *testing.T) {
	tests := []struct {
		vals []float64
		want float64
	}{
		{[]float64{547, 1391, 42733}, 100},
		{[]float64{0, 0.5, 3}, 0.1},
		{[]float64{1000}, 1000},
		{nil, 1},
	}
	for _, tt := range tests {
		if got := logBase(tt.vals); math.Abs(got-tt.want) > 1e-12*tt.want {
			t.Errorf("logBase(%v) = %g, want %g", tt.vals, got, tt.want)
		}
	}
}

// TestReportOutputs builds a report from a hand-made outcome and checks
// the table names every row and both charts render.
func TestReportOutputs(t *testing.T) {
	cfg := Config{}
	cfg.Workload.Duration = time.Second
	cfg.Defaults()
	tr, err := Generate(cfg.Workload)
	if err != nil {
		t.Fatal(err)
	}
	jobs := []JobOutcome{{Tasks: []TaskOutcome{{Launches: 1, Where: RackLocal, Input: 1, Bytes: 1, Done: true, Finished: ms(300)}}}}
	rep := Report{Settings: NewSettings(cfg, tr)}
	for _, m := range Modes {
		rep.Modes = append(rep.Modes, NewModeReport(m, Measurement{Jobs: jobs, End: ms(400)}))
	}
	ref := NewModeReport(ReferenceMode, Measurement{Jobs: jobs, End: ms(400)})
	rep.Reference = &ref
	var b bytes.Buffer
	if err := rep.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"strict", "delay", "guided", "quincy-ref"} {
		if !strings.Contains(b.String(), name) {
			t.Errorf("table has no row %q:\n%s", name, b.String())
		}
	}
	dir := t.TempDir()
	if err := rep.LocalityChart().Save(filepath.Join(dir, "f.svg")); err != nil {
		t.Fatal(err)
	}
	if err := rep.ResponseChart().Save(filepath.Join(dir, "r.svg")); err != nil {
		t.Fatal(err)
	}
}
