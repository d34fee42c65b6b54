package plot

import (
	"bytes"
	"encoding/xml"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gonum "gonum.org/v1/plot"
)

// The chart kinds the harnesses draw, each with the texts it must carry.
func testCharts() map[string]*Chart {
	nan := math.NaN()
	return map[string]*Chart{
		// sparrow sim: mean response per policy against load, log y, with
		// the optimum dashed in black.
		"logline": {
			Title: "10000 nodes x 1 slots <sim> & co",
			X:     Axis{Label: "offered load"},
			Y:     Axis{Label: "mean response time (ms, log scale)", Log: true},
			Series: []Series{
				{Name: "random", Points: []Point{{0.1, 760}, {0.5, 1450}, {0.9, 7200}, {0.95, 13000}}, Marker: Circle},
				{Name: "late", Points: []Point{{0.1, 679}, {0.5, 680}, {0.9, 763}, {0.95, 822}}, Marker: Circle},
				{Name: "optimal", Points: []Point{{0.1, 677}, {0.95, 677}}, Color: Palette[7], Dashed: true},
			},
		},
		// bench fairness: per-bin shares as steps beside dashed fair shares.
		"step": {
			Title: "Fair shares", Subtitle: "10 node monitors x 4 slots",
			X: Axis{Label: "time (s)", Min: 0, Max: 4, Ticks: []Tick{{0, "0"}, {2, "2"}, {4, "4"}}},
			Y: Axis{Label: "share of cluster slot-time", Min: 0, Max: 1.05},
			Series: []Series{
				{Name: "user0 share", Points: []Point{{0, 0.8}, {1, 0.99}, {2, 0.5}, {3, 0.52}, {4, 0.52}}, Step: true, Color: Palette[0]},
				{Name: "user0 fair", Points: []Point{{0, 1}, {2, 0.5}, {4, 0.5}}, Step: true, Dashed: true, Color: Palette[0]},
			},
			Notes: []string{"MAD user0: 0.044", "host load avg before: 0.32"},
		},
		// bench priority: categorical x, log y, a gap where a user had no
		// jobs, and reference values as hollow markers without a line.
		"categories": {
			Title: "priorities",
			X:     Axis{Label: "low-priority load", Min: -0.3, Max: 2.3, Ticks: []Tick{{0, "0"}, {1, "0.5"}, {2, "1.75"}}},
			Y:     Axis{Label: "response time (ms, log scale)", Log: true},
			Series: []Series{
				{Name: "LP median", Points: []Point{{0, nan}, {1, 110}, {2, 6432}}, Marker: Circle},
				{Name: "LP p95", Points: []Point{{0, nan}, {1, 334}, {2, 9929}}, Marker: Square, Dashed: true},
				{Name: "paper LP median", Points: []Point{{1, 110}, {2, 254896}}, Marker: Ring, NoLine: true},
				{Name: "paper LP p95", Points: []Point{{1, 449}, {2, 269661}}, Marker: OpenSquare, NoLine: true},
			},
			Notes: []string{"hollow: paper"},
		},
		// bench constraints: CDFs cut at a fixed x range, and a vertical
		// reference line.
		"cdf": {
			Title: "response time CDF",
			X:     Axis{Label: "response time (ms)", Min: 0, Max: 300},
			Y:     Axis{Label: "fraction of jobs", Min: 0, Max: 1},
			Series: []Series{
				{Name: "constrained", Points: []Point{{100, 0}, {150, 0.5}, {400, 1}}},
				{Name: "ideal (one task)", Points: []Point{{100, 0}, {100, 1}}, Dashed: true, Color: Palette[7]},
			},
		},
	}
}

// texts is what a chart's SVG must show: every title, label, legend
// entry and note.
func texts(c *Chart) []string {
	out := []string{c.Title, c.Subtitle, c.X.Label, c.Y.Label}
	for _, s := range c.Series {
		out = append(out, s.Name)
	}
	for _, t := range c.X.Ticks {
		out = append(out, t.Label)
	}
	return append(out, c.Notes...)
}

// svgText parses an SVG document and returns its <text> contents; it
// fails the test unless the document is well-formed XML with an <svg>
// root.
func svgText(t *testing.T, b []byte) []string {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(b))
	var out []string
	root, inText := "", false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = tok.Name.Local
			}
			inText = tok.Name.Local == "text"
		case xml.CharData:
			if inText {
				out = append(out, string(tok))
			}
		case xml.EndElement:
			inText = false
		}
	}
	if root != "svg" {
		t.Fatalf("SVG root element is %q", root)
	}
	return out
}

func TestSaveSVGAndPNG(t *testing.T) {
	dir := t.TempDir()
	if d := os.Getenv("PLOT_TEST_DIR"); d != "" {
		dir = d // to look at the charts
	}
	for name, c := range testCharts() {
		t.Run(name, func(t *testing.T) {
			svgPath := filepath.Join(dir, name+".svg")
			if err := c.Save(svgPath); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(svgPath)
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(svgText(t, b), "\n")
			for _, want := range texts(c) {
				if want != "" && !strings.Contains(got, want) {
					t.Errorf("SVG lacks the text %q; it has:\n%s", want, got)
				}
			}
			if !bytes.Contains(b, []byte("Arial,Helvetica,sans-serif")) {
				t.Error("SVG names no fallback font")
			}
			dashed := false
			for _, s := range c.Series {
				dashed = dashed || s.Dashed
			}
			if dashed != bytes.Contains(b, []byte("stroke-dasharray")) {
				t.Errorf("dashed series %v, but stroke-dasharray in SVG is %v", dashed, !dashed)
			}

			pngPath := filepath.Join(dir, name+".PNG") // extensions are case-insensitive
			if err := c.Save(pngPath); err != nil {
				t.Fatal(err)
			}
			b, err = os.ReadFile(pngPath)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
				t.Fatalf("PNG file starts %q", b[:min(8, len(b))])
			}
			img, err := png.Decode(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if r := img.Bounds(); r.Dx() != 9*pngDPI || r.Dy() != 5*pngDPI {
				t.Fatalf("PNG is %v, want 9 x 5 inches at %d DPI", r, pngDPI)
			}
			// The series are drawn in colour and everything else in grey.
			coloured := 0
			for y := 0; y < img.Bounds().Dy(); y += 2 {
				for x := 0; x < img.Bounds().Dx(); x += 2 {
					r, g, b, _ := img.At(x, y).RGBA()
					if r != g || g != b {
						coloured++
					}
				}
			}
			if coloured < 100 {
				t.Errorf("PNG has only %d coloured sample pixels", coloured)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	good := testCharts()["step"]
	for _, name := range []string{"x.pdf", "x.jpg", "x"} {
		if err := good.Save(filepath.Join(dir, name)); err == nil || !strings.Contains(err.Error(), ".svg or .png") {
			t.Errorf("Save(%s): %v", name, err)
		}
		if CheckPath(name) == nil {
			t.Errorf("CheckPath(%s) accepted", name)
		}
	}
	if CheckPath("a/b.SVG") != nil || CheckPath("b.png") != nil {
		t.Error("CheckPath refused .SVG or .png")
	}
	if err := good.Write(io.Discard, "pdf"); err == nil {
		t.Error("Write accepted format pdf")
	}
	bad := map[string]*Chart{
		"empty":        {Title: "empty"},
		"all NaN":      {Series: []Series{{Points: []Point{{math.NaN(), 1}, {1, math.Inf(1)}}}}},
		"log of <= 0":  {Y: Axis{Log: true}, Series: []Series{{Points: []Point{{1, 0}, {2, -1}}}}},
		"log range":    {Y: Axis{Log: true, Min: 0, Max: 10}, Series: []Series{{Points: []Point{{1, 1}, {2, 2}}}}},
		"inverted":     {X: Axis{Min: 2, Max: 1}, Series: []Series{{Points: []Point{{1, 1}, {2, 2}}}}},
		"infinite max": {X: Axis{Min: 0, Max: math.Inf(1)}, Series: []Series{{Points: []Point{{1, 1}, {2, 2}}}}},
	}
	for name, c := range bad {
		path := filepath.Join(dir, "bad.svg")
		if err := c.Save(path); err == nil {
			t.Errorf("%s: drawn", name)
		}
		if _, err := os.Stat(path); err == nil {
			t.Fatalf("%s: a file was written for a chart that cannot be drawn", name)
		}
	}
	// One point is drawable: the range is widened around it.
	one := &Chart{Series: []Series{{Name: "one", Points: []Point{{3, 3}}, Marker: Circle}}}
	if err := one.Write(io.Discard, "svg"); err != nil {
		t.Errorf("one point: %v", err)
	}
}

func TestSegments(t *testing.T) {
	nan := math.NaN()
	c := &Chart{Y: Axis{Log: true}}
	got := c.segments([]Point{{0, 1}, {1, 2}, {2, nan}, {3, 0}, {4, 5}, {5, math.Inf(1)}})
	if len(got) != 2 || len(got[0]) != 2 || len(got[1]) != 1 || got[1][0].X != 4 {
		t.Fatalf("segments = %v, want [[{0 1} {1 2}] [{4 5}]]", got)
	}
}

func TestTicksAndRanges(t *testing.T) {
	labels := func(ts []gonum.Tick) (out []string) {
		for _, t := range ts {
			if t.Label != "" {
				out = append(out, t.Label)
			}
		}
		return out
	}
	if got := strings.Join(labels(logTicks(500, 20000)), " "); got != "500 1000 2000 5000 10k 20k" {
		t.Errorf("logTicks(500, 20000) labels %q", got)
	}
	if got := strings.Join(labels(logTicks(100, 1e6)), " "); got != "100 1000 10k 100k 1M" {
		t.Errorf("logTicks(100, 1e6) labels %q", got)
	}
	if got := strings.Join(labels(linearTicks(0, 1.05)), " "); got != "0 0.2 0.4 0.6 0.8 1" {
		t.Errorf("linearTicks(0, 1.05) labels %q", got)
	}
	if got := strings.Join(labels(linearTicks(0.1, 0.95)), " "); got != "0.2 0.4 0.6 0.8" {
		t.Errorf("linearTicks(0.1, 0.95) labels %q", got)
	}
	if got := strings.Join(labels(linearTicks(-4, 4)), " "); !strings.Contains(got, " 0 ") || strings.Contains(got, "-0 ") {
		t.Errorf("linearTicks(-4, 4) labels %q", got)
	}
	for _, c := range []struct {
		a              Axis
		lo, hi, w0, w1 float64
	}{
		{Axis{}, 1, 5, 1, 5},
		{Axis{Min: 0, Max: 1.05}, 0.2, 0.9, 0, 1.05},
		{Axis{Log: true}, 677, 13034, 500, 20000},
		{Axis{Log: true}, 105, 269661, 100, 1e6}, // three decades or more: powers of ten
		{Axis{}, 2, 2, 1.5, 2.5},
	} {
		lo, hi, err := c.a.span(c.lo, c.hi)
		if err != nil || math.Abs(lo-c.w0) > 1e-9 || math.Abs(hi-c.w1) > 1e-9 {
			t.Errorf("%+v.span(%g, %g) = %g, %g, %v; want %g, %g", c.a, c.lo, c.hi, lo, hi, err, c.w0, c.w1)
		}
	}
	if FormatNum(254896) != "254.9k" || FormatNum(0.25) != "0.25" || FormatNum(2e6) != "2M" || FormatNum(5000) != "5000" {
		t.Errorf("FormatNum: %s %s %s %s", FormatNum(254896), FormatNum(0.25), FormatNum(2e6), FormatNum(5000))
	}
}
