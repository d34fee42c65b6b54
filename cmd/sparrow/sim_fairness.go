package main

import (
	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/sim/fairstudy"
)

func newSimFairnessCmd() *cobra.Command {
	var o fairstudy.Options
	cmd := &cobra.Command{
		Use:   "fairness",
		Short: "Simulate Choosy against the offline CMMF scheduler (Choosy paper §7.1–7.2)",
		Long: `fairness runs the deterministic simulation in package sim/constrained: a
cluster of several machine types whose jobs (one user each) carry hard
constraints drawn like the Google constraint model of the Choosy paper
(§7.1), Facebook-like job sizes, Poisson arrivals and Pareto task durations.

Policies: Sparrow (batch sampling with late binding over the nodes that
satisfy a job's constraints; the product's placement, slots and queue code)
with per-node weighted fair queues (fair), with Choosy queues refreshed by a
coordinator every --period (choosy), or with Choosy given exact cluster-wide
counts at every decision (choosy-exact); and the paper's Restricted Offline
scheduler (offline: central, no network, a leximin CMMF solve of the free
slots at every decision, no migration or preemption), the reference.

Reported per policy, against offline: RMSE of the sorted allocation vectors
sampled every --sample seconds (% of the cluster's slots; the paper: 0.09%
on average for Choosy), the RMSE against the ideal migrating and preempting
CMMF allocation of the policy's own active jobs, response times and the
paper's Table 1 slowdowns, and each policy's wall time. Progress goes to
stderr, the table (or JSON with --json) to stdout. See docs/experiments/fairness.md.`,
		Example: `  sparrow sim fairness                                   # 1,000 nodes, 300 jobs in an hour
  sparrow sim fairness --seeds 10 --json > fairness.json
  sparrow sim fairness --plot-rmse docs/img/fairness-sim-rmse.svg --plot-response docs/img/fairness-sim-response.svg`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.Run(cmd.OutOrStdout(), cmd.ErrOrStderr()) },
	}
	o.AddFlags(cmd.Flags())
	return cmd
}
