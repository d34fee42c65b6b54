package integration

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
	"github.com/sparrowfleet/sparrow/nodemonitor"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// The node monitor over loopback Thrift: a fake scheduler's GetTaskService
// and SchedulerService and a fake executor's BackendService, each on its
// own socket, around a nodemonitor.NodeMonitor. The same behaviour is
// tested in memory in the nodemonitor package; these tests show it holds
// over the wire.

// nmFakeScheduler serves GetTaskService from a script of answers per request.
type nmFakeScheduler struct {
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

func (f *nmFakeScheduler) GetTask(ctx context.Context, requestID string, nm *sparrowrpc.THostPort) ([]*sparrowrpc.TTaskLaunchSpec, error) {
	if f.gate != nil {
		<-f.gate
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.handOut(requestID), nil
}

// handOut is the next task of requestID, if any. Called with f.mu held.
func (f *nmFakeScheduler) handOut(requestID string) []*sparrowrpc.TTaskLaunchSpec {
	f.asked[requestID]++
	left := f.tasks[requestID]
	if len(left) == 0 {
		return []*sparrowrpc.TTaskLaunchSpec{}
	}
	f.tasks[requestID] = left[1:]
	return []*sparrowrpc.TTaskLaunchSpec{{TaskId: left[0], Message: []byte("m")}}
}

func (f *nmFakeScheduler) FetchTask(ctx context.Context, requestID string, nm *sparrowrpc.THostPort, fetchID int64) ([]*sparrowrpc.TTaskLaunchSpec, error) {
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
func (f *nmFakeScheduler) fetchesAskedAgain() (ids, most int) {
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

func (f *nmFakeScheduler) TasksFinished(ctx context.Context, nm *sparrowrpc.THostPort, tasks []*sparrowrpc.TFullTaskId) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, t := range tasks {
		f.finished = append(f.finished, t.RequestId+"/"+t.TaskId)
	}
	return nil
}

func (f *nmFakeScheduler) finishedReports() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.finished...)
}

func (f *nmFakeScheduler) askedFor(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.asked[id]
}

// nmFakeBackend records launches.
type nmFakeBackend struct {
	mu       sync.Mutex
	launched []string
}

func (b *nmFakeBackend) LaunchTask(ctx context.Context, message []byte, id *sparrowrpc.TFullTaskId, user *sparrowrpc.TUserGroupInfo) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.launched = append(b.launched, id.RequestId+"/"+id.TaskId)
	return nil
}

func (b *nmFakeBackend) LaunchTaskAndWait(ctx context.Context, message []byte, id *sparrowrpc.TFullTaskId, user *sparrowrpc.TUserGroupInfo, _ int32) (*sparrowrpc.TLaunchReply, error) {
	return &sparrowrpc.TLaunchReply{}, b.LaunchTask(ctx, message, id, user)
}

func (b *nmFakeBackend) LaunchTasksAndWait(ctx context.Context, tasks []*sparrowrpc.TLaunchItem, wait int32) ([]*sparrowrpc.TLaunchReply, error) {
	replies := make([]*sparrowrpc.TLaunchReply, len(tasks))
	for i, t := range tasks {
		r, err := b.LaunchTaskAndWait(ctx, t.Message, t.TaskId, t.User, wait)
		if err != nil {
			return nil, err
		}
		replies[i] = r
	}
	return replies, nil
}

func (b *nmFakeBackend) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.launched)
}

type nmStaticDir map[string]string

func (d nmStaticDir) GetTaskAddr(s string) (string, bool) { a, ok := d[s]; return a, ok }

type nmHarness struct {
	backSrv *rpc.Server
	nm      *nodemonitor.NodeMonitor
	sched   *nmFakeScheduler
	back    *nmFakeBackend
	self    *sparrowrpc.THostPort // the scheduler address named in reservations
}

func newNMHarness(t *testing.T, slots int, gated bool) *nmHarness {
	t.Helper()
	return newNMHarnessWith(t, nmHarnessOpts{slots: slots, gated: gated})
}

// nmHarnessOpts are newNMHarnessWith's choices; the zero value of each field
// but slots is the default.
type nmHarnessOpts struct {
	slots int
	gated bool
	// noFetch makes the fake scheduler answer fetchTask UNKNOWN_METHOD.
	noFetch bool
	// getTaskTimeout, fetchRetryFor, maxQueued and queue set the node
	// monitor's Config.
	getTaskTimeout, fetchRetryFor time.Duration
	maxQueued                     int
	queue                         queue.Discipline
}

func newNMHarnessWith(t *testing.T, o nmHarnessOpts) *nmHarness {
	t.Helper()
	h := &nmHarness{sched: &nmFakeScheduler{tasks: map[string][]string{}, asked: map[string]int{}, hold: make(chan struct{})}, back: &nmFakeBackend{}}
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
	go be.Serve(sparrowrpc.NewExtendedBackendServiceProcessor(h.back))
	h.backSrv = be
	// The reservations name a SchedulerService address; the directory maps
	// it to the fake's GetTaskService.
	const schedSvc = "127.0.0.1:1"
	h.self, _ = rpc.ParseHostPort(schedSvc)
	nm, err := nodemonitor.New(nodemonitor.Config{Slots: o.slots, Queue: o.queue, Internal: "127.0.0.1:2", GetTaskTimeout: o.getTaskTimeout, FetchRetryFor: o.fetchRetryFor,
		MaxQueued: o.maxQueued, Log: zerolog.Nop()},
		nmStaticDir{schedSvc: gt.Addr()})
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

func (h *nmHarness) enqueue(t *testing.T, app, req string, n int) bool {
	t.Helper()
	ok, err := h.nm.EnqueueTaskReservations(context.Background(), &sparrowrpc.TEnqueueTaskReservationsRequest{
		AppId: app, RequestId: req, SchedulerAddress: h.self, NumTasks: int32(n), User: &sparrowrpc.TUserGroupInfo{User: "u"},
	})
	if err != nil {
		t.Fatalf("enqueue: %v", err)
	}
	return ok
}

func waitNMState(t *testing.T, nm *nodemonitor.NodeMonitor, what string, cond func(nodemonitor.State) bool) {
	t.Helper()
	waitFor(t, what, 5*time.Second, func() bool { return cond(nm.State()) })
}

func TestNodeMonitorEmptyGetTaskFreesTheSlot(t *testing.T) {
	h := newNMHarness(t, 1, false)
	// Two reservations for a request with no tasks left, then one with a
	// task: a single slot must pass through both empty answers. The task
	// is there before its reservation: the slot may ask for it at once.
	h.sched.mu.Lock()
	h.sched.tasks["real"] = []string{"t0"}
	h.sched.mu.Unlock()
	if !h.enqueue(t, "app", "empty", 2) || !h.enqueue(t, "app", "real", 1) {
		t.Fatal("reservations refused")
	}
	waitNMState(t, h.nm, "the real task to launch", func(s nodemonitor.State) bool { return s.Launches == 1 })
	if got := h.sched.askedFor("empty"); got != 2 {
		t.Errorf("getTask for the empty request asked %d times, want 2", got)
	}
	st := h.nm.State()
	if st.Running != 1 || st.Free != 0 || st.Queued != 0 || st.Fetching != 0 {
		t.Errorf("state %+v, want one running task and nothing else", st)
	}
}

func TestNodeMonitorSlotAccountingAndFinish(t *testing.T) {
	h := newNMHarness(t, 2, false)
	h.sched.tasks["r"] = []string{"a", "b", "c"}
	h.enqueue(t, "app", "r", 3)
	waitNMState(t, h.nm, "two launches", func(s nodemonitor.State) bool { return s.Running == 2 })
	if st := h.nm.State(); st.Queued != 1 || st.Free != 0 {
		t.Fatalf("state %+v, want 1 queued and no free slot", st)
	}
	// A report for a task not running here frees nothing.
	h.nm.TasksFinished(context.Background(), []*sparrowrpc.TFullTaskId{{RequestId: "r", TaskId: "zzz"}})
	if st := h.nm.State(); st.Running != 2 || st.Queued != 1 {
		t.Fatalf("stray finish changed state: %+v", st)
	}
	h.nm.TasksFinished(context.Background(), []*sparrowrpc.TFullTaskId{{RequestId: "r", TaskId: "a"}})
	waitNMState(t, h.nm, "the third launch", func(s nodemonitor.State) bool { return s.Launches == 3 })
	// A repeated report frees the slot only once.
	h.nm.TasksFinished(context.Background(), []*sparrowrpc.TFullTaskId{{RequestId: "r", TaskId: "a"}})
	if st := h.nm.State(); st.Running != 2 || st.Free != 0 {
		t.Errorf("repeated finish freed a slot: %+v", st)
	}
	waitNMState(t, h.nm, "the backend to see 3 launches", func(nodemonitor.State) bool { return h.back.count() == 3 })
}

func TestNodeMonitorCancelRemovesQueuedReservations(t *testing.T) {
	h := newNMHarness(t, 1, true) // getTask blocks, so the one slot stays busy
	h.enqueue(t, "app", "first", 1)
	waitNMState(t, h.nm, "the slot to start fetching", func(s nodemonitor.State) bool { return s.Fetching == 1 })
	h.enqueue(t, "app", "victim", 3)
	h.enqueue(t, "app", "other", 2)
	h.nm.CancelTaskReservations(context.Background(), &sparrowrpc.TCancelTaskReservationsRequest{RequestId: "victim"})
	if st := h.nm.State(); st.Queued != 2 {
		t.Fatalf("queued %d after cancelling 3 of 5, want 2", st.Queued)
	}
	close(h.sched.gate)
	waitNMState(t, h.nm, "the queue to drain", func(s nodemonitor.State) bool { return s.Queued == 0 && s.Fetching == 0 })
	if n := h.sched.askedFor("victim"); n != 0 {
		t.Errorf("cancelled request was still asked for %d times", n)
	}
	if n := h.sched.askedFor("other"); n != 2 {
		t.Errorf("other request asked %d times, want 2", n)
	}
}

func TestNodeMonitorUnknownAppRefused(t *testing.T) {
	h := newNMHarness(t, 1, false)
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

func TestNodeMonitorFinishedTasksReportedToTheirScheduler(t *testing.T) {
	h := newNMHarness(t, 2, false)
	h.sched.tasks["r"] = []string{"a", "b"}
	h.enqueue(t, "app", "r", 2)
	waitNMState(t, h.nm, "two launches", func(s nodemonitor.State) bool { return s.Running == 2 })
	h.nm.TasksFinished(context.Background(), []*sparrowrpc.TFullTaskId{
		{RequestId: "r", TaskId: "a", AppId: "app", SchedulerAddress: h.self},
		{RequestId: "r", TaskId: "b", AppId: "app", SchedulerAddress: h.self},
		{RequestId: "r", TaskId: "never-ran", AppId: "app", SchedulerAddress: h.self},
	})
	waitNMState(t, h.nm, "the scheduler to hear of both", func(nodemonitor.State) bool { return len(h.sched.finishedReports()) == 2 })
	h.nm.Close() // waits for pending reports
	got := h.sched.finishedReports()
	slices.Sort(got)
	if !slices.Equal(got, []string{"r/a", "r/b"}) {
		t.Errorf("scheduler heard %v finished, want r/a and r/b only", got)
	}
}

// A flood of reservations, e.g. for made-up request ids, is refused once the
// queue bound is reached, so memory stays bounded; later reservations are
// accepted again once the queue drains.
func TestNodeMonitorReservationFloodIsBounded(t *testing.T) {
	h := newNMHarnessWith(t, nmHarnessOpts{slots: 1, gated: true, maxQueued: 1000}) // getTask blocks: nothing drains meanwhile
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
	waitNMState(t, h.nm, "the flood to drain", func(s nodemonitor.State) bool { return s.Queued == 0 && s.Fetching == 0 })
	if !h.enqueue(t, "app", "real", 1) {
		t.Error("a real reservation was refused after the flood drained")
	}
}

// Reservations from a scheduler gossip has declared gone are released
// without calling it, so a dead scheduler cannot hold slots for a getTask
// timeout each; they are fetched again once it is back.
func TestNodeMonitorReservationsOfAGoneSchedulerAreReleased(t *testing.T) {
	h := newNMHarness(t, 1, false)
	h.nm.SchedulerGone(rpc.HostPortString(h.self))
	h.enqueue(t, "app", "dead", 3)
	waitNMState(t, h.nm, "the reservations to be released", func(s nodemonitor.State) bool { return s.Queued == 0 && s.Fetching == 0 })
	if n := h.sched.askedFor("dead"); n != 0 {
		t.Fatalf("a gone scheduler was asked %d times", n)
	}
	h.nm.SchedulerBack(rpc.HostPortString(h.self))
	h.sched.mu.Lock()
	h.sched.tasks["alive"] = []string{"t"}
	h.sched.mu.Unlock()
	h.enqueue(t, "app", "alive", 1)
	waitNMState(t, h.nm, "the task to launch", func(s nodemonitor.State) bool { return s.Launches == 1 })
}

// nmRelaySink is a SchedulerService that records relayed frontend messages
// and the tasks reported finished with one (taskDone).
type nmRelaySink struct {
	mu       sync.Mutex
	msgs     []string // "task:message"
	finished []string // tasks reported by taskDone
}

func (r *nmRelaySink) RegisterFrontend(context.Context, string, string) (bool, error) {
	return true, nil
}
func (r *nmRelaySink) SubmitJob(context.Context, *sparrowrpc.TSchedulingRequest) error { return nil }
func (r *nmRelaySink) SendFrontendMessage(_ context.Context, _ string, id *sparrowrpc.TFullTaskId, _ int32, m []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, id.TaskId+":"+string(m))
	return nil
}
func (r *nmRelaySink) TaskDone(ctx context.Context, app string, id *sparrowrpc.TFullTaskId, status int32, m []byte, nm *sparrowrpc.THostPort) error {
	r.mu.Lock()
	r.finished = append(r.finished, id.TaskId)
	r.mu.Unlock()
	return r.SendFrontendMessage(ctx, app, id, status, m)
}

func (r *nmRelaySink) TasksDone(ctx context.Context, tasks []*sparrowrpc.TTaskDone, nm *sparrowrpc.THostPort) error {
	for _, t := range tasks {
		if err := r.TaskDone(ctx, t.App, t.TaskId, t.Status, t.Message, nm); err != nil {
			return err
		}
	}
	return nil
}

func (r *nmRelaySink) messages() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.msgs...)
}

func (r *nmRelaySink) reported() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.finished...)
}

// taskDone (the executor's one call for a finished task) frees the slot,
// so the queued reservation runs next, and relays the message before it
// returns; a repeated taskDone frees nothing more. The finished report
// travels with the message in the scheduler's taskDone, or, for a
// scheduler without it, in the original two calls.
func TestNodeMonitorTaskDoneFreesTheSlotThenRelays(t *testing.T) {
	for _, old := range []bool{false, true} {
		t.Run(fmt.Sprintf("old scheduler %v", old), func(t *testing.T) { testNMTaskDone(t, old) })
	}
}

func testNMTaskDone(t *testing.T, old bool) {
	h := newNMHarness(t, 1, false)
	sink := &nmRelaySink{}
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
	waitNMState(t, h.nm, "the first launch", func(s nodemonitor.State) bool { return s.Launches == 1 })
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
	waitNMState(t, h.nm, "the second launch", func(s nodemonitor.State) bool { return s.Launches == 2 && s.Running == 1 })
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

// fetchCallsSeen is how many fetchTask calls the fake scheduler has had.
func (f *nmFakeScheduler) fetchCallsSeen() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.fetchCalls {
		n += c
	}
	return n
}

// TestFetchAskedAgainLaunchesOnce: a fetch whose answer comes later than
// the node monitor waits is asked again with the same fetch ID, and the
// task it handed out is launched, once.
func TestNodeMonitorFetchAskedAgainLaunchesOnce(t *testing.T) {
	h := newNMHarnessWith(t, nmHarnessOpts{slots: 1, getTaskTimeout: 200 * time.Millisecond})
	h.sched.mu.Lock()
	h.sched.tasks["r"] = []string{"t0"}
	h.sched.slowAnswers = 1
	h.sched.mu.Unlock()
	h.enqueue(t, "app", "r", 1)
	waitNMState(t, h.nm, "the task launched", func(s nodemonitor.State) bool { return s.Launches == 1 })
	if ids, most := h.sched.fetchesAskedAgain(); ids != 1 || most < 2 {
		t.Fatalf("fetch IDs asked again: %d (most calls %d); want the one fetch asked again", ids, most)
	}
	if got := h.sched.askedFor("r"); got != 1 {
		t.Errorf("the scheduler handed out tasks %d times, want 1", got)
	}
	waitNMState(t, h.nm, "the executor to see the launch", func(nodemonitor.State) bool { return h.back.count() >= 1 })
	if got := h.back.count(); got != 1 {
		t.Errorf("%d launches at the executor, want 1", got)
	}
}

// TestFetchFallsBackToGetTask: a scheduler that answers fetchTask
// UNKNOWN_METHOD (a version before it) is asked with getTask.
func TestNodeMonitorFetchFallsBackToGetTask(t *testing.T) {
	h := newNMHarnessWith(t, nmHarnessOpts{slots: 1, noFetch: true})
	h.sched.mu.Lock()
	h.sched.tasks["r"] = []string{"t0", "t1"}
	h.sched.mu.Unlock()
	h.enqueue(t, "app", "r", 2)
	waitNMState(t, h.nm, "a launch", func(s nodemonitor.State) bool { return s.Launches == 1 })
	if got := h.sched.askedFor("r"); got != 1 {
		t.Fatalf("getTask asked %d times, want 1", got)
	}
	if n := h.sched.fetchCallsSeen(); n != 0 {
		t.Fatalf("%d fetchTask calls reached the handler", n)
	}
	// The scheduler is remembered as having no fetchTask: the second
	// reservation asks by getTask at once.
	h.nm.TasksFinished(context.Background(), []*sparrowrpc.TFullTaskId{{RequestId: "r", TaskId: "t0"}})
	waitNMState(t, h.nm, "the second launch", func(s nodemonitor.State) bool { return s.Launches == 2 })
	if got, n := h.sched.askedFor("r"), h.sched.fetchCallsSeen(); got != 2 || n != 0 {
		t.Errorf("getTask asked %d times and %d fetchTask calls reached the handler, want 2 and 0", got, n)
	}
}

// TestFetchInDoubtGivesUp: a fetch that may have handed out a task is
// asked about again only until gossip declares its scheduler gone, or
// for Config.FetchRetryFor; then its slot is freed and nothing launches.
func TestNodeMonitorFetchInDoubtGivesUp(t *testing.T) {
	for _, gone := range []bool{true, false} {
		name := map[bool]string{true: "scheduler gone", false: "retry time up"}[gone]
		t.Run(name, func(t *testing.T) {
			retryFor := time.Minute
			if !gone {
				retryFor = 600 * time.Millisecond
			}
			h := newNMHarnessWith(t, nmHarnessOpts{slots: 1, getTaskTimeout: 100 * time.Millisecond, fetchRetryFor: retryFor})
			h.sched.mu.Lock()
			h.sched.tasks["r"] = []string{"t0"}
			h.sched.holdAll = true
			h.sched.mu.Unlock()
			h.enqueue(t, "app", "r", 1)
			waitFor(t, "the fetch asked again", 5*time.Second, func() bool { return h.sched.fetchCallsSeen() >= 2 })
			if gone {
				h.nm.SchedulerGone(h.self.Host + ":1")
			}
			waitNMState(t, h.nm, "the slot freed", func(s nodemonitor.State) bool { return s.Free == 1 && s.Fetching == 0 })
			if st := h.nm.State(); st.Launches != 0 || h.back.count() != 0 {
				t.Fatalf("state %+v, %d executor launches: want nothing launched", st, h.back.count())
			}
		})
	}
}

func (h *nmHarness) enqueueOffer(t *testing.T, req string, n int, task string) *sparrowrpc.TEnqueueOfferReply {
	t.Helper()
	rep, err := h.nm.EnqueueTaskReservationsWithOffer(context.Background(), &sparrowrpc.TEnqueueTaskReservationsRequest{
		AppId: "app", RequestId: req, SchedulerAddress: h.self, NumTasks: int32(n), User: &sparrowrpc.TUserGroupInfo{User: "u"},
	}, &sparrowrpc.TTaskLaunchSpec{TaskId: task, Message: []byte("m")}, nil)
	if err != nil {
		t.Fatalf("enqueue with offer: %v", err)
	}
	return rep
}

// TestOfferTakenByAFreeSlot: an offer that finds a free slot is launched
// there at once, with no getTask, and uses one of the reservations; the
// request's other reservations ask with getTask as usual.
func TestNodeMonitorOfferTakenByAFreeSlot(t *testing.T) {
	h := newNMHarness(t, 2, false)
	h.sched.mu.Lock()
	h.sched.tasks["r"] = []string{"t1"}
	h.sched.mu.Unlock()
	if rep := h.enqueueOffer(t, "r", 2, "t0"); !rep.Accepted || !rep.Launched || rep.GetGuided() {
		t.Fatalf("answer %+v, want accepted and launched", rep)
	}
	waitNMState(t, h.nm, "both tasks running", func(s nodemonitor.State) bool { return s.Running == 2 })
	waitNMState(t, h.nm, "the backend to see 2 launches", func(nodemonitor.State) bool { return h.back.count() == 2 })
	if got := h.sched.askedFor("r"); got != 1 {
		t.Errorf("getTask asked %d times, want 1 (the offer took the other slot)", got)
	}
	h.back.mu.Lock()
	launched := slices.Sorted(slices.Values(h.back.launched))
	h.back.mu.Unlock()
	if !slices.Equal(launched, []string{"r/t0", "r/t1"}) {
		t.Errorf("launched %v, want r/t0 and r/t1", launched)
	}
}

// TestOfferDeclinedWhenBusy: with no free slot the offer is declined and
// the reservation queues; a full queue refuses it outright.
func TestNodeMonitorOfferDeclinedWhenBusy(t *testing.T) {
	h := newNMHarness(t, 1, true) // getTask blocks: the slot stays busy
	h.enqueue(t, "app", "busy", 1)
	waitNMState(t, h.nm, "the slot to be taken", func(s nodemonitor.State) bool { return s.Fetching == 1 })
	if rep := h.enqueueOffer(t, "r", 1, "t0"); !rep.Accepted || rep.Launched || rep.GetGuided() {
		t.Fatalf("answer %+v, want accepted and declined, not as guided", rep)
	}
	if st := h.nm.State(); st.Queued != 1 || st.Launches != 0 {
		t.Fatalf("state %+v, want the reservation queued and nothing launched", st)
	}
	if _, err := h.nm.EnqueueTaskReservationsWithOffer(context.Background(), &sparrowrpc.TEnqueueTaskReservationsRequest{
		AppId: "app", RequestId: "r2", SchedulerAddress: h.self, NumTasks: 1,
	}, nil, nil); err == nil {
		t.Error("an offer without a task was accepted")
	}
	// An app without an executor here is refused, offer and all.
	rep, err := h.nm.EnqueueTaskReservationsWithOffer(context.Background(), &sparrowrpc.TEnqueueTaskReservationsRequest{
		AppId: "other", RequestId: "r3", SchedulerAddress: h.self, NumTasks: 1,
	}, &sparrowrpc.TTaskLaunchSpec{TaskId: "x"}, nil)
	if err != nil || rep.Accepted || rep.Launched {
		t.Errorf("unknown app: %+v, %v; want refused", rep, err)
	}
}

// TestGuidedQueueDeclinesOffers: while a coordinator guides the weights,
// a free slot is not given to an offer: the reservation asks by getTask.
func TestNodeMonitorGuidedQueueDeclinesOffers(t *testing.T) {
	fair, err := queue.NewFair(1, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := newNMHarnessWith(t, nmHarnessOpts{slots: 1, queue: fair})
	if _, err := h.nm.ApplyGuidance(nodemonitor.Guidance{Version: 1, Weights: map[string]float64{"u": 1}}); err != nil {
		t.Fatal(err)
	}
	h.sched.mu.Lock()
	h.sched.tasks["r"] = []string{"t0"}
	h.sched.mu.Unlock()
	if rep := h.enqueueOffer(t, "r", 1, "offered"); !rep.Accepted || rep.Launched || !rep.GetGuided() {
		t.Fatalf("answer %+v, want accepted and declined as guided", rep)
	}
	waitNMState(t, h.nm, "the task from getTask", func(s nodemonitor.State) bool { return s.Launches == 1 })
	if got := h.sched.askedFor("r"); got != 1 {
		t.Errorf("getTask asked %d times, want 1", got)
	}
}

// TestOfferOutcomeAnswersAndIsFinal: offerOutcome says what this node
// monitor did with an offer; one asked about before it arrives is
// answered "unseen", and when it does arrive, on a free slot, it is
// declined so that the answer stays true; its reservation queues and asks
// by getTask. Every answer carries the process's start nonce.
func TestNodeMonitorOfferOutcomeAnswersAndIsFinal(t *testing.T) {
	h := newNMHarness(t, 3, false)
	ctx := context.Background()
	rep := h.enqueueOffer(t, "r", 1, "t0")
	if !rep.Launched || rep.GetBoot() == "" {
		t.Fatalf("answer %+v, want launched, with the start nonce", rep)
	}
	ask := func(req, task string) *sparrowrpc.TOfferOutcome {
		t.Helper()
		out, err := h.nm.OfferOutcome(ctx, req, task)
		if err != nil {
			t.Fatalf("OfferOutcome(%s, %s): %v", req, task, err)
		}
		if out.Boot != rep.GetBoot() {
			t.Fatalf("OfferOutcome(%s, %s) nonce %q, offers' %q", req, task, out.Boot, rep.GetBoot())
		}
		return out
	}
	if out := ask("r", "t0"); out.Outcome != sparrowrpc.OFFER_TAKEN {
		t.Fatalf("r/t0: %+v, want taken", out)
	}
	if out := ask("late", "t0"); out.Outcome != sparrowrpc.OFFER_UNSEEN {
		t.Fatalf("late/t0 before the offer: %+v, want unseen", out)
	}
	h.sched.mu.Lock()
	h.sched.tasks["late"] = []string{"t1"}
	h.sched.mu.Unlock()
	if rep := h.enqueueOffer(t, "late", 1, "t0"); !rep.Accepted || rep.Launched || rep.GetGuided() {
		t.Fatalf("answer %+v, want the late offer declined (its scheduler heard it was unseen)", rep)
	}
	waitNMState(t, h.nm, "the backend to see the getTask's task", func(nodemonitor.State) bool { return h.back.count() == 2 })
	h.back.mu.Lock()
	launched := slices.Sorted(slices.Values(h.back.launched))
	h.back.mu.Unlock()
	if !slices.Equal(launched, []string{"late/t1", "r/t0"}) {
		t.Errorf("launched %v, want r/t0 and late/t1 (by getTask), never late/t0", launched)
	}
	if out := ask("late", "t0"); out.Outcome != sparrowrpc.OFFER_UNSEEN {
		t.Errorf("late/t0 after: %+v, want still unseen", out)
	}
	// An offer that finds no free slot is declined, and said so.
	h.sched.mu.Lock()
	h.sched.tasks["fill"] = []string{"f0"}
	h.sched.mu.Unlock()
	h.enqueue(t, "app", "fill", 1)
	waitNMState(t, h.nm, "every slot taken", func(s nodemonitor.State) bool { return s.Free == 0 })
	if rep := h.enqueueOffer(t, "busy", 1, "t0"); rep.Launched {
		t.Fatalf("answer %+v, want declined on a full node", rep)
	}
	if out := ask("busy", "t0"); out.Outcome != sparrowrpc.OFFER_DECLINED {
		t.Errorf("busy/t0: %+v, want declined", out)
	}
	if _, err := h.nm.OfferOutcome(ctx, "", "t0"); err == nil {
		t.Error("OfferOutcome without a request id: no error")
	}
}
