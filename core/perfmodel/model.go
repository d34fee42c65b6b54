package perfmodel

import (
	"fmt"
	"math"
)

// Kind names what a phase group does; it labels groups and decides how a
// prediction scales them (§3.3).
type Kind int

const (
	// Init is CPU work before any input is read. Its reference time is
	// used unmodified on every machine and input size (§3.3, §3.4).
	Init Kind = iota
	// IO is a phase that reads or writes channel bytes, possibly while
	// computing: its bytes and CPU work scale with the data size.
	IO
	// Compute is a phase with no I/O: its CPU work is scaled by clock and
	// concurrency but not by data size, and its blocked time is added
	// unscaled (§3.3; Figure 8's half-size row fits this reading).
	Compute
)

// String returns the kind's name as it appears in traces and reports.
func (k Kind) String() string {
	switch k {
	case Init:
		return "init"
	case IO:
		return "io"
	case Compute:
		return "compute"
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// PhaseGroup is a set of similar phases of a task, stored as the average
// phase and the number of phases it stands for (§3.2): the group's time is
// Phases times the average phase's time.
type PhaseGroup struct {
	// Label is a human name such as "read" or "write"; not used to predict.
	Label string `json:"label"`
	// Kind decides how the group scales.
	Kind Kind `json:"kind"`
	// Phases is how many phases of the reference trace the group merges.
	Phases int `json:"phases"`
	// Run is the average phase's reference duration in seconds.
	Run float64 `json:"run"`
	// CPU is the concurrency histogram: CPU[k-1] is the reference CPU
	// seconds run while k threads were runnable (§3.2). It says how much
	// the work could speed up on more cores.
	CPU []float64 `json:"cpu"`
	// Read and Write are bytes per read and write channel.
	Read  []float64 `json:"read,omitempty"`
	Write []float64 `json:"write,omitempty"`
	// Blocked is reference time neither computing nor moving bytes; it is
	// added unscaled to Compute phases (§3.3).
	Blocked float64 `json:"blocked,omitempty"`
	// Stretch is the reference duration over the reference bottleneck time
	// (≥ 1): the bottleneck is not always fully used (§3.1), and a trace
	// shows by how much. Zero means 1.
	Stretch float64 `json:"stretch,omitempty"`
}

// CPUSeconds is the group's average phase's total reference CPU time.
func (g PhaseGroup) CPUSeconds() float64 {
	s := 0.0
	for _, v := range g.CPU {
		s += v
	}
	return s
}

// Model is a task type's performance model, built from a trace on the
// reference machine Ref.
type Model struct {
	// Type names the task type (the report's vertex operator).
	Type string `json:"type"`
	// Ref is the machine the reference trace ran on.
	Ref Machine `json:"ref"`
	// Groups are the phase groups, in the order the task runs them.
	Groups []PhaseGroup `json:"groups"`
}

// RefRead returns the reference bytes of each read channel over all groups.
func (m Model) RefRead() []float64 { return m.total(func(g PhaseGroup) []float64 { return g.Read }) }

// RefWrite returns the reference bytes of each write channel.
func (m Model) RefWrite() []float64 { return m.total(func(g PhaseGroup) []float64 { return g.Write }) }

func (m Model) total(f func(PhaseGroup) []float64) []float64 {
	var out []float64
	for _, g := range m.Groups {
		for c, b := range f(g) {
			for len(out) <= c {
				out = append(out, 0)
			}
			out[c] += float64(g.Phases) * b
		}
	}
	return out
}

// Validate reports the first thing that makes the model unusable.
func (m Model) Validate() error {
	if err := m.Ref.Validate(); err != nil {
		return fmt.Errorf("model %q: reference %w", m.Type, err)
	}
	if len(m.Groups) == 0 {
		return fmt.Errorf("model %q: no phase groups", m.Type)
	}
	bad := func(v float64) bool { return v < 0 || math.IsNaN(v) || math.IsInf(v, 0) }
	for i, g := range m.Groups {
		where := fmt.Sprintf("model %q group %d (%s)", m.Type, i, g.Label)
		if g.Kind < Init || g.Kind > Compute {
			return fmt.Errorf("%s: unknown kind %d", where, int(g.Kind))
		}
		if g.Phases < 1 {
			return fmt.Errorf("%s: %d phases, want at least 1", where, g.Phases)
		}
		if bad(g.Run) || bad(g.Blocked) || bad(g.Stretch) {
			return fmt.Errorf("%s: run %v, blocked %v, stretch %v: want finite non-negative", where, g.Run, g.Blocked, g.Stretch)
		}
		if g.Stretch != 0 && g.Stretch < 1 {
			return fmt.Errorf("%s: stretch %v below 1", where, g.Stretch)
		}
		for _, vs := range [][]float64{g.CPU, g.Read, g.Write} {
			for _, v := range vs {
				if bad(v) {
					return fmt.Errorf("%s: demand %v, want finite non-negative", where, v)
				}
			}
		}
		io := sum(g.Read)+sum(g.Write) > 0
		if g.Kind == IO && !io {
			return fmt.Errorf("%s: an io group with no bytes", where)
		}
		if g.Kind != IO && io {
			return fmt.Errorf("%s: a %s group with channel bytes", where, g.Kind)
		}
	}
	return nil
}

func sum(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}
