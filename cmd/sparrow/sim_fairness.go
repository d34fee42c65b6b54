package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/internal/plot"
	"github.com/sparrowfleet/sparrow/sim/constrained"
	"github.com/sparrowfleet/sparrow/sim/fairstudy"
)

type simFairnessFlags struct {
	policy      string
	nodes       int
	slots       int
	jobs        int
	duration    float64
	taskMean    float64
	paretoAlpha float64
	rttMS       float64
	probeRatio  float64
	period      float64
	sample      float64
	seed        uint64
	seeds       int
	json        bool
	plotRMSE    string
	plotResp    string
}

func newSimFairnessCmd() *cobra.Command {
	f := &simFairnessFlags{}
	d := constrained.DefaultConfig()
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
		RunE: func(cmd *cobra.Command, _ []string) error { return runSimFairness(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.policy, "policy", "all", "policies: fair, choosy, choosy-exact, a comma list, or all (offline, the reference, always runs)")
	fl.IntVar(&f.nodes, "nodes", d.Nodes, "number of nodes")
	fl.IntVar(&f.slots, "slots", d.Slots, "task slots per node")
	fl.IntVar(&f.jobs, "jobs", d.Jobs, "jobs (users) submitted, as a Poisson process over --duration")
	fl.Float64Var(&f.duration, "duration", d.Duration, "arrival window in simulated seconds (the run goes on until every job ends)")
	fl.Float64Var(&f.taskMean, "task-mean", d.TaskMean, "mean task duration in seconds")
	fl.Float64Var(&f.paretoAlpha, "pareto-alpha", d.ParetoAlpha, "Pareto shape (> 1) of task durations")
	fl.Float64Var(&f.rttMS, "rtt", d.RTT*1000, "network round trip in ms for the Sparrow policies; each message takes rtt/2")
	fl.Float64Var(&f.probeRatio, "probe-ratio", d.ProbeRatio, "Sparrow's probe ratio d >= 1")
	fl.Float64Var(&f.period, "period", d.Period, "coordinator period in simulated seconds (choosy)")
	fl.Float64Var(&f.sample, "sample", d.Sample, "interval between allocation samples, in simulated seconds")
	fl.Uint64Var(&f.seed, "seed", d.Seed, "first random seed; a run is a function of its flags and seed")
	fl.IntVar(&f.seeds, "seeds", 1, "independent runs, seeds --seed .. --seed+seeds-1; the summary averages them")
	fl.BoolVar(&f.json, "json", false, "print JSON (per-seed results and the summary) instead of tables")
	fl.StringVar(&f.plotRMSE, "plot-rmse", "", "write a plot of each policy's RMSE against offline over time (first seed, 60 s means) to this .svg or .png file")
	fl.StringVar(&f.plotResp, "plot-response", "", "write CDFs of job response times per policy (first seed) to this .svg or .png file")
	return cmd
}

func runSimFairness(cmd *cobra.Command, f *simFairnessFlags) error {
	policies, err := constrained.ParsePolicies(f.policy)
	if err != nil {
		return fmt.Errorf("--policy: %w", err)
	}
	if f.seeds < 1 {
		return fmt.Errorf("--seeds must be at least 1, got %d", f.seeds)
	}
	for _, p := range []string{f.plotRMSE, f.plotResp} {
		if p != "" {
			if err := plot.CheckPath(p); err != nil {
				return err
			}
		}
	}
	cfg := constrained.DefaultConfig()
	cfg.Nodes, cfg.Slots, cfg.Jobs, cfg.Duration = f.nodes, f.slots, f.jobs, f.duration
	cfg.TaskMean, cfg.ParetoAlpha, cfg.RTT, cfg.ProbeRatio = f.taskMean, f.paretoAlpha, f.rttMS/1000, f.probeRatio
	cfg.Period, cfg.Sample, cfg.Seed = f.period, f.sample, f.seed
	st, err := fairstudy.Run(fairstudy.Config{Base: cfg, Policies: policies, Seeds: f.seeds, Progress: cmd.ErrOrStderr()})
	if err != nil {
		return err
	}
	if f.plotRMSE != "" {
		if err := st.RMSEChart().Save(f.plotRMSE); err != nil {
			return err
		}
	}
	if f.plotResp != "" {
		if err := st.ResponseChart().Save(f.plotResp); err != nil {
			return err
		}
	}
	out := cmd.OutOrStdout()
	if f.json {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(st.JSON(simFairnessConfig(f)))
	}
	return st.WriteTable(out)
}

func simFairnessConfig(f *simFairnessFlags) map[string]any {
	return map[string]any{
		"nodes": f.nodes, "slots": f.slots, "jobs": f.jobs, "duration_s": f.duration,
		"task_mean_s": f.taskMean, "pareto_alpha": f.paretoAlpha, "rtt_ms": f.rttMS,
		"probe_ratio": f.probeRatio, "period_s": f.period, "sample_s": f.sample,
		"seed": f.seed, "seeds": f.seeds,
	}
}
