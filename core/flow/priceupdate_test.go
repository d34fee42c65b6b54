package flow

import (
	"math/rand/v2"
	"testing"
)

// TestGlobalUpdateOften runs cost scaling on the tail-sorted copy (csr.go)
// with a global price update after every few relabels (by default they
// come every 4n relabels, and small networks skip the copy), or almost
// never, and checks each optimum against primal-dual's.
func TestGlobalUpdateOften(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for inst := range 400 {
		g := randomInternal(rng, 2+rng.IntN(60))
		c, err := validate(g)
		if err != nil {
			t.Fatal(err)
		}
		ref := newEngine(g, c, 0)
		refErr := ref.solveCold(c, methodPrimalDual)
		for _, every := range []int{1, 2, 5, 1 << 30} {
			c, _ := validate(g)
			e := newEngine(g, c, 0)
			err := e.feasible()
			if (err == nil) != (refErr == nil) {
				t.Fatalf("instance %d: feasibility %v, primal-dual %v", inst, err, refErr)
			}
			if err != nil || !canScale(len(e.pot), c.maxAbs) {
				continue
			}
			e.costScaling(c.maxAbs, every)
			e.exactPotentials()
			s := e.solution(g)
			if err := Verify(g, s); err != nil {
				t.Fatalf("instance %d, update every %d relabels: %v", inst, every, err)
			}
			if want := ref.solution(g).Cost; s.Cost != want {
				t.Fatalf("instance %d, update every %d relabels: cost %d, primal-dual %d", inst, every, s.Cost, want)
			}
		}
	}
}
