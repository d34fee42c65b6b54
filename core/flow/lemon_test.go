package flow_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/sparrowfleet/sparrow/core/flow"
	"github.com/sparrowfleet/sparrow/core/flow/gen"
	"github.com/sparrowfleet/sparrow/core/quincy"
)

// lemonDriver builds testdata/lemon/lemon_mcf.cpp with g++ against LEMON
// once per test binary. Without g++ or LEMON the caller skips, unless
// SPARROW_LEMON_REQUIRE=1 makes a missing oracle a failure (as in CI).
var lemonDriver = sync.OnceValues(func() (string, error) {
	gpp, err := exec.LookPath("g++")
	if err != nil {
		return "", fmt.Errorf("g++ not found: %w", err)
	}
	if _, err := os.Stat("/usr/include/lemon/network_simplex.h"); err != nil {
		return "", fmt.Errorf("LEMON headers not installed (Debian: liblemon-dev): %w", err)
	}
	dir, err := os.MkdirTemp("", "lemon_mcf")
	if err != nil {
		return "", err
	}
	bin := dir + "/lemon_mcf"
	out, err := exec.Command(gpp, "-O2", "-o", bin, "testdata/lemon/lemon_mcf.cpp", "-llemon").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("building the LEMON driver: %v\n%s", err, out)
	}
	return bin, nil
})

func needLemon(t *testing.T) string {
	t.Helper()
	bin, err := lemonDriver()
	if err != nil {
		if os.Getenv("SPARROW_LEMON_REQUIRE") == "1" {
			t.Fatalf("LEMON oracle required but unavailable: %v", err)
		}
		t.Skipf("LEMON oracle unavailable: %v", err)
	}
	return bin
}

// lemonResult is one line of the driver's output.
type lemonResult struct {
	status string
	cost   int64
}

// lemonRun runs one LEMON algorithm ("ns" or "cs") on g. crashed is set
// if the driver died of a signal: LEMON 1.3's CostScaling segfaults on some
// small instances (testdata/lemon-costscaling-segfault.min is one).
func lemonRun(t *testing.T, bin, alg string, g *flow.Network) (r lemonResult, crashed bool) {
	t.Helper()
	var in bytes.Buffer
	if err := flow.WriteDIMACS(&in, g); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-a", alg, "-")
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if alg == "cs" && errors.As(err, &ee) && !ee.Exited() {
			return r, true
		}
		t.Fatalf("lemon driver (%s): %v", alg, err)
	}
	f := strings.Fields(string(out))
	if len(f) != 5 || f[0] != alg {
		t.Fatalf("lemon driver printed %q", out)
	}
	c, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil {
		t.Fatalf("lemon driver printed %q", out)
	}
	return lemonResult{status: f[1], cost: c}, false
}

// compareWithLemon solves g with Solve and checks the outcome against
// LEMON's NetworkSimplex (the oracle) and, where it does not crash, its
// CostScaling; and checks our solution with Verify. It reports whether
// CostScaling crashed.
func compareWithLemon(t *testing.T, bin string, g *flow.Network, what string) (csCrashed bool) {
	t.Helper()
	ns, _ := lemonRun(t, bin, "ns", g)
	cs, crashed := lemonRun(t, bin, "cs", g)
	if !crashed && ns != cs {
		t.Fatalf("%s: LEMON disagrees with itself: NetworkSimplex %+v, CostScaling %+v", what, ns, cs)
	}
	s, err := flow.Solve(g)
	switch {
	case err == nil:
		if ns.status != "OPTIMAL" || s.Cost != ns.cost {
			t.Fatalf("%s: ours optimal with cost %d, LEMON %s %d", what, s.Cost, ns.status, ns.cost)
		}
		if err := flow.Verify(g, s); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	case errors.Is(err, flow.ErrInfeasible):
		if ns.status != "INFEASIBLE" {
			t.Fatalf("%s: ours %v, LEMON %s %d", what, err, ns.status, ns.cost)
		}
	default:
		t.Fatalf("%s: %v", what, err)
	}
	return crashed
}

// TestLemonOracleRandom: on random instances, including infeasible ones,
// lower bounds, zero and negative costs, our optimum equals LEMON's.
func TestLemonOracleRandom(t *testing.T) {
	bin := needLemon(t)
	rng := rand.New(rand.NewPCG(11, 5))
	infeasible, crashes := 0, 0
	for i := range 300 {
		maxNodes := []int{4, 10, 40, 150}[i%4]
		g := randomNetwork(rng, maxNodes)
		if compareWithLemon(t, bin, g, fmt.Sprintf("random instance %d", i)) {
			crashes++
		}
		if _, err := flow.Solve(g); errors.Is(err, flow.ErrInfeasible) {
			infeasible++
		}
	}
	if crashes > 0 {
		t.Logf("LEMON CostScaling crashed on %d of 300 instances; NetworkSimplex was the oracle there", crashes)
	}
	if infeasible == 0 || infeasible == 300 {
		t.Fatalf("%d of 300 instances infeasible: the generator should give both kinds", infeasible)
	}
}

// TestLemonOracleQuincy: the same on Quincy-shaped graphs, with both
// fairness settings, before and after churn.
func TestLemonOracleQuincy(t *testing.T) {
	bin := needLemon(t)
	for i, p := range []gen.Params{
		gen.Default(30, 3, 90),
		gen.Default(243, 10, 700),
		// Large enough (~90,000 residual arcs) for the tail-sorted copy
		// and global price updates of scaling.go.
		gen.Default(600, 20, 5000),
		{Computers: 100, Racks: 4, Jobs: 5, Tasks: 400, Xi: 20, Omega: 500, Fair: true},
		{Computers: 100, Racks: 4, Jobs: 5, Tasks: 400, Xi: 2, Omega: 500, Fair: false},
	} {
		q := gen.Quincy(p, rand.New(rand.NewPCG(uint64(i), 9)))
		compareWithLemon(t, bin, q.Net, fmt.Sprintf("quincy %+v", p))
		q.Churn(p.Tasks / 100)
		compareWithLemon(t, bin, q.Net, fmt.Sprintf("quincy %+v after churn", p))
	}
}

// TestLemonOracleQuincyGraphs: the same on the graphs core/quincy builds
// for the simulator: Quincy's 243-computer cluster under every policy.
func TestLemonOracleQuincyGraphs(t *testing.T) {
	bin := needLemon(t)
	cfg, err := quincy.SyntheticSize("243")
	if err != nil {
		t.Fatal(err)
	}
	for i, pol := range []quincy.Policy{quincy.Q, quincy.QP, quincy.QF, quincy.QFP, quincy.QFPX} {
		g, err := quincy.SyntheticGraph(cfg, pol, quincy.DefaultParams(), rand.New(rand.NewPCG(uint64(i), 3)))
		if err != nil {
			t.Fatal(err)
		}
		compareWithLemon(t, bin, g.Net, "core/quincy 243 "+pol.String())
	}
}
