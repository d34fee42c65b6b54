package main

import (
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/sim/replay"
	"github.com/sparrowfleet/sparrow/sim/sweep"
)

func init() { rootCmd.AddCommand(newSimCmd()) }

func newSimCmd() *cobra.Command {
	var spec sweep.Spec  // the sweep
	var out sweep.Output // how to print it
	jt := &replay.Options{}
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Simulate placement policies (paper §3 Figure 3, §5 Table 2)",
		Long: `sim runs the deterministic discrete-event simulator in package sim: N node
monitors with S slots, Poisson arrivals of m-task jobs at a given load, and
RTT/2 per message. It compares random placement, per-task sampling, batch
sampling, batch sampling with late binding (the product's placement and
slots code) and an omniscient centralized scheduler.

Every (policy, probe ratio, load) point is independent and seeded by --seed
alone, so all policies see the same jobs at a load; points run in parallel.
Progress goes to stderr, the table (or JSON with --json) to stdout.

The defaults reproduce the paper's Figure 3 (10,000 nodes, 500-task jobs,
exponential 100 ms tasks, 1 ms RTT, d=2). Random placement at high load
needs a far longer warm-up than the others (e.g. --warmup 10%,random=60000):
watch the drift column, the change in mean response between the two halves
of the measured jobs. See docs/experiments/simulation.md, and
docs/experiments/traces.md for --job-trace.`,
		Example: `  sparrow sim                                   # Figure 3, all policies
  sparrow sim --slots 4 --plot fig3-4slot.svg
  sparrow sim --zero-wait --tasks 100 --jobs 5000 --load 0.1,0.3,0.5,0.7,0.9
  sparrow sim --policy late --probe-ratio 1,1.1,1.5,2,3 --slots 4 --tasks 10
  sparrow sim --policy late --tasks 10 --dist const --long-frac 0.3 --long-mean 10000 --load 0.8`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			spec.Given = cmd.Flags().Changed
			if jt.File != "" {
				jt.Spec, jt.JSON, jt.Plot = spec, out.JSON, out.Plot
				return jt.Run(cmd.OutOrStdout(), cmd.ErrOrStderr())
			}
			if err := replay.CheckUnused(cmd.Flags().Changed); err != nil {
				return err
			}
			return spec.RunAndWrite(out, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	out.ProcessCPU = processCPU
	jt.AddFlags(cmd.Flags())
	spec.AddFlags(cmd.Flags())
	out.AddFlags(cmd.Flags())
	cmd.AddCommand(newSimFairnessCmd()) // sim_fairness.go: Choosy §7.1–7.2
	cmd.AddCommand(newSimQuincyCmd())   // sim_quincy.go: Quincy §6
	return cmd
}

// processCPU returns the CPU time (user + system) this process has used
// since it started.
func processCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
