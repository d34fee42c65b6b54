package planner

import "fmt"

// MaxExhaustive bounds Exhaustive's enumeration.
const MaxExhaustive = 10_000_000

// ExhaustiveResult is every assignment's predicted makespan.
type ExhaustiveResult struct {
	// Best is the plan of the first assignment with the least makespan.
	Best Plan
	// Costs holds each assignment's makespan; assignment k puts task t on
	// machine (k / m^t) mod m.
	Costs []float64
}

// Exhaustive evaluates all machines^tasks assignments (the report's
// Figure 13 for Join: 3^9 = 19,683). It is the tests' oracle for Solve.
func Exhaustive(p Problem) (ExhaustiveResult, error) {
	in, err := compile(p)
	if err != nil {
		return ExhaustiveResult{}, err
	}
	total := 1
	for range in.n {
		total *= in.m
		if total > MaxExhaustive {
			return ExhaustiveResult{}, fmt.Errorf("exhaustive: %d^%d assignments exceed %d", in.m, in.n, MaxExhaustive)
		}
	}
	res := ExhaustiveResult{Costs: make([]float64, total)}
	assign := make([]int, in.n)
	for k := range total {
		for t, rest := 0, k; t < in.n; t++ {
			assign[t] = rest % in.m
			rest /= in.m
		}
		plan, err := in.simulate(assign)
		if err != nil {
			return ExhaustiveResult{}, fmt.Errorf("exhaustive: assignment %v: %w", assign, err)
		}
		res.Costs[k] = plan.Makespan
		if k == 0 || plan.Makespan < res.Best.Makespan {
			res.Best = plan
		}
	}
	return res, nil
}
