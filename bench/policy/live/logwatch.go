package live

import (
	"bytes"
	"io"
	"sync"
)

// LogWatch sits between the fleet's logger and its output. It counts the
// log lines written during a measurement, picking out the two that mean
// the measurement was disturbed (on a loaded host, gossip failure
// detection suspects members and schedulers declare node monitors lost,
// re-placing their tasks), and it mutes the fleet's teardown, which under
// load logs many warnings about messages and tasks that no longer have
// anywhere to go. zerolog writes one event per Write call.
type LogWatch struct {
	w  io.Writer
	mu sync.Mutex
	c  LogCounts
	// muted drops lines (counting them in c.Muted).
	muted bool
}

// LogCounts are the lines a LogWatch saw since its last reset.
type LogCounts struct {
	Lines, NodeMonitorsLost, GossipSuspicions, Muted int
}

// NewLogWatch returns a LogWatch writing to w.
func NewLogWatch(w io.Writer) *LogWatch { return &LogWatch{w: w} }

var (
	lostMarker    = []byte("node monitor lost")
	suspectMarker = []byte("uspect") // memberlist: "Suspect", "suspect message"
)

// Write implements io.Writer.
func (l *LogWatch) Write(p []byte) (int, error) {
	l.mu.Lock()
	if l.muted {
		l.c.Muted++
		l.mu.Unlock()
		return len(p), nil
	}
	l.c.Lines++
	if bytes.Contains(p, lostMarker) {
		l.c.NodeMonitorsLost++
	}
	if bytes.Contains(p, suspectMarker) {
		l.c.GossipSuspicions++
	}
	l.mu.Unlock()
	return l.w.Write(p)
}

// take returns the counts and resets them.
func (l *LogWatch) take() LogCounts {
	if l == nil {
		return LogCounts{}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.c
	l.c = LogCounts{}
	return c
}

func (l *LogWatch) mute(on bool) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.muted = on
	l.mu.Unlock()
}
