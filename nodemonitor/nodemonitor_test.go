package nodemonitor

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/core/queue"
	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// fakeScheduler serves GetTaskService from a script of answers per request.
type fakeScheduler struct {
	mu       sync.Mutex
	tasks    map[string][]string // request -> task ids still to hand out
	asked    map[string]int
	finished []string      // "request/task" reported by tasksFinished
	gate     chan struct{} // if set, getTask and fetchTask block until it is closed
	// fetched is each fetchTask fetch's answer, given again when asked
	// again; fetchCalls counts fetchTask calls by fetch ID.
	fetched    map[int64][]*sparrowrpc.TTaskLaunchSpec
	fetchCalls map[int64]int
	// slowAnswers is how many more fetches that hand out a task answer
	// only once hold is closed (later than the node monitor waits).
	slowAnswers int
	// holdAll makes every fetchTask call wait for hold.
	holdAll bool
	hold    chan struct{}
}

func (f *fakeScheduler) GetTask(ctx context.Context, requestID string, nm *sparrowrpc.THostPort) ([]*sparrowrpc.TTaskLaunchSpec, error) {
	if f.gate != nil {
		<-f.gate
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.handOut(requestID), nil
}

// handOut is the next task of requestID, if any. Called with f.mu held.
func (f *fakeScheduler) handOut(requestID string) []*sparrowrpc.TTaskLaunchSpec {
	f.asked[requestID]++
	left := f.tasks[requestID]
	if len(left) == 0 {
		return []*sparrowrpc.TTaskLaunchSpec{}
	}
	f.tasks[requestID] = left[1:]
	return []*sparrowrpc.TTaskLaunchSpec{{TaskId: left[0], Message: []byte("m")}}
}

func (f *fakeScheduler) FetchTask(ctx context.Context, requestID string, nm *sparrowrpc.THostPort, fetchID int64) ([]*sparrowrpc.TTaskLaunchSpec, error) {
	if f.gate != nil {
		<-f.gate
	}
	f.mu.Lock()
	if f.fetched == nil {
		f.fetched = make(map[int64][]*sparrowrpc.TTaskLaunchSpec)
		f.fetchCalls = make(map[int64]int)
	}
	f.fetchCalls[fetchID]++
	specs, again := f.fetched[fetchID]
	if !again {
		specs = f.handOut(requestID)
		f.fetched[fetchID] = specs
	}
	slow := f.holdAll || (!again && len(specs) > 0 && f.slowAnswers > 0)
	if slow && !f.holdAll {
		f.slowAnswers--
	}
	f.mu.Unlock()
	if slow {
		<-f.hold
	}
	return specs, nil
}

// fetchesAskedAgain is how many fetch IDs fetchTask was called with more
// than once, and the most calls for one.
func (f *fakeScheduler) fetchesAskedAgain() (ids, most int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, n := range f.fetchCalls {
		if n > 1 {
			ids++
		}
		most = max(most, n)
	}
	return ids, most
}

func (f *fakeScheduler) TasksFinished(ctx context.Context, nm *sparrowrpc.THostPort, tasks []*sparrowrpc.TFullTaskId) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, t := range tasks {
		f.finished = append(f.finished, t.RequestId+"/"+t.TaskId)
	}
	return nil
}

func (f *fakeScheduler) finishedReports() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.finished...)
}

func (f *fakeScheduler) askedFor(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.asked[id]
}

// fakeBackend records launches.
type fakeBackend struct {
	mu       sync.Mutex
	launched []string
}

func (b *fakeBackend) LaunchTask(ctx context.Context, message []byte, id *sparrowrpc.TFullTaskId, user *sparrowrpc.TUserGroupInfo) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.launched = append(b.launched, id.RequestId+"/"+id.TaskId)
	return nil
}

func (b *fakeBackend) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.launched)
}

type staticDir map[string]string

func (d staticDir) GetTaskAddr(s string) (string, bool) { a, ok := d[s]; return a, ok }

type harness struct {
	backSrv *rpc.Server
	nm      *NodeMonitor
	sched   *fakeScheduler
	back    *fakeBackend
	self    *sparrowrpc.THostPort // the scheduler address named in reservations
}

func newHarness(t *testing.T, slots int, gated bool) *harness {
	t.Helper()
	return newHarnessWith(t, harnessOpts{slots: slots, gated: gated})
}

// harnessOpts are newHarnessWith's choices; the zero value of each field
// but slots is the default.
type harnessOpts struct {
	slots int
	gated bool
	// noFetch makes the fake scheduler answer fetchTask UNKNOWN_METHOD.
	noFetch bool
	// getTaskTimeout and fetchRetryFor set the node monitor's Config.
	getTaskTimeout, fetchRetryFor time.Duration
}

func newHarnessWith(t *testing.T, o harnessOpts) *harness {
	t.Helper()
	h := &harness{sched: &fakeScheduler{tasks: map[string][]string{}, asked: map[string]int{}, hold: make(chan struct{})}, back: &fakeBackend{}}
	if o.gated {
		h.sched.gate = make(chan struct{})
	}
	gt, err := rpc.Listen("127.0.0.1:0", rpc.Config{}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	proc := sparrowrpc.NewGetTaskServiceProcessor(h.sched)
	if o.noFetch {
		delete(proc.ProcessorMap(), "fetchTask") // answers UNKNOWN_METHOD
	}
	go gt.Serve(proc)
	be, err := rpc.Listen("127.0.0.1:0", rpc.Config{}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	go be.Serve(sparrowrpc.NewBackendServiceProcessor(h.back))
	h.backSrv = be
	// The reservations name a SchedulerService address; the directory maps
	// it to the fake's GetTaskService.
	const schedSvc = "127.0.0.1:1"
	h.self, _ = rpc.ParseHostPort(schedSvc)
	nm, err := New(Config{Slots: o.slots, Internal: "127.0.0.1:2", GetTaskTimeout: o.getTaskTimeout, FetchRetryFor: o.fetchRetryFor, Log: zerolog.Nop()},
		staticDir{schedSvc: gt.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	h.nm = nm
	if ok, err := nm.RegisterBackend(context.Background(), "app", be.Addr()); !ok || err != nil {
		t.Fatalf("register backend: %v %v", ok, err)
	}
	t.Cleanup(func() {
		close(h.sched.hold)
		if h.sched.gate != nil {
			select {
			case <-h.sched.gate:
			default:
				close(h.sched.gate)
			}
		}
		nm.Close()
		gt.Close()
		be.Close()
	})
	return h
}

func (h *harness) enqueue(t *testing.T, app, req string, n int) bool {
	t.Helper()
	ok, err := h.nm.EnqueueTaskReservations(context.Background(), &sparrowrpc.TEnqueueTaskReservationsRequest{
		AppId: app, RequestId: req, SchedulerAddress: h.self, NumTasks: int32(n), User: &sparrowrpc.TUserGroupInfo{User: "u"},
	})
	if err != nil {
		t.Fatalf("enqueue: %v", err)
	}
	return ok
}

func waitState(t *testing.T, nm *NodeMonitor, what string, cond func(State) bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond(nm.State()) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; state %+v", what, nm.State())
		}
		time.Sleep(time.Millisecond) // polling interval of a condition wait
	}
}

func TestEmptyGetTaskFreesTheSlot(t *testing.T) {
	h := newHarness(t, 1, false)
	// Two reservations for a request with no tasks left, then one with a
	// task: a single slot must pass through both empty answers. The task
	// is there before its reservation: the slot may ask for it at once.
	h.sched.mu.Lock()
	h.sched.tasks["real"] = []string{"t0"}
	h.sched.mu.Unlock()
	if !h.enqueue(t, "app", "empty", 2) || !h.enqueue(t, "app", "real", 1) {
		t.Fatal("reservations refused")
	}
	waitState(t, h.nm, "the real task to launch", func(s State) bool { return s.Launches == 1 })
	if got := h.sched.askedFor("empty"); got != 2 {
		t.Errorf("getTask for the empty request asked %d times, want 2", got)
	}
	st := h.nm.State()
	if st.Running != 1 || st.Free != 0 || st.Queued != 0 || st.Fetching != 0 {
		t.Errorf("state %+v, want one running task and nothing else", st)
	}
}

func TestSlotAccountingAndFinish(t *testing.T) {
	h := newHarness(t, 2, false)
	h.sched.tasks["r"] = []string{"a", "b", "c"}
	h.enqueue(t, "app", "r", 3)
	waitState(t, h.nm, "two launches", func(s State) bool { return s.Running == 2 })
	if st := h.nm.State(); st.Queued != 1 || st.Free != 0 {
		t.Fatalf("state %+v, want 1 queued and no free slot", st)
	}
	// A report for a task not running here frees nothing.
	h.nm.TasksFinished(context.Background(), []*sparrowrpc.TFullTaskId{{RequestId: "r", TaskId: "zzz"}})
	if st := h.nm.State(); st.Running != 2 || st.Queued != 1 {
		t.Fatalf("stray finish changed state: %+v", st)
	}
	h.nm.TasksFinished(context.Background(), []*sparrowrpc.TFullTaskId{{RequestId: "r", TaskId: "a"}})
	waitState(t, h.nm, "the third launch", func(s State) bool { return s.Launches == 3 })
	// A repeated report frees the slot only once.
	h.nm.TasksFinished(context.Background(), []*sparrowrpc.TFullTaskId{{RequestId: "r", TaskId: "a"}})
	if st := h.nm.State(); st.Running != 2 || st.Free != 0 {
		t.Errorf("repeated finish freed a slot: %+v", st)
	}
	waitState(t, h.nm, "the backend to see 3 launches", func(State) bool { return h.back.count() == 3 })
}

func TestCancelRemovesQueuedReservations(t *testing.T) {
	h := newHarness(t, 1, true) // getTask blocks, so the one slot stays busy
	h.enqueue(t, "app", "first", 1)
	waitState(t, h.nm, "the slot to start fetching", func(s State) bool { return s.Fetching == 1 })
	h.enqueue(t, "app", "victim", 3)
	h.enqueue(t, "app", "other", 2)
	h.nm.CancelTaskReservations(context.Background(), &sparrowrpc.TCancelTaskReservationsRequest{RequestId: "victim"})
	if st := h.nm.State(); st.Queued != 2 {
		t.Fatalf("queued %d after cancelling 3 of 5, want 2", st.Queued)
	}
	close(h.sched.gate)
	waitState(t, h.nm, "the queue to drain", func(s State) bool { return s.Queued == 0 && s.Fetching == 0 })
	if n := h.sched.askedFor("victim"); n != 0 {
		t.Errorf("cancelled request was still asked for %d times", n)
	}
	if n := h.sched.askedFor("other"); n != 2 {
		t.Errorf("other request asked %d times, want 2", n)
	}
}

func TestUnknownAppRefused(t *testing.T) {
	h := newHarness(t, 1, false)
	if h.enqueue(t, "ghost", "r", 1) {
		t.Fatal("reservation for an app with no executor was accepted")
	}
	if st := h.nm.State(); st.Queued != 0 {
		t.Errorf("refused reservation was queued: %+v", st)
	}
	if ok, err := h.nm.RegisterBackend(context.Background(), "", "127.0.0.1:9"); ok || err == nil {
		t.Error("registerBackend without an app was accepted")
	}
	if ok, err := h.nm.RegisterBackend(context.Background(), "x", "not-an-address"); ok || err == nil {
		t.Error("registerBackend with a bad address was accepted")
	}
}

func TestFinishedTasksReportedToTheirScheduler(t *testing.T) {
	h := newHarness(t, 2, false)
	h.sched.tasks["r"] = []string{"a", "b"}
	h.enqueue(t, "app", "r", 2)
	waitState(t, h.nm, "two launches", func(s State) bool { return s.Running == 2 })
	h.nm.TasksFinished(context.Background(), []*sparrowrpc.TFullTaskId{
		{RequestId: "r", TaskId: "a", AppId: "app", SchedulerAddress: h.self},
		{RequestId: "r", TaskId: "b", AppId: "app", SchedulerAddress: h.self},
		{RequestId: "r", TaskId: "never-ran", AppId: "app", SchedulerAddress: h.self},
	})
	waitState(t, h.nm, "the scheduler to hear of both", func(State) bool { return len(h.sched.finishedReports()) == 2 })
	h.nm.Close() // waits for pending reports
	got := h.sched.finishedReports()
	slices.Sort(got)
	if !slices.Equal(got, []string{"r/a", "r/b"}) {
		t.Errorf("scheduler heard %v finished, want r/a and r/b only", got)
	}
}

func TestLostExecutorFreesSlotsAndStopsOfferingTheApp(t *testing.T) {
	h := newHarness(t, 2, false)
	h.sched.tasks["r"] = []string{"a", "b"}
	h.enqueue(t, "app", "r", 2)
	waitState(t, h.nm, "two launches", func(s State) bool { return s.Running == 2 })
	h.backSrv.Close()
	for i := 0; i < executorMisses; i++ {
		h.nm.checkExecutors(time.Second)
	}
	st := h.nm.State()
	if st.Running != 0 || st.Free != 2 || len(st.Apps) != 0 {
		t.Fatalf("after losing the executor: %+v, want all slots free and no apps", st)
	}
	if h.enqueue(t, "app", "r2", 1) {
		t.Error("reservation accepted for an app whose executor is gone")
	}
	waitState(t, h.nm, "the scheduler to hear the tasks are gone", func(State) bool { return len(h.sched.finishedReports()) == 2 })
}

func TestSetWeightsAtRunTime(t *testing.T) {
	fair, _ := queue.NewFair(1, nil)
	nm, err := New(Config{Slots: 1, Queue: fair, Internal: "127.0.0.1:2", Log: zerolog.Nop()}, staticDir{})
	if err != nil {
		t.Fatal(err)
	}
	defer nm.Close()
	if err := nm.SetWeights(map[string]float64{"alice": 3, "bob": 0}); err == nil {
		t.Fatal("a zero weight was accepted")
	}
	if fair.Weight("alice") != 1 {
		t.Fatal("a refused update changed a weight: updates must be all or nothing")
	}
	if err := nm.SetWeights(map[string]float64{"alice": 3}); err != nil {
		t.Fatal(err)
	}
	if fair.Weight("alice") != 3 {
		t.Errorf("alice's weight is %v after setting 3", fair.Weight("alice"))
	}
	fifo, err := New(Config{Slots: 1, Internal: "127.0.0.1:3", Log: zerolog.Nop()}, staticDir{})
	if err != nil {
		t.Fatal(err)
	}
	defer fifo.Close()
	if err := fifo.SetWeights(map[string]float64{"alice": 2}); err == nil {
		t.Error("FIFO accepted weights")
	}
}

// A flood of reservations, e.g. for made-up request ids, is refused once the
// queue bound is reached, so memory stays bounded; later reservations are
// accepted again once the queue drains.
func TestReservationFloodIsBounded(t *testing.T) {
	h := newHarness(t, 1, true) // getTask blocks: nothing drains meanwhile
	h.nm.core.SetMaxQueued(1000)
	accepted := 0
	for i := 0; i < 5000; i++ {
		if h.enqueue(t, "app", fmt.Sprintf("bogus-%d", i), 1) {
			accepted++
		}
	}
	// One reservation went to the (blocked) slot, 1000 fill the queue.
	if accepted != 1001 {
		t.Fatalf("accepted %d of 5000 flood reservations, want the 1000 the bound allows plus 1 in the slot", accepted)
	}
	if q := h.nm.State().Queued; q != 1000 {
		t.Fatalf("%d queued, want 1000", q)
	}
	close(h.sched.gate) // the fake scheduler answers every bogus id with nothing
	waitState(t, h.nm, "the flood to drain", func(s State) bool { return s.Queued == 0 && s.Fetching == 0 })
	if !h.enqueue(t, "app", "real", 1) {
		t.Error("a real reservation was refused after the flood drained")
	}
}

// Reservations from a scheduler gossip has declared gone are released
// without calling it, so a dead scheduler cannot hold slots for a getTask
// timeout each; they are fetched again once it is back.
func TestReservationsOfAGoneSchedulerAreReleased(t *testing.T) {
	h := newHarness(t, 1, false)
	h.nm.SchedulerGone(rpc.HostPortString(h.self))
	h.enqueue(t, "app", "dead", 3)
	waitState(t, h.nm, "the reservations to be released", func(s State) bool { return s.Queued == 0 && s.Fetching == 0 })
	if n := h.sched.askedFor("dead"); n != 0 {
		t.Fatalf("a gone scheduler was asked %d times", n)
	}
	h.nm.SchedulerBack(rpc.HostPortString(h.self))
	h.sched.mu.Lock()
	h.sched.tasks["alive"] = []string{"t"}
	h.sched.mu.Unlock()
	h.enqueue(t, "app", "alive", 1)
	waitState(t, h.nm, "the task to launch", func(s State) bool { return s.Launches == 1 })
}

// relaySink is a SchedulerService that records relayed frontend messages
// and the tasks reported finished with one (taskDone).
type relaySink struct {
	mu       sync.Mutex
	msgs     []string // "task:message"
	finished []string // tasks reported by taskDone
}

func (r *relaySink) RegisterFrontend(context.Context, string, string) (bool, error)  { return true, nil }
func (r *relaySink) SubmitJob(context.Context, *sparrowrpc.TSchedulingRequest) error { return nil }
func (r *relaySink) SendFrontendMessage(_ context.Context, _ string, id *sparrowrpc.TFullTaskId, _ int32, m []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, id.TaskId+":"+string(m))
	return nil
}
func (r *relaySink) TaskDone(ctx context.Context, app string, id *sparrowrpc.TFullTaskId, status int32, m []byte, nm *sparrowrpc.THostPort) error {
	r.mu.Lock()
	r.finished = append(r.finished, id.TaskId)
	r.mu.Unlock()
	return r.SendFrontendMessage(ctx, app, id, status, m)
}

func (r *relaySink) messages() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.msgs...)
}

func (r *relaySink) reported() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.finished...)
}

// taskDone (the executor's one call for a finished task) frees the slot,
// so the queued reservation runs next, and relays the message before it
// returns; a repeated taskDone frees nothing more. The finished report
// travels with the message in the scheduler's taskDone, or, for a
// scheduler without it, in the original two calls.
func TestTaskDoneFreesTheSlotThenRelays(t *testing.T) {
	for _, old := range []bool{false, true} {
		t.Run(fmt.Sprintf("old scheduler %v", old), func(t *testing.T) { testTaskDone(t, old) })
	}
}

func testTaskDone(t *testing.T, old bool) {
	h := newHarness(t, 1, false)
	sink := &relaySink{}
	srv, err := rpc.Listen("127.0.0.1:0", rpc.Config{}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	proc := sparrowrpc.NewSchedulerServiceProcessor(sink)
	if old {
		delete(proc.ProcessorMap(), "taskDone") // answers UNKNOWN_METHOD
	}
	go srv.Serve(proc)
	t.Cleanup(func() { srv.Close() })
	sched, _ := rpc.ParseHostPort(srv.Addr())

	h.sched.tasks["r"] = []string{"a", "b"}
	h.enqueue(t, "app", "r", 2)
	waitState(t, h.nm, "the first launch", func(s State) bool { return s.Launches == 1 })
	a := &sparrowrpc.TFullTaskId{RequestId: "r", TaskId: "a", AppId: "app", SchedulerAddress: sched}
	if err := h.nm.TaskDone(context.Background(), "app", a, 0, []byte("done")); err != nil {
		t.Fatalf("taskDone: %v", err)
	}
	if got := sink.messages(); !slices.Equal(got, []string{"a:done"}) {
		t.Errorf("relayed %v by the time taskDone returned, want [a:done]", got)
	}
	wantReported := []string{"a"}
	if old {
		wantReported = nil // a tasksFinished report instead
	}
	if got := sink.reported(); !slices.Equal(got, wantReported) {
		t.Errorf("reported finished with the message: %v, want %v", got, wantReported)
	}
	waitState(t, h.nm, "the second launch", func(s State) bool { return s.Launches == 2 && s.Running == 1 })
	if err := h.nm.TaskDone(context.Background(), "app", a, 0, []byte("again")); err != nil {
		t.Fatalf("repeated taskDone: %v", err)
	}
	if got := sink.reported(); !slices.Equal(got, wantReported) {
		t.Errorf("a repeated taskDone reported the task finished again: %v", got)
	}
	if got := sink.messages(); !slices.Equal(got, []string{"a:done", "a:again"}) {
		t.Errorf("relayed %v, want [a:done a:again]", got)
	}
	if st := h.nm.State(); st.Running != 1 || st.Free != 0 {
		t.Errorf("repeated taskDone freed a slot: %+v", st)
	}
	if err := h.nm.TaskDone(context.Background(), "app", &sparrowrpc.TFullTaskId{TaskId: "x"}, 0, nil); err == nil {
		t.Error("taskDone without a scheduler address accepted")
	}
}
