package procs

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Results are the points of a sweep, as `sparrow bench procs` prints
// them.
type Results []Result

// WriteTable prints the table of WriteTable.
func (rs Results) WriteTable(w io.Writer) error { return WriteTable(w, rs) }

// RunRates measures cfg at each rate in turn, a fresh fleet each with its
// members' logs in dir/rate-R, and saves the results into dir
// (WriteResults). progress gets each point's notes, prefixed with the
// point.
func RunRates(ctx context.Context, cfg Config, rates []float64, dir string, progress io.Writer) (Results, error) {
	var results Results
	for i, r := range rates {
		pc := cfg
		pc.Rate = r
		pc.Dir = filepath.Join(dir, fmt.Sprintf("rate-%g", r))
		pc.Say = func(s string) { fmt.Fprintf(progress, "bench procs [%d/%d, %g jobs/s]: %s\n", i+1, len(rates), r, s) }
		res, err := Run(ctx, pc)
		if err != nil {
			return nil, fmt.Errorf("rate %g jobs/s (logs in %s): %w", r, pc.Dir, err)
		}
		results = append(results, res)
	}
	return results, WriteResults(dir, results)
}

// WriteResults saves the results as JSON and the CPU-per-task plot.
func WriteResults(dir string, results []Result) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("results dir: %w", err)
	}
	b, err := json.MarshalIndent(results, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Join(dir, "results.json"), err)
	}
	r := results[0]
	sub := fmt.Sprintf("%d scheduler(s), %d node monitors x %d slots, %d-task jobs, %s gossip", r.Schedulers, r.NodeMonitors, r.SlotsPerNode, r.TasksPerJob, r.GossipProfile)
	c := Chart(results, sub)
	for _, ext := range []string{"svg", "png"} {
		if err := c.Save(filepath.Join(dir, "cpu-per-task."+ext)); err != nil {
			return fmt.Errorf("plot: %w", err)
		}
	}
	return nil
}
