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
	var svg bytes.Buffer
	if err := c.WriteSVG(&svg); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(svg.String(), "paper LP median") {
		t.Error("priority chart lacks the paper's series")
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
	var svg bytes.Buffer
	if err := r.Chart().WriteSVG(&svg); err != nil {
		t.Fatal(err)
	}
}

func TestChartFiles(t *testing.T) {
	c := testFairnessReport(t).Chart()
	c.Title = "shares <&> weights"
	dir := t.TempDir()
	svgPath, pngPath := filepath.Join(dir, "f.svg"), filepath.Join(dir, "f.PNG")
	if err := c.WriteFile(svgPath); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(svgPath)
	s := string(b)
	if !strings.HasPrefix(s, "<svg") || !strings.Contains(s, "shares &lt;&amp;&gt; weights") || strings.Count(s, "<polyline") < 4 {
		t.Fatalf("SVG looks wrong:\n%.400s", s)
	}
	if !strings.Contains(s, `stroke-dasharray`) {
		t.Error("fair-share lines should be dashed")
	}
	if err := c.WriteFile(pngPath); err != nil {
		t.Fatal(err)
	}
	fh, _ := os.Open(pngPath)
	defer fh.Close()
	img, err := png.Decode(fh)
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds().Dx() != chartW || img.Bounds().Dy() != chartH {
		t.Fatalf("PNG is %v", img.Bounds())
	}
	coloured := 0
	for y := 0; y < chartH; y += 2 {
		for x := 0; x < chartW; x += 2 {
			r, g, b, _ := img.At(x, y).RGBA()
			if r != g || g != b {
				coloured++
			}
		}
	}
	if coloured < 100 {
		t.Fatalf("PNG has only %d coloured sample pixels", coloured)
	}
	if err := c.WriteFile(filepath.Join(dir, "f.pdf")); err == nil {
		t.Fatal("a .pdf plot was accepted")
	}
	if CheckPlotPath("x.svg") != nil || CheckPlotPath("x.png") != nil || CheckPlotPath("x.jpg") == nil {
		t.Fatal("CheckPlotPath")
	}
	if err := (&Chart{Title: "empty"}).WriteSVG(&bytes.Buffer{}); err == nil {
		t.Fatal("an empty chart rendered")
	}
}

func TestPNGText(t *testing.T) {
	p := newPNGCanvas(20, 10)
	p.rect(0, 0, 20, 10, white)
	p.text(1, 8, "1", 11, anchorStart, black) // baseline 8: glyph rows 1-7
	// "1" is 0x00,0x42,0x7F,0x40,0x00: column 2 is the full stem.
	for row := 0; row < 7; row++ {
		if c := p.img.RGBAAt(1+2, 1+row); c != black {
			t.Fatalf("stem pixel at row %d is %v", row, c)
		}
	}
	if c := p.img.RGBAAt(1, 1); c != white {
		t.Fatal("empty column 0 was inked")
	}
	if textWidth("ab", 11) != 11 || textWidth("ab", 15) != 22 || textWidth("ab", 12) != 11 || textWidth("", 11) != 0 {
		t.Fatal("textWidth")
	}
	if glyph('é') != glyph('?') {
		t.Fatal("non-ASCII should draw as ?")
	}
}

func TestNiceTicks(t *testing.T) {
	got := niceTicks(0, 1.05, 6)
	if got[0] != 0 || got[len(got)-1] > 1.05+eps || len(got) < 4 || len(got) > 8 {
		t.Fatalf("niceTicks(0, 1.05) = %v", got)
	}
	if z := niceTicks(0, 4, 8)[0]; math.Signbit(z) || fmtNum(z) != "0" {
		t.Fatalf("first tick %v prints as %q", z, fmtNum(z))
	}
	if fmtNum(254896) != "254.9k" || fmtNum(0.25) != "0.25" {
		t.Fatalf("fmtNum: %s %s", fmtNum(254896), fmtNum(0.25))
	}
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
