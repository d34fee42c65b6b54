package policy

import (
	"bytes"
	"encoding/json"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/internal/plot"
)

func TestGroupSummarize(t *testing.T) {
	var g Group
	done := []float64{300, 100, 200}
	g.Summarize(done, []float64{5000, 6000})
	if done[0] != 300 {
		t.Fatal("Summarize modified its input")
	}
	if g.Response.N != 3 || g.Response.P50 != 200 || g.Measured != 5 {
		t.Fatalf("response %+v measured %d", g.Response, g.Measured)
	}
	// Lower bound over 100, 200, 300, 5000, 6000.
	if g.LowerBound.N != 5 || g.LowerBound.P50 != 300 || g.LowerBound.Max != 6000 {
		t.Fatalf("lower bound %+v", g.LowerBound)
	}
	if g.Samples[0] != 100 {
		t.Fatal("samples not sorted")
	}
}

func TestCDF(t *testing.T) {
	got := CDF([]float64{1, 2, 3, 4}, 0)
	want := [][2]float64{{1, 0.25}, {2, 0.5}, {3, 0.75}, {4, 1}}
	if len(got) != len(want) {
		t.Fatalf("CDF = %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("CDF = %v, want %v", got, want)
		}
	}
	s := make([]float64, 1000)
	for i := range s {
		s[i] = float64(i)
	}
	thin := CDF(s, 100)
	if len(thin) > 102 || thin[len(thin)-1] != [2]float64{999, 1} {
		t.Fatalf("thinned CDF has %d points ending %v", len(thin), thin[len(thin)-1])
	}
	if CDF(nil, 10) != nil {
		t.Fatal("CDF of nothing")
	}
}

func TestParseLoadAvg(t *testing.T) {
	l, err := ParseLoadAvg("0.52 1.07 2.50 2/345 6789\n")
	if err != nil || l != [3]float64{0.52, 1.07, 2.5} {
		t.Fatalf("ParseLoadAvg = %v, %v", l, err)
	}
	for _, s := range []string{"", "1 2", "a b c"} {
		if _, err := ParseLoadAvg(s); err == nil {
			t.Errorf("ParseLoadAvg(%q) accepted", s)
		}
	}
}

func TestNumJSON(t *testing.T) {
	b, err := json.Marshal([]Num{1.5, Num(math.NaN()), Num(math.Inf(1))})
	if err != nil || string(b) != "[1.5,null,null]" {
		t.Fatalf("%s, %v", b, err)
	}
}

func testFairnessReport(t *testing.T) FairnessReport {
	t.Helper()
	scheds := []Schedule{Constant(4*time.Second, 1), StepSchedule(2*time.Second, 0, 0.5)}
	spans := append(spansAt("user0", 4, 0, 2*time.Second, ms(100)), spansAt("user0", 2, 2*time.Second, 4*time.Second, ms(100))...)
	spans = append(spans, spansAt("user1", 2, 2*time.Second, 4*time.Second, ms(100))...)
	fa, err := AnalyzeFairness(spans, []string{"user0", "user1"}, []float64{1, 1}, scheds, 4, time.Second, 4*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	p := FairnessParams{Fleet: Fleet{Schedulers: 1, NodeMonitors: 2, Slots: 2, Queue: "fair", ProbeRatio: 2, TasksPerJob: 10, TaskMs: 100},
		IntervalS: 2, BinS: 1, Weights: []float64{1, 1}, User0Load: 1, User1Loads: []float64{0, 0.5}}
	return NewFairnessReport(p, fa, []Group{{Name: "user0"}, {Name: "user1"}}, HostLoad{Cores: 2})
}

func TestFairnessReport(t *testing.T) {
	r := testFairnessReport(t)
	var buf bytes.Buffer
	if err := r.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"Figure 11", "t (s)", "0-2s", "2-4s", "mean absolute deviation", "user1: 0.000", "on 2 cores"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil || back["experiment"] != "fairness" || len(back["shares"].([]any)) != 4 {
		t.Fatalf("JSON %s: %v", b, err)
	}
}

func TestPriorityReport(t *testing.T) {
	hp := Group{Name: "hp", Submitted: 10}
	hp.Summarize([]float64{110, 120, 130}, nil)
	lp := Group{Name: "lp", Submitted: 20, Incomplete: 5, TasksUnlaunched: 42}
	lp.Summarize([]float64{500, 900}, []float64{3000, 4000, 5000})
	p0, _ := PaperTable3Row(0)
	p75, ok := PaperTable3Row(0.75)
	if !ok || p75.LP50 != 40202 {
		t.Fatalf("paper row 0.75 = %+v", p75)
	}
	r := PriorityReport{Experiment: "priority", Params: PriorityParams{HPLoad: 0.25, DurationS: 10},
		Rows: []PriorityRow{
			{LPLoad: 0, HP: hp, LP: Group{Name: "lp"}, Paper: &p0},
			{LPLoad: 0.75, HP: hp, LP: lp, Paper: &p75},
		}}
	var buf bytes.Buffer
	r.WriteTable(&buf)
	out := buf.String()
	for _, want := range []string{"Table 3", "106 (111)", "N/A", "40202 (46191)", "120 (130)", "2/5", ">=3000 (>=5000)", "42"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if _, err := json.Marshal(r); err != nil {
		t.Fatalf("JSON: %v", err)
	}
	c := r.Chart()
	names := map[string]plot.Series{}
	for _, s := range c.Series {
		names[s.Name] = s
	}
	if s, ok := names["paper LP median"]; !ok || !s.NoLine || s.Marker != plot.Ring || len(s.Points) != 2 {
		t.Errorf("paper LP median series: %+v", s)
	}
	// No LP jobs at LP load 0: a gap, not a point at zero.
	if s := names["LP median"]; !math.IsNaN(s.Points[0].Y) || s.Points[1].Y != 500 {
		t.Errorf("LP median points %v", s.Points)
	}
	if !c.Y.Log || len(c.X.Ticks) != 2 || c.X.Ticks[1].Label != "0.75" {
		t.Errorf("axes: %+v %+v", c.X, c.Y)
	}
	savePlots(t, c, "paper LP median")
}

// savePlots saves c as SVG and PNG and checks the SVG shows want.
func savePlots(t *testing.T, c *plot.Chart, want string) {
	t.Helper()
	dir := t.TempDir()
	if err := c.Save(filepath.Join(dir, "c.svg")); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "c.svg"))
	if !bytes.Contains(b, []byte("<svg")) || !bytes.Contains(b, []byte(want)) {
		t.Errorf("SVG lacks %q:\n%.400s", want, b)
	}
	if err := c.Save(filepath.Join(dir, "c.png")); err != nil {
		t.Fatal(err)
	}
	fh, err := os.Open(filepath.Join(dir, "c.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if _, err := png.Decode(fh); err != nil {
		t.Fatalf("PNG: %v", err)
	}
}

func TestConstraintsReport(t *testing.T) {
	c := Group{Name: "constrained", Load: 0.5}
	c.Summarize([]float64{150, 250}, nil)
	f := Group{Name: "unconstrained", Load: 0.5}
	f.Summarize([]float64{110, 120}, nil)
	r := ConstraintsReport{Experiment: "constraints", Params: ConstraintsParams{Fleet: Fleet{NodeMonitors: 10, Slots: 4, TaskMs: 100},
		Attr: "gpu=yes", AttrNodes: 2, AttrFraction: 0.2}, Groups: []Group{c, f},
		Placement: []Placement{{"constrained", 20, 0}, {"unconstrained", 3, 17}}}
	var buf bytes.Buffer
	r.WriteTable(&buf)
	out := buf.String()
	for _, want := range []string{"2 of 10 node monitors (20%) have gpu=yes", "constrained", "20 ran on gpu=yes nodes, 0 on the others"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	ch := r.Chart()
	// The x axis ends past the largest p99 (250 ms) and the ideal line
	// stands at one task's duration.
	if ch.X.Min != 0 || math.Abs(ch.X.Max-275) > 1e-9 {
		t.Errorf("x range %g-%g, want 0-275", ch.X.Min, ch.X.Max)
	}
	ideal := ch.Series[len(ch.Series)-1]
	if !ideal.Dashed || ideal.Points[0].X != 100 || ideal.Points[1].X != 100 {
		t.Errorf("ideal line %+v", ideal)
	}
	savePlots(t, ch, "unconstrained")
}

func TestFairnessChart(t *testing.T) {
	c := testFairnessReport(t).Chart()
	if len(c.Series) != 4 {
		t.Fatalf("%d series, want share and fair share for each of two users", len(c.Series))
	}
	for _, s := range c.Series {
		// Four 1 s bins, and a last point closing the last bin at 4 s.
		if !s.Step || len(s.Points) != 5 || s.Points[4].X != 4 || s.Points[4].Y != s.Points[3].Y {
			t.Errorf("%s: step %v, points %v", s.Name, s.Step, s.Points)
		}
	}
	if c.Series[0].Color != c.Series[1].Color || !c.Series[1].Dashed || c.Series[0].Dashed {
		t.Error("a user's fair share should be its share's colour, dashed")
	}
	if c.X.Max != 4 || len(c.X.Ticks) != 3 || c.X.Ticks[1].Value != 2 {
		t.Errorf("x axis %+v: want 0-4 s with a tick per 2 s interval", c.X)
	}
	if len(c.Notes) != 3 || !strings.HasPrefix(c.Notes[0], "MAD user0") {
		t.Errorf("notes %q", c.Notes)
	}
	savePlots(t, c, "user1 max-min fair")
}

func TestHostLoadString(t *testing.T) {
	h := HostLoad{Before: [3]float64{0.5, 1, 2}, Cores: 2, FleetLogLines: 3}
	if s := h.String(); !strings.Contains(s, "0.50 1.00 2.00 before") || !strings.Contains(s, "no node monitor lost") || h.Disturbed() {
		t.Fatalf("%s", s)
	}
	h.NodeMonitorsLost = 2
	h.GaveUp, h.WaitedS = true, 600
	if s := h.String(); !strings.Contains(s, "DISTURBED") || !strings.Contains(s, "gave up waiting 600s") {
		t.Fatalf("%s", s)
	}
}
