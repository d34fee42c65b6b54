package sweep

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// spec is a small sweep with sparrow sim's defaults otherwise.
func spec() Spec {
	return Spec{Policies: "late,random", Nodes: 50, Slots: 1, Tasks: 5, Loads: "0.5,0.8", Jobs: 100, Warmup: "10%",
		Dist: "exp", ParetoAlpha: 2, Mean: 100, RTT: 1, ProbeRatios: "2", Seed: 1, Parallel: 2, LongMean: 10000}
}

// TestRunWritesEveryPoint runs a sweep and checks its JSON rows (in
// policy, then load order, with the closed form where there is one), its
// progress lines and its chart.
func TestRunWritesEveryPoint(t *testing.T) {
	s := spec()
	pts, err := s.Points()
	if err != nil {
		t.Fatal(err)
	}
	var progress, out bytes.Buffer
	if err := Run(pts, s.Parallel, &progress); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&out, pts); err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
		t.Fatalf("not a JSON array: %v\n%s", err, out.String())
	}
	if len(rows) != 4 {
		t.Fatalf("%d rows, want 4", len(rows))
	}
	for _, tc := range []struct {
		row           int
		policy        string
		load          float64
		hasClosedForm bool
	}{{0, "late", 0.5, false}, {1, "late", 0.8, false}, {2, "random", 0.5, true}, {3, "random", 0.8, true}} {
		r := rows[tc.row]
		_, cf := r["zero_wait_closed_form"]
		if r["policy"] != tc.policy || r["load"] != tc.load || cf != tc.hasClosedForm {
			t.Errorf("row %d: policy %v load %v closed form %v, want %s %v %v", tc.row, r["policy"], r["load"], cf, tc.policy, tc.load, tc.hasClosedForm)
		}
	}
	if strings.Count(progress.String(), "\n[") < 3 || !strings.Contains(progress.String(), "points in") {
		t.Errorf("progress lines missing:\n%s", progress.String())
	}
	svg := filepath.Join(t.TempDir(), "p.svg")
	if err := Chart(pts, MultiD(pts)).Save(svg); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(svg); err != nil || !bytes.Contains(b, []byte(">optimal<")) || !bytes.Contains(b, []byte(">late<")) {
		t.Errorf("chart: %v", err)
	}
}

// TestPointsRejects names the flag of each setting out of range.
func TestPointsRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Spec)
		want string
	}{
		{"policy", func(s *Spec) { s.Policies = "nope" }, "unknown policy"},
		{"load", func(s *Spec) { s.Loads = "0.5,1.2" }, "load must be in (0, 1)"},
		{"jobs", func(s *Spec) { s.Jobs = 0 }, "--jobs must be"},
		{"parallel", func(s *Spec) { s.Parallel = 0 }, "--parallel must be"},
		{"cancel without late", func(s *Spec) { s.Policies, s.Cancel = "random", true }, "--cancel only applies"},
		{"probe ratio twice", func(s *Spec) { s.ProbeRatios = "2,2" }, "listed twice"},
		{"long mean without fraction", func(s *Spec) { s.Given = func(f string) bool { return f == "long-mean" } }, "--long-mean needs --long-frac"},
	} {
		s := spec()
		tc.edit(&s)
		if _, err := s.Points(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}
