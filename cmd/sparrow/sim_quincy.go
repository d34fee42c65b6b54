package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/sim/racksim"
)

func newSimQuincyCmd() *cobra.Command {
	var o racksim.Options
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
	o.AddFlags(cmd.Flags())
	return cmd
}
