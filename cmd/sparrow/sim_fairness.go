package main

import (
	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/sim/constrained"
	"github.com/sparrowfleet/sparrow/sim/fairstudy"
)

func newSimFairnessCmd() *cobra.Command {
	d := constrained.DefaultConfig()
	o := fairstudy.Options{Base: d}
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
	fl := cmd.Flags()
	fl.StringVar(&o.Policy, "policy", "all", "policies: fair, choosy, choosy-exact, a comma list, or all (offline, the reference, always runs)")
	fl.IntVar(&o.Base.Nodes, "nodes", d.Nodes, "number of nodes")
	fl.IntVar(&o.Base.Slots, "slots", d.Slots, "task slots per node")
	fl.IntVar(&o.Base.Jobs, "jobs", d.Jobs, "jobs (users) submitted, as a Poisson process over --duration")
	fl.Float64Var(&o.Base.Duration, "duration", d.Duration, "arrival window in simulated seconds (the run goes on until every job ends)")
	fl.Float64Var(&o.Base.TaskMean, "task-mean", d.TaskMean, "mean task duration in seconds")
	fl.Float64Var(&o.Base.ParetoAlpha, "pareto-alpha", d.ParetoAlpha, "Pareto shape (> 1) of task durations")
	fl.Float64Var(&o.RTTms, "rtt", d.RTT*1000, "network round trip in ms for the Sparrow policies; each message takes rtt/2")
	fl.Float64Var(&o.Base.ProbeRatio, "probe-ratio", d.ProbeRatio, "Sparrow's probe ratio d >= 1")
	fl.Float64Var(&o.Base.Period, "period", d.Period, "coordinator period in simulated seconds (choosy)")
	fl.Float64Var(&o.Base.Sample, "sample", d.Sample, "interval between allocation samples, in simulated seconds")
	fl.Uint64Var(&o.Base.Seed, "seed", d.Seed, "first random seed; a run is a function of its flags and seed")
	fl.IntVar(&o.Seeds, "seeds", 1, "independent runs, seeds --seed .. --seed+seeds-1; the summary averages them")
	fl.BoolVar(&o.JSON, "json", false, "print JSON (per-seed results and the summary) instead of tables")
	fl.StringVar(&o.PlotRMSE, "plot-rmse", "", "write a plot of each policy's RMSE against offline over time (first seed, 60 s means) to this .svg or .png file")
	fl.StringVar(&o.PlotResponse, "plot-response", "", "write CDFs of job response times per policy (first seed) to this .svg or .png file")
	return cmd
}
