package perfmodel

import (
	"fmt"
	"math"
)

// BuildOptions tune phase detection and grouping; zero values take the
// defaults in brackets.
type BuildOptions struct {
	// IOOn is the fraction of a channel's peak rate above which the
	// channel counts as transferring in an interval [0.05]. Dryad's
	// batched I/O makes each channel's rate switch between ~0 and near its
	// peak (§3.2), so the exact value matters little.
	IOOn float64
	// CPUBusy is the CPU rate, in processors, above which an interval
	// without I/O counts as computing rather than blocked [0.05].
	CPUBusy float64
	// Similar is the relative difference in bytes, CPU utilisation and
	// mean concurrency within which two phases join one group [0.25].
	Similar float64
}

func (o BuildOptions) withDefaults() BuildOptions {
	if o.IOOn <= 0 {
		o.IOOn = 0.05
	}
	if o.CPUBusy <= 0 {
		o.CPUBusy = 0.05
	}
	if o.Similar <= 0 {
		o.Similar = 0.25
	}
	return o
}

// Phase is one detected phase of a trace: a stretch of samples in which
// the same channels transfer and the CPU is busy or not.
type Phase struct {
	// Start and End are the phase's times in the trace.
	Start, End float64
	// Kind is Init for CPU work before the first byte, IO for phases that
	// move bytes, Compute otherwise.
	Kind Kind
	// CPU is the phase's concurrency histogram (see PhaseGroup.CPU).
	CPU []float64
	// Read and Write are bytes per channel in the phase.
	Read, Write []float64
}

// maxConcurrency caps the concurrency histogram's length.
const maxConcurrency = 64

// Phases splits a trace at changes of slope: an interval's signature is
// which channels transfer (rate above IOOn of the channel's peak) and, when
// none does, whether the CPU is busy; a new phase starts where the
// signature changes.
func Phases(tr Trace, opt BuildOptions) ([]Phase, error) {
	if err := tr.Validate(); err != nil {
		return nil, err
	}
	opt = opt.withDefaults()
	n := len(tr.T)
	chans := append(append([][]float64{}, tr.Read...), tr.Write...)
	if len(chans) > 62 {
		return nil, fmt.Errorf("trace: %d channels, at most 62 supported", len(chans))
	}
	peak := make([]float64, len(chans))
	for c, v := range chans {
		for i := 1; i < n; i++ {
			peak[c] = math.Max(peak[c], (v[i]-v[i-1])/(tr.T[i]-tr.T[i-1]))
		}
	}
	sig := func(i int) uint64 {
		dt := tr.T[i] - tr.T[i-1]
		var s uint64
		for c, v := range chans {
			if peak[c] > 0 && (v[i]-v[i-1])/dt > opt.IOOn*peak[c] {
				s |= 1 << c
			}
		}
		if s == 0 && (tr.CPU[i]-tr.CPU[i-1])/dt > opt.CPUBusy {
			s = 1 << 63
		}
		return s
	}
	var out []Phase
	sawIO := false
	for i := 1; i < n; {
		s := sig(i)
		j := i
		for j+1 < n && sig(j+1) == s {
			j++
		}
		p := Phase{Start: tr.T[i-1], End: tr.T[j], Read: make([]float64, len(tr.Read)), Write: make([]float64, len(tr.Write))}
		for k := i; k <= j; k++ {
			d := tr.CPU[k] - tr.CPU[k-1]
			if d > 0 {
				c := min(max(int(math.Round(tr.Threads[k])), 1), maxConcurrency)
				for len(p.CPU) < c {
					p.CPU = append(p.CPU, 0)
				}
				p.CPU[c-1] += d
			}
		}
		for c, v := range tr.Read {
			p.Read[c] = v[j] - v[i-1]
		}
		for c, v := range tr.Write {
			p.Write[c] = v[j] - v[i-1]
		}
		switch {
		case sum(p.Read)+sum(p.Write) > 0:
			p.Kind = IO
			sawIO = true
		case !sawIO:
			p.Kind = Init
		default:
			p.Kind = Compute
		}
		// Consecutive pre-I/O stretches (busy, then blocked) are one Init.
		if p.Kind == Init && len(out) > 0 && out[len(out)-1].Kind == Init {
			last := &out[len(out)-1]
			last.End = p.End
			last.CPU = addVec(last.CPU, p.CPU)
		} else {
			out = append(out, p)
		}
		i = j + 1
	}
	return out, nil
}

// Build makes a task type's model from a reference trace taken on ref:
// it detects phases and groups similar ones (same kind, same channels,
// bytes, CPU utilisation and mean concurrency within opt.Similar), each
// group holding its phases' average (§3.2). Groups are in order of first
// appearance.
func Build(typ string, ref Machine, tr Trace, opt BuildOptions) (Model, error) {
	if err := ref.Validate(); err != nil {
		return Model{}, fmt.Errorf("build %q: reference %w", typ, err)
	}
	phases, err := Phases(tr, opt)
	if err != nil {
		return Model{}, fmt.Errorf("build %q: %w", typ, err)
	}
	opt = opt.withDefaults()
	var groups [][]Phase
	for _, p := range phases {
		placed := false
		for gi, g := range groups {
			if similar(g[0], p, opt.Similar) {
				groups[gi] = append(groups[gi], p)
				placed = true
				break
			}
		}
		if !placed {
			groups = append(groups, []Phase{p})
		}
	}
	m := Model{Type: typ, Ref: ref}
	for _, g := range groups {
		m.Groups = append(m.Groups, average(ref, g))
	}
	if err := m.Validate(); err != nil {
		return Model{}, fmt.Errorf("build: %w", err)
	}
	return m, nil
}

// similar reports whether two phases may share a group.
func similar(a, b Phase, tol float64) bool {
	if a.Kind != b.Kind || a.Kind == Init {
		return false
	}
	close := func(x, y, floor float64) bool { return math.Abs(x-y) <= tol*math.Max(x, y)+floor }
	for c := range a.Read {
		if (a.Read[c] > 0) != (b.Read[c] > 0) || !close(a.Read[c], b.Read[c], 0) {
			return false
		}
	}
	for c := range a.Write {
		if (a.Write[c] > 0) != (b.Write[c] > 0) || !close(a.Write[c], b.Write[c], 0) {
			return false
		}
	}
	util := func(p Phase) float64 { return sum(p.CPU) / (p.End - p.Start) }
	return close(util(a), util(b), 0.05) && close(meanConcurrency(a.CPU), meanConcurrency(b.CPU), 0.05)
}

// meanConcurrency is the CPU-weighted mean number of runnable threads.
func meanConcurrency(h []float64) float64 {
	w, s := 0.0, 0.0
	for i, v := range h {
		w += v * float64(i+1)
		s += v
	}
	if s == 0 {
		return 0
	}
	return w / s
}

// average merges a group's phases into its average phase.
func average(ref Machine, ps []Phase) PhaseGroup {
	n := float64(len(ps))
	g := PhaseGroup{Kind: ps[0].Kind, Phases: len(ps)}
	for _, p := range ps {
		g.Run += (p.End - p.Start) / n
		g.CPU = addVec(g.CPU, scale(p.CPU, 1/n))
		g.Read = addVec(g.Read, scale(p.Read, 1/n))
		g.Write = addVec(g.Write, scale(p.Write, 1/n))
	}
	cpu := concurrentTime(g.CPU, ref.Cores)
	switch g.Kind {
	case Init:
		g.Label = "init"
		g.Read, g.Write = nil, nil
	case Compute:
		g.Label = "compute"
		g.Read, g.Write = nil, nil
		g.Blocked = math.Max(0, g.Run-cpu)
	case IO:
		g.Label = "io"
		switch {
		case sum(g.Write) == 0:
			g.Label = "read"
		case sum(g.Read) == 0:
			g.Label = "write"
		}
		// The disk's read and write sides are separate resources (Steps).
		bottleneck := math.Max(cpu, math.Max(sum(g.Read)/ref.DiskRead, sum(g.Write)/ref.DiskWrite))
		if bottleneck > 0 && g.Run > bottleneck {
			g.Stretch = g.Run / bottleneck
		}
	}
	return g
}

func addVec(a, b []float64) []float64 {
	for len(a) < len(b) {
		a = append(a, 0)
	}
	for i, v := range b {
		a[i] += v
	}
	return a
}

func scale(v []float64, f float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = x * f
	}
	return out
}
