package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/sim/racksim"
)

func newSimQuincyCmd() *cobra.Command {
	d := racksim.DefaultConfig()
	o := racksim.Options{StudyConfig: racksim.StudyConfig{Base: d}}
	cmd := &cobra.Command{
		Use:   "quincy",
		Short: "Reproduce Quincy's Tables 2 and 4 and Figure 6 in simulation (Quincy §5–§6)",
		Long: `quincy runs the deterministic simulation in package sim/racksim: Quincy's
243-computer cluster (8 racks, one task per computer, 1 Gbit/s NICs, rack
uplinks of 6 Gbit/s or, constrained, 1 Gbit/s, bandwidth shared max-min
fairly) running Table 3's 30 application instances K at a time, under the
queue-based schedulers of §3 (G, GF, GFP, GFH) and Quincy's flow policies
(Q, QP, QF, QFP, QFPX: the product's core/quincy graph and core/flow solver).

Experiments:
  table2  G, Q, QP at K = 1, unconstrained (§6.1); QP's times are the ideal
  fig6    G, GF, GFP, Q, QF, QFP, QFPX at K = 10, unconstrained (§6.2)
  table4  GFP, QFP, QFPX at K = 10, constrained, no PrimeLarge (§6.3),
          against QFPX at K = 1 there

Tables print our numbers (mean over --seeds) beside the paper's. Progress
goes to stderr. See docs/QUINCY-SIM.md.`,
		Example: `  sparrow sim quincy --experiment table4
  sparrow sim quincy --experiment all --seeds 3 --out-dir docs/img
  sparrow sim quincy --experiment fig6 --json > fig6.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Base.Clock, o.Clock, o.Progress = time.Now, time.Now, cmd.ErrOrStderr()
			return o.Run(cmd.OutOrStdout())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Experiment, "experiment", "all", "table2, fig6, table4, a comma list, or all")
	fl.Uint64Var(&o.Seed, "seed", 1, "first seed (data and root placement, tie-breaking); a run is a function of its flags and seed")
	fl.IntVar(&o.Seeds, "seeds", 1, "runs per policy, seeds --seed .. --seed+seeds-1 (the paper averages 3)")
	fl.BoolVar(&o.JSON, "json", false, "print JSON (summaries and per-run results) instead of tables")
	fl.StringVar(&o.OutDir, "out-dir", "", "write PNG plots (quincy-fig5.png, quincy-fig9.png, quincy-dt.png) to this directory")
	fl.IntVar(&o.Parallel, "parallel", 2, "runs simulated at once, on this many goroutines (each run is single-threaded)")
	fl.BoolVar(&o.GFH, "gfh", false, "also run GFH (GF with hysteresis, §3.5) in fig6")
	fl.Float64Var(&o.Base.SolveGap, "solve-gap", d.SolveGap, "flow policies: least simulated seconds between solves (event-driven solves are coalesced)")
	fl.IntVar(&o.FitRounds, "fit-rounds", 2, "rounds of fitting the instances' CPU times by simulating QP at K=1 (unconstrained, first seed) against Table 3; 0 keeps the closed-form estimate")
	fl.Float64Var(&o.Base.GatherScale, "gather-scale", d.GatherScale, "scale of the data all-to-all phases shuffle (1: Sort moves all its input, as §5.1 says; see docs/QUINCY-SIM.md)")
	fl.Float64Var(&o.Base.SolveTimer, "solve-timer", d.SolveTimer, "flow policies: re-solve this many simulated seconds after the last solve while workers wait")
	return cmd
}
