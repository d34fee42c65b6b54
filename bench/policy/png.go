package policy

import (
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
)

// pngCanvas rasterises a chart: thick lines by stamping discs along each
// segment, text with the built-in 5x7 font scaled to whole pixels. No
// anti-aliasing; the point is a dependency-free PNG, not a pretty one.
type pngCanvas struct{ img *image.RGBA }

func newPNGCanvas(w, h int) *pngCanvas {
	return &pngCanvas{img: image.NewRGBA(image.Rect(0, 0, w, h))}
}

func (p *pngCanvas) encode(w io.Writer) error { return png.Encode(w, p.img) }

func (p *pngCanvas) set(x, y int, c color.RGBA) {
	if image.Pt(x, y).In(p.img.Rect) {
		p.img.SetRGBA(x, y, c)
	}
}

// disc fills a disc of radius r (at least one pixel) centred on (x, y).
func (p *pngCanvas) disc(x, y, r float64, c color.RGBA) {
	if r < 0.5 {
		p.set(int(math.Round(x)), int(math.Round(y)), c)
		return
	}
	for j := int(math.Floor(y - r)); j <= int(math.Ceil(y+r)); j++ {
		for i := int(math.Floor(x - r)); i <= int(math.Ceil(x+r)); i++ {
			dx, dy := float64(i)-x, float64(j)-y
			if dx*dx+dy*dy <= r*r {
				p.set(i, j, c)
			}
		}
	}
}

func (p *pngCanvas) polyline(pts []Point, col color.RGBA, width float64, dashed bool) {
	r := width / 2
	if width <= 1 {
		r = 0
	}
	walked := 0.0
	for i := 0; i+1 < len(pts); i++ {
		a, b := pts[i], pts[i+1]
		l := math.Hypot(b.X-a.X, b.Y-a.Y)
		n := int(math.Ceil(l*2)) + 1
		for k := 0; k <= n; k++ {
			t := float64(k) / float64(n)
			if dashed && math.Mod(walked+t*l, 11) >= 7 {
				continue
			}
			p.disc(a.X+t*(b.X-a.X), a.Y+t*(b.Y-a.Y), r, col)
		}
		walked += l
	}
}

func (p *pngCanvas) rect(x, y, w, h float64, fill color.RGBA) {
	for j := int(math.Round(y)); j < int(math.Round(y+h)); j++ {
		for i := int(math.Round(x)); i < int(math.Round(x+w)); i++ {
			p.set(i, j, fill)
		}
	}
}

func (p *pngCanvas) dot(x, y, r float64, col color.RGBA, hollow, square bool) {
	if square {
		p.rect(x-r, y-r, 2*r, 2*r, col)
		if hollow {
			p.rect(x-r+1.5, y-r+1.5, 2*r-3, 2*r-3, white)
		}
		return
	}
	p.disc(x, y, r, col)
	if hollow {
		p.disc(x, y, r-1.5, white)
	}
}

// textScale maps a font size to whole-pixel glyph scaling: the 7-pixel
// glyphs are about the cap height of an 11-point font, so small text is
// drawn 1:1 and titles doubled.
func textScale(size float64) int {
	if size >= 13 {
		return 2
	}
	return 1
}

// textWidth is the pixel width of s at size.
func textWidth(s string, size float64) int {
	n := len([]rune(s))
	if n == 0 {
		return 0
	}
	k := textScale(size)
	return n*6*k - k
}

func (p *pngCanvas) text(x, y float64, s string, size float64, a anchor, col color.RGBA) {
	k := textScale(size)
	left := int(math.Round(x))
	switch a {
	case anchorMiddle:
		left -= textWidth(s, size) / 2
	case anchorEnd:
		left -= textWidth(s, size)
	}
	top := int(math.Round(y)) - 7*k // y is the baseline, as in SVG
	for _, c := range s {
		g := glyph(c)
		for cx, colBits := range g {
			for row := 0; row < 7; row++ {
				if colBits&(1<<row) == 0 {
					continue
				}
				for dy := 0; dy < k; dy++ {
					for dx := 0; dx < k; dx++ {
						p.set(left+cx*k+dx, top+row*k+dy, col)
					}
				}
			}
		}
		left += 6 * k
	}
}
