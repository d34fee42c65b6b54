package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/bench/planreport"
)

func init() { rootCmd.AddCommand(newPlanCmd()) }

func newPlanCmd() *cobra.Command {
	var c planreport.Command
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "plan a task graph on a small heterogeneous cluster (branch and bound over performance models)",
		Long: `plan reads a problem — a job's task graph, the machines' profiles and a
performance model per task type (JSON, see core/planner.Problem) — and prints
the plan of least predicted makespan that branch and bound finds within its
budget, next to Dryad's greedy schedule, as JSON on stdout.

  sparrow plan --example join                # the ETH report's Join on Frank
  sparrow plan --example join --dump         # print that problem's JSON
  sparrow plan --problem job.json --time-limit 1s
  sparrow plan --example join --live         # carry plan and greedy out on a loopback fleet

Applications submit task graphs to a running fleet with the client library:
client.LiveGraphNodes reads the node monitors' profiles (sparrow nodemonitor
--profile) from gossip, Frontend.NewGraphRun plans over them and Wait submits
each task to its planned node (docs/client.md; docs/experiments/planner.md
measures it).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := benchContext(cmd, false)
			defer cancel()
			return c.Run(ctx, os.Stdout, os.Stderr)
		},
	}
	c.AddFlags(cmd.Flags())
	return cmd
}
