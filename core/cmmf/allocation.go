package cmmf

// Tolerance is the divisible solver's relative tolerance.
//
// Flows are float64, and every push or pull rounds at the size of the
// quantities involved. The solver treats as zero any room or flow at a
// machine type up to Tolerance times its slots (at least 1), and any
// shortfall of a user group up to Tolerance times what it already
// receives: some 4,500 ulps, far above accumulated rounding and far below
// any real slack. Levels are not read off flows: each is computed in
// closed form from the minimum cut that determines it (its types' slots
// less its frozen users' totals, over its active users' weights), so it
// carries only that formula's rounding, about 1e-15 relative. The
// allocations (Total, Matrix) are the flows: exact to about Tolerance of
// the slots of each type, except that rounding at the size of the largest
// quantity (the total slots, or a user's huge ask) can move a few of its
// ulps between users: 1e-10 slots in a cluster of 10^6. Only a true slack
// below these tolerances can make the solver pick a different cut, and the
// answer is then off by no more than that slack.
const Tolerance = 1e-12

// Allocation is a divisible CMMF allocation.
type Allocation struct {
	// Total[i] is user i's allocation in slots: the row sum of Matrix.
	Total []float64
	// Levels[i] is Total[i] / weight: the quantity CMMF maximises, smallest
	// first (§4.2.1).
	Levels []float64
	// Matrix[i][t] is the slots of machine type t (Problem.Types order)
	// given to user i. It is a valid flow: zero where i may not run, column
	// sums within each type's slots, row sums within each user's demand.
	// Rows share one backing array.
	Matrix [][]float64
	// Rounds lists progressive filling's rounds in order (§5).
	Rounds []Round
}

// Round is one round of progressive filling: the common level the active
// users reached, and who stopped there.
type Round struct {
	// Level is the largest level, allocation/weight, that every user still
	// active in this round could reach together (the paper's M_r).
	Level float64
	// Frozen lists, ascending, the users frozen in this round: those that
	// cannot grow past Level without lowering a user at or below its own
	// level (saturated), and those whose demand was met at or below Level
	// (their own level is then demand/weight).
	Frozen []int
}

// IntAllocation is an allocation of whole slots.
type IntAllocation struct {
	// Total[i] is user i's allocation in slots: the row sum of Matrix.
	Total []int64
	// Matrix[i][t] is the slots of machine type t given to user i; a valid
	// integer flow, like Allocation.Matrix.
	Matrix [][]int64
}

// matrix returns a rows × cols matrix whose rows share one backing array,
// so that a large answer is one allocation rather than thousands.
func matrix[T any](rows, cols int) [][]T {
	back := make([]T, rows*cols)
	m := make([][]T, rows)
	for i := range m {
		m[i] = back[i*cols : (i+1)*cols : (i+1)*cols]
	}
	return m
}
