package sim

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
)

// XY is one plotted point.
type XY struct{ X, Y float64 }

// Series is one plotted line.
type Series struct {
	Name   string
	Points []XY
	Dashed bool
}

// Plot describes a line chart with a log-scale y axis.
type Plot struct {
	Title, XLabel, YLabel string
	Series                []Series
}

var palette = []string{"#d62728", "#ff7f0e", "#2ca02c", "#1f77b4", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"}

// WriteSVG writes p as a self-contained SVG document. Dashed series are
// drawn in black (the paper draws the optimum as a black dashed line).
func (p *Plot) WriteSVG(w io.Writer) error {
	const (
		W, H                  = 760, 480
		left, right, top, bot = 80, 170, 40, 60
	)
	xmin, xmax := math.Inf(1), math.Inf(-1)
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for _, s := range p.Series {
		for _, pt := range s.Points {
			if pt.Y <= 0 || math.IsNaN(pt.Y) || math.IsInf(pt.Y, 0) {
				continue
			}
			xmin, xmax = min(xmin, pt.X), max(xmax, pt.X)
			ymin, ymax = min(ymin, pt.Y), max(ymax, pt.Y)
		}
	}
	if math.IsInf(xmin, 0) {
		return fmt.Errorf("plot: nothing to plot")
	}
	if xmax == xmin {
		xmin, xmax = xmin-0.05, xmax+0.05
	}
	ly0 := math.Log10(niceBelow(ymin))
	ly1 := math.Log10(niceAbove(ymax))
	if ly1 <= ly0 {
		ly1 = ly0 + 1
	}
	pw, ph := float64(W-left-right), float64(H-top-bot)
	px := func(x float64) float64 { return left + (x-xmin)/(xmax-xmin)*pw }
	py := func(y float64) float64 { return top + (1-(math.Log10(y)-ly0)/(ly1-ly0))*ph }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", W, H, W, H)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", W, H)
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="14" text-anchor="middle">%s</text>`+"\n", left+int(pw)/2, html.EscapeString(p.Title))
	// Axes and grid.
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.0f" height="%.0f" fill="none" stroke="black"/>`+"\n", left, top, pw, ph)
	for e := math.Floor(ly0); e <= ly1; e++ {
		for _, k := range []float64{1, 2, 5} {
			y := k * math.Pow(10, e)
			if math.Log10(y) < ly0-1e-9 {
				continue
			}
			if math.Log10(y) > ly1+1e-9 {
				break
			}
			yy := py(y)
			fmt.Fprintf(&b, `<line x1="%d" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", left, left+pw, yy, yy)
			fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", left-6, yy+4, fmtTick(y))
		}
	}
	for _, x := range ticks(xmin, xmax) {
		xx := px(x)
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%.1f" stroke="#ddd"/>`+"\n", xx, xx, top, top+ph)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%g</text>`+"\n", xx, top+ph+18, x)
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", left+pw/2, H-18, html.EscapeString(p.XLabel))
	fmt.Fprintf(&b, `<text x="18" y="%.1f" text-anchor="middle" transform="rotate(-90 18 %.1f)">%s</text>`+"\n", top+ph/2, top+ph/2, html.EscapeString(p.YLabel))
	// Lines and legend.
	ci := 0
	for i, s := range p.Series {
		color, dash := "black", ` stroke-dasharray="6 4"`
		if !s.Dashed {
			color, dash = palette[ci%len(palette)], ""
			ci++
		}
		var pts []string
		for _, pt := range s.Points {
			if pt.Y > 0 && !math.IsInf(pt.Y, 0) && !math.IsNaN(pt.Y) {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(pt.X), py(pt.Y)))
			}
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>`+"\n", color, dash, strings.Join(pts, " "))
		if !s.Dashed {
			for _, q := range pts {
				xy := strings.SplitN(q, ",", 2)
				fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="3" fill="%s"/>`+"\n", xy[0], xy[1], color)
			}
		}
		ly := top + 10 + i*20
		lx := W - right + 12
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2"%s/>`+"\n", lx, lx+24, ly, ly, color, dash)
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", lx+30, ly+4, html.EscapeString(s.Name))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func fmtTick(y float64) string {
	if y >= 1000 {
		return fmt.Sprintf("%gk", y/1000)
	}
	return fmt.Sprintf("%g", y)
}

// ticks returns about 5-10 round values spanning [lo, hi].
func ticks(lo, hi float64) []float64 {
	span := hi - lo
	step := math.Pow(10, math.Floor(math.Log10(span)))
	for span/step < 5 {
		step /= 2
	}
	var out []float64
	for x := math.Ceil(lo/step-1e-9) * step; x <= hi+1e-9; x += step {
		out = append(out, math.Round(x/step)*step)
	}
	return out
}

// niceBelow returns the largest of 1, 2, 5 times a power of ten <= y.
func niceBelow(y float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(y)))
	for _, k := range []float64{5, 2, 1} {
		if k*p <= y*(1+1e-12) {
			return k * p
		}
	}
	return p
}

// niceAbove returns the smallest of 1, 2, 5 times a power of ten >= y.
func niceAbove(y float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(y)))
	for _, k := range []float64{1, 2, 5, 10} {
		if k*p >= y*(1-1e-12) {
			return k * p
		}
	}
	return 10 * p
}
