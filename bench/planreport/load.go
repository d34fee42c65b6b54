package planreport

import (
	"fmt"
	"os"

	"github.com/sparrowfleet/sparrow/core/planner"
	"github.com/sparrowfleet/sparrow/internal/plot"
)

// Load returns the problem `sparrow plan` is given: the built-in example
// ("join": the ETH report's Join on the Frank cluster) or the one in the
// JSON file, and checks that plotPath, if set, names a file a chart can
// be written to. Its errors name the command's flags.
func Load(example, file, plotPath string) (planner.Problem, error) {
	var p planner.Problem
	switch {
	case example == "join" && file == "":
		p = planner.JoinOnFrank([2]string{"F2", "F3"}, "F1")
	case example != "":
		return p, fmt.Errorf("--example %q: want join (and no --problem)", example)
	case file != "":
		data, err := os.ReadFile(file)
		if err != nil {
			return p, fmt.Errorf("problem: %w", err)
		}
		if p, err = planner.ParseProblem(data); err != nil {
			return p, fmt.Errorf("%s: %w", file, err)
		}
	default:
		return p, fmt.Errorf("give --problem FILE or --example join")
	}
	if plotPath != "" {
		if err := plot.CheckPath(plotPath); err != nil {
			return p, err
		}
	}
	return p, nil
}
