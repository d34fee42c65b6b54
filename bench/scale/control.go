package scale

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// The control protocol between the harness and a child process that hosts
// a slice of the fleet's node monitors: one JSON object per line, commands
// on the child's stdin, events on its stdout. The harness sends one
// command at a time and waits for its reply (ready, counters, killed,
// stopped or failed); progress and launch events may come at any time
// between.

// Command ops, harness to child.
const (
	opStart    = "start"    // start the slice; replies ready (after progress events)
	opCounters = "counters" // replies counters
	opKill     = "kill"     // crash node monitor Kill of the slice, no leave; replies killed
	opStop     = "stop"     // stop the slice; replies stopped, then the child exits
	// opProfile starts a CPU profile of the child into Profile, or, with
	// Profile empty, stops and writes the one started; replies profiled.
	opProfile = "profile"
)

// Event kinds, child to harness.
const (
	evProgress = "progress" // Started of Of node monitors are up
	evReady    = "ready"    // every node monitor of the slice has started
	evCounters = "counters" // Gossip and CPUNanos: the child's counters so far
	evKilled   = "killed"   // Victim was crashed
	evStopped  = "stopped"
	evLaunch   = "launch"   // an executor launched Launch
	evProfiled = "profiled" // a profile started or stopped
	evFailed   = "failed"   // the command failed: Error
)

// Command is one line from the harness to a child.
type Command struct {
	Op    string     `json:"op"`
	Slice *SliceSpec `json:"slice,omitempty"`
	Kill  int        `json:"kill,omitempty"`
	// Profile is where opProfile writes the child's CPU profile.
	Profile string `json:"profile,omitempty"`
}

// SliceSpec is the contiguous run of node monitors a child hosts.
type SliceSpec struct {
	// First is the fleet-wide index of the slice's first node monitor,
	// which fixes its name and loopback address; Count how many follow.
	First, Count  int
	Slots         int
	Apps          []string
	Join          []string
	GossipProfile string
	HTTP          bool
	// StartEvery spaces the slice's starts (fleet.Config.StartEvery).
	StartEvery time.Duration `json:",omitempty"`
}

// Event is one line from a child to the harness.
type Event struct {
	Kind    string        `json:"kind"`
	Started int           `json:"started,omitempty"`
	Of      int           `json:"of,omitempty"`
	Gossip  *GossipTotals `json:"gossip,omitempty"`
	// CPUNanos is, with Gossip, the child's own CPU time so far (user
	// plus system).
	CPUNanos int64   `json:"cpu_nanos,omitempty"`
	Victim   *Victim `json:"victim,omitempty"`
	Launch   *Launch `json:"launch,omitempty"`
	Error    string  `json:"error,omitempty"`
}

// Victim names a killed node monitor as the schedulers know it.
type Victim struct {
	Name string `json:"name"`
	// Addr is its internal service address, which schedulers call.
	Addr string `json:"addr"`
}

// Launch is one task an executor launched: Node is the fleet-wide node
// monitor index, AtUnixNano the wall-clock time (children share the
// machine's clock with the harness).
type Launch struct {
	Node       int    `json:"node"`
	RequestID  string `json:"request_id"`
	TaskID     string `json:"task_id"`
	AtUnixNano int64  `json:"at_unix_nano"`
}

// maxProfilePath bounds a profile's path.
const maxProfilePath = 4096

// maxStartEvery bounds the spacing of a slice's starts.
const maxStartEvery = time.Minute

// maxSliceNodeMonitors bounds a slice to the fleet's address plan.
const maxSliceNodeMonitors = 2500

// parseCommand decodes and checks one command line.
func parseCommand(line []byte) (Command, error) {
	var c Command
	if err := decodeStrict(line, &c); err != nil {
		return Command{}, fmt.Errorf("command %.80q: %w", line, err)
	}
	switch c.Op {
	case opStart:
		s := c.Slice
		switch {
		case s == nil:
			return Command{}, fmt.Errorf("start without a slice")
		case s.First < 0 || s.Count < 1 || s.First+s.Count > maxSliceNodeMonitors || s.Count > maxSliceNodeMonitors:
			return Command{}, fmt.Errorf("slice of %d node monitors from %d: outside 0..%d", s.Count, s.First, maxSliceNodeMonitors)
		case s.Slots < 1:
			return Command{}, fmt.Errorf("slice with %d slots per node monitor", s.Slots)
		case len(s.Apps) == 0 || slices.Contains(s.Apps, ""):
			return Command{}, fmt.Errorf("slice apps %q: want named apps", s.Apps)
		case len(s.Join) == 0:
			return Command{}, fmt.Errorf("slice with no gossip address to join")
		case s.StartEvery < 0 || s.StartEvery > maxStartEvery:
			return Command{}, fmt.Errorf("slice starts every %v: want 0 to %v", s.StartEvery, maxStartEvery)
		}
	case opKill:
		if c.Kill < 0 {
			return Command{}, fmt.Errorf("kill %d: want an index in the slice", c.Kill)
		}
	case opProfile:
		if len(c.Profile) > maxProfilePath || strings.ContainsRune(c.Profile, 0) {
			return Command{}, fmt.Errorf("profile path of %d bytes: want a path of at most %d", len(c.Profile), maxProfilePath)
		}
	case opCounters, opStop:
	default:
		return Command{}, fmt.Errorf("unknown op %q", c.Op)
	}
	return c, nil
}

// parseEvent decodes and checks one event line.
func parseEvent(line []byte) (Event, error) {
	var e Event
	if err := decodeStrict(line, &e); err != nil {
		return Event{}, fmt.Errorf("event %.80q: %w", line, err)
	}
	switch e.Kind {
	case evProgress:
		if e.Started < 0 || e.Of < e.Started {
			return Event{}, fmt.Errorf("progress %d of %d", e.Started, e.Of)
		}
	case evCounters:
		if e.Gossip == nil {
			return Event{}, fmt.Errorf("counters without counts")
		}
	case evKilled:
		if e.Victim == nil || e.Victim.Name == "" {
			return Event{}, fmt.Errorf("killed names no node monitor")
		}
	case evLaunch:
		if e.Launch == nil || e.Launch.RequestID == "" {
			return Event{}, fmt.Errorf("launch names no job")
		}
	case evFailed:
		if e.Error == "" {
			return Event{}, fmt.Errorf("failed without an error")
		}
	case evReady, evStopped, evProfiled:
	default:
		return Event{}, fmt.Errorf("unknown event %q", e.Kind)
	}
	return e, nil
}

// decodeStrict decodes exactly one JSON object with known fields.
func decodeStrict(line []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(line))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return fmt.Errorf("trailing data")
	}
	return nil
}

// encodeLine is v as one protocol line.
func encodeLine(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("control message does not encode: %v", err)) // only plain structs are sent
	}
	return append(b, '\n')
}
