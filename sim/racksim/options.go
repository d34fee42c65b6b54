package racksim

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// Options are a study as `sparrow sim quincy` runs it: StudyConfig with
// the experiments as a list (Run sets Experiments from it), and the
// outputs. Its errors name the command's flags.
type Options struct {
	StudyConfig
	Experiment string
	// JSON prints the study as JSON instead of the tables; OutDir, if
	// set, receives the plots.
	JSON   bool
	OutDir string
}

// Run runs the study and prints it on out; OutDir is created before the
// runs, so that a bad one fails at once.
func (o Options) Run(out io.Writer) error {
	exps, err := ParseExperiments(o.Experiment)
	if err != nil {
		return fmt.Errorf("--experiment: %w", err)
	}
	if o.OutDir != "" {
		if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
			return fmt.Errorf("--out-dir: %w", err)
		}
	}
	o.Experiments = exps
	st, err := RunStudy(o.StudyConfig)
	if err != nil {
		return err
	}
	if o.OutDir != "" {
		if err := st.Plot(o.OutDir); err != nil {
			return err
		}
	}
	if o.JSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	}
	st.Print(out)
	return nil
}
