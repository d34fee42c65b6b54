package racksim

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"
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

// AddFlags declares `sparrow sim quincy`'s flags (every other setting of Base
// is DefaultConfig's) on fs, with their defaults.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	d := DefaultConfig()
	o.Base = d
	fs.StringVar(&o.Experiment, "experiment", "all", "table2, fig6, table4, a comma list, or all")
	fs.Uint64Var(&o.Seed, "seed", 1, "first seed (data and root placement, tie-breaking); a run is a function of its flags and seed")
	fs.IntVar(&o.Seeds, "seeds", 1, "runs per policy, seeds --seed .. --seed+seeds-1 (the paper averages 3)")
	fs.BoolVar(&o.JSON, "json", false, "print JSON (summaries and per-run results) instead of tables")
	fs.StringVar(&o.OutDir, "out-dir", "", "write PNG plots (quincy-fig5.png, quincy-fig9.png, quincy-dt.png) to this directory")
	fs.IntVar(&o.Parallel, "parallel", 2, "runs simulated at once, on this many goroutines (each run is single-threaded)")
	fs.BoolVar(&o.GFH, "gfh", false, "also run GFH (GF with hysteresis, §3.5) in fig6")
	fs.Float64Var(&o.Base.SolveGap, "solve-gap", d.SolveGap, "flow policies: least simulated seconds between solves (event-driven solves are coalesced)")
	fs.IntVar(&o.FitRounds, "fit-rounds", 2, "rounds of fitting the instances' CPU times by simulating QP at K=1 (unconstrained, first seed) against Table 3; 0 keeps the closed-form estimate")
	fs.Float64Var(&o.Base.GatherScale, "gather-scale", d.GatherScale, "scale of the data all-to-all phases shuffle (1: Sort moves all its input, as §5.1 says; see docs/QUINCY-SIM.md)")
	fs.Float64Var(&o.Base.SolveTimer, "solve-timer", d.SolveTimer, "flow policies: re-solve this many simulated seconds after the last solve while workers wait")
}
