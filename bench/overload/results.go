package overload

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"

	"github.com/sparrowfleet/sparrow/internal/report"
)

// Points are the result as `sparrow bench overload` prints it: the
// tables, or as JSON the points without their per-second samples.
type Points []Point

// WriteTable prints the tables of WriteTable.
func (ps Points) WriteTable(w io.Writer) error { return WriteTable(w, ps) }

// MarshalJSON encodes the points without their samples.
func (ps Points) MarshalJSON() ([]byte, error) { return json.Marshal(StripSamples(ps)) }

// RunAndReport runs the benchmark, saves what it measured into cfg.Dir
// (also when a later multiple fails), and prints the tables, or with
// asJSON one JSON line, on out.
func RunAndReport(ctx context.Context, cfg Config, asJSON bool, out io.Writer) error {
	points, runErr := Run(ctx, cfg)
	if len(points) > 0 {
		if err := WriteResults(cfg.Dir, cfg, points); err != nil {
			return err
		}
	}
	if runErr != nil {
		return runErr
	}
	return report.Print(out, Points(points), report.If(asJSON, report.JSONLine))
}

// StripSamples returns the points without their per-second samples,
// which stay in each point's point.json.
func StripSamples(points []Point) []Point {
	out := make([]Point, len(points))
	for i, p := range points {
		p.Samples = nil
		out[i] = p
	}
	return out
}

// WriteResults saves results.json (with the goals' verdicts) and
// the goodput and RSS plots.
func WriteResults(dir string, cfg Config, points []Point) error {
	doc := struct {
		Points []Point   `json:"points"`
		Goals  []Verdict `json:"goals"`
	}{StripSamples(points), Judge(points)}
	if err := writeJSON(filepath.Join(dir, "results.json"), doc); err != nil {
		return err
	}
	sub := fmt.Sprintf("%d scheduler(s), %d node monitors x %d slots, %d x %v tasks per job: capacity %.0f tasks/s; %v per load",
		cfg.Schedulers, cfg.NodeMonitors, cfg.Slots, cfg.Tasks, cfg.TaskDuration, cfg.Capacity(), cfg.Duration)
	for name, c := range map[string]interface{ Save(string) error }{
		"overload-goodput": GoodputChart(points, sub),
		"overload-rss":     RSSChart(points, sub),
	} {
		for _, ext := range []string{"svg", "png"} {
			if err := c.Save(filepath.Join(dir, name+"."+ext)); err != nil {
				return fmt.Errorf("plot: %w", err)
			}
		}
	}
	return nil
}
