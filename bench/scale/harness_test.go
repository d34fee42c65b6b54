package scale

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

func TestProcessesAndSlices(t *testing.T) {
	for _, tc := range []struct {
		n, procs, wantProcs int
		wantCounts          []int
	}{
		{100, 1, 1, []int{100}},
		{100, 2, 2, []int{50, 50}},
		{1000, 0, 5, []int{200, 200, 200, 200, 200}},
		{201, 0, 2, []int{101, 100}},
		{200, 0, 1, []int{200}},
		{7, 3, 3, []int{3, 2, 2}},
		{3, 8, 3, []int{1, 1, 1}},
	} {
		got := processesFor(tc.n, tc.procs)
		if got != tc.wantProcs {
			t.Errorf("processesFor(%d, %d) = %d, want %d", tc.n, tc.procs, got, tc.wantProcs)
			continue
		}
		plan := splitSlices(tc.n, got)
		next := 0
		for k, s := range plan {
			if s.First != next || s.Count != tc.wantCounts[k] {
				t.Errorf("n=%d procs=%d: slice %d is %d from %d, want %d from %d", tc.n, tc.procs, k, s.Count, s.First, tc.wantCounts[k], next)
			}
			next += s.Count
		}
		if next != tc.n || len(plan) != len(tc.wantCounts) {
			t.Errorf("n=%d procs=%d: %d slices cover %d node monitors", tc.n, tc.procs, len(plan), next)
		}
		if largestSlice(tc.n, tc.procs) != tc.wantCounts[0] {
			t.Errorf("largestSlice(%d, %d) = %d, want %d", tc.n, tc.procs, largestSlice(tc.n, tc.procs), tc.wantCounts[0])
		}
	}
}

// fakeChild answers a childConn over pipes: for each command it reads it
// writes the scripted lines, or ends its events if there are none.
type fakeChild struct {
	conn *childConn
	cmds chan Command
}

func newFakeChild(t *testing.T, hooks childHooks, script func(Command) []string) *fakeChild {
	cmdR, cmdW := io.Pipe()
	evR, evW := io.Pipe()
	t.Cleanup(func() { cmdR.Close(); evW.Close() })
	f := &fakeChild{conn: newChildConn("fake", evR, cmdW, hooks), cmds: make(chan Command, 16)}
	go func() {
		defer evW.Close()
		sc := bufio.NewScanner(cmdR)
		for sc.Scan() {
			c, err := parseCommand(sc.Bytes())
			if err != nil {
				t.Errorf("the harness sent a bad command: %v", err)
				return
			}
			f.cmds <- c
			lines := script(c)
			if len(lines) == 0 {
				return
			}
			for _, l := range lines {
				if _, err := io.WriteString(evW, l+"\n"); err != nil {
					return
				}
			}
		}
	}()
	return f
}

func TestChildConnPassesEventsAndReplies(t *testing.T) {
	var mu sync.Mutex
	var launches []Launch
	var progress []int
	hooks := childHooks{
		progress: func(started, of int) { mu.Lock(); progress = append(progress, started); mu.Unlock() },
		launch:   func(l Launch) { mu.Lock(); launches = append(launches, l); mu.Unlock() },
	}
	fc := newFakeChild(t, hooks, func(c Command) []string {
		switch c.Op {
		case opStart:
			return []string{`{"kind":"progress","started":1,"of":2}`, `{"kind":"progress","started":2,"of":2}`, `{"kind":"ready"}`}
		case opCounters:
			return []string{`{"kind":"launch","launch":{"node":7,"request_id":"job-1","task_id":"0","at_unix_nano":42}}`,
				`{"kind":"counters","gossip":{"UDPBytes":100,"UDPPackets":3},"cpu_nanos":2000000}`}
		case opKill:
			return []string{`{"kind":"failed","error":"no node monitor 9 in this slice"}`}
		}
		return []string{`{"kind":"stopped"}`}
	})
	ctx := context.Background()
	if _, err := fc.conn.call(ctx, Command{Op: opStart, Slice: &SliceSpec{Count: 2, Slots: 1, Apps: []string{"a"}, Join: []string{"x:1"}}}, evReady); err != nil {
		t.Fatalf("start: %v", err)
	}
	g, cpu, err := fc.conn.counters(ctx)
	if err != nil || g.UDPBytes != 100 || g.UDPPackets != 3 || cpu != 2*time.Millisecond {
		t.Errorf("counters = %+v, %v, %v; want 100 UDP bytes in 3 packets and 2ms", g, cpu, err)
	}
	if _, err := fc.conn.call(ctx, Command{Op: opKill, Kill: 9}, evKilled); err == nil || !strings.Contains(err.Error(), "no node monitor 9") {
		t.Errorf("kill = %v, want the child's error", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(progress) != 2 || progress[1] != 2 {
		t.Errorf("progress %v, want 1 then 2", progress)
	}
	if len(launches) != 1 || launches[0] != (Launch{Node: 7, RequestID: "job-1", TaskID: "0", AtUnixNano: 42}) {
		t.Errorf("launches %+v, want job-1's", launches)
	}
}

func TestChildConnFailsWhenTheChildIsGone(t *testing.T) {
	for _, tc := range []struct {
		name, reply, want string
	}{
		{"no reply", "", "events ended"},
		{"garbage", "panic: oops", "invalid"},
		{"the wrong reply", `{"kind":"stopped"}`, "answered stopped"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fc := newFakeChild(t, childHooks{}, func(Command) []string {
				if tc.reply == "" {
					return nil
				}
				return []string{tc.reply}
			})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, _, err := fc.conn.counters(ctx)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("counters = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestUsageSumsEveryProcess(t *testing.T) {
	counts := func(udp int64, cpu time.Duration) func(Command) []string {
		return func(Command) []string {
			return []string{strings.TrimSpace(string(encodeLine(Event{Kind: evCounters, Gossip: &GossipTotals{UDPBytes: udp, Suspect: 1}, CPUNanos: int64(cpu)})))}
		}
	}
	u := &fleetUnderTest{counter: &GossipCounter{}}
	u.counter.udpBytes.Store(5)
	for _, c := range []*fakeChild{newFakeChild(t, childHooks{}, counts(100, time.Second)), newFakeChild(t, childHooks{}, counts(20, 2*time.Second))} {
		u.children = append(u.children, &childProc{childConn: c.conn})
	}
	g, cpu, err := u.usage(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if g.UDPBytes != 125 || g.Suspect != 2 {
		t.Errorf("gossip %+v, want 125 UDP bytes and 2 suspicions: this process's and both children's", g)
	}
	if cpu < 3*time.Second || cpu > 3*time.Second+processCPU() {
		t.Errorf("CPU %v, want the children's 3 s plus this process's", cpu)
	}
}

// TestServeChildAnswersWithoutAFleet drives a child's command loop in
// memory through the commands that need no running slice.
func TestServeChildAnswersWithoutAFleet(t *testing.T) {
	got := serveChildKinds(t,
		`{"op":"counters"}`,
		`{"op":"kill","kill":0}`,
		`{"op":"dance"}`,
		`{"op":"stop"}`,
		`{"op":"counters"}`, // after stop: never read
	)
	if want := "counters,failed,failed,stopped"; got != want {
		t.Errorf("events %s, want %s", got, want)
	}
}

// serveChildKinds runs a child's command loop in memory on the command
// lines and returns the kinds of the events it wrote, comma-separated.
func serveChildKinds(t *testing.T, lines ...string) string {
	t.Helper()
	var out strings.Builder
	in := strings.Join(lines, "\n") + "\n"
	if err := ServeChild(context.Background(), strings.NewReader(in), &out, zerolog.Nop()); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		e, err := parseEvent([]byte(l))
		if err != nil {
			t.Fatalf("child wrote %q: %v", l, err)
		}
		kinds = append(kinds, e.Kind)
	}
	return strings.Join(kinds, ",")
}

// TestServeChildProfiles starts and stops a child's CPU profile through
// its command loop, and a profile that cannot be written fails the command
// only.
func TestServeChildProfiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "idle-child-0.pprof")
	got := serveChildKinds(t,
		`{"op":"profile","profile":`+strconv.Quote(path)+`}`,
		`{"op":"profile"}`,
		`{"op":"profile","profile":`+strconv.Quote(filepath.Join(path, "under-a-file.pprof"))+`}`,
		`{"op":"stop"}`,
	)
	if want := "profiled,profiled,failed,stopped"; got != want {
		t.Errorf("events %s, want %s", got, want)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		t.Errorf("profile %s: %v, want it written", path, err)
	}
}

func TestChildProfilePath(t *testing.T) {
	for _, tc := range []struct {
		path string
		k    int
		want string
	}{
		{"/out/idle-1000.pprof", 0, "/out/idle-1000-child-0.pprof"},
		{"/out/idle-1000.pprof", 4, "/out/idle-1000-child-4.pprof"},
		{"/out/idle", 1, "/out/idle-child-1"},
	} {
		if got := childProfilePath(tc.path, tc.k); got != tc.want {
			t.Errorf("childProfilePath(%q, %d) = %q, want %q", tc.path, tc.k, got, tc.want)
		}
	}
}

func TestServeChildStopsAtTheEndOfItsInput(t *testing.T) {
	var out strings.Builder
	if err := ServeChild(context.Background(), strings.NewReader(`{"op":"counters"}`+"\n"), &out, zerolog.Nop()); err != nil {
		t.Errorf("ServeChild at EOF = %v, want nil", err)
	}
}

func TestStartEverySpreadsTheRateOverProcesses(t *testing.T) {
	for _, tc := range []struct {
		rate  float64
		procs int
		want  time.Duration
	}{
		{0, 5, 0},
		{2, 1, 500 * time.Millisecond},
		{2, 5, 2500 * time.Millisecond},
		{10, 4, 400 * time.Millisecond},
	} {
		if got := startEvery(tc.rate, tc.procs); got != tc.want {
			t.Errorf("startEvery(%g, %d) = %v, want %v", tc.rate, tc.procs, got, tc.want)
		}
	}
}
