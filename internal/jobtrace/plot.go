package jobtrace

import (
	"fmt"

	"github.com/sparrowfleet/sparrow/internal/plot"
)

// cdfPoints bounds the points drawn per curve.
const cdfPoints = 400

// CDF returns the empirical distribution function of sorted values as at
// most about cdfPoints points (x: seconds, y: fraction of jobs at or
// below x), keeping the first and last.
func CDF(sorted []float64) []plot.Point {
	n := len(sorted)
	if n == 0 {
		return nil
	}
	step := max(1, (n+cdfPoints-1)/cdfPoints)
	var pts []plot.Point
	for i := 0; i < n; i += step {
		pts = append(pts, plot.Point{X: sorted[i], Y: float64(i+1) / float64(n)})
	}
	if last := (n - 1) % step; last != 0 {
		pts = append(pts, plot.Point{X: sorted[n-1], Y: 1})
	}
	return pts
}

// CDFRun is one curve of a CDF chart: a run's name and its recorder.
type CDFRun struct {
	Name string
	Rec  *Recorder
}

// CDFChart draws, for job class c, the distribution of response times of
// each run, on a log time axis.
func CDFChart(title, subtitle string, c Class, runs []CDFRun) *plot.Chart {
	ch := &plot.Chart{
		Title:    title,
		Subtitle: subtitle,
		X:        plot.Axis{Label: fmt.Sprintf("%s jobs' response time (s, log scale)", c), Log: true},
		Y:        plot.Axis{Label: "fraction of jobs", Min: 0, Max: 1},
	}
	for _, r := range runs {
		resp := r.Rec.Responses(c)
		ch.Series = append(ch.Series, plot.Series{Name: r.Name, Points: CDF(resp)})
		s := summarize(append([]float64(nil), resp...))
		ch.Notes = append(ch.Notes, fmt.Sprintf("%s: n=%d p50 %s p99 %s s", r.Name, s.N, plot.FormatNum(s.P50), plot.FormatNum(s.P99)))
	}
	return ch
}
