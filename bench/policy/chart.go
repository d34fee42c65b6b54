package policy

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Point is a plotted point in data coordinates.
type Point struct{ X, Y float64 }

// Series is one plotted line.
type Series struct {
	Name   string
	Points []Point
	// Color is "#rrggbb"; empty picks from the palette by position.
	Color  string
	Dashed bool
	// Markers draws a dot at each point; Hollow draws rings instead
	// (used for the paper's values).
	Markers, Hollow bool
	// NoLine draws only the markers; Square makes them squares.
	NoLine, Square bool
}

// Tick is an axis tick at V labelled Label.
type Tick struct {
	V     float64
	Label string
}

// Chart is a line chart with a legend on the right.
type Chart struct {
	Title, Subtitle string
	XLabel, YLabel  string
	// Ranges; when Min == Max the range is taken from the data (the y
	// range then starts at 0 on a linear axis).
	XMin, XMax, YMin, YMax float64
	LogY                   bool
	// XTicks, if set, replaces the automatic x ticks (e.g. categories).
	XTicks []Tick
	Series []Series
	// Notes are short lines printed under the legend.
	Notes []string
}

// Palette is the default series colours.
var Palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"}

type anchor int

const (
	anchorStart anchor = iota
	anchorMiddle
	anchorEnd
)

// canvas is what a chart draws on: the SVG writer or the PNG rasteriser.
// Coordinates are pixels from the top left.
type canvas interface {
	polyline(pts []Point, col color.RGBA, width float64, dashed bool)
	rect(x, y, w, h float64, fill color.RGBA)
	dot(x, y, r float64, col color.RGBA, hollow, square bool)
	text(x, y float64, s string, size float64, a anchor, col color.RGBA)
}

const (
	chartW, chartH                     = 880, 500
	padLeft, padRight, padTop, padBott = 80, 250, 74, 56
)

var (
	black = color.RGBA{0, 0, 0, 255}
	grey  = color.RGBA{0xdd, 0xdd, 0xdd, 255}
	dark  = color.RGBA{0x55, 0x55, 0x55, 255}
	white = color.RGBA{255, 255, 255, 255}
)

func parseColor(s string) color.RGBA {
	if len(s) == 7 && s[0] == '#' {
		if v, err := strconv.ParseUint(s[1:], 16, 32); err == nil {
			return color.RGBA{uint8(v >> 16), uint8(v >> 8), uint8(v), 255}
		}
	}
	return black
}

func (c *Chart) ranges() (x0, x1, y0, y1 float64, err error) {
	x0, x1, y0, y1 = math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range c.Series {
		for _, p := range s.Points {
			if bad(p.X) || bad(p.Y) || (c.LogY && p.Y <= 0) {
				continue
			}
			x0, x1 = min(x0, p.X), max(x1, p.X)
			y0, y1 = min(y0, p.Y), max(y1, p.Y)
		}
	}
	if math.IsInf(x0, 0) {
		return 0, 0, 0, 0, fmt.Errorf("plot %q: nothing to plot", c.Title)
	}
	if c.XMin != c.XMax {
		x0, x1 = c.XMin, c.XMax
	}
	if c.YMin != c.YMax {
		y0, y1 = c.YMin, c.YMax
	} else if c.LogY {
		y0, y1 = math.Pow(10, math.Floor(math.Log10(y0))), math.Pow(10, math.Ceil(math.Log10(y1)))
		if y1 <= y0 {
			y1 = y0 * 10
		}
	} else {
		y0 = min(0, y0)
		y1 = y1 * 1.05
		if y1 <= y0 {
			y1 = y0 + 1
		}
	}
	if x1 <= x0 {
		x0, x1 = x0-0.5, x1+0.5
	}
	return x0, x1, y0, y1, nil
}

func bad(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }

// niceTicks returns about n round-valued ticks covering [lo, hi].
func niceTicks(lo, hi float64, n int) []float64 {
	if hi <= lo || n < 1 {
		return []float64{lo}
	}
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var out []float64
	for v := math.Ceil(lo/step-1e-9) * step; v <= hi+step*1e-9; v += step {
		out = append(out, math.Round(v/step)*step+0) // +0 turns -0 into 0
	}
	return out
}

func fmtNum(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'g', 4, 64) + "M"
	case a >= 1e4:
		return strconv.FormatFloat(v/1e3, 'g', 4, 64) + "k"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

func (c *Chart) render(cv canvas) error {
	x0, x1, y0, y1, err := c.ranges()
	if err != nil {
		return err
	}
	pw, ph := float64(chartW-padLeft-padRight), float64(chartH-padTop-padBott)
	px := func(x float64) float64 {
		f := min(max((x-x0)/(x1-x0), -0.02), 1.02)
		return padLeft + f*pw
	}
	py := func(y float64) float64 {
		var f float64
		if c.LogY {
			f = (math.Log10(y) - math.Log10(y0)) / (math.Log10(y1) - math.Log10(y0))
		} else {
			f = (y - y0) / (y1 - y0)
		}
		f = min(max(f, -0.02), 1.02)
		return padTop + (1-f)*ph
	}
	cv.rect(0, 0, chartW, chartH, white)
	cv.text(padLeft, 22, c.Title, 15, anchorStart, black)
	if c.Subtitle != "" {
		cv.text(padLeft, 42, c.Subtitle, 11, anchorStart, dark)
	}
	// Grid and y ticks.
	var yt []Tick
	if c.LogY {
		for e := math.Floor(math.Log10(y0)); e <= math.Ceil(math.Log10(y1)); e++ {
			v := math.Pow(10, e)
			if v >= y0*(1-1e-9) && v <= y1*(1+1e-9) {
				yt = append(yt, Tick{v, fmtNum(v)})
			}
		}
	} else {
		for _, v := range niceTicks(y0, y1, 6) {
			yt = append(yt, Tick{v, fmtNum(v)})
		}
	}
	for _, t := range yt {
		y := py(t.V)
		cv.polyline([]Point{{padLeft, y}, {padLeft + pw, y}}, grey, 1, false)
		cv.text(padLeft-6, y+4, t.Label, 11, anchorEnd, black)
	}
	xt := c.XTicks
	if xt == nil {
		for _, v := range niceTicks(x0, x1, 8) {
			xt = append(xt, Tick{v, fmtNum(v)})
		}
	}
	for _, t := range xt {
		if t.V < x0-1e-9 || t.V > x1+1e-9 {
			continue
		}
		x := px(t.V)
		cv.polyline([]Point{{x, padTop}, {x, padTop + ph}}, grey, 1, false)
		cv.text(x, padTop+ph+18, t.Label, 11, anchorMiddle, black)
	}
	cv.polyline([]Point{{padLeft, padTop}, {padLeft, padTop + ph}, {padLeft + pw, padTop + ph}}, black, 1, false)
	cv.text(padLeft+pw/2, chartH-10, c.XLabel, 12, anchorMiddle, black)
	cv.text(padLeft-6, padTop-12, c.YLabel, 12, anchorStart, black)

	// Series, then legend.
	lx, ly := float64(chartW-padRight+20), float64(padTop+6)
	for i, s := range c.Series {
		col := parseColor(s.Color)
		if s.Color == "" {
			col = parseColor(Palette[i%len(Palette)])
		}
		var pts []Point
		for _, p := range s.Points {
			if bad(p.X) || bad(p.Y) || (c.LogY && p.Y <= 0) {
				if len(pts) > 1 && !s.NoLine {
					cv.polyline(pts, col, 2, s.Dashed)
				}
				pts = pts[:0]
				continue
			}
			pts = append(pts, Point{px(p.X), py(p.Y)})
		}
		if len(pts) > 1 && !s.NoLine {
			cv.polyline(pts, col, 2, s.Dashed)
		}
		if s.Markers || s.Hollow {
			for _, p := range s.Points {
				if !bad(p.X) && !bad(p.Y) && !(c.LogY && p.Y <= 0) {
					cv.dot(px(p.X), py(p.Y), 4, col, s.Hollow, s.Square)
				}
			}
		}
		if s.Name != "" {
			if !s.NoLine {
				cv.polyline([]Point{{lx, ly}, {lx + 26, ly}}, col, 2, s.Dashed)
			}
			if s.Markers || s.Hollow {
				cv.dot(lx+13, ly, 4, col, s.Hollow, s.Square)
			}
			cv.text(lx+34, ly+4, s.Name, 11, anchorStart, black)
			ly += 20
		}
	}
	ly += 10
	for _, n := range c.Notes {
		cv.text(lx, ly+4, n, 10, anchorStart, dark)
		ly += 16
	}
	return nil
}

// WriteSVG writes the chart as a self-contained SVG document.
func (c *Chart) WriteSVG(w io.Writer) error {
	s := &svgCanvas{}
	if err := c.render(s); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif">`+"\n%s</svg>\n",
		chartW, chartH, chartW, chartH, s.buf.String())
	return err
}

// WritePNG writes the chart as a PNG image.
func (c *Chart) WritePNG(w io.Writer) error {
	p := newPNGCanvas(chartW, chartH)
	if err := c.render(p); err != nil {
		return err
	}
	return p.encode(w)
}

// WriteFile writes the chart to path as SVG or PNG, by extension.
func (c *Chart) WriteFile(path string) error {
	var buf bytes.Buffer
	var err error
	switch strings.ToLower(filepath.Ext(path)) {
	case ".svg":
		err = c.WriteSVG(&buf)
	case ".png":
		err = c.WritePNG(&buf)
	default:
		return fmt.Errorf("plot %s: want a .svg or .png file name", path)
	}
	if err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// CheckPlotPath reports an unusable plot file name before a long run.
func CheckPlotPath(path string) error {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".svg", ".png":
		return nil
	}
	return fmt.Errorf("--plot %s: want a .svg or .png file name", path)
}
