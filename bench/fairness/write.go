package fairness

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Validate names the flags of the first setting out of range.
func (cfg *Config) Validate() error {
	switch {
	case cfg.NodesPerType < 1 || cfg.Slots < 1 || cfg.TasksPerJob < 1:
		return fmt.Errorf("--nodes-per-type, --slots and --tasks must be at least 1")
	case cfg.TaskDuration <= 0 || cfg.Period <= 0 || cfg.Bin <= 0 || cfg.Settle < 0:
		return fmt.Errorf("--task-duration, --period and --bin must be positive, --settle not negative")
	case !(cfg.Scale > 0) || !(cfg.Backlog > 0) || !(cfg.Tolerance > 0 && cfg.Tolerance < 1):
		return fmt.Errorf("--scale and --backlog must be positive, --tolerance in (0, 1)")
	}
	return nil
}

// Write prints the report's tables on out and writes its JSON as
// dir/fairness-mesos.json and a plot per setup beside it, naming each
// file on progress.
func (rep Report) Write(dir string, out, progress io.Writer) error {
	if err := rep.WriteTable(out); err != nil {
		return err
	}
	b, err := json.MarshalIndent(rep, "", " ")
	if err != nil {
		return fmt.Errorf("encode result: %w", err)
	}
	path := filepath.Join(dir, "fairness-mesos.json")
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(progress, "results written to %s\n", path)
	for k, s := range rep.Setups {
		for _, ext := range []string{"svg", "png"} {
			p := filepath.Join(dir, fmt.Sprintf("fairness-mesos-%s.%s", s.Setup.Name, ext))
			if err := rep.Chart(k).Save(p); err != nil {
				return err
			}
			fmt.Fprintf(progress, "plot written to %s\n", p)
		}
	}
	return nil
}
