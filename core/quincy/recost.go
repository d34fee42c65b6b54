package quincy

// Recost re-prices the arcs whose costs grow with time — a waiting
// worker's υ = ω·ν and every running arc's d* − θ — at the State's current
// Now, in place, and returns how many arcs changed. The scheduler re-solves
// on a timer because these costs drift (§4.2); when only time has passed,
// set State.Now, call Recost and re-solve with the same flow.Solver, which
// then warm-starts from the previous optimum instead of solving the whole
// graph again. Any other change to the State (a task submitted, started,
// finished or killed) changes the graph's shape: Build a new Graph.
func (g *Graph) Recost() int {
	changed := 0
	for j := range g.State.Jobs {
		for n := range g.State.Jobs[j].Tasks {
			first, end := g.ArcsOf(j, n)
			for a := first; a < end; a++ {
				var c int64
				switch g.Arcs[a].Kind {
				case UnscheduledArc:
					c = g.unscheduledCost(j, n)
				case RunningArc:
					c = g.runningCost(j, n)
				default:
					continue
				}
				if c != g.Net.Arc(a).Cost {
					g.Net.SetArcCost(a, c)
					changed++
				}
			}
		}
	}
	return changed
}
