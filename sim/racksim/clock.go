package racksim

import "time"

// nowOf reads the injected clock, or returns the zero time without one.
func nowOf(clock func() time.Time) time.Time {
	if clock == nil {
		return time.Time{}
	}
	return clock()
}

// timeDiv converts a count to a Duration divisor.
func timeDiv(n int) time.Duration { return time.Duration(max(n, 1)) }
