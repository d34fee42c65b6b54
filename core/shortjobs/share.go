package shortjobs

import (
	"math"
	"time"
)

// DefaultShareSteps are the short-only shares an AdaptiveShare moves
// between, above its floor. Coarse steps keep schedulers that hear slightly
// different gossip on the same share most of the time.
var DefaultShareSteps = []float64{0.10, 0.20, 0.35, 0.50, 0.65}

// Adaptive share defaults.
const (
	DefaultShareWindow   = 10 * time.Minute
	DefaultShareHold     = 30 * time.Minute
	DefaultShareHeadroom = 2.0
)

// shareBuckets is how many buckets the demand window is counted in.
const shareBuckets = 10

// AdaptiveShare sizes the short-only share from the fleet's short demand
// and its long occupancy, as every scheduler can from gossip alone: the
// short jobs' work that arrived over the last Window (each scheduler
// advertises its own; the fleet's is their sum), as a number of busy
// slots, times Headroom, times the fraction of nodes advertising long
// work, over the fleet's slots, is the target share. The share is the
// smallest step at or above the target: it grows at once when the target
// passes it (a burst), and shrinks one step only after the target has
// stayed below it for Hold, then at most one step per Hold. The zero value
// is not usable; use NewAdaptiveShare. Not safe for concurrent use.
type AdaptiveShare struct {
	steps    []float64
	window   time.Duration
	hold     time.Duration
	headroom float64

	bucket  time.Duration
	work    [shareBuckets]float64 // slot-seconds of short work per bucket
	newest  int64                 // index of the newest bucket (time / bucket)
	cur     int                   // index into steps
	low     bool                  // the target has been below steps[cur] since lowFrom
	lowFrom time.Duration
}

// NewAdaptiveShare returns a controller whose share is at least floor, in
// [0, 1), and moves among floor and the DefaultShareSteps above it.
// window, hold and headroom at zero or below take the defaults.
func NewAdaptiveShare(floor float64, window, hold time.Duration, headroom float64) *AdaptiveShare {
	if window <= 0 {
		window = DefaultShareWindow
	}
	if hold <= 0 {
		hold = DefaultShareHold
	}
	if !(headroom > 0) || math.IsInf(headroom, 0) {
		headroom = DefaultShareHeadroom
	}
	steps := []float64{max(floor, 0)}
	for _, s := range DefaultShareSteps {
		if s > steps[0] {
			steps = append(steps, s)
		}
	}
	return &AdaptiveShare{steps: steps, window: window, hold: hold, headroom: headroom, bucket: max(window/shareBuckets, 1)}
}

// advance moves the window to now, dropping buckets older than it.
func (a *AdaptiveShare) advance(now time.Duration) {
	idx := int64(now / a.bucket)
	if idx <= a.newest {
		return
	}
	for k := a.newest + 1; k <= idx && k-a.newest <= shareBuckets; k++ {
		a.work[k%shareBuckets] = 0
	}
	a.newest = idx
}

// AddShortWork records a short job's work (its tasks times its estimated
// task duration, in slot-seconds) arriving at now. Times must not go
// backwards; NaN or negative work is ignored.
func (a *AdaptiveShare) AddShortWork(now time.Duration, slotSeconds float64) {
	if !(slotSeconds > 0) || math.IsInf(slotSeconds, 0) {
		return
	}
	a.advance(now)
	a.work[a.newest%shareBuckets] += slotSeconds
}

// Demand returns the short work of the last window at now, as busy slots.
func (a *AdaptiveShare) Demand(now time.Duration) float64 {
	a.advance(now)
	sum := 0.0
	for _, w := range a.work {
		sum += w
	}
	return sum / a.window.Seconds()
}

// Update returns the share at now for a fleet of slots slots, longBusy of
// its nodes' n advertising long work, and whether it changed since the
// last Update.
func (a *AdaptiveShare) Update(now time.Duration, slots, longBusy, n int) (float64, bool) {
	occupancy := 0.0
	if n > 0 {
		occupancy = float64(min(max(longBusy, 0), n)) / float64(n)
	}
	target := 0.0
	if slots > 0 {
		target = a.headroom * a.Demand(now) * occupancy / float64(slots)
	}
	want := len(a.steps) - 1
	for i, s := range a.steps {
		if s >= target {
			want = i
			break
		}
	}
	was := a.cur
	switch {
	case want > a.cur:
		a.cur, a.low = want, false
	case want < a.cur:
		if !a.low {
			a.low, a.lowFrom = true, now
		} else if now-a.lowFrom >= a.hold {
			a.cur--
			a.lowFrom = now
		}
	default:
		a.low = false
	}
	return a.steps[a.cur], a.cur != was
}

// Share returns the current share.
func (a *AdaptiveShare) Share() float64 { return a.steps[a.cur] }
