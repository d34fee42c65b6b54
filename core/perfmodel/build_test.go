package perfmodel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// segment is a stretch of steady behaviour in a synthetic trace.
type segment struct {
	dur     float64
	cpu     float64   // CPU seconds over the segment
	threads float64   // runnable threads
	read    []float64 // bytes per read channel over the segment
	write   []float64
}

// synth samples segments every dt seconds into a cumulative trace; jitter
// perturbs each interval's rates by up to ±jitter (relative), keeping each
// segment's totals.
func synth(segs []segment, nRead, nWrite int, dt, jitter float64, rng *rand.Rand) Trace {
	tr := Trace{T: []float64{0}, CPU: []float64{0}, Threads: []float64{1},
		Read: make([][]float64, nRead), Write: make([][]float64, nWrite)}
	for c := range tr.Read {
		tr.Read[c] = []float64{0}
	}
	for c := range tr.Write {
		tr.Write[c] = []float64{0}
	}
	last := func(v []float64) float64 { return v[len(v)-1] }
	for _, s := range segs {
		steps := int(math.Round(s.dur / dt))
		w := make([]float64, steps)
		tot := 0.0
		for i := range w {
			w[i] = 1
			if jitter > 0 {
				w[i] += jitter * (2*rng.Float64() - 1)
			}
			tot += w[i]
		}
		for i := range steps {
			f := w[i] / tot
			tr.T = append(tr.T, last(tr.T)+dt)
			tr.CPU = append(tr.CPU, last(tr.CPU)+f*s.cpu)
			tr.Threads = append(tr.Threads, s.threads)
			for c := range tr.Read {
				add := 0.0
				if c < len(s.read) {
					add = f * s.read[c]
				}
				tr.Read[c] = append(tr.Read[c], last(tr.Read[c])+add)
			}
			for c := range tr.Write {
				add := 0.0
				if c < len(s.write) {
					add = f * s.write[c]
				}
				tr.Write[c] = append(tr.Write[c], last(tr.Write[c])+add)
			}
		}
	}
	return tr
}

// selectTrace is a Figure 6-like trace of the Select vertex built from
// Figure 7's numbers: Init, then four 256 MB reads each followed by a short
// compute burst, then four 256 MB writes with a fifth compute burst and two
// blocked pauses between them. Reads run two threads (reader and worker):
// their CPU seconds exceed their run time.
func selectTrace(jitter float64) Trace {
	in := segment{dur: 1.4, cpu: 1.1, threads: 1}
	rd := segment{dur: 7.3 / 4, cpu: 7.7 / 4, threads: 2, read: []float64{256 * MB}}
	cp := segment{dur: 0.2, cpu: 0.22, threads: 2}
	wr := segment{dur: 8.8 / 4, cpu: 1.7 / 4, threads: 1, write: []float64{256 * MB}}
	bl := segment{dur: 0.1, threads: 1}
	segs := []segment{in, rd, cp, rd, cp, rd, cp, rd, cp, wr, bl, wr, cp, wr, bl, wr}
	return synth(segs, 1, 1, 0.025, jitter, rand.New(rand.NewPCG(7, 7)))
}

// TestBuildSelectFigure7 recovers Figure 7's phase groups from the
// synthetic Select trace: group sizes 1/4/5/4/2 and per-group run and CPU
// totals, with and without ±20% rate jitter inside phases.
func TestBuildSelectFigure7(t *testing.T) {
	want := []struct {
		kind     Kind
		label    string
		phases   int
		run, cpu float64
	}{
		{Init, "init", 1, 1.4, 1.1},
		{IO, "read", 4, 7.3, 7.7},
		{Compute, "compute", 5, 1.0, 1.1},
		{IO, "write", 4, 8.8, 1.7},
		{Compute, "compute", 2, 0.2, 0.0},
	}
	for _, jitter := range []float64{0, 0.2} {
		tr := selectTrace(jitter)
		parsed, err := ParseTrace(tr.CSV())
		if err != nil {
			t.Fatalf("round trip: %v", err)
		}
		m, err := Build("Select", selectRef, parsed, BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Groups) != len(want) {
			t.Fatalf("jitter %v: %d groups %+v, want %d", jitter, len(m.Groups), m.Groups, len(want))
		}
		for i, g := range m.Groups {
			w := want[i]
			n := float64(g.Phases)
			if g.Kind != w.kind || g.Label != w.label || g.Phases != w.phases ||
				!near(n*g.Run, w.run, 0.01) || !near(n*g.CPUSeconds(), w.cpu, 0.01) {
				t.Errorf("jitter %v group %d: %s/%s ×%d run %.3f cpu %.3f, want %+v",
					jitter, i, g.Kind, g.Label, g.Phases, n*g.Run, n*g.CPUSeconds(), w)
			}
		}
		self, err := m.Predict([]Machine{selectRef}, Binding{})
		if err != nil {
			t.Fatal(err)
		}
		if !near(self, 18.7, 0.1) {
			t.Errorf("jitter %v: self-prediction %.2f s, want 18.7", jitter, self)
		}
	}
}

// TestPhasesKnownBoundaries checks boundary times and bytes on a trace with
// two read channels and compute phases of two distinct utilisations.
func TestPhasesKnownBoundaries(t *testing.T) {
	segs := []segment{
		{dur: 0.5, cpu: 0.5, threads: 1},                           // init
		{dur: 2, cpu: 1, threads: 1, read: []float64{100 * MB, 0}}, // read ch 0
		{dur: 1, cpu: 2, threads: 2},                               // busy compute, 2 wide
		{dur: 2, cpu: 1, threads: 1, read: []float64{0, 50 * MB}},  // read ch 1
		{dur: 1, cpu: 0.5, threads: 1},                             // light compute
		{dur: 2, cpu: 1, threads: 1, read: []float64{100 * MB, 0}}, // read ch 0 again
		{dur: 1, cpu: 2, threads: 2},                               // busy compute
		{dur: 1, cpu: 0.2, threads: 1, write: []float64{30 * MB}},  // write
	}
	tr := synth(segs, 2, 1, 0.1, 0, nil)
	ps, err := Phases(tr, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != len(segs) {
		t.Fatalf("%d phases, want %d: %+v", len(ps), len(segs), ps)
	}
	at := 0.0
	for i, p := range ps {
		if !near(p.Start, at, 1e-9) || !near(p.End, at+segs[i].dur, 1e-9) {
			t.Errorf("phase %d spans [%.2f,%.2f], want [%.2f,%.2f]", i, p.Start, p.End, at, at+segs[i].dur)
		}
		at += segs[i].dur
	}
	m, err := Build("two-channel", selectRef, tr, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// init, read0 ×2, busy compute ×2, read1, light compute, write.
	wantPhases := []int{1, 2, 2, 1, 1, 1}
	if len(m.Groups) != len(wantPhases) {
		t.Fatalf("%d groups, want %d: %+v", len(m.Groups), len(wantPhases), m.Groups)
	}
	for i, g := range m.Groups {
		if g.Phases != wantPhases[i] {
			t.Errorf("group %d (%s) has %d phases, want %d", i, g.Label, g.Phases, wantPhases[i])
		}
	}
	if got := m.RefRead(); !near(got[0], 200*MB, 1) || !near(got[1], 50*MB, 1) {
		t.Errorf("reference reads %v", got)
	}
	if got := m.Groups[2].CPU; len(got) != 2 || !near(got[1], 2, 1e-9) {
		t.Errorf("busy compute histogram %v, want 2 CPU-s at concurrency 2", got)
	}
}
