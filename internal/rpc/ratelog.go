package rpc

import (
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// logInterval is how often a repeated condition (connections refused,
// idle connections evicted, requests refused for memory) is logged: once
// per interval with the count since the last line, never once per event,
// so that a flood cannot turn into a flood of log lines.
const logInterval = 10 * time.Second

// rateLog logs one kind of event at most once per logInterval, with how
// many happened since the last line. Safe for concurrent use.
type rateLog struct {
	mu      sync.Mutex
	last    time.Time
	pending int
}

// event counts one event and logs when the interval has passed; msg is
// called to add the line's fields.
func (r *rateLog) event(log zerolog.Logger, now time.Time, msg string, fields func(*zerolog.Event)) {
	r.mu.Lock()
	r.pending++
	if now.Sub(r.last) < logInterval {
		r.mu.Unlock()
		return
	}
	n := r.pending
	r.pending = 0
	r.last = now
	r.mu.Unlock()
	e := log.Warn().Int("count", n).Dur("over", logInterval)
	if fields != nil {
		fields(e)
	}
	e.Msg(msg)
}
