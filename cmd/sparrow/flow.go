package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/bench/flowbench"
	"github.com/sparrowfleet/sparrow/core/flow"
	"github.com/sparrowfleet/sparrow/core/flow/gen"
	"github.com/sparrowfleet/sparrow/core/quincy"
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

// readDIMACSFile reads a DIMACS problem from a file, or stdin for "-".
func readDIMACSFile(cmd *cobra.Command, name string) (*flow.Network, error) {
	var r io.Reader = cmd.InOrStdin()
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	g, err := flow.ReadDIMACS(bufio.NewReader(r))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return g, nil
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
			g, err := readDIMACSFile(cmd, args[0])
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

type flowGenFlags struct {
	computers, racks, jobs, tasks int
	xi                            int64
	unfair                        bool
	seed                          uint64
}

func (f *flowGenFlags) register(cmd *cobra.Command) {
	cmd.Flags().IntVar(&f.racks, "racks", 0, "racks (0: one per 30 computers)")
	cmd.Flags().Int64Var(&f.xi, "xi", 2, "cost of one MB across the core switch, in rack-switch MBs (Quincy's ξ; 20 for QFPX)")
	cmd.Flags().BoolVar(&f.unfair, "unfair", false, "policy Q's bounds (E_j=1, F_j=N_j) instead of QFP's fair shares")
	cmd.Flags().Uint64Var(&f.seed, "seed", 1, "random seed for data placement, wait and run times")
}

func (f *flowGenFlags) params(computers, jobs, tasks int) gen.Params {
	p := gen.Default(computers, jobs, tasks)
	if f.racks > 0 {
		p.Racks = f.racks
	}
	p.Xi = f.xi
	p.Fair = !f.unfair
	return p
}

func newFlowGenCmd() *cobra.Command {
	f := &flowGenFlags{}
	var quincySize, quincyPolicy string
	cmd := &cobra.Command{
		Use:   "gen",
		Short: "Write a Quincy-shaped min-cost flow problem in DIMACS format",
		Long: `gen writes a random scheduling graph shaped like Quincy's (SOSP'09, Appendix):
root and worker tasks, unscheduled nodes U_j, the cluster aggregator X, racks,
computers and the sink, with data, wait and preemption costs.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rng := rand.New(rand.NewPCG(f.seed, 0))
			if quincySize != "" {
				return writeQuincyGraph(cmd.OutOrStdout(), quincySize, quincyPolicy, rng)
			}
			q := gen.Quincy(f.params(f.computers, f.jobs, f.tasks), rng)
			return flow.WriteDIMACS(cmd.OutOrStdout(), q.Net)
		},
	}
	cmd.Flags().StringVar(&quincySize, "quincy", "", "write core/quincy's own graph of a synthetic cluster instead (the graph the simulator solves): "+strings.Join(quincy.SyntheticSizeNames(), ", ")+"; --computers, --jobs, --tasks, --racks, --xi and --unfair then do not apply")
	cmd.Flags().StringVar(&quincyPolicy, "policy", "QFP", "with --quincy: the policy whose capacities the graph carries (Q, QP, QF, QFP, QFPX)")
	cmd.Flags().IntVar(&f.computers, "computers", 243, "computers (M)")
	cmd.Flags().IntVar(&f.jobs, "jobs", 10, "jobs (J)")
	cmd.Flags().IntVar(&f.tasks, "tasks", 2200, "worker tasks in all (N)")
	f.register(cmd)
	return cmd
}

// writeQuincyGraph writes core/quincy's graph of the named synthetic
// cluster under policy pol as a DIMACS problem.
func writeQuincyGraph(w io.Writer, size, pol string, rng *rand.Rand) error {
	cfg, err := quincy.SyntheticSize(size)
	if err != nil {
		return fmt.Errorf("--quincy: %w", err)
	}
	p, err := quincy.ParsePolicy(pol)
	if err != nil {
		return fmt.Errorf("--policy: %w", err)
	}
	return quincy.WriteSyntheticDIMACS(w, cfg, p, quincy.DefaultParams(), rng)
}

func newFlowBenchCmd() *cobra.Command {
	f := &flowGenFlags{}
	var lemon, sizes string
	var reps int
	var churn float64
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
			var rows []flowbench.Row
			type inst struct {
				name string
				q    *gen.Graph
				g    *flow.Network
			}
			var insts []inst
			for _, file := range files {
				g, err := readDIMACSFile(cmd, file)
				if err != nil {
					return err
				}
				insts = append(insts, inst{name: file, g: g})
			}
			if len(files) == 0 {
				for _, sz := range strings.Split(sizes, ",") {
					var m, j, n int
					if _, err := fmt.Sscanf(strings.TrimSpace(sz), "%dx%dx%d", &m, &j, &n); err != nil {
						return fmt.Errorf("--sizes %q: want COMPUTERSxJOBSxTASKS", sz)
					}
					q := gen.Quincy(f.params(m, j, n), rand.New(rand.NewPCG(f.seed, 0)))
					insts = append(insts, inst{name: "quincy " + strings.TrimSpace(sz), q: q, g: q.Net})
				}
			}
			for _, in := range insts {
				fmt.Fprintf(cmd.ErrOrStderr(), "flow bench: %s (%v)\n", in.name, in.g)
				row, err := flowbench.One(cmd.ErrOrStderr(), in.name, in.g, in.q, lemon, reps, churn)
				if err != nil {
					return err
				}
				rows = append(rows, row)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(rows)
			}
			return flowbench.WriteTable(out, rows)
		},
	}
	cmd.Flags().StringVar(&lemon, "lemon", "", "path to the LEMON driver binary (empty: time ours only)")
	cmd.Flags().StringVar(&sizes, "sizes", "243x10x2200,2500x100x22000", "generated Quincy graphs, COMPUTERSxJOBSxTASKS, comma-separated (ignored when FILEs are given)")
	cmd.Flags().IntVar(&reps, "reps", 3, "repetitions; medians are reported")
	cmd.Flags().Float64Var(&churn, "churn", 0.01, "fraction of tasks changed (half finish, half arrive) before each warm re-solve")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	f.register(cmd)
	return cmd
}
