package flow_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/sparrowfleet/sparrow/core/flow"
	"github.com/sparrowfleet/sparrow/core/flow/gen"
)

// quincySizes are the benchmark sizes: Quincy's 243-computer
// cluster, its simulated 2,500-computer, 100-job cluster (~22,000 tasks),
// and Firmament's 12,500 computers.
var quincySizes = []struct{ computers, jobs, tasks int }{
	{243, 10, 2200},
	{2500, 100, 22000},
	{12500, 500, 110000},
}

func BenchmarkSolveQuincy(b *testing.B) {
	for _, sz := range quincySizes {
		b.Run(fmt.Sprintf("M=%d", sz.computers), func(b *testing.B) {
			q := gen.Quincy(gen.Default(sz.computers, sz.jobs, sz.tasks), rand.New(rand.NewPCG(1, 2)))
			for b.Loop() {
				if _, err := flow.Solve(q.Net); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkResolveQuincy times a warm re-solve after 1% of the tasks
// finish and as many arrive.
func BenchmarkResolveQuincy(b *testing.B) {
	for _, sz := range quincySizes {
		b.Run(fmt.Sprintf("M=%d", sz.computers), func(b *testing.B) {
			q := gen.Quincy(gen.Default(sz.computers, sz.jobs, sz.tasks), rand.New(rand.NewPCG(1, 2)))
			s := flow.NewSolver(q.Net)
			if _, err := s.Solve(); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				b.StopTimer()
				q.Churn(sz.tasks / 200) // 1% of tasks change: half finish, half arrive
				b.StartTimer()
				if _, err := s.Solve(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
