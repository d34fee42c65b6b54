package nodemonitor

import (
	"errors"
	"net"
	"os"
	"reflect"
	"slices"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/core/queue"
	"github.com/sparrowfleet/sparrow/core/slots"
	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// slotTable: what each step does to the slots and queue.
func TestSlotTable(t *testing.T) {
	res := func(req, sched string) queue.Reservation {
		return queue.Reservation{RequestID: req, App: "app", Scheduler: sched, User: "u"}
	}
	t0 := time.Unix(1000, 0)
	type step func(t *testing.T, st *slotTable, gone *schedulerSet)
	tests := []struct {
		name  string
		steps []step
		want  State
	}{
		{"no app refused", []step{func(t *testing.T, st *slotTable, _ *schedulerSet) {
			if err := st.enqueue(res("r", "s"), 1, jobHint{}); err == nil {
				t.Fatal("queued for an app with no executor")
			}
		}}, State{Slots: 2, Free: 2}},
		{"queued, then two taken to fetch", []step{
			func(t *testing.T, st *slotTable, g *schedulerSet) {
				st.addApp("app", t0)
				if err := st.enqueue(res("r", "s"), 3, jobHint{}); err != nil {
					t.Fatal(err)
				}
				if ready, took, free := st.ready(nil, 0, g); len(ready) != 2 || len(took) != 0 || free != 0 {
					t.Fatalf("ready %v took %v, %d free; want two ready, none free", ready, took, free)
				}
			}}, State{Slots: 2, Fetching: 2, Queued: 1, Apps: []string{"app"}}},
		{"gone scheduler's reservations released", []step{
			func(t *testing.T, st *slotTable, g *schedulerSet) {
				st.addApp("app", t0)
				g.add("dead")
				st.enqueue(res("a", "dead"), 2, jobHint{})
				st.enqueue(res("b", "s"), 1, jobHint{})
				if ready, _, _ := st.ready(nil, 0, g); len(ready) != 1 || ready[0].RequestID != "b" {
					t.Fatalf("ready %v, want b only", ready)
				}
			}}, State{Slots: 2, Free: 1, Fetching: 1, Apps: []string{"app"}}},
		{"offer takes its request's reservation", []step{
			func(t *testing.T, st *slotTable, g *schedulerSet) {
				st.addApp("app", t0)
				st.enqueue(res("a", "s"), 1, jobHint{})
				st.enqueue(res("b", "s"), 1, jobHint{})
				offer := res("b", "s")
				ready, took, _ := st.ready(&offer, 1, g)
				if len(took) != 1 || took[0].RequestID != "b" || len(ready) != 1 || ready[0].RequestID != "a" {
					t.Fatalf("ready %v took %v", ready, took)
				}
				if !st.start(slots.TaskKey{RequestID: "b", TaskID: "t"}, took[0], t0, 0, 0) {
					t.Fatal("start refused")
				}
			}}, State{Slots: 2, Fetching: 1, Running: 1, Launches: 1, Apps: []string{"app"}}},
		{"offers take up to their number of their request's reservations", []step{
			func(t *testing.T, st *slotTable, g *schedulerSet) {
				st.addApp("app", t0)
				st.enqueue(res("b", "s"), 3, jobHint{})
				offer := res("b", "s")
				ready, took, free := st.ready(&offer, 1, g)
				if len(took) != 1 || len(ready) != 1 || free != 0 {
					t.Fatalf("one offer: ready %v took %v, %d free; want one each, none free", ready, took, free)
				}
			}}, State{Slots: 2, Fetching: 2, Queued: 1, Apps: []string{"app"}}},
		{"a task never starts twice, nor finishes twice", []step{
			func(t *testing.T, st *slotTable, g *schedulerSet) {
				st.addApp("app", t0)
				st.enqueue(res("r", "s"), 2, jobHint{})
				ready, _, _ := st.ready(nil, 0, g)
				key := slots.TaskKey{RequestID: "r", TaskID: "t"}
				if !st.start(key, ready[0], t0, 0, 0) || st.start(key, ready[1], t0, 0, 0) {
					t.Fatal("want the first start only")
				}
				if got := st.finish([]slots.TaskKey{key, key}, t0, taskFinished); !slices.Equal(got, []bool{true, false}) {
					t.Fatalf("finish %v, want one freed", got)
				}
			}}, State{Slots: 2, Free: 2, Launches: 1, Finished: 1, Apps: []string{"app"}}},
		{"full queue refused", []step{
			func(t *testing.T, st *slotTable, _ *schedulerSet) {
				st.addApp("app", t0)
				st.core.SetMaxQueued(2)
				if st.enqueue(res("r", "s"), 2, jobHint{}) != nil || st.enqueue(res("x", "s"), 1, jobHint{}) == nil {
					t.Fatal("want the first two queued and the third refused")
				}
			}}, State{Slots: 2, Free: 2, Queued: 2, Apps: []string{"app"}}},
		{"drain drops the queue, refuses work and apps, and is idle when slots are", []step{
			func(t *testing.T, st *slotTable, g *schedulerSet) {
				st.addApp("app", t0)
				st.enqueue(res("r", "s"), 3, jobHint{})
				ready, _, _ := st.ready(nil, 0, g)
				if n := st.drain(); n != 1 {
					t.Fatalf("drain dropped %d, want the 1 queued", n)
				}
				if err := st.enqueue(res("r2", "s"), 1, jobHint{}); !errors.Is(err, errDraining) {
					t.Fatalf("enqueue while draining: %v", err)
				}
				if st.addApp("other", t0); len(st.apps()) != 0 {
					t.Fatalf("apps while draining: %v", st.apps())
				}
				st.start(slots.TaskKey{RequestID: "r", TaskID: "t"}, ready[0], t0, 0, 0)
				st.released("r")
				select {
				case <-st.idleCh():
					t.Fatal("idle with a task running")
				default:
				}
				st.finish([]slots.TaskKey{{RequestID: "r", TaskID: "t"}}, t0, taskFinished)
				<-st.idleCh()
			}}, State{Slots: 2, Free: 2, Launches: 1, Finished: 1, Draining: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := newSlotTable(2, nil, 0, t0, nil)
			if err != nil {
				t.Fatal(err)
			}
			var gone schedulerSet
			for _, s := range tt.steps {
				s(t, st, &gone)
			}
			got := st.state()
			if got.Apps == nil {
				got.Apps = []string{}
			}
			if tt.want.Apps == nil {
				tt.want.Apps = []string{}
			}
			if !slices.Equal(got.Apps, tt.want.Apps) {
				t.Fatalf("apps %v, want %v", got.Apps, tt.want.Apps)
			}
			got.Apps, tt.want.Apps = nil, nil
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("state %+v, want %+v", got, tt.want)
			}
		})
	}
}

// executorRegistry: liveness checks count misses in a row, and only for
// the executor registered now; a timeout weighs less than a refusal.
func TestExecutorRegistry(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	timedOut := &net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded}
	tests := []struct {
		name     string
		checks   []error // outcomes of checks of "a" at addr1
		reregist bool    // a new executor registers before the last check
		wantLost []bool
	}{
		{"one refusal is not a loss", []error{refused}, false, []bool{false}},
		{"two refusals in a row are", []error{refused, refused}, false, []bool{false, true}},
		{"a success resets the count", []error{refused, nil, refused}, false, []bool{false, false, false}},
		{"a replaced executor's misses count for nothing", []error{refused, refused}, true, []bool{false, false}},
		{"nine timeouts in a row are not a loss", slices.Repeat([]error{timedOut}, 9), false, slices.Repeat([]bool{false}, 9)},
		{"ten timeouts in a row are", slices.Repeat([]error{timedOut}, 10), false, append(slices.Repeat([]bool{false}, 9), true)},
		{"a refusal after timeouts adds its weight", []error{timedOut, timedOut, timedOut, timedOut, timedOut, refused}, false,
			[]bool{false, false, false, false, false, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newExecutorRegistry()
			e.register("a", "addr1", 0)
			for i, alive := range tt.checks {
				if tt.reregist && i == len(tt.checks)-1 {
					e.register("a", "addr2", 0)
				}
				if lost := e.checked("a", "addr1", alive); lost != tt.wantLost[i] {
					t.Fatalf("check %d: lost %v, want %v", i, lost, tt.wantLost[i])
				}
			}
		})
	}
	e := newExecutorRegistry()
	e.register("a", "addr1", 0)
	if e.remove("a", "addr2") {
		t.Error("removed an executor registered at another address")
	}
	if !e.remove("a", "addr1") || e.remove("a", "addr1") {
		t.Error("want the executor removed once")
	}
	if _, _, ok := e.lookup("a"); ok {
		t.Error("a removed executor is still looked up")
	}
	e.register("a", "addr1", 3)
	e.register("a", "addr2", 1)
	if addr, features, ok := e.lookup("a"); addr != "addr2" || features != 1 || !ok {
		t.Errorf("lookup after registering again: %q %d %v, want addr2 1 true", addr, features, ok)
	}
	e.remove("a", "addr2")
	e.register("a", "addr3", 0)
	if _, features, _ := e.lookup("a"); features != 0 {
		t.Errorf("features %d kept from a removed executor, want 0", features)
	}
}

// scriptedScheds answers FetchTask from a list of results, one per call,
// and GetTask with one task; it records the fetch IDs it was asked.
type scriptedScheds struct {
	fakeScheds
	results []error
	ids     []int64
	gets    int
	onCall  func(call int)
}

func (s *scriptedScheds) FetchTask(gt, request string, id int64) ([]*sparrowrpc.TTaskLaunchSpec, error) {
	s.ids = append(s.ids, id)
	if s.onCall != nil {
		s.onCall(len(s.ids))
	}
	err := s.results[min(len(s.ids), len(s.results))-1]
	if err != nil {
		return nil, err
	}
	return []*sparrowrpc.TTaskLaunchSpec{{TaskId: "t"}}, nil
}

func (s *scriptedScheds) GetTask(gt, request string) ([]*sparrowrpc.TTaskLaunchSpec, error) {
	s.gets++
	return []*sparrowrpc.TTaskLaunchSpec{{TaskId: "g"}}, nil
}

// fetcher: which failures are asked about again, with the same fetch ID,
// and for how long.
func TestFetcher(t *testing.T) {
	dial := &rpc.DialError{Addr: schedGT, Err: syscall.ECONNREFUSED}
	tests := []struct {
		name      string
		results   []error
		goneAt    int // the scheduler is declared gone at this call (0: never)
		wantCalls int
		wantGets  int
		wantErr   bool
		wantTook  time.Duration // fake time spent
		lacks     bool
	}{
		{"answered", []error{nil}, 0, 1, 0, false, 0, false},
		{"no fetchTask: getTask, remembered", []error{errUnknownMethod}, 0, 1, 1, false, 0, true},
		{"never sent: not asked again", []error{dial}, 0, 1, 0, true, 0, false},
		{"busy: not asked again", []error{rpc.ErrBusy}, 0, 1, 0, true, 0, false},
		{"lost answer, then answered", []error{errAnswerLost, errAnswerLost, nil}, 0, 3, 0, false, 150 * time.Millisecond, false},
		{"refused when asked again: the scheduler restarted", []error{errAnswerLost, syscall.ECONNREFUSED}, 0, 2, 0, true, 50 * time.Millisecond, false},
		{"scheduler gone", []error{errAnswerLost}, 3, 3, 0, true, 150 * time.Millisecond, false},
		// Pauses 50, 100, 200, 400, 800 ms, then 1 s each until the next
		// would pass the 5 s retry time: 1.55 s, then 3 more seconds.
		{"retry time up", []error{errAnswerLost}, 0, 9, 0, true, 4550 * time.Millisecond, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := &scriptedScheds{results: tt.results}
				f := &fetcher{scheds: s, caps: &rpc.Capabilities{}, gone: &schedulerSet{}, retryFor: 5 * time.Second, log: zerolog.Nop()}
				s.onCall = func(call int) {
					if call == tt.goneAt {
						f.gone.add(schedSvc)
					}
				}
				start := time.Now()
				specs, err := f.ask(queue.Reservation{RequestID: "r", Scheduler: schedSvc}, schedGT)
				if (err != nil) != tt.wantErr || err == nil && len(specs) != 1 {
					t.Fatalf("ask: %v %v, want error %v", specs, err, tt.wantErr)
				}
				if len(s.ids) != tt.wantCalls || s.gets != tt.wantGets {
					t.Fatalf("%d fetchTask calls and %d getTask, want %d and %d", len(s.ids), s.gets, tt.wantCalls, tt.wantGets)
				}
				for _, id := range s.ids {
					if id != s.ids[0] || id == 0 {
						t.Fatalf("fetch IDs %v: want one nonzero ID throughout", s.ids)
					}
				}
				if took := time.Since(start); took != tt.wantTook {
					t.Errorf("took %v, want %v", took, tt.wantTook)
				}
				if got := f.caps.Lacks(schedGT, methodFetchTask); got != tt.lacks {
					t.Errorf("remembered as lacking fetchTask: %v, want %v", got, tt.lacks)
				}
			})
		})
	}
}

// reporter: a finished task and its message go in one taskDone, or in the
// original two calls to a scheduler without it, learnt once; to a
// scheduler that said it serves tasksDone they are gathered per window
// (here 10 ms) into tasksDone calls (a caller that waits for the relay
// has its own call), and a scheduler that answers tasksDone
// UNKNOWN_METHOD gets taskDone per task from then on.
func TestReporterDone(t *testing.T) {
	const doneWindow = 10 * time.Millisecond
	id := &sparrowrpc.TFullTaskId{RequestId: "r", TaskId: "a", AppId: "app", SchedulerAddress: &sparrowrpc.THostPort{Host: "127.0.0.1", Port: 1}}
	tests := []struct {
		name                string
		old, freed          bool
		advertised, refuse  bool
		wait                bool
		wantDone, wantFinis []string
		wantBatches         []int
		wantLacksTasksDone  bool
	}{
		{name: "taskDone", freed: true, wait: true, wantDone: []string{"a"}},
		{name: "old scheduler", old: true, freed: true, wait: true, wantFinis: []string{"r/a"}},
		{name: "not freed: message only", wait: true},
		{name: "not freed: message only, to a tasksDone scheduler", advertised: true, wait: true},
		{name: "tasksDone, waited for", advertised: true, freed: true, wait: true, wantDone: []string{"a"}, wantBatches: []int{1, 1}},
		{name: "tasksDone, gathered", advertised: true, freed: true, wantDone: []string{"a"}, wantBatches: []int{2}},
		{name: "tasksDone refused", advertised: true, refuse: true, freed: true, wait: true, wantDone: []string{"a"}, wantLacksTasksDone: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newFakeScheds()
				s.noTaskDone, s.noTasksDone = tt.old, tt.refuse
				var features schedulerFeatures
				if tt.advertised {
					features.heard("127.0.0.1:1", thrift.Int32Ptr(sparrowrpc.SCHEDULER_TASKS_DONE))
				}
				r := newReporter(s, staticDir{}, &rpc.Capabilities{}, &features, doneWindow, zerolog.Nop())
				for range 2 {
					if err := r.done("app", id, 0, []byte("m"), tt.freed, tt.wait); err != nil {
						t.Fatal(err)
					}
				}
				time.Sleep(doneWindow)
				synctest.Wait()
				r.wait()
				if got := s.read(&s.done); !slices.Equal(got, append(tt.wantDone, tt.wantDone...)) {
					t.Errorf("taskDone %v", got)
				}
				if got := s.read(&s.finished); !slices.Equal(got, append(tt.wantFinis, tt.wantFinis...)) {
					t.Errorf("tasksFinished %v", got)
				}
				if got := s.read(&s.msgs); len(got) != 2 {
					t.Errorf("relayed %v, want the message twice", got)
				}
				s.mu.Lock()
				batches := slices.Clone(s.batches)
				s.mu.Unlock()
				if !slices.Equal(batches, tt.wantBatches) {
					t.Errorf("tasksDone calls of %v tasks, want %v", batches, tt.wantBatches)
				}
				if got := r.caps.Lacks("127.0.0.1:1", methodTaskDone); got != tt.old {
					t.Errorf("lacks taskDone: %v, want %v", got, tt.old)
				}
				if got := r.caps.Lacks("127.0.0.1:1", methodTasksDone); got != tt.wantLacksTasksDone {
					t.Errorf("lacks tasksDone: %v, want %v", got, tt.wantLacksTasksDone)
				}
			})
		})
	}
	var f schedulerFeatures
	f.heard("s", thrift.Int32Ptr(3))
	if !f.has("s", 1) || !f.has("s", 2) || f.has("t", 1) {
		t.Error("features not recorded per scheduler")
	}
	f.heard("s", nil)
	if f.has("s", 1) {
		t.Error("a scheduler's reservation without features left its earlier ones standing")
	}
	if got := (&reporter{}).getTaskAddr("10.0.0.1:20503"); got != "10.0.0.1:"+DefaultGetTaskPort {
		t.Errorf("getTaskAddr without a directory: %s", got)
	}
}
