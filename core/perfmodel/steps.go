package perfmodel

import (
	"fmt"
	"math"
)

// Resource is one kind of capacity on a machine.
type Resource int

const (
	// CPU is the machine's processors; amounts are seconds of the whole
	// machine (capacity 1), already scaled by clock and concurrency.
	CPU Resource = iota
	// DiskRead and DiskWrite are the local disk's rates, in bytes.
	DiskRead
	DiskWrite
	// NetIn and NetOut are the network interface's two directions.
	NetIn
	NetOut
	numResources
)

// String names the resource in reports.
func (r Resource) String() string {
	return [...]string{"cpu", "disk-read", "disk-write", "net-in", "net-out"}[r]
}

// Demand is an amount of one resource of one machine.
type Demand struct {
	Machine  int
	Resource Resource
	Amount   float64
}

// Step is a stretch of a task's run with steady demands: it ends when every
// demand is served, at the pace of its most contended resource; a Delay is
// fixed time that uses no resource (a task's Init, blocked time).
type Step struct {
	Delay   float64
	Demands []Demand
}

// Capacity returns the rate at which m serves resource r when uncontended.
func Capacity(m Machine, r Resource) float64 {
	switch r {
	case CPU:
		return 1
	case DiskRead:
		return m.DiskRead
	case DiskWrite:
		return m.DiskWrite
	}
	return m.Net
}

// Isolated returns the step's time when nothing else runs: its delay, or
// the time of its bottleneck resource.
func (s Step) Isolated(machines []Machine) float64 {
	if len(s.Demands) == 0 {
		return s.Delay
	}
	// Steps touch few resources: a small slice beats a map.
	type key struct {
		m int
		r Resource
	}
	var keys [16]key
	var loads [16]float64
	k := keys[:0]
	l := loads[:0]
	for _, d := range s.Demands {
		i := 0
		for i < len(k) && k[i] != (key{d.Machine, d.Resource}) {
			i++
		}
		if i == len(k) {
			k = append(k, key{d.Machine, d.Resource})
			l = append(l, 0)
		}
		l[i] += d.Amount
	}
	worst := 0.0
	for i, kk := range k {
		worst = math.Max(worst, l[i]/Capacity(machines[kk.m], kk.r))
	}
	return s.Delay + worst
}

// Part is a share of a read channel's bytes and where it is read from.
type Part struct {
	// Machine holds the bytes (the producer's local disk, or the input
	// table's machine).
	Machine int
	// Bytes is the part's size.
	Bytes float64
	// Pipe marks a pipelined channel (TCP or FIFO): the bytes come from
	// the producer's memory, not its disk.
	Pipe bool
}

// Binding places one run of a task: on which machine it runs, where its
// inputs come from and how large its output is.
type Binding struct {
	// Machine is the index of the machine the task runs on.
	Machine int
	// Read lists, for each of the model's read channels, the parts the
	// channel's bytes come from. A channel without parts reads the
	// reference bytes from the local disk.
	Read [][]Part
	// Write is the bytes written on each write channel; a missing channel
	// scales with the input (the report assumes the reference selectivity,
	// §3.5). Writes go to the local disk (§3.1).
	Write []float64
}

// Steps turns the model into resource demands for one run under b on
// machines[b.Machine].
func (m Model) Steps(machines []Machine, b Binding) ([]Step, error) {
	if b.Machine < 0 || b.Machine >= len(machines) {
		return nil, fmt.Errorf("model %q: machine %d out of range [0,%d)", m.Type, b.Machine, len(machines))
	}
	tgt := machines[b.Machine]
	refR, refW := m.RefRead(), m.RefWrite()
	if len(b.Read) > len(refR) {
		return nil, fmt.Errorf("model %q: %d read channels bound, model has %d", m.Type, len(b.Read), len(refR))
	}
	if len(b.Write) > len(refW) {
		return nil, fmt.Errorf("model %q: %d write channels bound, model has %d", m.Type, len(b.Write), len(refW))
	}
	// Per-channel size ratios σ against the reference.
	sigR := make([]float64, len(refR))
	inRef, inNow := 0.0, 0.0
	for c, ref := range refR {
		sigR[c] = 1
		if c < len(b.Read) && len(b.Read[c]) > 0 {
			tot := 0.0
			for _, p := range b.Read[c] {
				if p.Machine < 0 || p.Machine >= len(machines) {
					return nil, fmt.Errorf("model %q: read channel %d part on machine %d out of range", m.Type, c, p.Machine)
				}
				if p.Bytes < 0 || math.IsNaN(p.Bytes) || math.IsInf(p.Bytes, 0) {
					return nil, fmt.Errorf("model %q: read channel %d part of %v bytes", m.Type, c, p.Bytes)
				}
				tot += p.Bytes
			}
			if ref == 0 {
				if tot > 0 {
					return nil, fmt.Errorf("model %q: read channel %d carries %v bytes but the reference read none", m.Type, c, tot)
				}
				continue
			}
			sigR[c] = tot / ref
		}
		inRef += ref
		inNow += sigR[c] * ref
	}
	sigIn := 1.0
	if inRef > 0 {
		sigIn = inNow / inRef
	}
	sigW := make([]float64, len(refW))
	for c, ref := range refW {
		sigW[c] = sigIn
		if c < len(b.Write) {
			w := b.Write[c]
			if w < 0 || math.IsNaN(w) || math.IsInf(w, 0) {
				return nil, fmt.Errorf("model %q: write channel %d of %v bytes", m.Type, c, w)
			}
			if ref == 0 {
				if w > 0 {
					return nil, fmt.Errorf("model %q: write channel %d carries %v bytes but the reference wrote none", m.Type, c, w)
				}
				continue
			}
			sigW[c] = w / ref
		}
	}
	speed := m.Ref.GHz / tgt.GHz
	var steps []Step
	for _, g := range m.Groups {
		n := float64(g.Phases)
		if g.Kind == Init {
			steps = append(steps, Step{Delay: n * g.Run})
			continue
		}
		stretch := g.Stretch
		if stretch == 0 {
			stretch = 1
		}
		var ds []Demand
		scaledBytes, refBytes := 0.0, 0.0
		for c, bytes := range g.Read {
			if bytes == 0 {
				continue
			}
			now := n * bytes * sigR[c]
			scaledBytes += now
			refBytes += n * bytes
			var parts []Part
			if c < len(b.Read) {
				parts = b.Read[c]
			}
			ds = appendRead(ds, b.Machine, parts, now, stretch)
		}
		for c, bytes := range g.Write {
			if bytes == 0 {
				continue
			}
			now := n * bytes * sigW[c]
			scaledBytes += now
			refBytes += n * bytes
			ds = append(ds, Demand{b.Machine, DiskWrite, now * stretch})
		}
		sigma := 1.0
		if g.Kind == IO && refBytes > 0 {
			sigma = scaledBytes / refBytes
		}
		if cpu := n * sigma * speed * concurrentTime(g.CPU, tgt.Cores); cpu > 0 {
			ds = append(ds, Demand{b.Machine, CPU, cpu * stretch})
		}
		if len(ds) > 0 {
			steps = append(steps, Step{Demands: ds})
		}
		if g.Kind == Compute && g.Blocked > 0 {
			steps = append(steps, Step{Delay: n * g.Blocked})
		}
	}
	return steps, nil
}

// appendRead adds the demands of reading `bytes` of one channel whose parts
// say where the data lives: the holder's disk (unless pipelined), and both
// network interfaces when the holder is another machine.
func appendRead(ds []Demand, self int, parts []Part, bytes, stretch float64) []Demand {
	if len(parts) == 0 {
		return append(ds, Demand{self, DiskRead, bytes * stretch})
	}
	tot := 0.0
	for _, p := range parts {
		tot += p.Bytes
	}
	for _, p := range parts {
		share := bytes / float64(len(parts))
		if tot > 0 {
			share = bytes * p.Bytes / tot
		}
		if share == 0 {
			continue
		}
		amt := share * stretch
		if !p.Pipe {
			ds = append(ds, Demand{p.Machine, DiskRead, amt})
		}
		if p.Machine != self {
			ds = append(ds, Demand{p.Machine, NetOut, amt}, Demand{self, NetIn, amt})
		}
	}
	return ds
}

// concurrentTime is the wall time of a concurrency histogram's CPU work on
// `cores` processors at the reference clock: work run at concurrency k
// proceeds min(k, cores) times faster than on one processor.
func concurrentTime(h []float64, cores int) float64 {
	t := 0.0
	for i, cpu := range h {
		t += cpu / float64(min(i+1, cores))
	}
	return t
}

// Predict returns the task's run time alone on machines[b.Machine]: the sum
// over its steps of each one's bottleneck time (§3.3).
func (m Model) Predict(machines []Machine, b Binding) (float64, error) {
	steps, err := m.Steps(machines, b)
	if err != nil {
		return 0, err
	}
	t := 0.0
	for _, s := range steps {
		t += s.Isolated(machines)
	}
	return t, nil
}
