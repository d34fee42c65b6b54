package plot

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

	gonum "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Chart is a line chart with a title, a subtitle, a legend and notes.
type Chart struct {
	Title, Subtitle string
	X, Y            Axis
	Series          []Series
	// Notes are short lines printed under the legend (run conditions,
	// summary numbers).
	Notes []string
}

// Axis describes one axis.
type Axis struct {
	Label string
	// Min and Max fix the range; when they are equal the range is the
	// data's, on a log axis widened to 1, 2 or 5 times a power of ten
	// (to powers of ten if it spans three decades or more).
	Min, Max float64
	Log      bool
	// Ticks, if set, replaces the automatic ticks (e.g. categories).
	Ticks []Tick
}

// Tick is a labelled tick mark at Value.
type Tick struct {
	Value float64
	Label string
}

// Point is a point in data coordinates. Points with a NaN or infinite
// coordinate, or a non-positive one on a log axis, are not drawn and
// break the line.
type Point struct{ X, Y float64 }

// Marker is the glyph drawn at each point of a series.
type Marker int

// The markers. The hollow ones are for reference values drawn beside
// measured ones (e.g. the paper's numbers).
const (
	NoMarker Marker = iota
	Circle
	Square
	Ring       // hollow circle
	OpenSquare // hollow square
)

// Series is one line of a chart.
type Series struct {
	// Name is the legend entry; empty leaves the series out of the legend.
	Name   string
	Points []Point
	// Color nil takes the next colour of Palette (counting only the
	// series that do not set one).
	Color  color.Color
	Dashed bool
	// Step draws a step function: each point's y holds until the next
	// point's x (per-bin measurements); give a last point at the end of
	// the last bin.
	Step   bool
	NoLine bool // markers only
	Marker Marker
}

// Palette is the default series colours (matplotlib's "tab10").
var Palette = []color.Color{
	rgb(0x1f77b4), rgb(0xd62728), rgb(0x2ca02c), rgb(0xff7f0e), rgb(0x9467bd),
	rgb(0x8c564b), rgb(0xe377c2), rgb(0x7f7f7f), rgb(0xbcbd22), rgb(0x17becf),
}

func rgb(v uint32) color.RGBA { return color.RGBA{uint8(v >> 16), uint8(v >> 8), uint8(v), 255} }

// The page: 9 x 5 inches (648 x 360 points; 1296 x 720 PNG pixels at
// pngDPI). The PNG is rendered at 1.5x the screen DPI so that it stays
// sharp when scaled down.
const (
	width, height = 9 * vg.Inch, 5 * vg.Inch
	pngDPI        = 144
	margin        = 8 // points around the page and between blocks
)

// sans is Liberation Sans, which gonum bundles. It is metric-compatible
// with Arial and Helvetica, which is what lets an SVG viewer without it
// substitute them (see svgFontFallback).
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

var grey = color.Gray{Y: 0x55}

func style(size vg.Length, c color.Color) text.Style {
	return text.Style{Color: c, Font: font.From(sans, size), Handler: gonum.DefaultTextHandler}
}

// CheckPath reports a file name Save cannot write, before a long run
// produces the data.
func CheckPath(path string) error {
	_, err := formatOf(path)
	return err
}

func formatOf(path string) (string, error) {
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".svg", ".png":
		return ext[1:], nil
	}
	return "", fmt.Errorf("plot %s: want a .svg or .png file name", path)
}

// Save writes the chart to path as SVG or PNG, by extension. Nothing is
// written if the chart cannot be drawn.
func (c *Chart) Save(path string) error {
	format, err := formatOf(path)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := c.Write(&buf, format); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// Write writes the chart in format "svg" or "png".
func (c *Chart) Write(w io.Writer, format string) (err error) {
	var cw vg.CanvasWriterTo
	switch format {
	case "svg":
		cw = vgsvg.New(width, height)
	case "png":
		cw = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(pngDPI))}
	default:
		return fmt.Errorf("plot: unknown format %q, want svg or png", format)
	}
	// gonum panics on some inputs it considers programming errors; a
	// chart is drawn at the end of runs that take minutes, and a plot
	// must not cost their printed results.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("plot %q: %v", c.Title, r)
		}
	}()
	if err := c.draw(draw.New(cw)); err != nil {
		return err
	}
	if format != "svg" {
		_, err = cw.WriteTo(w)
		return err
	}
	var buf bytes.Buffer
	if _, err := cw.WriteTo(&buf); err != nil {
		return err
	}
	_, err = w.Write(svgFontFallback(buf.Bytes()))
	return err
}

// svgFontFallback appends fallbacks to the SVG's font-family, which names
// only Liberation Sans: a viewer without that font would otherwise use
// its default (often a serif). Arial and Helvetica have the same metrics,
// so gonum's text layout still fits.
func svgFontFallback(b []byte) []byte {
	return bytes.ReplaceAll(b, []byte("font-family:Liberation Sans;"),
		[]byte("font-family:'Liberation Sans',Arial,Helvetica,sans-serif;"))
}

// draw lays the page out as a title block on top, the legend and notes in
// a column on the right, and gonum's plot (axes and data) in the rest.
func (c *Chart) draw(page draw.Canvas) error {
	p, lg, err := c.plot()
	if err != nil {
		return err
	}
	page.SetColor(color.White)
	page.Fill(page.Rectangle.Path())
	page = draw.Crop(page, margin, -margin, margin, -margin)

	top := page.Max.Y
	for _, t := range []struct {
		s   string
		sty text.Style
	}{{c.Title, style(13, color.Black)}, {c.Subtitle, style(9, grey)}} {
		if t.s == "" {
			continue
		}
		t.sty.YAlign = draw.YTop
		page.FillText(t.sty, vg.Point{X: page.Min.X, Y: top}, t.s)
		top -= t.sty.Height(t.s) + 3
	}
	if top < page.Max.Y {
		top -= margin
	}
	body := draw.Crop(page, 0, 0, 0, top-page.Max.Y)

	notes := style(9, grey)
	side := vg.Length(0)
	if len(lg.entries) > 0 || len(c.Notes) > 0 {
		side = lg.width()
		for _, n := range c.Notes {
			side = max(side, notes.Width(n))
		}
		// 15% spare room: an SVG viewer without Liberation Sans or Arial
		// substitutes a font that may be wider (DejaVu Sans is about 10%
		// wider). A long note must not squeeze the data to nothing.
		side = min(side*1.15, (body.Max.X-body.Min.X)*0.4) + 2*margin
	}
	area := draw.Crop(body, 0, -side, 0, 0)
	if c.Y.Label != "" {
		// The y label is drawn here rather than by gonum, which centres
		// it on the axis correctly but reserves room for it at the
		// linear midpoint of the range: on a log axis that is near the
		// top, and the data area shrinks by the label's length.
		sty := style(11, color.Black)
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YBottom
		h, descent := sty.Height(c.Y.Label), sty.FontExtents().Descent
		area = draw.Crop(area, h+vg.Points(4), 0, 0, 0)
		data := p.DataCanvas(area)
		sty.Rotation = math.Pi / 2
		body.FillText(sty, vg.Point{X: body.Min.X + h - descent, Y: data.Center().Y}, c.Y.Label)
	}
	p.Draw(area)

	col := draw.Crop(body, body.Max.X-body.Min.X-side+2*margin, 0, 0, 0)
	y := lg.draw(col)
	if len(lg.entries) > 0 {
		y -= margin
	}
	notes.YAlign = draw.YTop
	for _, n := range c.Notes {
		col.FillText(notes, vg.Point{X: col.Min.X, Y: y}, n)
		y -= notes.Height(n) + 2
	}
	return nil
}

// plot builds gonum's plot of the data, and the legend to draw beside it.
func (c *Chart) plot() (*gonum.Plot, *legend, error) {
	xlo, xhi, ylo, yhi, ok := c.dataRange()
	if !ok {
		return nil, nil, fmt.Errorf("plot %q: nothing to plot", c.Title)
	}
	x0, x1, err := c.X.span(xlo, xhi)
	if err != nil {
		return nil, nil, fmt.Errorf("plot %q: x axis: %w", c.Title, err)
	}
	y0, y1, err := c.Y.span(ylo, yhi)
	if err != nil {
		return nil, nil, fmt.Errorf("plot %q: y axis: %w", c.Title, err)
	}
	p := gonum.New()
	for _, a := range []struct {
		spec *Axis
		ax   *gonum.Axis
	}{{&c.X, &p.X}, {&c.Y, &p.Y}} {
		if a.ax == &p.X {
			a.ax.Label.Text = a.spec.Label // the y label is drawn by draw
		}
		a.ax.Label.TextStyle.Font = font.From(sans, 11)
		a.ax.Tick.Label.Font = font.From(sans, 9)
		switch {
		case a.spec.Ticks != nil:
			var ts gonum.ConstantTicks
			for _, t := range a.spec.Ticks {
				ts = append(ts, gonum.Tick{Value: t.Value, Label: t.Label})
			}
			a.ax.Tick.Marker = ts
		case a.spec.Log:
			a.ax.Tick.Marker = gonum.TickerFunc(logTicks)
		default:
			a.ax.Tick.Marker = gonum.TickerFunc(linearTicks)
		}
		if a.spec.Log {
			a.ax.Scale = gonum.LogScale{}
		}
	}
	grid := plotter.NewGrid()
	grid.Vertical.Color, grid.Horizontal.Color = color.Gray{Y: 0xd4}, color.Gray{Y: 0xd4}
	grid.Vertical.Dashes, grid.Horizontal.Dashes = nil, nil
	p.Add(grid)

	lg := &legend{}
	auto := 0
	for _, s := range c.Series {
		col := s.Color
		if col == nil {
			col = Palette[auto%len(Palette)]
			auto++
		}
		line := &plotter.Line{LineStyle: draw.LineStyle{Color: col, Width: vg.Points(1.5)}}
		if s.Dashed {
			line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		if s.Step {
			line.StepStyle = plotter.PostStep
		}
		marks := &plotter.Scatter{GlyphStyle: markerStyle(s.Marker, col)}
		for _, seg := range c.segments(s.Points) {
			if !s.NoLine && len(seg) > 1 {
				l := *line
				l.XYs = seg
				p.Add(&l)
			}
			if s.Marker != NoMarker {
				m := *marks
				m.XYs = seg
				p.Add(&m)
			}
		}
		if s.Name == "" {
			continue
		}
		var thumbs []gonum.Thumbnailer
		if !s.NoLine {
			thumbs = append(thumbs, line)
		}
		if s.Marker != NoMarker {
			thumbs = append(thumbs, marks)
		}
		lg.entries = append(lg.entries, legendEntry{s.Name, thumbs})
	}
	// Last: Plot.Add widens the axes to the data it is given.
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = x0, x1, y0, y1
	return p, lg, nil
}

// markerStyle maps a Marker to the gonum glyph that draws it.
func markerStyle(m Marker, col color.Color) draw.GlyphStyle {
	g := draw.GlyphStyle{Color: col, Radius: vg.Points(3)}
	switch m {
	case Square:
		g.Shape = draw.BoxGlyph{}
	case Ring:
		g.Shape, g.Radius = draw.RingGlyph{}, vg.Points(3.5)
	case OpenSquare:
		g.Shape, g.Radius = draw.SquareGlyph{}, vg.Points(3.5)
	default:
		g.Shape = draw.CircleGlyph{}
	}
	return g
}

// usable says whether a point can be drawn on the chart's axes.
func (c *Chart) usable(pt Point) bool {
	return finite(pt.X) && finite(pt.Y) && (!c.X.Log || pt.X > 0) && (!c.Y.Log || pt.Y > 0)
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// segments splits points into the runs between unusable ones.
func (c *Chart) segments(pts []Point) []plotter.XYs {
	var out []plotter.XYs
	var cur plotter.XYs
	for _, pt := range pts {
		if !c.usable(pt) {
			if len(cur) > 0 {
				out = append(out, cur)
			}
			cur = nil
			continue
		}
		cur = append(cur, plotter.XY{X: pt.X, Y: pt.Y})
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

func (c *Chart) dataRange() (xlo, xhi, ylo, yhi float64, ok bool) {
	xlo, ylo = math.Inf(1), math.Inf(1)
	xhi, yhi = math.Inf(-1), math.Inf(-1)
	for _, s := range c.Series {
		for _, pt := range s.Points {
			if c.usable(pt) {
				xlo, xhi = min(xlo, pt.X), max(xhi, pt.X)
				ylo, yhi = min(ylo, pt.Y), max(yhi, pt.Y)
			}
		}
	}
	return xlo, xhi, ylo, yhi, !math.IsInf(xlo, 0)
}

// span returns the axis range given the data's.
func (a Axis) span(lo, hi float64) (float64, float64, error) {
	if a.Min != a.Max {
		if a.Min > a.Max || !finite(a.Min) || !finite(a.Max) || (a.Log && a.Min <= 0) {
			return 0, 0, fmt.Errorf("bad range [%g, %g]", a.Min, a.Max)
		}
		return a.Min, a.Max, nil
	}
	if a.Log {
		lo, hi = nice(lo, false), nice(hi, true)
		if hi <= lo {
			hi = lo * 10
		}
		if math.Log10(hi/lo) >= 3 {
			// logTicks labels only the powers of ten on so long an axis:
			// make both ends one.
			lo, hi = math.Pow(10, math.Floor(math.Log10(lo)+1e-9)), math.Pow(10, math.Ceil(math.Log10(hi)-1e-9))
		}
		return lo, hi, nil
	}
	if hi <= lo {
		// One value: centre it (gonum needs a non-empty range).
		d := max(math.Abs(lo)*0.05, 0.5)
		return lo - d, hi + d, nil
	}
	return lo, hi, nil
}

// nice rounds v > 0 down (or up) to 1, 2 or 5 times a power of ten.
func nice(v float64, up bool) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	if up {
		for _, k := range []float64{1, 2, 5, 10} {
			if k*p >= v*(1-1e-12) {
				return k * p
			}
		}
		return 10 * p
	}
	for _, k := range []float64{5, 2, 1} {
		if k*p <= v*(1+1e-12) {
			return k * p
		}
	}
	return p
}

// logTicks marks 1-9 times each power of ten in [lo, hi], labelling the
// powers, and 2 and 5 times them too when the axis spans fewer than
// three decades (otherwise there may be no label at all on a short axis,
// or a crowd of them on a long one).
func logTicks(lo, hi float64) []gonum.Tick {
	few := math.Log10(hi/lo) < 3
	var ts []gonum.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		p := math.Pow(10, e)
		for k := 1.0; k <= 9; k++ {
			v := k * p
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := gonum.Tick{Value: v}
			if k == 1 || (few && (k == 2 || k == 5)) {
				t.Label = FormatNum(v)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// linearTicks labels about six round values in [lo, hi]: gonum's default
// labels about three, too few to read shares or loads off the grid.
func linearTicks(lo, hi float64) []gonum.Tick {
	raw := (hi - lo) / 6
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, k := range []float64{1, 2, 2.5, 5} {
		if k*mag >= raw {
			step = k * mag
			break
		}
	}
	var ts []gonum.Tick
	for k := math.Ceil(lo/step - 1e-9); k*step <= hi+step*1e-9; k++ {
		v := k*step + 0 // +0 turns -0 into 0
		ts = append(ts, gonum.Tick{Value: v, Label: FormatNum(v)})
	}
	return ts
}

// FormatNum prints a tick value briefly: 0.25, 500, 2000, 20k, 1.5M.
func FormatNum(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'g', 4, 64) + "M"
	case a >= 1e4:
		return strconv.FormatFloat(v/1e3, 'g', 4, 64) + "k"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// legend is a list of entries drawn top-down in the right-hand column.
// gonum's own legend is drawn inside the data area, where it can hide
// lines; this one reuses its thumbnails (gonum.Thumbnailer) and text.
type legend struct{ entries []legendEntry }

type legendEntry struct {
	name   string
	thumbs []gonum.Thumbnailer
}

const thumbW = 22 // points

func legendStyle() text.Style { return style(10, color.Black) }

func (l *legend) width() vg.Length {
	var w vg.Length
	sty := legendStyle()
	for _, e := range l.entries {
		w = max(w, thumbW+4+sty.Width(e.name))
	}
	return w
}

// draw draws the entries from the top of c and returns the y below them.
func (l *legend) draw(c draw.Canvas) vg.Length {
	sty := legendStyle()
	sty.YAlign = draw.YCenter
	y := c.Max.Y
	for _, e := range l.entries {
		h := sty.Height(e.name) + 4
		mid := y - h/2
		thumb := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: c.Min.X, Y: mid - h/2},
			Max: vg.Point{X: c.Min.X + thumbW, Y: mid + h/2},
		}}
		for _, t := range e.thumbs {
			t.Thumbnail(&thumb)
		}
		c.FillText(sty, vg.Point{X: c.Min.X + thumbW + 4, Y: mid}, e.name)
		y -= h
	}
	return y
}
