package flowbench

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/sparrowfleet/sparrow/core/flow"
	"github.com/sparrowfleet/sparrow/core/flow/gen"
	"github.com/sparrowfleet/sparrow/core/quincy"
	"github.com/sparrowfleet/sparrow/internal/report"
)

// GenOptions are the Quincy-shaped graph generator's settings that
// `sparrow flow gen` and `sparrow flow bench` share.
type GenOptions struct {
	// Racks (0: one per 30 computers), Xi (ξ, the cost of a MB across the
	// core switch) and Unfair (policy Q's bounds instead of QFP's fair
	// shares) adjust gen.Default.
	Racks  int
	Xi     int64
	Unfair bool
	// Seed seeds data placement, wait and run times.
	Seed uint64
}

// AddFlags declares the generator flags of `sparrow flow gen` and `flow
// bench` on fs, with their defaults.
func (o *GenOptions) AddFlags(fs *pflag.FlagSet) {
	fs.IntVar(&o.Racks, "racks", 0, "racks (0: one per 30 computers)")
	fs.Int64Var(&o.Xi, "xi", 2, "cost of one MB across the core switch, in rack-switch MBs (Quincy's ξ; 20 for QFPX)")
	fs.BoolVar(&o.Unfair, "unfair", false, "policy Q's bounds (E_j=1, F_j=N_j) instead of QFP's fair shares")
	fs.Uint64Var(&o.Seed, "seed", 1, "random seed for data placement, wait and run times")
}

// Params are gen.Default's for a cluster of that size, adjusted by o.
func (o GenOptions) Params(computers, jobs, tasks int) gen.Params {
	p := gen.Default(computers, jobs, tasks)
	if o.Racks > 0 {
		p.Racks = o.Racks
	}
	p.Xi = o.Xi
	p.Fair = !o.Unfair
	return p
}

// Quincy generates the graph of a cluster of that size, seeded by Seed.
func (o GenOptions) Quincy(computers, jobs, tasks int) *gen.Graph {
	return gen.Quincy(o.Params(computers, jobs, tasks), rand.New(rand.NewPCG(o.Seed, 0)))
}

// WriteSynthetic writes core/quincy's own graph of the named synthetic
// cluster (quincy.SyntheticSize) under the named policy, seeded by Seed,
// as a DIMACS problem. Its errors name the flags --quincy and --policy.
func (o GenOptions) WriteSynthetic(w io.Writer, size, policy string) error {
	cfg, err := quincy.SyntheticSize(size)
	if err != nil {
		return fmt.Errorf("--quincy: %w", err)
	}
	p, err := quincy.ParsePolicy(policy)
	if err != nil {
		return fmt.Errorf("--policy: %w", err)
	}
	return quincy.WriteSyntheticDIMACS(w, cfg, p, quincy.DefaultParams(), rand.New(rand.NewPCG(o.Seed, 0)))
}

// Gen is `sparrow flow gen`: a generated Quincy-shaped graph of
// Computers, Jobs and Tasks or, with Quincy set, core/quincy's graph of
// that synthetic cluster under Policy.
type Gen struct {
	GenOptions
	Computers, Jobs, Tasks int
	Quincy, Policy         string
}

// AddFlags declares `sparrow flow gen`'s flags on fs, with their
// defaults.
func (o *Gen) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Quincy, "quincy", "", "write core/quincy's own graph of a synthetic cluster instead (the graph the simulator solves): "+strings.Join(quincy.SyntheticSizeNames(), ", ")+"; --computers, --jobs, --tasks, --racks, --xi and --unfair then do not apply")
	fs.StringVar(&o.Policy, "policy", "QFP", "with --quincy: the policy whose capacities the graph carries (Q, QP, QF, QFP, QFPX)")
	fs.IntVar(&o.Computers, "computers", 243, "computers (M)")
	fs.IntVar(&o.Jobs, "jobs", 10, "jobs (J)")
	fs.IntVar(&o.Tasks, "tasks", 2200, "worker tasks in all (N)")
	o.GenOptions.AddFlags(fs)
}

// Write writes the graph to w as a DIMACS problem.
func (o *Gen) Write(w io.Writer) error {
	if o.Quincy != "" {
		return o.WriteSynthetic(w, o.Quincy, o.Policy)
	}
	return flow.WriteDIMACS(w, o.GenOptions.Quincy(o.Computers, o.Jobs, o.Tasks).Net)
}

// Solve solves the DIMACS problem in the named file ("-": stdin) and
// writes the DIMACS solution to out; an infeasible or unbounded problem
// is an error naming the file.
func Solve(name string, stdin io.Reader, out io.Writer) error {
	g, err := ReadFile(name, stdin)
	if err != nil {
		return err
	}
	s, err := flow.Solve(g)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return flow.WriteSolution(out, g, s)
}

// ReadFile reads the DIMACS problem in the named file, or in stdin for
// "-".
func ReadFile(name string, stdin io.Reader) (*flow.Network, error) {
	r := stdin
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

// Options are a `sparrow flow bench` run.
type Options struct {
	Gen GenOptions
	// Lemon is the LEMON driver's path ("": time ours only).
	Lemon string
	// Sizes are the generated graphs, COMPUTERSxJOBSxTASKS,
	// comma-separated, timed when no file is given.
	Sizes string
	// Reps are the repetitions whose medians are reported; Churn the
	// fraction of tasks changed before each warm re-solve.
	Reps  int
	Churn float64
	// JSON prints the rows as indented JSON instead of the table.
	JSON bool
}

// AddFlags declares `sparrow flow bench`'s flags on fs, with their
// defaults.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Lemon, "lemon", "", "path to the LEMON driver binary (empty: time ours only)")
	fs.StringVar(&o.Sizes, "sizes", "243x10x2200,2500x100x22000", "generated Quincy graphs, COMPUTERSxJOBSxTASKS, comma-separated (ignored when FILEs are given)")
	fs.IntVar(&o.Reps, "reps", 3, "repetitions; medians are reported")
	fs.Float64Var(&o.Churn, "churn", 0.01, "fraction of tasks changed (half finish, half arrive) before each warm re-solve")
	fs.BoolVar(&o.JSON, "json", false, "print JSON instead of a table")
	o.Gen.AddFlags(fs)
}

// Print times the files or sizes (Run) and prints the rows on out.
func (o Options) Print(files []string, stdin io.Reader, out, progress io.Writer) error {
	rows, err := o.Run(files, stdin, progress)
	if err != nil {
		return err
	}
	return report.Print(out, rows, report.If(o.JSON, report.IndentedJSON))
}

// Rows are a run's result.
type Rows []Row

// WriteTable prints the rows as WriteTable does.
func (rs Rows) WriteTable(w io.Writer) error { return WriteTable(w, rs) }

// Run times each DIMACS file ("-" reads stdin) or, without files, each
// generated graph of Sizes, naming each on progress.
func (o Options) Run(files []string, stdin io.Reader, progress io.Writer) (Rows, error) {
	type inst struct {
		name string
		q    *gen.Graph
		g    *flow.Network
	}
	var insts []inst
	for _, file := range files {
		g, err := ReadFile(file, stdin)
		if err != nil {
			return nil, err
		}
		insts = append(insts, inst{name: file, g: g})
	}
	if len(files) == 0 {
		for _, sz := range strings.Split(o.Sizes, ",") {
			var m, j, n int
			if _, err := fmt.Sscanf(strings.TrimSpace(sz), "%dx%dx%d", &m, &j, &n); err != nil {
				return nil, fmt.Errorf("--sizes %q: want COMPUTERSxJOBSxTASKS", sz)
			}
			q := o.Gen.Quincy(m, j, n)
			insts = append(insts, inst{name: "quincy " + strings.TrimSpace(sz), q: q, g: q.Net})
		}
	}
	var rows Rows
	for _, in := range insts {
		fmt.Fprintf(progress, "flow bench: %s (%v)\n", in.name, in.g)
		row, err := One(progress, in.name, in.g, in.q, o.Lemon, o.Reps, o.Churn)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}
