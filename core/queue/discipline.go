package queue

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Reservation is one queued claim, by a scheduling request, on one slot of this node monitor.
type Reservation struct {
	RequestID string
	App       string
	User      string
	Group     string
	Priority  int32  // smaller is served first (as in original Sparrow)
	Scheduler string // "host:port" of the scheduler's GetTaskService
	// Tag is the enqueuer's own handle for the reservation, carried
	// unchanged and never interpreted by a discipline, so that a caller
	// that owns both ends (the simulator) can find its state for a popped
	// reservation without parsing or hashing RequestID. Zero when unused.
	Tag uint64
}

// Discipline orders queued reservations. Implementations are not safe for concurrent use.
type Discipline interface {
	// Push queues r.
	Push(r Reservation)
	// Pop removes and returns the next reservation to serve; false when empty.
	Pop() (Reservation, bool)
	// RemoveRequest drops every queued reservation of that request and
	// returns how many were dropped. Schedulers cancel the surplus probes of a
	// request once all of its tasks have been placed.
	RemoveRequest(requestID string) int
	// RemoveApp drops every queued reservation for that app and returns how
	// many were dropped (e.g. when a framework deregisters).
	RemoveApp(app string) int
	// Len reports the exact number of queued reservations.
	Len() int
}

// Weights is implemented by disciplines whose per-user shares can change at run time
// (a coordinator will adjust them through gossip later).
type Weights interface {
	// SetWeight sets the weight of user; w must be finite and > 0, else an
	// error naming the problem is returned and nothing changes.
	SetWeight(user string, w float64) error
	// Weight returns the configured weight of user, or the default weight.
	Weight(user string) float64
}

// ErrInvalidWeight is wrapped by every error reporting a weight that is NaN,
// infinite, not positive, or too small for its reciprocal to be finite.
var ErrInvalidWeight = errors.New("invalid weight")

// Discipline names accepted by New.
const (
	kindFIFO     = "fifo"
	kindFair     = "fair"
	kindPriority = "priority"
	kindChoosy   = "choosy"
)

// Kinds lists the valid names.
func Kinds() []string {
	// A fresh slice each call, so callers cannot corrupt the list.
	return []string{kindFIFO, kindFair, kindPriority, kindChoosy}
}

// New builds a discipline by name: "fifo", "fair", "priority", "choosy";
// an unknown name is an error listing the valid names.
//
// defaultWeight and weights configure the per-user shares of "fair",
// "priority" and "choosy"; "fifo" has no notion of shares and ignores them, so a weight
// misconfiguration never stops a FIFO node monitor from starting.
func New(kind string, defaultWeight float64, weights map[string]float64) (Discipline, error) {
	switch kind {
	case kindFIFO:
		return NewFIFO(), nil
	case kindFair:
		f, err := NewFair(defaultWeight, weights)
		if err != nil {
			// Return a true nil interface, not a typed nil *Fair.
			return nil, err
		}
		return f, nil
	case kindPriority:
		p, err := NewPriority(defaultWeight, weights)
		if err != nil {
			return nil, err
		}
		return p, nil
	case kindChoosy:
		c, err := NewChoosy(defaultWeight, weights)
		if err != nil {
			return nil, err
		}
		return c, nil
	}
	return nil, fmt.Errorf("queue: unknown discipline %q (valid: %s)", kind, strings.Join(Kinds(), ", "))
}

// CheckWeight reports why w is unusable as a fair-share weight, or nil.
func CheckWeight(w float64) error {
	switch {
	case math.IsNaN(w):
		return fmt.Errorf("%w: NaN is not a number (must be finite and > 0)", ErrInvalidWeight)
	case math.IsInf(w, 0):
		return fmt.Errorf("%w: %v is infinite (must be finite and > 0)", ErrInvalidWeight, w)
	case w <= 0:
		return fmt.Errorf("%w: %v is not > 0", ErrInvalidWeight, w)
	case math.IsInf(1/w, 0):
		// Fair queuing charges 1/w virtual time per service; an infinite
		// charge would poison the virtual clock with Inf/NaN arithmetic.
		return fmt.Errorf("%w: %v is too small (1/w overflows)", ErrInvalidWeight, w)
	}
	return nil
}

// weightTable holds per-user weights. Priority shares one table across all of
// its levels so that a single SetWeight applies at every priority.
type weightTable struct {
	def float64
	m   map[string]float64
}

func newWeightTable(defaultWeight float64, weights map[string]float64) (*weightTable, error) {
	if err := CheckWeight(defaultWeight); err != nil {
		return nil, fmt.Errorf("queue: default weight: %w", err)
	}
	// Validate in sorted order so the reported user is deterministic when
	// several weights are bad.
	users := make([]string, 0, len(weights))
	for u := range weights {
		users = append(users, u)
	}
	slices.Sort(users)
	m := make(map[string]float64, len(weights))
	for _, u := range users {
		w := weights[u]
		if err := CheckWeight(w); err != nil {
			return nil, fmt.Errorf("queue: weight for user %q: %w", u, err)
		}
		// Copy rather than alias: the caller may keep mutating its map.
		m[u] = w
	}
	return &weightTable{def: defaultWeight, m: m}, nil
}

func (t *weightTable) set(user string, w float64) error {
	if err := CheckWeight(w); err != nil {
		return fmt.Errorf("queue: weight for user %q: %w", user, err)
	}
	t.m[user] = w
	return nil
}

func (t *weightTable) get(user string) float64 {
	if w, ok := t.m[user]; ok {
		return w
	}
	return t.def
}
