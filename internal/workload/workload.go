package workload

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Spec is a synthetic workload.
type Spec struct {
	// Load is the target fraction of slots busy, in (0, 1] or above to
	// overload.
	Load float64
	// Slots is the fleet's total slot count.
	Slots int
	// TasksPerJob is m.
	TasksPerJob int
	// TaskDuration is each task's service time.
	TaskDuration time.Duration
}

// Validate returns an error naming the first bad field.
func (s Spec) Validate() error {
	switch {
	case !(s.Load > 0) || s.Load > 100:
		return fmt.Errorf("load %v must be in (0, 100]", s.Load)
	case s.Slots <= 0:
		return fmt.Errorf("slots %d must be positive", s.Slots)
	case s.TasksPerJob <= 0:
		return fmt.Errorf("tasks per job %d must be positive", s.TasksPerJob)
	case s.TaskDuration < 0:
		return fmt.Errorf("task duration %v must not be negative", s.TaskDuration)
	}
	return nil
}

// JobsPerSecond is the arrival rate that keeps Load of the slots busy:
// load · slots / (m · t). A zero duration (no-op tasks) has no natural
// rate; it returns 0 and callers choose one.
func (s Spec) JobsPerSecond() float64 {
	if s.TaskDuration <= 0 {
		return 0
	}
	return s.Load * float64(s.Slots) / (float64(s.TasksPerJob) * s.TaskDuration.Seconds())
}

// Arrivals yields Poisson inter-arrival gaps at rate jobs per second.
type Arrivals struct {
	rng  *rand.Rand
	rate float64
}

// NewArrivals returns a Poisson arrival process.
func NewArrivals(rng *rand.Rand, jobsPerSecond float64) (*Arrivals, error) {
	if !(jobsPerSecond > 0) {
		return nil, fmt.Errorf("arrival rate %v jobs/s must be positive", jobsPerSecond)
	}
	return &Arrivals{rng: rng, rate: jobsPerSecond}, nil
}

// Next returns the gap before the next job.
func (a *Arrivals) Next() time.Duration {
	return time.Duration(a.rng.ExpFloat64() / a.rate * float64(time.Second))
}
