package membership

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/internal/logging"
)

// memberlist logs through a standard-library logger, one line per event,
// with a "[LEVEL]" prefix. On a busy fleet most of its lines are the
// failure detector at work: a probe that timed out, a member suspected and
// then refuting it. memberlist logs many of them at [ERR], which would
// page operators for the protocol doing its job. gossipLog classes each
// line (classifyGossipLine), lowers transient failures to warn, keeps
// errors that need a person (a packet that does not decode, a key that
// does not match, an address conflict) at error, logs at most
// gossipLogBurst lines of a kind per gossipLogWindow with a count of the
// lines it left out (but every suspicion, failure verdict and refutation:
// each is news about one member, and tools count them in the logs), and
// counts every line by kind and level for
// sparrow_membership_log_events_total.

// gossipLogKind is what a memberlist log line reports.
type gossipLogKind int

// The kinds of memberlist log line.
const (
	// logProbe: a probe, ping or ack to a member failed or timed out.
	logProbe gossipLogKind = iota
	// logSuspect: this member suspected a member, or declared one failed.
	logSuspect
	// logRefute: a peer suspected or declared this member dead, and it
	// refuted that.
	logRefute
	// logGossip: a gossip message could not be sent.
	logGossip
	// logStream: a push/pull sync or other TCP exchange with a peer
	// failed (a peer gone, or a connection cut).
	logStream
	// logOverload: memberlist dropped work it could not keep up with.
	logOverload
	// logMalformed: a packet or stream did not decode, decrypt or carry
	// the expected label: a peer with another key, label or version, or
	// not a member at all.
	logMalformed
	// logConflict: a member's address or protocol version conflicts
	// with this view's.
	logConflict
	// logInternal: memberlist could not encode, encrypt or send what it
	// built itself.
	logInternal
	// logShutdown: sockets reported closed while gossip shuts down.
	logShutdown
	// logOther: a line no rule knows, at memberlist's own level.
	logOther
	numGossipLogKinds
)

var gossipLogKindNames = [numGossipLogKinds]string{
	logProbe: "probe", logSuspect: "suspect", logRefute: "refute", logGossip: "gossip", logStream: "stream",
	logOverload: "overload", logMalformed: "malformed", logConflict: "conflict", logInternal: "internal",
	logShutdown: "shutdown", logOther: "other",
}

func (k gossipLogKind) String() string { return gossipLogKindNames[k] }

// gossipLogRule classes the lines containing phrase as kind, at memberlist's
// level but at most most.
type gossipLogRule struct {
	phrase string
	kind   gossipLogKind
	most   zerolog.Level
}

// gossipLogRules are tried in order; the first whose phrase a line
// contains classes it. The phrases are memberlist's own (v0.7).
var gossipLogRules = []gossipLogRule{
	// Sockets closed under a shutting-down member, whatever reported it.
	{"use of closed network connection", logShutdown, zerolog.DebugLevel},

	{"Failed UDP ping", logProbe, zerolog.WarnLevel},
	{"Failed fallback TCP ping", logProbe, zerolog.WarnLevel},
	{"Failed to send UDP ping", logProbe, zerolog.WarnLevel},
	{"Failed to send indirect UDP ping", logProbe, zerolog.WarnLevel},
	{"Failed to send indirect ping", logProbe, zerolog.WarnLevel},
	{"Failed to send UDP compound ping", logProbe, zerolog.WarnLevel},
	{"Failed to send ack", logProbe, zerolog.WarnLevel},
	{"Failed to forward ack", logProbe, zerolog.WarnLevel},
	{"Failed to send nack", logProbe, zerolog.WarnLevel},
	{"over TCP but UDP probes failed", logProbe, zerolog.WarnLevel},
	{"Got ping for unexpected node", logProbe, zerolog.WarnLevel},

	{"Suspect ", logSuspect, zerolog.WarnLevel},
	{"Marking ", logSuspect, zerolog.WarnLevel},
	{"Refuting a", logRefute, zerolog.WarnLevel},

	{"Failed to send gossip", logGossip, zerolog.WarnLevel},

	{"Push/Pull with", logStream, zerolog.WarnLevel},
	{"Failed to push local state", logStream, zerolog.WarnLevel},
	{"Failed to read remote state", logStream, zerolog.WarnLevel},
	{"Failed to receive user message", logStream, zerolog.WarnLevel},
	{"failed to receive:", logStream, zerolog.WarnLevel},
	{"Error accepting TCP connection", logStream, zerolog.WarnLevel},
	{"Error reading UDP packet", logStream, zerolog.WarnLevel},
	{"Failed to send error", logStream, zerolog.WarnLevel},

	{"Too many pending push/pull", logOverload, zerolog.WarnLevel},
	{"handler queue full", logOverload, zerolog.WarnLevel},
	{"Compound request had", logOverload, zerolog.WarnLevel},

	{"Decrypt packet failed", logMalformed, zerolog.ErrorLevel},
	{"Failed to decode", logMalformed, zerolog.ErrorLevel},
	{"Failed to decompress", logMalformed, zerolog.ErrorLevel},
	{"invalid checksum", logMalformed, zerolog.ErrorLevel},
	{"unacceptable label", logMalformed, zerolog.ErrorLevel},
	{"stream label header", logMalformed, zerolog.ErrorLevel},
	{"double packet label", logMalformed, zerolog.ErrorLevel},
	{"not supported", logMalformed, zerolog.ErrorLevel},
	{"invalid msgType", logMalformed, zerolog.ErrorLevel},
	{"missing message type", logMalformed, zerolog.ErrorLevel},
	{"UDP packet too short", logMalformed, zerolog.ErrorLevel},

	{"Conflicting address", logConflict, zerolog.ErrorLevel},
	{"Rejected node", logConflict, zerolog.ErrorLevel},
	{"Rejected IP update", logConflict, zerolog.ErrorLevel},
	{"Failed push/pull merge", logConflict, zerolog.ErrorLevel},
	{"alive message", logConflict, zerolog.ErrorLevel},

	{"Failed to encode", logInternal, zerolog.ErrorLevel},
	{"Encryption of message failed", logInternal, zerolog.ErrorLevel},
	{"Failed to encrypt", logInternal, zerolog.ErrorLevel},
	{"Failed to compress", logInternal, zerolog.ErrorLevel},
	{"Failed to parse address", logInternal, zerolog.ErrorLevel},
	{"Failed to shutdown transport", logInternal, zerolog.ErrorLevel},
}

// classifyGossipLine classes one memberlist log line: its kind, the level
// to log it at (memberlist's, lowered to the kind's most), and the message
// without memberlist's "[LEVEL]" and "memberlist:" prefixes.
func classifyGossipLine(line string) (gossipLogKind, zerolog.Level, string) {
	level, msg := logging.SplitLevel(line)
	msg = strings.TrimSpace(strings.TrimPrefix(msg, "memberlist:"))
	for _, r := range gossipLogRules {
		if strings.Contains(msg, r.phrase) {
			return r.kind, min(level, r.most), msg
		}
	}
	return logOther, level, msg
}

// Bounds on how much of one kind gossipLog writes.
const (
	gossipLogWindow = time.Minute
	gossipLogBurst  = 5
)

// gossipLogLevels are the levels gossipLog counts lines at; a line at any
// other level (trace, or memberlist's fatal and panic, which it never
// writes) is counted at the nearest.
var gossipLogLevels = [...]zerolog.Level{zerolog.DebugLevel, zerolog.InfoLevel, zerolog.WarnLevel, zerolog.ErrorLevel}

func levelIndex(l zerolog.Level) int {
	return min(max(int(l), int(zerolog.DebugLevel)), int(zerolog.ErrorLevel)) - int(zerolog.DebugLevel)
}

// gossipLog is the io.Writer behind memberlist's logger. Safe for
// concurrent use.
type gossipLog struct {
	log zerolog.Logger
	now func() time.Time

	counts [numGossipLogKinds][len(gossipLogLevels)]atomic.Uint64

	mu     sync.Mutex
	window [numGossipLogKinds]logWindow
}

// logWindow is one kind's lines in the current window: when it began,
// how many were written, and how many were left out since a line of the
// kind was last written.
type logWindow struct {
	start   time.Time
	written int
	left    uint64
}

func newGossipLog(log zerolog.Logger, now func() time.Time) *gossipLog {
	return &gossipLog{log: log, now: now}
}

func (g *gossipLog) Write(p []byte) (int, error) {
	kind, level, msg := classifyGossipLine(string(p))
	g.counts[kind][levelIndex(level)].Add(1)
	ev := g.log.WithLevel(level)
	if !ev.Enabled() {
		return len(p), nil // below the log level: counted only
	}
	write, left := g.admit(kind)
	if !write {
		ev.Discard()
		return len(p), nil
	}
	ev = ev.Str("kind", kind.String())
	if left > 0 {
		ev = ev.Uint64("left_out", left)
	}
	ev.Msg(msg)
	return len(p), nil
}

// admit reports whether a line of kind is written now, and how many lines
// of the kind were left out since the last one written. Suspicions,
// verdicts and refutations are always written.
func (g *gossipLog) admit(kind gossipLogKind) (bool, uint64) {
	if kind == logSuspect || kind == logRefute {
		return true, 0
	}
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	w := &g.window[kind]
	if now.Sub(w.start) >= gossipLogWindow || now.Before(w.start) {
		w.start, w.written = now, 0
	}
	if w.written >= gossipLogBurst {
		w.left++
		return false, 0
	}
	w.written++
	left := w.left
	w.left = 0
	return true, left
}

// GossipLogCounts counts memberlist's log lines by kind and level (the
// order of gossipLogLevels).
type GossipLogCounts [numGossipLogKinds][len(gossipLogLevels)]uint64

// logCounts returns the counts so far.
func (g *gossipLog) logCounts() GossipLogCounts {
	var out GossipLogCounts
	for k := range out {
		for i := range out[k] {
			out[k][i] = g.counts[k][i].Load()
		}
	}
	return out
}

// nominalLevels is each kind's highest level under its rules (error for a
// kind without rules, whose lines keep memberlist's level).
var nominalLevels = func() (n [numGossipLogKinds]zerolog.Level) {
	for k := range n {
		n[k] = zerolog.ErrorLevel
	}
	for _, r := range gossipLogRules {
		n[r.kind] = r.most
	}
	return n
}()

// series returns the counts to export, as (kind, level, count): every
// kind at its nominal level, so that an alert on that level sees a kind's
// first line, and every other count that is not zero.
func (c GossipLogCounts) series(yield func(kind, level string, n uint64)) {
	for k := range numGossipLogKinds {
		for i, l := range gossipLogLevels {
			if n := c[k][i]; n > 0 || l == nominalLevels[k] {
				yield(k.String(), l.String(), n)
			}
		}
	}
}
