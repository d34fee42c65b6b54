package fairstudy

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/sparrowfleet/sparrow/internal/plot"
	"github.com/sparrowfleet/sparrow/sim/constrained"
)

// Options are a study as `sparrow sim fairness` runs it: Base, every
// seed's configuration, with its round trip as RTTms (Base.RTT is set
// from it), the policies as a list, the seeds and the outputs. Its errors
// name the command's flags.
type Options struct {
	Base   constrained.Config
	RTTms  float64
	Policy string
	Seeds  int
	// JSON prints the per-seed results and the summary as JSON instead
	// of the tables; PlotRMSE and PlotResponse, if set, receive the
	// first seed's charts.
	JSON                   bool
	PlotRMSE, PlotResponse string
}

// Run runs the study, with progress lines on progress, writes the plots
// and prints the result on out.
func (o Options) Run(out, progress io.Writer) error {
	policies, err := constrained.ParsePolicies(o.Policy)
	if err != nil {
		return fmt.Errorf("--policy: %w", err)
	}
	if o.Seeds < 1 {
		return fmt.Errorf("--seeds must be at least 1, got %d", o.Seeds)
	}
	for _, p := range []string{o.PlotRMSE, o.PlotResponse} {
		if p != "" {
			if err := plot.CheckPath(p); err != nil {
				return err
			}
		}
	}
	base := o.Base
	base.RTT = o.RTTms / 1000
	st, err := Run(Config{Base: base, Policies: policies, Seeds: o.Seeds, Progress: progress})
	if err != nil {
		return err
	}
	if o.PlotRMSE != "" {
		if err := st.RMSEChart().Save(o.PlotRMSE); err != nil {
			return err
		}
	}
	if o.PlotResponse != "" {
		if err := st.ResponseChart().Save(o.PlotResponse); err != nil {
			return err
		}
	}
	if o.JSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(st.JSON(o.config()))
	}
	return st.WriteTable(out)
}

// config is the settings recorded in the JSON, in the flags' units.
func (o Options) config() map[string]any {
	b := o.Base
	return map[string]any{
		"nodes": b.Nodes, "slots": b.Slots, "jobs": b.Jobs, "duration_s": b.Duration,
		"task_mean_s": b.TaskMean, "pareto_alpha": b.ParetoAlpha, "rtt_ms": o.RTTms,
		"probe_ratio": b.ProbeRatio, "period_s": b.Period, "sample_s": b.Sample,
		"seed": b.Seed, "seeds": o.Seeds,
	}
}

// AddFlags declares `sparrow sim fairness`'s flags (every other setting of
// Base is constrained.DefaultConfig's) on fs, with their defaults.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	d := constrained.DefaultConfig()
	o.Base = d
	fs.StringVar(&o.Policy, "policy", "all", "policies: fair, choosy, choosy-exact, a comma list, or all (offline, the reference, always runs)")
	fs.IntVar(&o.Base.Nodes, "nodes", d.Nodes, "number of nodes")
	fs.IntVar(&o.Base.Slots, "slots", d.Slots, "task slots per node")
	fs.IntVar(&o.Base.Jobs, "jobs", d.Jobs, "jobs (users) submitted, as a Poisson process over --duration")
	fs.Float64Var(&o.Base.Duration, "duration", d.Duration, "arrival window in simulated seconds (the run goes on until every job ends)")
	fs.Float64Var(&o.Base.TaskMean, "task-mean", d.TaskMean, "mean task duration in seconds")
	fs.Float64Var(&o.Base.ParetoAlpha, "pareto-alpha", d.ParetoAlpha, "Pareto shape (> 1) of task durations")
	fs.Float64Var(&o.RTTms, "rtt", d.RTT*1000, "network round trip in ms for the Sparrow policies; each message takes rtt/2")
	fs.Float64Var(&o.Base.ProbeRatio, "probe-ratio", d.ProbeRatio, "Sparrow's probe ratio d >= 1")
	fs.Float64Var(&o.Base.Period, "period", d.Period, "coordinator period in simulated seconds (choosy)")
	fs.Float64Var(&o.Base.Sample, "sample", d.Sample, "interval between allocation samples, in simulated seconds")
	fs.Uint64Var(&o.Base.Seed, "seed", d.Seed, "first random seed; a run is a function of its flags and seed")
	fs.IntVar(&o.Seeds, "seeds", 1, "independent runs, seeds --seed .. --seed+seeds-1; the summary averages them")
	fs.BoolVar(&o.JSON, "json", false, "print JSON (per-seed results and the summary) instead of tables")
	fs.StringVar(&o.PlotRMSE, "plot-rmse", "", "write a plot of each policy's RMSE against offline over time (first seed, 60 s means) to this .svg or .png file")
	fs.StringVar(&o.PlotResponse, "plot-response", "", "write CDFs of job response times per policy (first seed) to this .svg or .png file")
}
