package overload

import (
	"bufio"
	"bytes"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// unknown marks a sampled value that could not be read (a member's
// endpoint did not answer in time, or the process had exited).
const unknown = -1

// Sample is one observation of a point's fleet, T seconds after the drive
// started. Values that could not be read are unknown (-1).
type Sample struct {
	T float64 `json:"t"`
	// RSS and Peak (VmRSS and VmHWM, bytes) and CPU (seconds) of every
	// process, in Point.Processes order.
	RSS  []int64   `json:"rss"`
	Peak []int64   `json:"peak"`
	CPU  []float64 `json:"cpu_s"`
	// Heap (bytes of Go heap in use) and Goroutines of every process that
	// serves /metrics (schedulers and node monitors; unknown for the
	// others), from the Go collector.
	// Conns is the Thrift connections each such process serves.
	Heap       []int64 `json:"heap_inuse"`
	Goroutines []int64 `json:"goroutines"`
	Conns      []int64 `json:"conns"`
	// Completed is the tasks the node monitors launched that are no longer
	// running (launches − running, summed over node monitors): the tasks
	// completed so far. Running is the tasks running (busy slots) and
	// Queued the queued reservations, summed likewise.
	Completed float64 `json:"completed"`
	Running   float64 `json:"running"`
	Queued    float64 `json:"queued"`
	// View is the fewest live node monitors any scheduler sees.
	View int `json:"view"`
	// Summed over schedulers, from /metrics: held submitJob calls now,
	// calls held so far, jobs refused as saturated so far, tasks in
	// accepted jobs so far, and the held calls answered so far with the
	// total seconds they were held.
	Held        float64 `json:"held"`
	Holds       float64 `json:"holds"`
	Refusals    float64 `json:"refusals"`
	Accepted    float64 `json:"accepted_tasks"`
	HoldCount   float64 `json:"hold_count"`
	HoldSeconds float64 `json:"hold_s"`
}

// window returns the indices of the first sample at or after from and the
// last at or before to for which ok holds, and whether they span a
// positive time.
func window(samples []Sample, from, to float64, ok func(Sample) bool) (a, b int, found bool) {
	a, b = -1, -1
	for i, s := range samples {
		if s.T < from || s.T > to || !ok(s) {
			continue
		}
		if a < 0 {
			a = i
		}
		b = i
	}
	return a, b, a >= 0 && samples[b].T > samples[a].T
}

// WindowRate is the per-second rate of the cumulative value v between the
// first and last samples of [from, to] in which it is known.
func WindowRate(samples []Sample, from, to float64, v func(Sample) float64) (float64, bool) {
	a, b, ok := window(samples, from, to, func(s Sample) bool { return v(s) >= 0 })
	if !ok {
		return 0, false
	}
	return (v(samples[b]) - v(samples[a])) / (samples[b].T - samples[a].T), true
}

// WindowDelta is the change in the cumulative value v between the first
// and last samples of [from, to] in which it is known.
func WindowDelta(samples []Sample, from, to float64, v func(Sample) float64) (float64, bool) {
	a, b, ok := window(samples, from, to, func(s Sample) bool { return v(s) >= 0 })
	if !ok {
		return 0, false
	}
	return v(samples[b]) - v(samples[a]), true
}

// WindowMean is the mean of v over the samples of [from, to] in which it
// is known.
func WindowMean(samples []Sample, from, to float64, v func(Sample) float64) (float64, bool) {
	var sum float64
	n := 0
	for _, s := range samples {
		if s.T >= from && s.T <= to && v(s) >= 0 {
			sum += v(s)
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}

// Growth is process p's resident memory over [from, to]: at the first and
// last samples where it was read, their difference, and the most it rose
// above the first at any sample between.
type Growth struct {
	Start, End, Growth, MaxRise int64
	OK                          bool
}

// RSSGrowth measures process p's RSS over [from, to].
func RSSGrowth(samples []Sample, p int, from, to float64) Growth {
	return growthOf(samples, p, from, to, func(s Sample) []int64 { return s.RSS })
}

// growthOf measures process p's series v over [from, to].
func growthOf(samples []Sample, p int, from, to float64, v func(Sample) []int64) Growth {
	known := func(s Sample) bool { return p < len(v(s)) && v(s)[p] >= 0 }
	a, b, ok := window(samples, from, to, known)
	if !ok {
		return Growth{}
	}
	g := Growth{Start: v(samples[a])[p], End: v(samples[b])[p], OK: true}
	g.Growth = g.End - g.Start
	for _, s := range samples[a : b+1] {
		if known(s) {
			g.MaxRise = max(g.MaxRise, v(s)[p]-g.Start)
		}
	}
	return g
}

// CPUIn is process p's CPU seconds over [from, to].
func CPUIn(samples []Sample, p int, from, to float64) (float64, bool) {
	return WindowDelta(samples, from, to, func(s Sample) float64 {
		if p < len(s.CPU) {
			return s.CPU[p]
		}
		return unknown
	})
}

// LastPeak is process p's VmHWM in the last sample at or before to that
// has it.
func LastPeak(samples []Sample, p int, to float64) int64 {
	for i := len(samples) - 1; i >= 0; i-- {
		s := samples[i]
		if s.T <= to && p < len(s.Peak) && s.Peak[p] >= 0 {
			return s.Peak[p]
		}
	}
	return unknown
}

// PromValues sums, for each of names, the samples of that metric in a
// Prometheus text exposition (any labels); names absent are left out.
func PromValues(text []byte, names ...string) map[string]float64 {
	out := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		name, rest := line, ""
		if i := strings.IndexAny(line, "{ "); i >= 0 {
			name, rest = line[:i], line[i:]
		}
		if !slices.Contains(names, name) {
			continue
		}
		if strings.HasPrefix(rest, "{") {
			j := strings.LastIndexByte(rest, '}')
			if j < 0 {
				continue
			}
			rest = rest[j+1:]
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			continue
		}
		out[name] += v
	}
	return out
}

// GossipEvents are the failure-detection events in one member's log.
type GossipEvents struct {
	// Declared counts memberlist's "Marking NAME as failed" lines by the
	// member declared dead; Suspected its "Suspect NAME has failed" lines.
	Declared  map[string]int `json:"declared,omitempty"`
	Suspected map[string]int `json:"suspected,omitempty"`
	// RefutedDead and RefutedSuspect count this member learning that it
	// had been declared dead or suspected (and refuting it).
	RefutedDead    int `json:"refuted_dead,omitempty"`
	RefutedSuspect int `json:"refuted_suspect,omitempty"`
	// NodeMonitorsLost counts a scheduler's "node monitor lost" lines: a
	// node monitor left its view with work on it.
	NodeMonitorsLost int `json:"node_monitors_lost,omitempty"`
}

var (
	markingRE = regexp.MustCompile(`Marking (\S+) as failed`)
	suspectRE = regexp.MustCompile(`Suspect (\S+) has failed`)
)

// ScanGossip counts the failure-detection events in a member's log text
// (memberlist's lines, at info and warn, and the scheduler's own).
func ScanGossip(log []byte) GossipEvents {
	var ev GossipEvents
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := markingRE.FindStringSubmatch(line); m != nil {
			if ev.Declared == nil {
				ev.Declared = map[string]int{}
			}
			ev.Declared[m[1]]++
		}
		if m := suspectRE.FindStringSubmatch(line); m != nil {
			if ev.Suspected == nil {
				ev.Suspected = map[string]int{}
			}
			ev.Suspected[m[1]]++
		}
		switch {
		case strings.Contains(line, "Refuting a dead message"):
			ev.RefutedDead++
		case strings.Contains(line, "Refuting a suspect message"):
			ev.RefutedSuspect++
		case strings.Contains(line, "node monitor lost"):
			ev.NodeMonitorsLost++
		}
	}
	return ev
}

// Gossip is a point's failure-detection outcome over every member.
type Gossip struct {
	// DeclaredDead are the members some member's gossip declared dead
	// ("Marking NAME as failed"), or that refuted a dead message; every
	// member was alive throughout, so any name here is a false
	// declaration.
	DeclaredDead []string `json:"declared_dead"`
	Declarations int      `json:"declarations"`
	Suspicions   int      `json:"suspicions"`
	Refutations  int      `json:"refutations"`
	// NodeMonitorsLost counts schedulers dropping a node monitor with work
	// on it; MinView is the fewest node monitors a scheduler saw live in
	// any sample (-1: never read).
	NodeMonitorsLost int `json:"node_monitors_lost"`
	MinView          int `json:"min_view"`
}

// MergeGossip combines every member's log events, keyed by member name,
// and the sampled views.
func MergeGossip(byMember map[string]GossipEvents, samples []Sample) Gossip {
	g := Gossip{DeclaredDead: []string{}, MinView: unknown}
	dead := map[string]bool{}
	for name, ev := range byMember {
		for who, n := range ev.Declared {
			dead[who] = true
			g.Declarations += n
		}
		for _, n := range ev.Suspected {
			g.Suspicions += n
		}
		if ev.RefutedDead > 0 {
			dead[name] = true
		}
		g.Refutations += ev.RefutedDead + ev.RefutedSuspect
		g.NodeMonitorsLost += ev.NodeMonitorsLost
	}
	for who := range dead {
		g.DeclaredDead = append(g.DeclaredDead, who)
	}
	slices.Sort(g.DeclaredDead)
	for _, s := range samples {
		if s.View >= 0 && (g.MinView < 0 || s.View < g.MinView) {
			g.MinView = s.View
		}
	}
	return g
}
