package shortjobs

import (
	"fmt"
	"math"
)

// Class is a job's class.
type Class uint8

// The job classes.
const (
	Short Class = iota
	Long
)

func (c Class) String() string {
	if c == Long {
		return "long"
	}
	return "short"
}

// DefaultStarveLimit is the default bound, per slot of the node, on how
// many times a queued reservation may be passed over by younger ones. A
// low bound lets a long job's reservation, passed over that many times by
// short ones, take a slot for hours ahead of the short jobs that come
// after it; this one still ends any starvation.
const DefaultStarveLimit = 128

// Config is the policy's settings, identical on every scheduler and node
// monitor of a fleet.
type Config struct {
	// Cutoff is the mean task duration from which a job is long, in the
	// unit of the estimates (the simulator uses seconds). Must be > 0.
	Cutoff float64
	// ShortShare is the fraction of nodes that run short jobs only, in
	// [0, 1).
	ShortShare float64
	// StarveLimit bounds how many times a queued reservation may be
	// passed over by a younger one, per slot of its node (SRPT over a
	// node of s slots takes StarveLimit·s): a node of s slots serves s
	// reservations in the time a one-slot node serves one, so a bound
	// per slot holds a reservation back for as long, in units of its
	// node's task durations, whatever the node's size. At least 1.
	StarveLimit int
	// LongSteer places long jobs with information: node monitors
	// advertise a coarse level of the long work they hold, running and
	// queued (Monitor.Advert2, LongLevel), and schedulers sample a long
	// job's reservations among the general nodes of the lowest levels
	// (SteerLong).
	LongSteer bool
	// ClassFirst makes node monitors' queues serve short jobs'
	// reservations before long jobs', then by remaining work
	// (SRPT.SetClassFirst).
	ClassFirst bool
	// WorkRefresh makes schedulers tell the nodes holding a job's queued
	// reservations its remaining work whenever its count of unlaunched
	// tasks enters another WorkStep (RefreshTargets), so that the order
	// among jobs in those queues follows their progress.
	WorkRefresh bool
	// Overrun makes node monitors count a short job's task that has run
	// for the cutoff as long work (Monitor.Overran) until it ends: a
	// task that long holds its slot as a long one does, whatever its
	// job's estimate said. On schedulers, it takes a short job that
	// stated no estimate of its own as long once one of its tasks has run
	// for the cutoff: its remaining work is counted at OverrunEstimate per
	// task, it leaves the pull backlog, and short-only nodes get no more
	// of its tasks.
	Overrun bool
	// Unestimated is how a scheduler classes a job that states no
	// estimate of its own (Config.Judge).
	Unestimated Unestimated
	// ShortStickyOnly limits sticky fetches (Monitor.Ended) to short
	// jobs: a slot freed by a long task serves its queue in order instead
	// of asking the same long job for another task.
	ShortStickyOnly bool
}

// Validate returns an error naming the first unusable field.
func (c Config) Validate() error {
	switch {
	case math.IsNaN(c.Cutoff) || math.IsInf(c.Cutoff, 0) || c.Cutoff <= 0:
		return fmt.Errorf("shortjobs: cutoff must be a finite number > 0, got %v", c.Cutoff)
	case math.IsNaN(c.ShortShare) || c.ShortShare < 0 || c.ShortShare >= 1:
		return fmt.Errorf("shortjobs: short-only share must be in [0, 1), got %v", c.ShortShare)
	case c.StarveLimit < 1:
		return fmt.Errorf("shortjobs: starvation limit must be at least 1, got %d", c.StarveLimit)
	case c.Unestimated >= numUnestimated:
		return fmt.Errorf("shortjobs: unknown rule for unestimated jobs %d", int(c.Unestimated))
	}
	return nil
}

// Classify returns the class of a job whose estimated mean task duration
// is estimate; known false (no estimate from the job or its history)
// makes it Long.
func (c Config) Classify(estimate float64, known bool) Class {
	if !known || !(estimate < c.Cutoff) {
		return Long
	}
	return Short
}

// Unestimated is a rule for a job that states no estimate of its own.
type Unestimated uint8

// The rules for unestimated jobs.
const (
	// UnestimatedByTasks, the default, makes such a job short, with a
	// nominal mean task duration of half the cutoff: among such jobs,
	// the one with the fewest unlaunched tasks goes first. Most jobs are
	// short and small, and a long job with many tasks ranks behind them
	// all; a job's class is its own, which an application's history of
	// tasks, dominated by its few long jobs' many tasks, does not tell.
	UnestimatedByTasks Unestimated = iota
	// UnestimatedByHistory classes such a job by its application's
	// History; an application with none is long, so that an unknown job
	// can never hold the short-only nodes.
	UnestimatedByHistory
	numUnestimated
)

var unestimatedNames = [...]string{"tasks", "history"}

func (u Unestimated) String() string {
	if u >= numUnestimated {
		return fmt.Sprintf("Unestimated(%d)", int(u))
	}
	return unestimatedNames[u]
}

// ParseUnestimated parses a rule's name: tasks or history.
func ParseUnestimated(name string) (Unestimated, error) {
	for i, n := range unestimatedNames {
		if n == name {
			return Unestimated(i), nil
		}
	}
	return 0, fmt.Errorf("unknown rule for unestimated jobs %q (valid: tasks, history)", name)
}

// Judge returns the class of a job of app whose request states own
// seconds per task (0 or less, NaN or infinite: none), and the mean task
// duration to count its remaining work by; known false means there is
// none (a long job of unknown work). A job's own estimate decides; without
// one, c.Unestimated does, consulting h (nil: no history).
func (c Config) Judge(own float64, h *History, app string) (class Class, est float64, known bool) {
	if Stated(own) || c.Unestimated == UnestimatedByHistory {
		est, known = Estimate(own, h, app)
		return c.Classify(est, known), est, known
	}
	return Short, c.Cutoff / 2, true
}

// Stated reports whether own, the seconds per task a job's request
// states, is an estimate: > 0 and finite.
func Stated(own float64) bool { return own > 0 && !math.IsInf(own, 0) }

// overrunFactor is how many cutoffs OverrunEstimate takes a task to last.
const overrunFactor = 100

// OverrunEstimate is the mean task duration a scheduler counts, under
// Config.Overrun, for a job that stated no estimate, was classed short,
// and has a task that ran for cutoff: it is taken to be as long as the
// long jobs (a hundred cutoffs), so that its queued reservations fall
// behind every short job's, since one task past the cutoff says nothing
// more of its job's length except that it is not short.
func OverrunEstimate(cutoff float64) float64 { return overrunFactor * cutoff }

// History estimates a job's mean task duration from the tasks its
// application ran before: the mean of the last durations observed, each
// new one weighted Weight against the past. The zero value is not usable;
// use NewHistory.
type History struct {
	weight float64
	apps   map[string]float64
}

// DefaultHistoryWeight is the weight of each newly observed duration.
const DefaultHistoryWeight = 0.1

// NewHistory returns an empty History weighting each new observation w,
// in (0, 1]; out of range takes DefaultHistoryWeight.
func NewHistory(w float64) *History {
	if !(w > 0 && w <= 1) {
		w = DefaultHistoryWeight
	}
	return &History{weight: w, apps: make(map[string]float64)}
}

// Observe records a finished task of app that ran dur. Negative, NaN or
// infinite durations are ignored.
func (h *History) Observe(app string, dur float64) {
	if math.IsNaN(dur) || math.IsInf(dur, 0) || dur < 0 {
		return
	}
	if old, ok := h.apps[app]; ok {
		h.apps[app] = old + h.weight*(dur-old)
		return
	}
	h.apps[app] = dur
}

// Estimate returns app's estimated task duration, and whether any task of
// app was observed.
func (h *History) Estimate(app string) (float64, bool) {
	v, ok := h.apps[app]
	return v, ok
}

// Estimate picks a job's estimate: the job's own if given (> 0 and
// finite), else the app's history.
func Estimate(own float64, h *History, app string) (float64, bool) {
	if Stated(own) {
		return own, true
	}
	if h == nil {
		return 0, false
	}
	return h.Estimate(app)
}
