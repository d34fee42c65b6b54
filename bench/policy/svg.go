package policy

import (
	"fmt"
	"html"
	"image/color"
	"strings"
)

// svgCanvas collects SVG elements.
type svgCanvas struct{ buf strings.Builder }

func hex(c color.RGBA) string { return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B) }

func (s *svgCanvas) polyline(pts []Point, col color.RGBA, width float64, dashed bool) {
	var b strings.Builder
	for i, p := range pts {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%.1f,%.1f", p.X, p.Y)
	}
	dash := ""
	if dashed {
		dash = ` stroke-dasharray="7,4"`
	}
	fmt.Fprintf(&s.buf, `<polyline points="%s" fill="none" stroke="%s" stroke-width="%g"%s stroke-linejoin="round"/>`+"\n",
		b.String(), hex(col), width, dash)
}

func (s *svgCanvas) rect(x, y, w, h float64, fill color.RGBA) {
	fmt.Fprintf(&s.buf, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`+"\n", x, y, w, h, hex(fill))
}

func (s *svgCanvas) dot(x, y, r float64, col color.RGBA, hollow, square bool) {
	if square {
		fill := hex(col)
		if hollow {
			fill = "white"
		}
		fmt.Fprintf(&s.buf, `<rect x="%.1f" y="%.1f" width="%g" height="%g" fill="%s" stroke="%s" stroke-width="1.5"/>`+"\n", x-r, y-r, 2*r, 2*r, fill, hex(col))
		return
	}
	if hollow {
		fmt.Fprintf(&s.buf, `<circle cx="%.1f" cy="%.1f" r="%g" fill="white" stroke="%s" stroke-width="1.5"/>`+"\n", x, y, r, hex(col))
		return
	}
	fmt.Fprintf(&s.buf, `<circle cx="%.1f" cy="%.1f" r="%g" fill="%s"/>`+"\n", x, y, r, hex(col))
}

func (s *svgCanvas) text(x, y float64, t string, size float64, a anchor, col color.RGBA) {
	if t == "" {
		return
	}
	anc := [...]string{"start", "middle", "end"}[a]
	fmt.Fprintf(&s.buf, `<text x="%.1f" y="%.1f" font-size="%g" text-anchor="%s" fill="%s">%s</text>`+"\n",
		x, y, size, anc, hex(col), html.EscapeString(t))
}
