package flow

import (
	"errors"
	"math/rand/v2"
	"testing"
)

// TestMethodsAgree solves random instances with primal-dual and with cost
// scaling; both must reach the same optimum, each certified by Verify.
func TestMethodsAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for inst := range 500 {
		g := randomInternal(rng, 2+rng.IntN(40))
		var costs [2]int64
		var errs [2]error
		for k, m := range []method{methodPrimalDual, methodCostScaling} {
			c, err := validate(g)
			if err != nil {
				t.Fatal(err)
			}
			e := newEngine(g, c, 0)
			if errs[k] = e.solveCold(c, m); errs[k] != nil {
				continue
			}
			s := e.solution(g)
			costs[k] = s.Cost
			if err := Verify(g, s); err != nil {
				t.Fatalf("instance %d method %d: %v", inst, m, err)
			}
		}
		if (errs[0] == nil) != (errs[1] == nil) || (errs[0] != nil && !errors.Is(errs[1], ErrInfeasible)) {
			t.Fatalf("instance %d: errors %v, %v", inst, errs[0], errs[1])
		}
		if costs[0] != costs[1] {
			t.Fatalf("instance %d: primal-dual cost %d, cost scaling %d", inst, costs[0], costs[1])
		}
	}
}

func randomInternal(rng *rand.Rand, n int) *Network {
	g := New(n)
	for range rng.IntN(4*n + 1) {
		up := int64(rng.IntN(20))
		lo := int64(0)
		if rng.IntN(5) == 0 {
			lo = int64(rng.IntN(int(up) + 1))
		}
		g.AddArc(rng.IntN(n), rng.IntN(n), lo, up, int64(rng.IntN(70))-20)
	}
	var sum int64
	for v := 0; v < n-1; v++ {
		if rng.IntN(3) == 0 {
			s := int64(rng.IntN(21)) - 10
			g.SetSupply(v, s)
			sum += s
		}
	}
	g.SetSupply(n-1, -sum)
	return g
}
