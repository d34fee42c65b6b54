package sim

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
)

// DistKind is a task duration distribution family.
type DistKind int

// The duration distributions.
const (
	// Exp is exponential with the given mean.
	Exp DistKind = iota
	// Const is every task lasting exactly the mean.
	Const
	// Pareto is Pareto with shape Alpha > 1, scaled so that its mean is Mean:
	// x_m = Mean*(Alpha-1)/Alpha.
	Pareto
	// Trace samples uniformly, with replacement, from a list of durations.
	Trace
	numDists
)

var distNames = [...]string{"exp", "const", "pareto", "trace"}

func (k DistKind) String() string {
	if k < 0 || k >= numDists {
		return fmt.Sprintf("DistKind(%d)", int(k))
	}
	return distNames[k]
}

// ParseDist parses a distribution name.
func ParseDist(s string) (DistKind, error) {
	for i, n := range distNames {
		if s == n {
			return DistKind(i), nil
		}
	}
	return 0, fmt.Errorf("unknown duration distribution %q (valid: %s)", s, strings.Join(distNames[:], ", "))
}

// Dist is a task duration distribution. Durations are in ms.
type Dist struct {
	Kind DistKind
	// Mean duration in ms (not used by Trace, whose mean is the trace's).
	Mean float64
	// Alpha is the Pareto shape; it must exceed 1 for the mean to exist.
	Alpha float64
	// Trace holds the durations to sample from, in ms.
	Trace []float64

	traceMean float64
}

// Validate returns an error naming what is wrong with d.
func (d *Dist) Validate() error {
	switch d.Kind {
	case Exp, Const, Pareto:
		if math.IsNaN(d.Mean) || math.IsInf(d.Mean, 0) || d.Mean <= 0 {
			return fmt.Errorf("mean task duration must be a finite number > 0 ms, got %v", d.Mean)
		}
		if d.Kind == Pareto && (math.IsNaN(d.Alpha) || math.IsInf(d.Alpha, 0) || d.Alpha <= 1) {
			return fmt.Errorf("pareto shape alpha must be a finite number > 1 (the mean is infinite otherwise), got %v", d.Alpha)
		}
	case Trace:
		if len(d.Trace) == 0 {
			return fmt.Errorf("trace distribution has no durations")
		}
		sum := 0.0
		for i, v := range d.Trace {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return fmt.Errorf("trace duration %d is %v; durations must be finite and >= 0 ms", i+1, v)
			}
			sum += v
		}
		if sum <= 0 {
			return fmt.Errorf("trace durations are all zero; the mean must be > 0 to define a load")
		}
		d.traceMean = sum / float64(len(d.Trace))
	default:
		return fmt.Errorf("unknown duration distribution %d", int(d.Kind))
	}
	return nil
}

// MeanMS returns the distribution's mean in ms. Call Validate first for a
// trace.
func (d *Dist) MeanMS() float64 {
	if d.Kind == Trace {
		if d.traceMean == 0 && len(d.Trace) > 0 {
			s := 0.0
			for _, v := range d.Trace {
				s += v
			}
			d.traceMean = s / float64(len(d.Trace))
		}
		return d.traceMean
	}
	return d.Mean
}

// continuous reports whether no duration has a positive probability, so
// that two times made of different durations and delays meet only by a
// coincidence of float sums, not by design (constant durations, or a
// trace's durations, meet the round trips' lattice of times).
func (d *Dist) continuous() bool { return d.Kind == Exp || d.Kind == Pareto }

// sample draws one duration with the given mean (ignored for Trace).
func (d *Dist) sample(rng *rand.Rand, mean float64) float64 {
	switch d.Kind {
	case Exp:
		return rng.ExpFloat64() * mean
	case Const:
		return mean
	case Pareto:
		xm := mean * (d.Alpha - 1) / d.Alpha
		u := 1 - rng.Float64() // (0, 1]
		return xm * math.Pow(u, -1/d.Alpha)
	default:
		return d.Trace[rng.IntN(len(d.Trace))]
	}
}

// maxTraceLines bounds the trace file, so that a wrong file (say, a binary)
// fails fast instead of exhausting memory.
const maxTraceLines = 50_000_000

// ReadTrace reads task durations, one number of milliseconds per line.
// Blank lines and lines starting with '#' are skipped. name is used in
// errors. Every other line must hold one finite number >= 0, and at least one
// must be positive.
func ReadTrace(r io.Reader, name string) ([]float64, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	var out []float64
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %q is not a duration in ms (want one number per line)", name, line, truncate(s, 40))
		}
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return nil, fmt.Errorf("%s:%d: duration %v ms must be finite and >= 0", name, line, v)
		}
		if len(out) >= maxTraceLines {
			return nil, fmt.Errorf("%s: more than %d durations", name, maxTraceLines)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no durations (want one number of ms per line)", name)
	}
	pos := false
	for _, v := range out {
		if v > 0 {
			pos = true
			break
		}
	}
	if !pos {
		return nil, fmt.Errorf("%s: every duration is zero; the mean must be > 0 to define a load", name)
	}
	return out, nil
}

// ReadTraceFile is ReadTrace on a file.
func ReadTraceFile(path string) ([]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	defer f.Close()
	return ReadTrace(f, path)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
