package policy

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Step is a constant demand over [Start, End): Load is the fraction of
// some capacity (usually the fleet's slots) the stream's offered work would
// keep busy.
type Step struct {
	Start, End time.Duration
	Load       float64
}

// Schedule is a piecewise-constant demand: contiguous steps from 0.
type Schedule []Step

// StepSchedule returns consecutive steps of equal length, one per load:
// StepSchedule(10*time.Second, 0, 0.25, 0.5, 0.25, 0) is user 1's demand
// in the paper's Figure 11.
func StepSchedule(interval time.Duration, loads ...float64) Schedule {
	s := make(Schedule, len(loads))
	for i, l := range loads {
		s[i] = Step{Start: time.Duration(i) * interval, End: time.Duration(i+1) * interval, Load: l}
	}
	return s
}

// Constant is one step of load over [0, d).
func Constant(d time.Duration, load float64) Schedule {
	return Schedule{{Start: 0, End: d, Load: load}}
}

// Validate reports the first problem: steps must start at 0, be contiguous
// and non-empty, and have finite, non-negative loads.
func (s Schedule) Validate() error {
	if len(s) == 0 {
		return fmt.Errorf("schedule has no steps")
	}
	var at time.Duration
	for i, st := range s {
		switch {
		case st.Start != at:
			return fmt.Errorf("step %d starts at %v, want %v (steps must be contiguous from 0)", i, st.Start, at)
		case st.End <= st.Start:
			return fmt.Errorf("step %d is empty (%v to %v)", i, st.Start, st.End)
		case math.IsNaN(st.Load) || math.IsInf(st.Load, 0) || st.Load < 0:
			return fmt.Errorf("step %d load %v must be finite and >= 0", i, st.Load)
		}
		at = st.End
	}
	return nil
}

// End is when the last step ends.
func (s Schedule) End() time.Duration {
	if len(s) == 0 {
		return 0
	}
	return s[len(s)-1].End
}

// LoadAt is the load in force at t (0 outside the schedule).
func (s Schedule) LoadAt(t time.Duration) float64 {
	for _, st := range s {
		if t >= st.Start && t < st.End {
			return st.Load
		}
	}
	return 0
}

// Breakpoints returns the step boundaries strictly inside (a, b).
func (s Schedule) Breakpoints(a, b time.Duration) []time.Duration {
	var out []time.Duration
	for _, st := range s {
		for _, t := range []time.Duration{st.Start, st.End} {
			if t > a && t < b {
				out = append(out, t)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// JobRate is the job arrival rate that keeps load of slots busy with jobs
// of tasks tasks of duration d: load·slots/(tasks·d).
func JobRate(load float64, slots, tasks int, d time.Duration) float64 {
	if slots <= 0 || tasks <= 0 || d <= 0 {
		return 0
	}
	return load * float64(slots) / (float64(tasks) * d.Seconds())
}

// Arrivals draws Poisson job arrival offsets for the schedule, at
// fullRate·load jobs per second within each step (the exponential gap is
// memoryless, so restarting the process at each boundary is exact). A
// step of load 0 has no arrivals.
func Arrivals(rng *rand.Rand, s Schedule, fullRate float64) []time.Duration {
	var out []time.Duration
	for _, st := range s {
		rate := fullRate * st.Load
		if !(rate > 0) {
			continue
		}
		t := float64(st.Start)
		for {
			t += rng.ExpFloat64() / rate * float64(time.Second)
			if t >= float64(st.End) {
				break
			}
			out = append(out, time.Duration(t))
		}
	}
	return out
}

// Arrival is one job arrival of a stream.
type Arrival struct {
	At     time.Duration
	Stream int
}

// Merge interleaves per-stream arrival offsets into one timeline, in time
// order (ties by stream index).
func Merge(streams ...[]time.Duration) []Arrival {
	var out []Arrival
	for i, s := range streams {
		for _, t := range s {
			out = append(out, Arrival{At: t, Stream: i})
		}
	}
	slices.SortStableFunc(out, func(a, b Arrival) int {
		if a.At != b.At {
			if a.At < b.At {
				return -1
			}
			return 1
		}
		return a.Stream - b.Stream
	})
	return out
}

// ParseWeights parses "w0:w1" (e.g. "1:3": user0 weight 1, user1 weight
// 3). Weights must be finite and > 0.
func ParseWeights(s string) ([2]float64, error) {
	var out [2]float64
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return out, fmt.Errorf("weights %q: want w0:w1, e.g. 1:3", s)
	}
	for i, f := range []string{a, b} {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
			return out, fmt.Errorf("weights %q: %q is not a finite number > 0", s, f)
		}
		out[i] = v
	}
	return out, nil
}

// CheckLoads reports the first load that is negative or not finite.
func CheckLoads(name string, loads []float64) error {
	if len(loads) == 0 {
		return fmt.Errorf("%s: no loads", name)
	}
	for _, l := range loads {
		if math.IsNaN(l) || math.IsInf(l, 0) || l < 0 {
			return fmt.Errorf("%s: load %v must be finite and >= 0", name, l)
		}
	}
	return nil
}
