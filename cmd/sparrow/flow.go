package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/bench/flowbench"
	"github.com/sparrowfleet/sparrow/core/flow"
	"github.com/sparrowfleet/sparrow/core/quincy"
	"github.com/sparrowfleet/sparrow/internal/report"
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
			g, err := flowbench.ReadFile(args[0], cmd.InOrStdin())
			if err != nil {
				return err
			}
			s, err := flow.Solve(g)
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			return flow.WriteSolution(cmd.OutOrStdout(), g, s)
		},
	}
}

// registerGenFlags registers the generator flags gen and bench share.
func registerGenFlags(cmd *cobra.Command, o *flowbench.GenOptions) {
	cmd.Flags().IntVar(&o.Racks, "racks", 0, "racks (0: one per 30 computers)")
	cmd.Flags().Int64Var(&o.Xi, "xi", 2, "cost of one MB across the core switch, in rack-switch MBs (Quincy's ξ; 20 for QFPX)")
	cmd.Flags().BoolVar(&o.Unfair, "unfair", false, "policy Q's bounds (E_j=1, F_j=N_j) instead of QFP's fair shares")
	cmd.Flags().Uint64Var(&o.Seed, "seed", 1, "random seed for data placement, wait and run times")
}

func newFlowGenCmd() *cobra.Command {
	var o flowbench.GenOptions
	var computers, jobs, tasks int
	var quincySize, quincyPolicy string
	cmd := &cobra.Command{
		Use:   "gen",
		Short: "Write a Quincy-shaped min-cost flow problem in DIMACS format",
		Long: `gen writes a random scheduling graph shaped like Quincy's (SOSP'09, Appendix):
root and worker tasks, unscheduled nodes U_j, the cluster aggregator X, racks,
computers and the sink, with data, wait and preemption costs.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if quincySize != "" {
				return o.WriteSynthetic(cmd.OutOrStdout(), quincySize, quincyPolicy)
			}
			return flow.WriteDIMACS(cmd.OutOrStdout(), o.Quincy(computers, jobs, tasks).Net)
		},
	}
	cmd.Flags().StringVar(&quincySize, "quincy", "", "write core/quincy's own graph of a synthetic cluster instead (the graph the simulator solves): "+strings.Join(quincy.SyntheticSizeNames(), ", ")+"; --computers, --jobs, --tasks, --racks, --xi and --unfair then do not apply")
	cmd.Flags().StringVar(&quincyPolicy, "policy", "QFP", "with --quincy: the policy whose capacities the graph carries (Q, QP, QF, QFP, QFPX)")
	cmd.Flags().IntVar(&computers, "computers", 243, "computers (M)")
	cmd.Flags().IntVar(&jobs, "jobs", 10, "jobs (J)")
	cmd.Flags().IntVar(&tasks, "tasks", 2200, "worker tasks in all (N)")
	registerGenFlags(cmd, &o)
	return cmd
}

func newFlowBenchCmd() *cobra.Command {
	var o flowbench.Options
	var asJSON bool
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
			rows, err := o.Run(files, cmd.InOrStdin(), cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return report.Print(cmd.OutOrStdout(), rows, report.If(asJSON, report.IndentedJSON))
		},
	}
	cmd.Flags().StringVar(&o.Lemon, "lemon", "", "path to the LEMON driver binary (empty: time ours only)")
	cmd.Flags().StringVar(&o.Sizes, "sizes", "243x10x2200,2500x100x22000", "generated Quincy graphs, COMPUTERSxJOBSxTASKS, comma-separated (ignored when FILEs are given)")
	cmd.Flags().IntVar(&o.Reps, "reps", 3, "repetitions; medians are reported")
	cmd.Flags().Float64Var(&o.Churn, "churn", 0.01, "fraction of tasks changed (half finish, half arrive) before each warm re-solve")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	registerGenFlags(cmd, &o.Gen)
	return cmd
}
