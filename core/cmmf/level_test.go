package cmmf

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestSolveLevel(t *testing.T) {
	inf := math.Inf(1)
	for _, tc := range []struct {
		users []capped // sorted by breakpoint
		room  float64
		want  float64
	}{
		{nil, 5, inf},
		{[]capped{{inf, 1}, {inf, 1}}, 3, 1.5},
		{[]capped{{inf, 1}, {inf, 2}}, 3, 1},
		{[]capped{{1, 1}, {inf, 1}}, 5, 4},           // the first is capped at 1
		{[]capped{{1, 1}, {2, 1}}, 5, 2},             // every demand met: last breakpoint
		{[]capped{{2, 1}, {inf, 1}}, 4, 2},           // crossing exactly at a breakpoint
		{[]capped{{0, 1}, {inf, 3}}, 6, 2},           // zero demand
		{[]capped{{inf, 1}}, -1, 0},                  // rounding left negative room
		{[]capped{{1, 0.5}, {inf, 1}}, 3, 2},         // breakpoint 2, crossing at 2
		{[]capped{{1, 0.5}, {inf, 1}}, 2.5, 5.0 / 3}, // crossing below the breakpoint
	} {
		got, _ := solveLevel(tc.users, tc.room, nil)
		if !near(got, tc.want) && !(math.IsInf(got, 1) && math.IsInf(tc.want, 1)) {
			t.Errorf("solveLevel(%v, %v) = %v, want %v", tc.users, tc.room, got, tc.want)
		}
	}
}

// TestSolveStep checks the integer level equation against a direct scan
// of every user's turns.
func TestSolveStep(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for range 500 {
		var users []stepper
		var turns []float64
		for range 1 + rng.IntN(4) {
			s := stepper{y: int64(rng.IntN(3)), demand: int64(3 + rng.IntN(6)), weight: []float64{1, 2, 0.5, 1.0 / 3, 0.7}[rng.IntN(5)]}
			users = append(users, s)
			for m := s.y; m < s.demand; m++ {
				turns = append(turns, float64(m)/s.weight)
			}
		}
		var held int64
		for _, s := range users {
			held += s.y
		}
		room := held + int64(rng.IntN(len(turns)))
		got := solveStep(users, room, 0, math.Inf(1))
		// The answer is the (room-held+1)-th smallest turn: just above it
		// one turn too many has come.
		want := kth(turns, int(room-held))
		if got != want {
			t.Errorf("solveStep(%v, %d) = %v, want %v", users, room, got, want)
		}
		for _, s := range users {
			if n := s.asked(got); n < s.y || n > s.demand {
				t.Errorf("asked(%v) = %d outside [%d, %d]", got, n, s.y, s.demand)
			}
		}
	}
}

// kth returns the k-th smallest value (0-based).
func kth(v []float64, k int) float64 {
	w := append([]float64(nil), v...)
	for i := range w {
		for j := i + 1; j < len(w); j++ {
			if w[j] < w[i] {
				w[i], w[j] = w[j], w[i]
			}
		}
	}
	return w[k]
}
