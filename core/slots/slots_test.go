package slots

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sparrowfleet/sparrow/core/queue"
)

func res(req, app string) queue.Reservation {
	return queue.Reservation{RequestID: req, App: app, User: "u", Scheduler: "s:1"}
}

func newCore(t *testing.T, slots int, apps ...string) *Core {
	t.Helper()
	c, err := New(slots, queue.NewFIFO())
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range apps {
		c.AddApp(a)
	}
	return c
}

// state is a snapshot of the counters.
type state struct{ free, fetching, running, queued int }

func snap(c *Core) state { return state{c.Free(), c.Fetching(), c.Running(), c.Queued()} }

func expect(t *testing.T, c *Core, want state) {
	t.Helper()
	if got := snap(c); got != want {
		t.Fatalf("state = %+v, want %+v", got, want)
	}
	if got := c.Free() + c.Fetching() + c.Running(); got != c.Slots() {
		t.Fatalf("free+fetching+running = %d, want %d slots", got, c.Slots())
	}
}

func TestNewRejectsBadArguments(t *testing.T) {
	tests := []struct {
		name  string
		slots int
		q     queue.Discipline
		want  string
	}{
		{"zero slots", 0, queue.NewFIFO(), "slots must be positive"},
		{"negative slots", -4, queue.NewFIFO(), "got -4"},
		{"nil queue", 1, nil, "nil queue"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.slots, tt.q)
			if err == nil || c != nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New = %v, %v; want error containing %q", c, err, tt.want)
			}
		})
	}
	c, err := New(3, queue.NewFIFO())
	if err != nil || c.Slots() != 3 {
		t.Fatalf("New(3) = %v, %v", c, err)
	}
	expect(t, c, state{free: 3})
}

// op is one step of a slot-machine script.
type op struct {
	do string // "enq", "next", "none" (Next must fail), "rel", "start", "dupstart", "fin", "finbad", "cancel"
	// arg is the request id (enq, cancel) or task id (start, fin).
	arg string
	n   int // enq: count; cancel: expected removed count
	// want, if set, is the state after the op.
	want *state
}

func st(free, fetching, running, queued int) *state {
	return &state{free, fetching, running, queued}
}

func TestSlotAccounting(t *testing.T) {
	tests := []struct {
		name  string
		slots int
		ops   []op
	}{
		{
			name: "next needs a free slot and a reservation", slots: 2,
			ops: []op{
				{do: "none", want: st(2, 0, 0, 0)},
				{do: "enq", arg: "r1", n: 3, want: st(2, 0, 0, 3)},
				{do: "next", arg: "r1", want: st(1, 1, 0, 2)},
				{do: "next", arg: "r1", want: st(0, 2, 0, 1)},
				{do: "none", want: st(0, 2, 0, 1)},
				{do: "start", arg: "a", want: st(0, 1, 1, 1)},
				{do: "none"},
				{do: "rel", want: st(1, 0, 1, 1)},
				{do: "next", arg: "r1", want: st(0, 1, 1, 0)},
				{do: "rel", want: st(1, 0, 1, 0)},
				{do: "none", want: st(1, 0, 1, 0)},
				{do: "fin", arg: "a", want: st(2, 0, 0, 0)},
			},
		},
		{
			name: "released frees the slot at once", slots: 1,
			ops: []op{
				{do: "enq", arg: "r1", n: 1},
				{do: "enq", arg: "r2", n: 1},
				{do: "next", arg: "r1", want: st(0, 1, 0, 1)},
				{do: "none"},
				{do: "rel", want: st(1, 0, 0, 1)},
				{do: "next", arg: "r2", want: st(0, 1, 0, 0)},
			},
		},
		{
			name: "stray release does not create slots", slots: 1,
			ops: []op{
				{do: "rel", want: st(1, 0, 0, 0)},
				{do: "rel", want: st(1, 0, 0, 0)},
			},
		},
		{
			name: "duplicate start refused and frees its slot", slots: 2,
			ops: []op{
				{do: "enq", arg: "r1", n: 2},
				{do: "next", arg: "r1"},
				{do: "start", arg: "a", want: st(1, 0, 1, 1)},
				{do: "next", arg: "r1", want: st(0, 1, 1, 0)},
				{do: "dupstart", arg: "a", want: st(1, 0, 1, 0)},
				{do: "fin", arg: "a", want: st(2, 0, 0, 0)},
			},
		},
		{
			name: "finished unknown task frees nothing", slots: 2,
			ops: []op{
				{do: "enq", arg: "r1", n: 1},
				{do: "next", arg: "r1"},
				{do: "start", arg: "a", want: st(1, 0, 1, 0)},
				{do: "finbad", arg: "b", want: st(1, 0, 1, 0)},
				{do: "fin", arg: "a", want: st(2, 0, 0, 0)},
				{do: "finbad", arg: "a", want: st(2, 0, 0, 0)}, // repeated report
			},
		},
		{
			name: "cancel removes only that request", slots: 1,
			ops: []op{
				{do: "enq", arg: "r1", n: 2},
				{do: "enq", arg: "r2", n: 3},
				{do: "enq", arg: "r1", n: 1},
				{do: "cancel", arg: "r1", n: 3, want: st(1, 0, 0, 3)},
				{do: "cancel", arg: "r1", n: 0},
				{do: "cancel", arg: "nope", n: 0, want: st(1, 0, 0, 3)},
				{do: "next", arg: "r2"},
				{do: "cancel", arg: "r2", n: 2, want: st(0, 1, 0, 0)}, // the fetching one is not queued
				{do: "rel", want: st(1, 0, 0, 0)},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCore(t, tt.slots, "app")
			for i, o := range tt.ops {
				key := TaskKey{RequestID: "r1", TaskID: o.arg}
				switch o.do {
				case "enq":
					if err := c.Enqueue(res(o.arg, "app"), o.n); err != nil {
						t.Fatalf("op %d: Enqueue: %v", i, err)
					}
				case "next":
					r, ok := c.Next()
					if !ok || r.RequestID != o.arg {
						t.Fatalf("op %d: Next = %+v, %v; want a reservation of %s", i, r, ok, o.arg)
					}
				case "none":
					if r, ok := c.Next(); ok {
						t.Fatalf("op %d: Next = %+v, want nothing", i, r)
					}
				case "rel":
					c.Released()
				case "start":
					if !c.Started(key, "app") {
						t.Fatalf("op %d: Started(%v) refused", i, key)
					}
				case "dupstart":
					if c.Started(key, "app") {
						t.Fatalf("op %d: duplicate Started(%v) accepted", i, key)
					}
				case "fin":
					if !c.Finished(key) {
						t.Fatalf("op %d: Finished(%v) = false", i, key)
					}
				case "finbad":
					if c.Finished(key) {
						t.Fatalf("op %d: Finished(%v) of a task not running = true", i, key)
					}
				case "cancel":
					if got := c.Cancel(o.arg); got != o.n {
						t.Fatalf("op %d: Cancel(%s) = %d, want %d", i, o.arg, got, o.n)
					}
				default:
					t.Fatalf("bad op %q", o.do)
				}
				if o.want != nil {
					expect(t, c, *o.want)
				}
			}
		})
	}
}

func TestTaskKeysDistinguishRequests(t *testing.T) {
	c := newCore(t, 2, "app")
	if err := c.Enqueue(res("r", "app"), 2); err != nil {
		t.Fatal(err)
	}
	c.Next()
	c.Next()
	// The same task id in two requests is two tasks.
	if !c.Started(TaskKey{"r1", "0"}, "app") || !c.Started(TaskKey{"r2", "0"}, "app") {
		t.Fatal("same task id under different requests refused")
	}
	if !c.Finished(TaskKey{"r2", "0"}) || c.Finished(TaskKey{"r2", "0"}) || !c.Finished(TaskKey{"r1", "0"}) {
		t.Fatal("finished bookkeeping mixed up requests")
	}
	expect(t, c, state{free: 2})
}

func TestEnqueueRefusals(t *testing.T) {
	tests := []struct {
		name     string
		app      string
		n        int
		max      int
		prefill  int
		wantErr  []string // substrings; nil = accepted
		wantSize int      // queued afterwards
	}{
		{name: "ok", app: "spark", n: 3, wantSize: 3},
		{name: "unknown app", app: "hadoop", n: 1, wantErr: []string{`"hadoop"`, "no executor", `"req"`}},
		{name: "zero count", app: "spark", n: 0, wantErr: []string{"positive", "got 0"}},
		{name: "negative count", app: "spark", n: -1, wantErr: []string{"positive"}},
		{name: "up to the bound", app: "spark", n: 2, max: 5, prefill: 3, wantSize: 5},
		{name: "over the bound is refused whole", app: "spark", n: 3, max: 5, prefill: 3, wantErr: []string{"queue full", "limit 5"}, wantSize: 3},
		{name: "single over the bound", app: "spark", n: 1, max: 3, prefill: 3, wantErr: []string{"queue full"}, wantSize: 3},
		{name: "huge count against the default bound", app: "spark", n: DefaultMaxQueued + 1, wantErr: []string{"queue full"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCore(t, 1, "spark")
			c.SetMaxQueued(tt.max)
			if tt.prefill > 0 {
				if err := c.Enqueue(res("pre", "spark"), tt.prefill); err != nil {
					t.Fatal(err)
				}
			}
			err := c.Enqueue(res("req", tt.app), tt.n)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("Enqueue: %v", err)
				}
			} else {
				if err == nil {
					t.Fatal("Enqueue accepted, want refusal")
				}
				for _, s := range tt.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not mention %s", err, s)
					}
				}
			}
			if c.Queued() != tt.wantSize {
				t.Fatalf("Queued = %d, want %d", c.Queued(), tt.wantSize)
			}
		})
	}
}

func TestSetMaxQueued(t *testing.T) {
	c := newCore(t, 1, "a")
	c.SetMaxQueued(1)
	if err := c.Enqueue(res("r", "a"), 2); err == nil || !strings.Contains(err.Error(), "limit 1") {
		t.Fatalf("bound of 1 accepted 2 (err %v)", err)
	}
	for _, n := range []int{0, -5} { // both restore the default
		c.SetMaxQueued(1)
		c.SetMaxQueued(n)
		if err := c.Enqueue(res("r", "a"), 2); err != nil {
			t.Fatalf("SetMaxQueued(%d): default bound refused 2: %v", n, err)
		}
		// Refused without queueing anything, so this is cheap to check.
		err := c.Enqueue(res("r", "a"), DefaultMaxQueued-c.Queued()+1)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("limit %d", DefaultMaxQueued)) {
			t.Fatalf("SetMaxQueued(%d): filling past the default bound: %v", n, err)
		}
	}
	// Lowering the bound below the queue length refuses new ones but keeps
	// what is queued.
	c.SetMaxQueued(2)
	if c.Queued() != 4 {
		t.Fatalf("Queued = %d, want 4", c.Queued())
	}
	if err := c.Enqueue(res("r", "a"), 1); err == nil {
		t.Fatal("enqueue above a lowered bound accepted")
	}
}

func TestApps(t *testing.T) {
	c := newCore(t, 2)
	if c.HasApp("a") || len(c.Apps()) != 0 {
		t.Fatal("fresh core has apps")
	}
	c.AddApp("a")
	c.AddApp("b")
	c.AddApp("a")
	apps := c.Apps()
	slices.Sort(apps)
	if !slices.Equal(apps, []string{"a", "b"}) || !c.HasApp("a") {
		t.Fatalf("Apps = %v", apps)
	}
	for _, r := range []queue.Reservation{res("r1", "a"), res("r2", "b"), res("r3", "a")} {
		if err := c.Enqueue(r, 2); err != nil {
			t.Fatal(err)
		}
	}
	// One of a's reservations is being fetched when a goes away.
	if r, ok := c.Next(); !ok || r.App != "a" {
		t.Fatalf("Next = %+v, %v", r, ok)
	}
	if got := c.RemoveApp("a"); got != 3 {
		t.Fatalf("RemoveApp(a) dropped %d, want 3", got)
	}
	if c.HasApp("a") || c.Queued() != 2 {
		t.Fatalf("after RemoveApp: HasApp=%v Queued=%d", c.HasApp("a"), c.Queued())
	}
	err := c.Enqueue(res("r4", "a"), 1)
	if err == nil || !strings.Contains(err.Error(), `"a"`) {
		t.Fatalf("Enqueue for removed app: %v, want error naming it", err)
	}
	// The fetching slot is still held until answered.
	expect(t, c, state{free: 1, fetching: 1, queued: 2})
	if !c.Started(TaskKey{"r1", "t"}, "a") {
		t.Fatal("Started refused")
	}
	if got := c.RemoveApp("a"); got != 0 {
		t.Fatalf("second RemoveApp dropped %d", got)
	}
	if c.Running() != 1 {
		t.Fatal("RemoveApp stopped a running task")
	}
	if r, ok := c.Next(); !ok || r.App != "b" {
		t.Fatalf("Next = %+v, %v; want b's", r, ok)
	}
	if c.Queue() == nil {
		t.Fatal("Queue() is nil")
	}
}

// A long random run: the counters never go out of range and every
// reservation is served at most once.
func TestSlotsRandomRun(t *testing.T) {
	c := newCore(t, 3, "app")
	c.SetMaxQueued(50)
	seed := uint64(12345)
	rnd := func(n int) int {
		seed ^= seed << 13
		seed ^= seed >> 7
		seed ^= seed << 17
		return int(seed % uint64(n))
	}
	var running []TaskKey
	fetching := 0
	enqueued, served, cancelled := 0, 0, 0
	for i := range 20000 {
		switch rnd(6) {
		case 0:
			n := 1 + rnd(5)
			if c.Enqueue(res("r"+string(rune('a'+rnd(4))), "app"), n) == nil {
				enqueued += n
			}
		case 1:
			if _, ok := c.Next(); ok {
				fetching++
				served++
			}
		case 2:
			if fetching > 0 {
				c.Released()
				fetching--
			}
		case 3:
			if fetching > 0 {
				k := TaskKey{"r", string(rune(i))}
				if !c.Started(k, "app") {
					t.Fatal("fresh task refused")
				}
				running = append(running, k)
				fetching--
			}
		case 4:
			if len(running) > 0 {
				j := rnd(len(running))
				if !c.Finished(running[j]) {
					t.Fatal("running task not found")
				}
				running = slices.Delete(running, j, j+1)
			}
		case 5:
			cancelled += c.Cancel("r" + string(rune('a'+rnd(4))))
		}
		if c.Fetching() != fetching || c.Running() != len(running) || c.Free() < 0 || c.Free()+fetching+len(running) != 3 {
			t.Fatalf("step %d: fetching %d/%d running %d/%d free %d", i, c.Fetching(), fetching, c.Running(), len(running), c.Free())
		}
		if c.Queued() != enqueued-served-cancelled || c.Queued() > 50 {
			t.Fatalf("step %d: Queued = %d, want %d", i, c.Queued(), enqueued-served-cancelled)
		}
	}
}

// TestAppsAgainstSet adds and removes apps at random, past smallApps so
// that both the scanned list and the indexed map answer, and checks HasApp,
// Apps and whether Enqueue accepts an app against a plain set.
func TestAppsAgainstSet(t *testing.T) {
	for _, names := range []int{3, smallApps, smallApps + 1, 3 * smallApps} {
		t.Run(fmt.Sprint(names), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(names), 3))
			c, err := New(1, queue.NewFIFO())
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]bool{}
			for step := range 2000 {
				a := fmt.Sprint("app", rng.IntN(names))
				if rng.IntN(3) == 0 {
					c.RemoveApp(a)
					delete(want, a)
				} else {
					c.AddApp(a)
					want[a] = true
				}
				got := c.Apps()
				slices.Sort(got)
				if !slices.Equal(got, slices.Sorted(maps.Keys(want))) {
					t.Fatalf("step %d: Apps = %v, want %v", step, got, slices.Sorted(maps.Keys(want)))
				}
				for i := range names {
					b := fmt.Sprint("app", i)
					err := c.Enqueue(queue.Reservation{RequestID: "r", App: b}, 1)
					if c.HasApp(b) != want[b] || (err == nil) != want[b] {
						t.Fatalf("step %d: %s: HasApp %v, Enqueue error %v, want registered %v", step, b, c.HasApp(b), err, want[b])
					}
					c.Cancel("r")
				}
			}
		})
	}
}

// EnqueueFrom and NextInto behave as Enqueue and Next, over the FIFO they
// pop in place and over another discipline, and NextInto leaves its
// target alone when it hands out nothing.
func TestEnqueueFromNextInto(t *testing.T) {
	fair, err := queue.NewFair(1, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, q := range map[string]queue.Discipline{"fifo": queue.NewFIFO(), "fair": fair} {
		c, err := New(2, q)
		if err != nil {
			t.Fatal(err)
		}
		c.AddApp("a")
		r := queue.Reservation{RequestID: "R", App: "a", User: "u", Tag: 7}
		if err := c.EnqueueFrom(&r, 3); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		bad := queue.Reservation{RequestID: "X", App: "none"}
		if err := c.EnqueueFrom(&bad, 1); err == nil {
			t.Fatalf("%s: EnqueueFrom accepted an app with no executor", name)
		}
		var got queue.Reservation
		for i := range 2 {
			if !c.NextInto(&got) || got != r {
				t.Fatalf("%s: NextInto %d gave %+v, want %+v", name, i, got, r)
			}
		}
		expect(t, c, state{free: 0, fetching: 2, running: 0, queued: 1})
		got = queue.Reservation{RequestID: "kept"}
		if c.NextInto(&got) || got.RequestID != "kept" {
			t.Fatalf("%s: NextInto with no free slot returned true or changed its target to %+v", name, got)
		}
		if !c.Started(TaskKey{RequestID: "R", TaskID: "t1"}, "a") {
			t.Fatalf("%s: Started refused a held slot", name)
		}
		c.Released()
		if !c.NextInto(&got) || got != r {
			t.Fatalf("%s: NextInto after a release gave %+v, want %+v", name, got, r)
		}
		expect(t, c, state{free: 0, fetching: 1, running: 1, queued: 0})
	}
}
