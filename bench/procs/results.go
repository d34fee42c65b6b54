package procs

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

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
