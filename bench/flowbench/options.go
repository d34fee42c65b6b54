package flowbench

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/sparrowfleet/sparrow/core/flow"
	"github.com/sparrowfleet/sparrow/core/flow/gen"
	"github.com/sparrowfleet/sparrow/core/quincy"
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
