package client

import (
	"time"

	"github.com/sparrowfleet/sparrow/internal/refusal"
)

// Backoff is a resubmission delay policy: exponential backoff with full
// jitter, per job. A job's k-th resubmission (k ≥ 1) waits a uniformly
// drawn delay in [0, min(Max, Base·2^(k-1))). Full jitter, not a fixed
// delay, because every job a saturated or failed fleet refuses at the same
// moment would otherwise come back at the same moment: the spread is what
// keeps a thundering herd from re-forming. Pure: the caller supplies the
// uniform draw.
type Backoff struct {
	Base time.Duration // ceiling of the first resubmission's delay
	Max  time.Duration // ceiling of any drawn delay (not of a suggested one)
}

// Ceiling is the upper bound of the delay drawn for a job's retry-th
// resubmission: min(Max, Base·2^(retry-1)); 0 for retry < 1 or Base ≤ 0.
func (b Backoff) Ceiling(retry int) time.Duration {
	if retry < 1 || b.Base <= 0 {
		return 0
	}
	c := b.Base
	for i := 1; i < retry; i++ {
		if b.Max > 0 && c >= b.Max {
			break
		}
		if c > (1<<62)/2 { // doubling would overflow
			break
		}
		c *= 2
	}
	if b.Max > 0 && c > b.Max {
		c = b.Max
	}
	return c
}

// Delay is the wait before a job's retry-th resubmission, given a uniform
// draw u in [0, 1) and a delay the scheduler suggested (0: none). A
// suggestion is honoured as a floor and the jittered backoff is added on
// top, so that frontends told the same "retry after 2s" do not all come
// back at 2 s; the cap bounds only the drawn part, never the suggestion.
func (b Backoff) Delay(retry int, suggested time.Duration, u float64) time.Duration {
	if u < 0 || u >= 1 || u != u {
		u = 0
	}
	d := time.Duration(u * float64(b.Ceiling(retry)))
	if suggested > 0 {
		d += suggested
	}
	return d
}

// maxSuggested bounds a parsed suggestion: a garbled or hostile message
// must not park a job for hours.
const maxSuggested = refusal.MaxRetryAfter

// ParseRetryAfter finds a suggested retry delay in a scheduler's refusal
// message: the last "retry after <d>" (case-insensitive), where <d> is a Go
// duration ("2s", "250ms", "1m30s") or a plain number of seconds ("2",
// "1.5"), optionally followed by punctuation. It reports false when there
// is none, or when <d> is negative, unparsable or longer than five
// minutes.
//
// A scheduler puts one in the message of the IncompleteRequestException
// that refuses a job on a saturated fleet past its hold bounds, beside the
// same delay in the exception's retryAfterMs field; Submit reads the field
// and falls back to the message only for a scheduler that sends no field.
func ParseRetryAfter(msg string) (time.Duration, bool) { return refusal.ParseRetryAfter(msg) }
