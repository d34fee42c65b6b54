package membership

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/internal/logging"
)

// TestClassifyGossipLine classes lines memberlist writes (v0.7, with
// their arguments filled in): transient failures of the failure detector
// go down to warn at most, errors that need a person stay errors, and a
// line no rule knows keeps memberlist's level.
func TestClassifyGossipLine(t *testing.T) {
	for _, tc := range []struct {
		line  string
		kind  gossipLogKind
		level zerolog.Level
		msg   string
	}{
		{"[ERR] memberlist: Failed fallback TCP ping: timeout 1s: read tcp 10.0.0.1:7946->10.0.0.2:7946: i/o timeout",
			logProbe, zerolog.WarnLevel, "Failed fallback TCP ping: timeout 1s: read tcp 10.0.0.1:7946->10.0.0.2:7946: i/o timeout"},
		{"[DEBUG] memberlist: Failed UDP ping: nm-7 (timeout reached)", logProbe, zerolog.DebugLevel, "Failed UDP ping: nm-7 (timeout reached)"},
		{"[ERR] memberlist: Failed to send indirect UDP ping: write udp: no route to host", logProbe, zerolog.WarnLevel, ""},
		{"[ERR] memberlist: Failed to send UDP compound ping and suspect message to 10.0.0.2:7946: sendto: connection refused", logProbe, zerolog.WarnLevel, ""},
		{"[WARN] memberlist: Was able to connect to nm-7 over TCP but UDP probes failed, network may be misconfigured", logProbe, zerolog.WarnLevel, ""},
		{"[INFO] memberlist: Suspect nm-7 has failed, no acks received", logSuspect, zerolog.InfoLevel, "Suspect nm-7 has failed, no acks received"},
		{"[INFO] memberlist: Marking nm-7 as failed, suspect timeout reached (2 peer confirmations)", logSuspect, zerolog.InfoLevel, ""},
		{"[WARN] memberlist: Refuting a suspect message (from: nm-3)", logRefute, zerolog.WarnLevel, ""},
		{"[WARN] memberlist: Refuting an alive message for 'nm-1' (10.0.0.1:7946) meta:([1] VS [2]), vsn:([1] VS [1])", logRefute, zerolog.WarnLevel, ""},
		{"[ERR] memberlist: Failed to send gossip to 10.0.0.2:7946: write udp: network is unreachable", logGossip, zerolog.WarnLevel, ""},
		{"[ERR] memberlist: Push/Pull with nm-7 failed: dial tcp 10.0.0.2:7946: i/o timeout", logStream, zerolog.WarnLevel, ""},
		{"[ERR] memberlist: failed to receive: EOF from=10.0.0.2:51234", logStream, zerolog.WarnLevel, ""},
		{"[ERR] memberlist: Error accepting TCP connection: accept tcp: too many open files", logStream, zerolog.WarnLevel, ""},
		{"[ERR] memberlist: Too many pending push/pull requests", logOverload, zerolog.WarnLevel, ""},
		{"[WARN] memberlist: handler queue full, dropping message (3) from=10.0.0.2:7946", logOverload, zerolog.WarnLevel, ""},
		{"[ERR] memberlist: Decrypt packet failed: No installed keys could decrypt the message from=10.0.0.9:7946", logMalformed, zerolog.ErrorLevel, ""},
		{"[ERR] memberlist: Failed to decode suspect message: msgpack decode error from=10.0.0.9:7946", logMalformed, zerolog.ErrorLevel, ""},
		{"[WARN] memberlist: Got invalid checksum for UDP packet: 1a, 2b", logMalformed, zerolog.WarnLevel, ""},
		{"[ERR] memberlist: discarding packet with unacceptable label \"x\": from=10.0.0.9:7946", logMalformed, zerolog.ErrorLevel, ""},
		{"[ERR] memberlist: Conflicting address for nm-7. Mine: 10.0.0.7:7946 Theirs: 10.0.0.8:7946 Old state: 0", logConflict, zerolog.ErrorLevel, ""},
		{"[WARN] memberlist: ignoring alive message for 'nm-7': no", logConflict, zerolog.WarnLevel, ""},
		{"[ERR] memberlist: Failed to encode ack: too big", logInternal, zerolog.ErrorLevel, ""},
		{"[ERR] memberlist: Error reading UDP packet: read udp 10.0.0.1:7946: use of closed network connection", logShutdown, zerolog.DebugLevel, ""},
		{"[DEBUG] memberlist: Initiating push/pull sync with: nm-7 10.0.0.2:7946", logOther, zerolog.DebugLevel, "Initiating push/pull sync with: nm-7 10.0.0.2:7946"},
		{"[WARN] memberlist: Binding to public address without encryption!", logOther, zerolog.WarnLevel, ""},
		{"[ERR] memberlist: something new", logOther, zerolog.ErrorLevel, "something new"},
		{"no prefix at all", logOther, zerolog.InfoLevel, "no prefix at all"},
	} {
		kind, level, msg := classifyGossipLine(tc.line)
		if kind != tc.kind || level != tc.level || (tc.msg != "" && msg != tc.msg) {
			t.Errorf("classifyGossipLine(%q) = %s, %s, %q; want %s, %s, %q", tc.line, kind, level, msg, tc.kind, tc.level, tc.msg)
		}
	}
}

// FuzzClassifyGossipLine: any line gets a known kind, a level no higher
// than its prefix names, and a message without memberlist's prefixes.
func FuzzClassifyGossipLine(f *testing.F) {
	for _, s := range []string{
		"[ERR] memberlist: Failed fallback TCP ping: i/o timeout",
		"[INFO] memberlist: Suspect x has failed, no acks received",
		"[DEBUG] memberlist: use of closed network connection",
		"[ERROR]", "[WARN]memberlist:", "", "\n", "[ERR] [ERR] memberlist: memberlist: x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		kind, level, msg := classifyGossipLine(line)
		if kind < 0 || kind >= numGossipLogKinds {
			t.Fatalf("kind %d out of range", kind)
		}
		prefixed, rest := logging.SplitLevel(line)
		if level > prefixed {
			t.Fatalf("%q raised from %s to %s", line, prefixed, level)
		}
		if want := strings.TrimSpace(strings.TrimPrefix(rest, "memberlist:")); msg != want {
			t.Fatalf("message %q, want %q: the prefixes alone removed", msg, want)
		}
	})
}

// TestGossipLogLeavesOutFloods writes more lines of one kind than a window
// allows: the first gossipLogBurst are logged, the rest counted, and the
// first line of the next window says how many were left out; suspicions
// are all logged. Every line is counted by kind and level.
func TestGossipLogLeavesOutFloods(t *testing.T) {
	var buf bytes.Buffer
	now := time.Unix(0, 0)
	g := newGossipLog(zerolog.New(&buf).Level(zerolog.InfoLevel), func() time.Time { return now })
	write := func(line string) { g.Write([]byte(line + "\n")) }
	for range gossipLogBurst + 3 {
		write("[ERR] memberlist: Failed fallback TCP ping: i/o timeout")
	}
	write("[ERR] memberlist: Decrypt packet failed: no key") // another kind: its own budget
	for range gossipLogBurst + 1 {
		write("[INFO] memberlist: Suspect nm-7 has failed, no acks received") // verdicts: never left out
	}
	write("[DEBUG] memberlist: Failed UDP ping: x") // below the log level: counted only
	now = now.Add(gossipLogWindow)
	write("[ERR] memberlist: Failed fallback TCP ping: i/o timeout")

	type line struct {
		Level   string `json:"level"`
		Kind    string `json:"kind"`
		LeftOut uint64 `json:"left_out"`
	}
	var got []line
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var e line
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		got = append(got, e)
	}
	want := []line{}
	for range gossipLogBurst {
		want = append(want, line{"warn", "probe", 0})
	}
	want = append(want, line{"error", "malformed", 0})
	for range gossipLogBurst + 1 {
		want = append(want, line{"info", "suspect", 0})
	}
	want = append(want, line{"warn", "probe", 3})
	if len(got) != len(want) {
		t.Fatalf("logged %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	counts := map[string]uint64{}
	g.logCounts().series(func(kind, level string, n uint64) { counts[kind+"/"+level] = n })
	for key, n := range map[string]uint64{"probe/warn": gossipLogBurst + 4, "probe/debug": 1, "malformed/error": 1, "conflict/error": 0, "suspect/warn": 0, "suspect/info": gossipLogBurst + 1} {
		if c, ok := counts[key]; !ok || c != n {
			t.Errorf("%s counted %d (exported: %v), want %d", key, c, ok, n)
		}
	}
}
