package scheduler

import (
	"strconv"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// TestRunningBook drives the lost-node bookkeeping through sequences of
// launches, finishes and losses and checks what it tracks and drops.
func TestRunningBook(t *testing.T) {
	t0 := runningTask{app: "a", request: "r", task: "t0"}
	t1 := runningTask{app: "a", request: "r", task: "t1"}
	type step struct {
		op   string // track, finish, snapshot, lose, lose-snapshot, late
		addr string
		task runningTask
		want bool // finish: was tracked; late: dropped
	}
	tests := []struct {
		name                    string
		steps                   []step
		tracked, lostN, dropped int
		onA                     int
	}{
		{name: "launch and finish", steps: []step{
			{op: "track", addr: "a", task: t0},
			{op: "finish", addr: "a", task: t0, want: true},
			{op: "finish", addr: "a", task: t0, want: false},
		}},
		{name: "finish on another node is not this task", steps: []step{
			{op: "track", addr: "a", task: t0},
			{op: "finish", addr: "b", task: t0, want: false},
		}, tracked: 1, onA: 1},
		{name: "lost node reports its tasks, then drops their messages", steps: []step{
			{op: "track", addr: "a", task: t0},
			{op: "track", addr: "a", task: t1},
			{op: "track", addr: "b", task: t1},
			{op: "lose", addr: "a"},
			{op: "late", task: t0, want: true},
			{op: "late", task: runningTask{task: "other"}, want: false},
		}, tracked: 1, lostN: 2, dropped: 1},
		{name: "losing an idle node loses nothing", steps: []step{
			{op: "lose", addr: "a"},
		}},
		{name: "a node restarted at the same address keeps the tasks it launched since", steps: []step{
			{op: "track", addr: "a", task: t0},
			{op: "snapshot", addr: "a"},
			{op: "track", addr: "a", task: t1},
			{op: "lose-snapshot", addr: "a"},
			{op: "late", task: t1, want: false},
			{op: "late", task: t0, want: true},
		}, tracked: 1, lostN: 1, dropped: 1, onA: 1},
		{name: "nothing ran when it went: nothing lost", steps: []step{
			{op: "snapshot", addr: "a"},
			{op: "track", addr: "a", task: t0},
			{op: "lose-snapshot", addr: "a"},
		}, tracked: 1, onA: 1},
		{name: "a task of the snapshot that finished is not lost", steps: []step{
			{op: "track", addr: "a", task: t0},
			{op: "track", addr: "a", task: t1},
			{op: "snapshot", addr: "a"},
			{op: "finish", addr: "a", task: t0, want: true},
			{op: "lose-snapshot", addr: "a"},
		}, lostN: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b runningBook
			var snap map[runningTask]struct{}
			for i, st := range tt.steps {
				switch st.op {
				case "track":
					b.track(st.addr, st.task, int64(i+1), time.Unix(int64(i+1), 0))
				case "finish":
					fetch, submitted, ok := b.finished(st.addr, st.task)
					if ok != st.want {
						t.Fatalf("step %d: finished = %v, want %v", i, ok, st.want)
					}
					if ok && (fetch == 0 || submitted.Unix() != fetch) {
						t.Fatalf("step %d: finished gave fetch %d submitted at %v; the handout tracked is lost", i, fetch, submitted)
					}
				case "snapshot":
					snap = b.snapshot(st.addr)
				case "lose":
					b.nodeLost(st.addr, nil)
				case "lose-snapshot":
					if got := b.nodeLost(st.addr, snap); len(got) != tt.lostN {
						t.Fatalf("step %d: %d lost, want %d", i, len(got), tt.lostN)
					}
				case "late":
					if got := b.late(st.task); got != st.want {
						t.Fatalf("step %d: late = %v, want %v", i, got, st.want)
					}
				}
			}
			var s Stats
			b.statsInto(&s)
			if s.RunningTracked != tt.tracked || s.TasksLost != uint64(tt.lostN) || s.LateDropped != uint64(tt.dropped) || b.on("a") != tt.onA {
				t.Fatalf("tracked %d lost %d dropped %d on a %d; want %d %d %d %d",
					s.RunningTracked, s.TasksLost, s.LateDropped, b.on("a"), tt.tracked, tt.lostN, tt.dropped, tt.onA)
			}
		})
	}
}

// TestLostSetForgetsOldest: the set of lost tasks is bounded, and the
// oldest are forgotten first.
func TestLostSetForgetsOldest(t *testing.T) {
	task := func(i int) runningTask { return runningTask{app: "a", request: "r", task: strconv.Itoa(i)} }
	for _, limit := range []int{1, 3, 100} {
		l := lostSet{limit: limit}
		for i := range limit + 2 {
			l.add(task(i))
		}
		for _, c := range []struct {
			i    int
			want bool
		}{{0, false}, {1, false}, {2, true}, {limit + 1, true}} {
			if got := l.has(task(c.i)); got != c.want {
				t.Errorf("limit %d: task %d remembered %v, want %v", limit, c.i, got, c.want)
			}
		}
		if len(l.set) != limit {
			t.Fatalf("limit %d: %d remembered", limit, len(l.set))
		}
	}
	var l lostSet
	l.add(task(0))
	if !l.has(task(0)) || len(l.ring) != 1 {
		t.Fatal("the zero lostSet does not remember")
	}
}

// TestRunningBookFetches: the fetch memory follows the tasks tracked. A
// fetch that handed out a task is answered again, the same way, while
// that task is tracked there as handed out by it, and is forgotten when
// the task finishes or its node is lost; any other answer is not kept.
func TestRunningBookFetches(t *testing.T) {
	t0 := runningTask{app: "a", request: "r", task: "t0"}
	t1 := runningTask{app: "a", request: "r", task: "t1"}
	type step struct {
		op    string // ask, track, answer, finish, lose
		addr  string
		fetch int64
		task  runningTask
		// ask: the fetch was known, is still being answered, and hands
		// out its task again
		known, pending, again bool
	}
	tests := []struct {
		name       string
		steps      []step
		remembered int
		askedAgain uint64
	}{
		{name: "asked again while its task runs", steps: []step{
			{op: "ask", addr: "a", fetch: 7},
			{op: "track", addr: "a", fetch: 7, task: t0},
			{op: "answer", addr: "a", fetch: 7, task: t0},
			{op: "ask", addr: "a", fetch: 7, known: true, again: true},
		}, remembered: 1, askedAgain: 1},
		{name: "asked again while being answered", steps: []step{
			{op: "ask", addr: "a", fetch: 7},
			{op: "ask", addr: "a", fetch: 7, known: true, pending: true},
		}, remembered: 1},
		{name: "forgotten when its task finishes", steps: []step{
			{op: "ask", addr: "a", fetch: 7},
			{op: "track", addr: "a", fetch: 7, task: t0},
			{op: "answer", addr: "a", fetch: 7, task: t0},
			{op: "finish", addr: "a", task: t0},
		}},
		{name: "forgotten when its node is lost, others kept", steps: []step{
			{op: "ask", addr: "a", fetch: 7},
			{op: "track", addr: "a", fetch: 7, task: t0},
			{op: "answer", addr: "a", fetch: 7, task: t0},
			{op: "ask", addr: "b", fetch: 7},
			{op: "track", addr: "b", fetch: 7, task: t1},
			{op: "answer", addr: "b", fetch: 7, task: t1},
			{op: "lose", addr: "a"},
		}, remembered: 1},
		{name: "a task tracked as handed out by another fetch is not kept", steps: []step{
			{op: "ask", addr: "a", fetch: 7},
			{op: "track", addr: "a", fetch: 8, task: t0},
			{op: "answer", addr: "a", fetch: 7, task: t0},
		}},
		{name: "a task handed out by another fetch since answers empty", steps: []step{
			{op: "ask", addr: "a", fetch: 7},
			{op: "track", addr: "a", fetch: 7, task: t0},
			{op: "answer", addr: "a", fetch: 7, task: t0},
			{op: "track", addr: "a", fetch: 9, task: t0},
			{op: "ask", addr: "a", fetch: 7, known: true},
		}, askedAgain: 1},
		{name: "a getTask records nothing", steps: []step{
			{op: "track", addr: "a", task: t0},
			{op: "answer", addr: "a", task: t0},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b runningBook
			for i, st := range tt.steps {
				switch st.op {
				case "ask":
					known, pending, spec := b.fetchAgain(st.addr, st.fetch)
					if known != st.known || pending != st.pending || (spec != nil) != st.again {
						t.Fatalf("step %d: known %v pending %v spec %v; want %v %v %v", i, known, pending, spec, st.known, st.pending, st.again)
					}
				case "track":
					b.track(st.addr, st.task, st.fetch, time.Time{})
				case "answer":
					b.fetchAnswered(st.addr, st.fetch, st.task, &sparrowrpc.TTaskLaunchSpec{TaskId: st.task.task})
				case "finish":
					if _, _, ok := b.finished(st.addr, st.task); !ok {
						t.Fatalf("step %d: %v was not tracked", i, st.task)
					}
				case "lose":
					b.nodeLost(st.addr, nil)
				}
			}
			var s Stats
			b.statsInto(&s)
			if b.fetches.len() != tt.remembered || s.FetchesAskedAgain != tt.askedAgain {
				t.Fatalf("%d fetches remembered, %d asked again; want %d, %d", b.fetches.len(), s.FetchesAskedAgain, tt.remembered, tt.askedAgain)
			}
		})
	}
}
