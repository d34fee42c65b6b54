package sim

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/sparrowfleet/sparrow/core/placement"
)

func small(p Policy) Config {
	return Config{
		Policy: p, Nodes: 60, Slots: 2, Tasks: 8, Load: 0.8,
		Jobs: 300, Warmup: 50,
		Dist: Dist{Kind: Exp, Mean: 100}, RTT: 1, ProbeRatio: 2, Seed: 7,
	}
}

func mustRun(t testing.TB, cfg Config) Result {
	t.Helper()
	r, err := Run(cfg)
	if err != nil {
		t.Fatalf("%v: %v", cfg.Policy, err)
	}
	return r
}

func TestDeterminism(t *testing.T) {
	for _, p := range Policies() {
		for _, cancel := range []bool{false, true} {
			if cancel && p != Late {
				continue
			}
			cfg := small(p)
			cfg.Cancel = cancel
			a, b := mustRun(t, cfg), mustRun(t, cfg)
			if !reflect.DeepEqual(a, b) {
				t.Errorf("%v cancel=%v: same seed, different results:\n%+v\n%+v", p, cancel, a, b)
			}
			cfg.Seed++
			c := mustRun(t, cfg)
			if c.MeanMS == a.MeanMS || c.Events == a.Events {
				t.Errorf("%v: seeds %d and %d gave the same mean %v and %d events", p, cfg.Seed-1, cfg.Seed, a.MeanMS, a.Events)
			}
			if a.Jobs != cfg.Jobs {
				t.Errorf("%v: measured %d jobs, want %d", p, a.Jobs, cfg.Jobs)
			}
		}
	}
}

// Every policy sees the same jobs for a seed and load (common random
// numbers), so the optimum is identical across policies.
func TestCommonRandomNumbers(t *testing.T) {
	var opt float64
	for i, p := range Policies() {
		r := mustRun(t, small(p))
		if i == 0 {
			opt = r.OptimalMS
		} else if r.OptimalMS != opt {
			t.Errorf("%v: optimal %v, want %v as for the other policies", p, r.OptimalMS, opt)
		}
	}
}

func TestLowLoadNearOptimal(t *testing.T) {
	for _, p := range Policies() {
		cfg := small(p)
		cfg.Load = 0.1
		cfg.Nodes = 200
		cfg.Slots = 4 // a random node then almost always has a free slot
		r := mustRun(t, cfg)
		// Response = longest task + network (at most 1.5 RTT) + rare waits.
		if r.MeanMS > r.OptimalMS*1.05+1.5*cfg.RTT {
			t.Errorf("%v at 10%% load: mean %.1f ms, optimal %.1f ms: more than 5%% over", p, r.MeanMS, r.OptimalMS)
		}
		if r.MeanMS < r.OptimalMS {
			t.Errorf("%v: mean %.1f ms below the optimal %.1f ms", p, r.MeanMS, r.OptimalMS)
		}
	}
}

func TestHighLoadOrdering(t *testing.T) {
	res := map[Policy]Result{}
	for _, p := range Policies() {
		cfg := small(p)
		cfg.Nodes, cfg.Slots, cfg.Tasks = 200, 1, 20
		cfg.Load = 0.9
		cfg.Jobs, cfg.Warmup = 600, 300
		res[p] = mustRun(t, cfg)
	}
	om, rnd := res[Omniscient], res[Random]
	for p, r := range res {
		if p != Omniscient && r.MeanMS < om.MeanMS {
			t.Errorf("%v mean %.1f ms beats omniscient %.1f ms", p, r.MeanMS, om.MeanMS)
		}
		if p != Random && r.MeanMS > rnd.MeanMS {
			t.Errorf("%v mean %.1f ms is worse than random %.1f ms", p, r.MeanMS, rnd.MeanMS)
		}
	}
	// The paper's ordering at 90% load: late < batch < per-task < random.
	if !(res[Late].MeanMS < res[Batch].MeanMS && res[Batch].MeanMS < res[PerTask].MeanMS) {
		t.Errorf("want late < batch < pertask, got %.1f, %.1f, %.1f",
			res[Late].MeanMS, res[Batch].MeanMS, res[PerTask].MeanMS)
	}
	t.Logf("means: random %.0f pertask %.0f batch %.0f late %.0f omniscient %.0f optimal %.0f",
		rnd.MeanMS, res[PerTask].MeanMS, res[Batch].MeanMS, res[Late].MeanMS, om.MeanMS, om.OptimalMS)
}

type assignRec struct {
	addr string
	task int
	ok   bool
}

// pendingEvents lists the events on a, in no order.
func pendingEvents(a *agenda) []event {
	var out []event
	for k := 0; k < a.n; k++ {
		out = append(out, *a.peekFixed(k))
	}
	out = append(out, a.h.ev...)
	for k := 1; k <= a.stageN; k++ {
		out = append(out, a.staged[(a.stageAt-k)&(stageLen-1)])
	}
	if w := a.wh; w != nil {
		for p, c := range w.cnt {
			out = append(out, w.ev[p*bucketEvents:][:c]...)
		}
	}
	return out
}

// TestLateRunsProductCode fails if the late-binding policy stops running
// the daemons' placement and slot code: its probe sets must be exactly what
// placement.Sampler.Plan returns on the placement stream, its task choices
// exactly what placement.Request.Assign returns when replayed, every task
// must launch exactly once, and every node's slots.Core must account for
// exactly the tasks the simulator saw start and finish there.
func TestLateRunsProductCode(t *testing.T) {
	for _, tc := range []struct {
		cancel bool
		slots  int // 1 chains empty replies (chainEmpties)
	}{{false, 2}, {true, 2}, {false, 1}, {true, 1}} {
		cancel := tc.cancel
		cfg := small(Late)
		cfg.Cancel, cfg.Slots = cancel, tc.slots
		cfg.ProbeRatio = 1.5 // ceil(1.5*8) = 12 reservations per job
		s, err := newSim(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var planned [][]placement.Probe
		assigns := map[int32][]assignRec{}
		starts := map[[2]int32]int{}
		running := make([]int, cfg.Nodes)
		nStart, nFinish := 0, 0
		s.hooks.onPlan = func(jseq int32, probes []placement.Probe) {
			if int(jseq) != len(planned) {
				t.Fatalf("plan for job %d out of order", jseq)
			}
			planned = append(planned, probes)
		}
		s.hooks.onAssign = func(jseq int32, addr string, task int, ok bool) {
			assigns[jseq] = append(assigns[jseq], assignRec{addr, task, ok})
		}
		s.hooks.onStart = func(n, jseq, task int32) {
			starts[[2]int32{jseq, task}]++
			running[n]++
			nStart++
			if c := s.lt.core(n); c.Running() != running[n] || c.Running() > c.Slots() {
				t.Fatalf("node %d: slots.Core running %d, simulator %d, slots %d", n, c.Running(), running[n], c.Slots())
			}
		}
		s.hooks.onFinish = func(n, jseq, task int32) {
			running[n]--
			nFinish++
		}
		if err := s.run(); err != nil {
			t.Fatal(err)
		}
		r := s.result()

		// 1. Probe sets equal placement.Sampler.Plan on the same stream.
		rng := newPlaceRNG(cfg.Seed)
		var sampler placement.Sampler
		for jseq, got := range planned {
			want, err := sampler.Plan(rng, s.lt.nodes, s.lt.tasks[:cfg.Tasks], cfg.ProbeRatio)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("job %d: simulator probed %v, placement.Sampler.Plan gives %v", jseq, got, want)
			}
			total := 0
			for _, p := range got {
				total += p.Count
			}
			if total != placement.Reservations(cfg.ProbeRatio, cfg.Tasks) {
				t.Fatalf("job %d: %d reservations", jseq, total)
			}
		}
		// A different stream must not reproduce them (the check has teeth).
		other := rand.New(rand.NewPCG(cfg.Seed+1, placeStream))
		var sampler2 placement.Sampler
		if p, _ := sampler2.Plan(other, s.lt.nodes, s.lt.tasks[:cfg.Tasks], cfg.ProbeRatio); reflect.DeepEqual(p, planned[0]) {
			t.Fatal("another seed planned the same probes; the comparison is vacuous")
		}

		// 2. Task choices replay through placement.Request.Assign.
		for jseq, recs := range assigns {
			req := placement.NewRequest(s.lt.tasks[0].ID, s.lt.tasks[:cfg.Tasks])
			req.AddProbes(planned[jseq])
			for k, rec := range recs {
				task, ok := req.Assign(rec.addr)
				if task != rec.task || ok != rec.ok {
					t.Fatalf("job %d assign %d at %s: simulator got (%d,%v), replay (%d,%v)", jseq, k, rec.addr, rec.task, rec.ok, task, ok)
				}
			}
		}

		// 3. Exactly-once launches, and every finished job launched all tasks.
		perJob := map[int32]int{}
		for k, c := range starts {
			if c != 1 {
				t.Fatalf("job %d task %d launched %d times", k[0], k[1], c)
			}
			perJob[k[0]]++
		}
		for jseq := cfg.Warmup; jseq < cfg.Warmup+cfg.Jobs; jseq++ {
			if perJob[int32(jseq)] != cfg.Tasks {
				t.Fatalf("measured job %d launched %d of %d tasks", jseq, perJob[int32(jseq)], cfg.Tasks)
			}
		}
		if int64(nStart) != r.TasksSimulated {
			t.Fatalf("%d starts observed, result says %d", nStart, r.TasksSimulated)
		}

		// 4. slots.Core accounting agrees with the simulator.
		for n := range s.lt.mon {
			c := &s.lt.mon[n].core
			if c.Running() != running[n] {
				t.Fatalf("node %d: slots.Core running %d, simulator %d", n, c.Running(), running[n])
			}
			if c.Free() < 0 || c.Running()+c.Fetching() > c.Slots() {
				t.Fatalf("node %d: running %d + fetching %d > %d slots", n, c.Running(), c.Fetching(), c.Slots())
			}
		}
		if r.Late.EndRunning != nStart-nFinish {
			t.Fatalf("cores report %d running, %d started - %d finished", r.Late.EndRunning, nStart, nFinish)
		}
		// Every reservation is queued, fetched (or being fetched) or cancelled.
		if got := r.Late.EndQueued + int(r.Late.Fetches) + int(r.Late.Cancelled); int64(got) != r.Late.Reservations {
			t.Fatalf("queued %d + fetched %d + cancelled %d != %d enqueued", r.Late.EndQueued, r.Late.Fetches, r.Late.Cancelled, r.Late.Reservations)
		}
		// Every planned job's reservations arrived, but for those of the
		// jobs whose reservations were still on their way at the end.
		inFlight := 0
		for _, e := range pendingEvents(&s.h) {
			if e.kind() == evEnqueue {
				inFlight++
			}
		}
		if r.Late.Reservations != int64((len(planned)-inFlight)*placement.Reservations(cfg.ProbeRatio, cfg.Tasks)) {
			t.Fatalf("%d reservations enqueued for %d jobs, %d on their way", r.Late.Reservations, len(planned), inFlight)
		}
		// Fetches that got a task are exactly the launches (some replies may
		// still be in flight at the end).
		if launched := r.Late.Fetches - r.Late.EmptyFetches; launched < int64(nStart) || launched > int64(nStart+cfg.Nodes*cfg.Slots) {
			t.Fatalf("%d non-empty fetches for %d starts", launched, nStart)
		}
		if cancel && r.Late.Cancelled == 0 {
			t.Fatal("cancellation removed nothing")
		}
		if !cancel && r.Late.Cancelled != 0 {
			t.Fatal("cancelled without --cancel")
		}
	}
}

func TestCancelReducesEmptyFetches(t *testing.T) {
	cfg := small(Late)
	a := mustRun(t, cfg)
	cfg.Cancel = true
	b := mustRun(t, cfg)
	if b.Late.EmptyFetches >= a.Late.EmptyFetches {
		t.Errorf("cancel: %d empty fetches, without: %d", b.Late.EmptyFetches, a.Late.EmptyFetches)
	}
}

func TestClosedForms(t *testing.T) {
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %.12f, want %.12f", name, got, want)
		}
	}
	near("random(0.2, m=10)", ZeroWaitRandom(0.2, 10, 1), 0.1073741824) // 0.8^10
	near("random(0.5, m=2, c=2)", ZeroWaitRandom(0.5, 2, 2), 0.5625)    // 0.75^2
	near("pertask(0.2, d=2, m=100)", ZeroWaitPerTask(0.2, 2, 100, 1), 0.016870319358849587)
	near("pertask(0.5, d=1.5, m=1)", ZeroWaitPerTask(0.5, 1.5, 1, 1), 0.75) // ceil(1.5)=2 probes
	// n=2: C(2,1)/4 + C(2,2)/4.
	near("batch(0.5, d=2, m=1)", ZeroWaitBatch(0.5, 2, 1, 1), 0.75)
	// n=4: (C(4,2)+C(4,3)+C(4,4))/16.
	near("batch(0.5, d=2, m=2)", ZeroWaitBatch(0.5, 2, 2, 1), 11.0/16)
	// c=2: idle p=0.75, n=4: 1 - 0.25^4 - 4*0.75*0.25^3.
	near("batch(0.5, d=2, m=2, c=2)", ZeroWaitBatch(0.5, 2, 2, 2), 0.94921875)
	near("batch(d=1) = random", ZeroWaitBatch(0.3, 1, 5, 1), ZeroWaitRandom(0.3, 5, 1))

	// The paper's statements in §5.
	if p := ZeroWaitPerTask(0.2, 2, 100, 1); p >= 0.02 {
		t.Errorf("per-task, 100 tasks, 20%% load: %v, paper says < 2%%", p)
	}
	if p := ZeroWaitBatch(0.79, 2, 100, 4); p < 0.999 {
		t.Errorf("batch, 4 cores, 100 tasks, 79%% load: %v, paper says 99.9%%", p)
	}
	if hi, lo := ZeroWaitBatch(0.4, 2, 100, 1), ZeroWaitBatch(0.6, 2, 100, 1); hi < 0.99 || lo > 0.01 {
		t.Errorf("batch, 100 tasks: %v at 40%%, %v at 60%%; paper: drops from 1 to 0 around 50%%", hi, lo)
	}
	if _, ok := ZeroWaitClosedForm(Late, 0.5, 2, 10, 1); ok {
		t.Error("closed form claimed for late binding")
	}
}

// At small scale the simulated zero-wait fraction of random placement is
// within a few points of (1-rho)^m: a single-slot node is idle with
// probability 1-rho (PASTA), nearly independently across a job's nodes.
func TestZeroWaitRandomMatchesClosedForm(t *testing.T) {
	for _, rho := range []float64{0.3, 0.6} {
		cfg := Config{Policy: Random, Nodes: 2000, Slots: 1, Tasks: 3, Load: rho,
			Jobs: 20000, Warmup: 4000, Dist: Dist{Kind: Exp, Mean: 100}, RTT: 1, ProbeRatio: 2, Seed: 3}
		r := mustRun(t, cfg)
		want := ZeroWaitRandom(rho, cfg.Tasks, 1)
		if math.Abs(r.ZeroWait-want) > 0.02 {
			t.Errorf("load %v: simulated zero-wait %.4f, closed form %.4f", rho, r.ZeroWait, want)
		}
	}
}

func TestDistributions(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, d := range []Dist{{Kind: Exp, Mean: 50}, {Kind: Const, Mean: 50}, {Kind: Pareto, Mean: 50, Alpha: 3}, {Kind: Trace, Trace: []float64{0, 50, 100}}} {
		if err := d.Validate(); err != nil {
			t.Fatal(err)
		}
		sum := 0.0
		const n = 200000
		for i := 0; i < n; i++ {
			v := d.sample(rng, d.MeanMS())
			if v < 0 || math.IsNaN(v) {
				t.Fatalf("%v: sample %v", d.Kind, v)
			}
			sum += v
		}
		if m := sum / n; math.Abs(m-50) > 1.5 {
			t.Errorf("%v: sample mean %.2f, want 50", d.Kind, m)
		}
	}
}

func TestReadTrace(t *testing.T) {
	got, err := ReadTrace(strings.NewReader("# ms\n100\n\n 2.5 \n0\n"), "t")
	if err != nil || !reflect.DeepEqual(got, []float64{100, 2.5, 0}) {
		t.Fatalf("got %v, %v", got, err)
	}
	for in, want := range map[string]string{
		"":             "no durations",
		"10\nabc\n":    "t:2: \"abc\" is not a duration",
		"10\n-1\n":     "t:2: duration -1 ms must be finite and >= 0",
		"10\nInf\n":    "must be finite",
		"0\n0\n":       "every duration is zero",
		"10 20\n":      "t:1:",
		"# only c\n\n": "no durations",
	} {
		_, err := ReadTrace(strings.NewReader(in), "t")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadTrace(%q) = %v, want error containing %q", in, err, want)
		}
	}
}

func TestTraceRun(t *testing.T) {
	cfg := small(Late)
	cfg.Dist = Dist{Kind: Trace, Trace: []float64{10, 20, 300}}
	r := mustRun(t, cfg)
	if r.OptimalMS <= 10 || r.OptimalMS > 300 || r.MeanMS < r.OptimalMS {
		t.Errorf("trace run: mean %v optimal %v", r.MeanMS, r.OptimalMS)
	}
}

func TestValidate(t *testing.T) {
	bad := map[string]func(*Config){
		"nodes must be":      func(c *Config) { c.Nodes = 0 },
		"slots per node":     func(c *Config) { c.Slots = 0 },
		"tasks per job":      func(c *Config) { c.Tasks = 0 },
		"load must be":       func(c *Config) { c.Load = 1 },
		"jobs to measure":    func(c *Config) { c.Jobs = 0 },
		"warm-up":            func(c *Config) { c.Warmup = -1 },
		"rtt must be":        func(c *Config) { c.RTT = math.NaN() },
		"probe ratio":        func(c *Config) { c.ProbeRatio = 0.5 },
		"mean task duration": func(c *Config) { c.Dist.Mean = 0 },
		"pareto shape":       func(c *Config) { c.Dist = Dist{Kind: Pareto, Mean: 10, Alpha: 1} },
		"no durations":       func(c *Config) { c.Dist = Dist{Kind: Trace} },
		"long-job fraction":  func(c *Config) { c.Long.Fraction = 1 },
		"long-job mean":      func(c *Config) { c.Long.Fraction = 0.5 },
		"must not exceed":    func(c *Config) { c.Policy = Batch; c.Tasks = 100; c.Nodes = 10 },
	}
	for want, mut := range bad {
		cfg := small(Late)
		mut(&cfg)
		_, err := Run(cfg)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v", want, err)
		}
	}
	if _, err := ParsePolicies("late,bogus"); err == nil || !strings.Contains(err.Error(), "valid: random") {
		t.Errorf("ParsePolicies: %v", err)
	}
	if ps, err := ParsePolicies("all"); err != nil || len(ps) != 5 {
		t.Errorf("all: %v %v", ps, err)
	}
	if _, err := ParsePolicies("late,late"); err == nil {
		t.Error("duplicate policy accepted")
	}
}

func TestHeterogeneity(t *testing.T) {
	cfg := small(Late)
	cfg.Dist = Dist{Kind: Const, Mean: 100}
	cfg.Long = LongJobs{Fraction: 0.3, Mean: 1000}
	r := mustRun(t, cfg)
	if r.Short == nil || r.Short.Jobs == 0 || r.Short.Jobs >= r.Jobs {
		t.Fatalf("short stats %+v of %d jobs", r.Short, r.Jobs)
	}
	if r.Short.OptimalMS != 100 {
		t.Errorf("short optimal %v, want 100", r.Short.OptimalMS)
	}
	if r.Short.MeanMS >= r.MeanMS {
		t.Errorf("short jobs mean %v not below all jobs %v", r.Short.MeanMS, r.MeanMS)
	}
}

func TestHeap(t *testing.T) {
	var h eventHeap
	rng := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < 5000; i++ {
		k := uint8(rng.IntN(8))
		h.push(event{t: float64(rng.IntN(100)), key: uint64(k), node: int32(k)})
	}
	prev := event{t: -1}
	for h.len() > 0 {
		e := h.pop()
		if e.t < prev.t || (e.t == prev.t && e.key < prev.key) || e.kind() != uint8(e.node) {
			t.Fatalf("heap order: %v after %v", e, prev)
		}
		prev = e
	}
}

func BenchmarkLatePoint(b *testing.B) {
	cfg := Config{Policy: Late, Nodes: 1000, Slots: 1, Tasks: 100, Load: 0.9,
		Jobs: 300, Warmup: 30, Dist: Dist{Kind: Exp, Mean: 100}, RTT: 1, ProbeRatio: 2, Seed: 1}
	var tasks int64
	for b.Loop() {
		r := mustRun(b, cfg)
		tasks += r.TasksSimulated
	}
	b.ReportMetric(float64(tasks)/b.Elapsed().Seconds(), "tasks/s")
}

// BenchmarkFigure3Late times the Figure-3 point of docs/experiments/simulation.md for
// late binding (10,000 nodes x 1 slot, 500-task jobs, exp(100 ms), RTT 1 ms,
// d = 2, 90% load, 2,000 measured jobs after a 200-job warm-up): the point
// `sparrow sim --policy late --load 0.9` runs. One iteration takes seconds;
// run it with -benchtime=1x.
func BenchmarkFigure3Late(b *testing.B) {
	cfg := Config{Policy: Late, Nodes: 10000, Slots: 1, Tasks: 500, Load: 0.9,
		Jobs: 2000, Warmup: 200, Dist: Dist{Kind: Exp, Mean: 100}, RTT: 1, ProbeRatio: 2, Seed: 1}
	var tasks int64
	for b.Loop() {
		r := mustRun(b, cfg)
		tasks += r.TasksSimulated
	}
	b.ReportMetric(float64(tasks)/b.Elapsed().Seconds(), "tasks/s")
}

// TestAgendaWheelMatchesHeap drives agendas with and without a timing
// wheel through the same random pushes, fixed-delay pushes and pops, and
// checks that they pop the same events in the same order, and in (t, seq)
// order, as one heap would. The cases cover a bucket width that leaves
// most events beyond the wheel's span, one that overfills buckets, many
// ties in time, and jumps of the clock past the span.
func TestAgendaWheelMatchesHeap(t *testing.T) {
	tests := []struct {
		name   string
		width  float64 // bucket width, ms
		maxDt  float64 // a timed event is due up to this far ahead
		ticks  bool    // times on a coarse grid, so that many tie
		jumpAt int     // every jumpAt steps the next event is far ahead (0: never)
		// wantHeap: some timed events must go on the heap, for want of
		// span or room on the wheel.
		wantHeap bool
	}{
		{"typical", 0.02, 300, false, 0, false},
		{"span too short", 0.0001, 300, false, 0, true},
		{"overfull buckets", 50, 300, false, 0, true},
		{"ties", 0.5, 20, true, 0, true},
		{"clock jumps", 0.02, 30, false, 97, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(tc.width*1e4)))
			var plain, wheeled agenda
			wheeled.useWheel(tc.width)
			if wheeled.wh == nil {
				t.Fatal("test setup: no wheel")
			}
			const half = 0.5
			now := 0.0
			var prev event
			popped, stagedPops, sawWheel, sawHeap := 0, 0, false, false
			for step := range 20000 {
				sawWheel = sawWheel || wheeled.wh.n > 0
				sawHeap = sawHeap || wheeled.h.len() > 0
				if plain.len() != wheeled.len() {
					t.Fatalf("step %d: len %d, with wheel %d", step, plain.len(), wheeled.len())
				}
				switch op := rng.IntN(10); {
				case op < 4 || plain.len() == 0:
					dt := rng.Float64() * tc.maxDt
					if tc.ticks {
						dt = float64(rng.IntN(int(tc.maxDt)))
					}
					if tc.jumpAt > 0 && step%tc.jumpAt == 0 {
						dt = 1e6 * (1 + rng.Float64())
					}
					e := event{t: now + dt, key: uint64(rng.IntN(8)), node: int32(step)}
					plain.push(e)
					wheeled.push(e)
				case op < 6:
					e := event{t: now + half, key: uint64(rng.IntN(8)), node: int32(step)}
					plain.pushFixed(e)
					wheeled.pushFixed(e)
				default:
					// Staged events are not on the wheel yet, and peekTimed
					// does not see them: peeks are compared when none is.
					staged := wheeled.stageN > 0
					if staged {
						stagedPops++
					}
					if p, w := plain.peekTimed(), wheeled.peekTimed(); !staged && ((p == nil) != (w == nil) || (p != nil && *p != *w)) {
						t.Fatalf("step %d: peekTimed %v, with wheel %v", step, p, w)
					}
					k := 1 + rng.IntN(6)
					if wh := wheeled.wh; wh.n > 0 && !staged {
						first := wh.ev[wh.first()]
						if e := wheeled.peekWheel(0); e != nil && int64(e.t*wh.inv) != int64(first.t*wh.inv) {
							t.Fatalf("step %d: peekWheel(0) %v is not in the earliest event's bucket (%v)", step, *e, first)
						}
						if e := wheeled.peekWheel(k); e != nil && e.before(&first) {
							t.Fatalf("step %d: peekWheel %v is before the earliest event %v", step, *e, first)
						}
					}
					a, b := plain.pop(), wheeled.pop()
					if a != b {
						t.Fatalf("step %d: popped %v, with wheel %v", step, a, b)
					}
					if popped > 0 && a.before(&prev) {
						t.Fatalf("step %d: %v popped after %v", step, a, prev)
					}
					prev, now = a, a.t
					popped++
				}
			}
			for plain.len() > 0 {
				if a, b := plain.pop(), wheeled.pop(); a != b {
					t.Fatalf("draining: popped %v, with wheel %v", a, b)
				}
			}
			if wheeled.len() != 0 {
				t.Fatalf("wheel agenda holds %d events after the plain one drained", wheeled.len())
			}
			if stagedPops == 0 {
				t.Fatal("no pop came while events were staged")
			}
			if !sawWheel || sawHeap != tc.wantHeap {
				t.Fatalf("events on the wheel %v, on the heap %v; want true, %v", sawWheel, sawHeap, tc.wantHeap)
			}
		})
	}
}

// TestChainedEmptyRepliesChangeNoResult runs late binding with a node's
// empty replies chained (chainEmpties) and one by one, and checks that
// every statistic agrees but the event count and the counters of getTasks
// and queued reservations, which count a chain's getTasks when it is
// made. The configurations that must not chain (cancellation, several
// slots, no delay, durations whose sums meet the round trips' times:
// constant, trace) must give the same events too.
func TestChainedEmptyRepliesChangeNoResult(t *testing.T) {
	base := Config{Policy: Late, Nodes: 200, Slots: 1, Tasks: 20, Load: 0.9,
		Jobs: 1500, Warmup: 150, Dist: Dist{Kind: Exp, Mean: 100}, RTT: 1, ProbeRatio: 2, Seed: 3}
	cases := []struct {
		name  string
		edit  func(*Config)
		chain bool
	}{
		{"figure-3 shape", func(*Config) {}, true},
		{"load 0.5", func(c *Config) { c.Load = 0.5 }, true},
		{"load 0.97, d = 3", func(c *Config) { c.Load, c.ProbeRatio = 0.97, 3 }, true},
		{"d = 1.2", func(c *Config) { c.ProbeRatio = 1.2 }, true},
		{"500 tasks", func(c *Config) { c.Nodes, c.Tasks, c.Jobs, c.Warmup = 2000, 500, 300, 30 }, true},
		{"one task", func(c *Config) { c.Tasks = 1 }, true},
		{"constant", func(c *Config) { c.Dist = Dist{Kind: Const, Mean: 100} }, false},
		{"constant, two round trips", func(c *Config) { c.Dist = Dist{Kind: Const, Mean: 2} }, false},
		{"trace of whole ms", func(c *Config) { c.Dist = Dist{Kind: Trace, Trace: []float64{1, 2, 3, 5, 200}} }, false},
		{"pareto", func(c *Config) { c.Dist = Dist{Kind: Pareto, Mean: 100, Alpha: 1.5} }, true},
		{"long jobs", func(c *Config) { c.Long = LongJobs{Fraction: 0.1, Mean: 1000} }, true},
		{"rtt 5", func(c *Config) { c.RTT = 5 }, true},
		{"rtt 1e-13", func(c *Config) { c.RTT = 1e-13 }, true},
		{"rtt 0", func(c *Config) { c.RTT = 0 }, false},
		{"two slots", func(c *Config) { c.Slots = 2 }, false},
		{"cancel", func(c *Config) { c.Cancel = true }, false},
	}
	comparable := func(r Result) Result {
		r.Events = 0
		l := *r.Late
		l.Fetches, l.EmptyFetches, l.EndQueued, l.EndFetching = 0, 0, 0, 0
		r.Late = &l
		return r
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base
			tc.edit(&cfg)
			run := func(chain bool) Result {
				s, err := newSim(cfg)
				if err != nil {
					t.Fatal(err)
				}
				if s.lt.chainEmpty != tc.chain {
					t.Fatalf("chainEmpty is %v, want %v", s.lt.chainEmpty, tc.chain)
				}
				s.lt.chainEmpty = chain
				if err := s.run(); err != nil {
					t.Fatal(err)
				}
				return s.result()
			}
			chained, unchained := run(tc.chain), run(false)
			if got, want := comparable(chained), comparable(unchained); !reflect.DeepEqual(got, want) {
				t.Fatalf("chained: %+v %+v\nunchained: %+v %+v", got, *got.Late, want, *want.Late)
			}
			if tc.chain && chained.Events >= unchained.Events {
				t.Fatalf("chaining left %d events of %d", chained.Events, unchained.Events)
			}
			if !tc.chain && chained.Events != unchained.Events {
				t.Fatalf("%d events, %d unchained", chained.Events, unchained.Events)
			}
		})
	}
}
