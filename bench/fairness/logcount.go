package fairness

import (
	"bytes"
	"io"
	"sync"
)

// LogCounts are the fleet log lines seen during a run: on a loaded host,
// gossip suspecting members and schedulers losing node monitors mean the
// measurement was disturbed.
type LogCounts struct {
	Lines            int `json:"lines"`
	GossipSuspicions int `json:"gossip_suspicions"`
	NodeMonitorsLost int `json:"node_monitors_lost"`
}

// LogCounter passes the fleet's log to w and counts its lines (zerolog
// writes one event per Write).
type LogCounter struct {
	w     io.Writer
	mu    sync.Mutex
	c     LogCounts
	muted bool
}

// NewLogCounter returns a LogCounter writing to w.
func NewLogCounter(w io.Writer) *LogCounter { return &LogCounter{w: w} }

// Write implements io.Writer.
func (l *LogCounter) Write(p []byte) (int, error) {
	l.mu.Lock()
	if l.muted {
		l.mu.Unlock()
		return len(p), nil
	}
	l.c.Lines++
	if bytes.Contains(p, []byte("uspect")) { // memberlist: "Suspect", "suspect"
		l.c.GossipSuspicions++
	}
	if bytes.Contains(p, []byte("node monitor lost")) {
		l.c.NodeMonitorsLost++
	}
	l.mu.Unlock()
	return l.w.Write(p)
}

// Mute drops (on) or passes (off) the lines that follow: a fleet's
// teardown logs many warnings about messages that no longer have anywhere
// to go, which say nothing about the measurement.
func (l *LogCounter) Mute(on bool) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.muted = on
	l.mu.Unlock()
}

// Take returns the counts since the last Take and resets them.
func (l *LogCounter) Take() LogCounts {
	if l == nil {
		return LogCounts{}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.c
	l.c = LogCounts{}
	return c
}
