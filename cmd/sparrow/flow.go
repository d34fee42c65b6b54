package main

import (
	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/bench/flowbench"
)

func init() { rootCmd.AddCommand(newFlowCmd()) }

func newFlowCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "flow",
		Short: "Min-cost flow: solve DIMACS problems, generate Quincy graphs, compare with LEMON",
		Long: `flow drives core/flow, the min-cost flow solver behind Quincy-style
scheduling. Problems are in DIMACS min-cost flow format ("p min N M",
"n ID SUPPLY", "a SRC DST LOW CAP COST", nodes from 1).`,
	}
	cmd.AddCommand(newFlowSolveCmd(), newFlowGenCmd(), newFlowBenchCmd())
	return cmd
}

func newFlowSolveCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "solve FILE",
		Short: "Solve a DIMACS min-cost flow problem and print the DIMACS solution",
		Long: `solve reads a DIMACS min-cost flow problem from FILE ("-" for stdin), solves
it exactly and prints "s COST" followed by "f SRC DST FLOW" for every arc
with non-zero flow. A malformed, infeasible or unbounded problem is an error
(exit status 1) that says which.`,
		Example: `  sparrow flow gen --computers 243 --jobs 10 --tasks 2200 > q.min
  sparrow flow solve q.min`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return flowbench.Solve(args[0], cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
}

func newFlowGenCmd() *cobra.Command {
	var o flowbench.Gen
	cmd := &cobra.Command{
		Use:   "gen",
		Short: "Write a Quincy-shaped min-cost flow problem in DIMACS format",
		Long: `gen writes a random scheduling graph shaped like Quincy's (SOSP'09, Appendix):
root and worker tasks, unscheduled nodes U_j, the cluster aggregator X, racks,
computers and the sink, with data, wait and preemption costs.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.Write(cmd.OutOrStdout()) },
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

func newFlowBenchCmd() *cobra.Command {
	var o flowbench.Options
	cmd := &cobra.Command{
		Use:   "bench [FILE...]",
		Short: "Time our solver against LEMON's NetworkSimplex and CostScaling",
		Long: `bench solves each DIMACS FILE, or Quincy-shaped graphs of the --sizes given,
with core/flow from scratch and with the LEMON driver (built from
core/flow/testdata/lemon/lemon_mcf.cpp with
  g++ -O2 -o lemon_mcf core/flow/testdata/lemon/lemon_mcf.cpp -llemon
and passed with --lemon), and reports median times over --reps runs, the
ratio of ours to the faster LEMON algorithm, and for generated graphs the
median time of a warm re-solve after --churn of the tasks finish or arrive.
LEMON's times are measured inside the driver, excluding I/O, and so are
ours. Progress goes to stderr, the table (or JSON with --json) to stdout.`,
		Example: `  sparrow flow bench --lemon ./lemon_mcf --sizes 243x10x2200,2500x100x22000`,
		RunE: func(cmd *cobra.Command, files []string) error {
			return o.Print(files, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}
