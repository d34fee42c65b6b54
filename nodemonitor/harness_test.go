package nodemonitor

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/core/shortjobs"
	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// The harness drives a NodeMonitor in memory: fakeScheds stands for every
// scheduler and fakeExecs for every executor, through the Schedulers and
// Executors interfaces. Tests run inside a synctest bubble, so time is
// fake and synctest.Wait returns once every goroutine the node monitor
// started has finished or blocks; nothing opens a socket.

// errUnknownMethod is what a peer without an extension answers.
var errUnknownMethod = thrift.NewTApplicationException(thrift.UNKNOWN_METHOD, "unknown method")

// errAnswerLost is a call that failed after it was sent: the peer may
// have acted on it.
var errAnswerLost = errors.New("read tcp: i/o timeout")

// fakeScheds serves every scheduler's side from a script of tasks per
// request.
type fakeScheds struct {
	mu    sync.Mutex
	tasks map[string][]string // request -> task ids still to hand out
	asked map[string]int      // request -> tasks asked for (getTask, or a fetch's first call)
	// fetched is each fetch's answer, given again when asked again;
	// fetchCalls counts calls by fetch ID.
	fetched    map[int64][]*sparrowrpc.TTaskLaunchSpec
	fetchCalls map[int64]int
	// lostAnswers is how many more fetches that hand out a task lose
	// their first answer; inDoubt makes every fetchTask call fail after
	// handing out.
	lostAnswers int
	inDoubt     bool
	// noFetch, noTaskDone and noTasksDone answer those extensions
	// UNKNOWN_METHOD.
	noFetch, noTaskDone, noTasksDone bool
	// batches are the sizes of the tasksDone calls.
	batches []int
	// gate, if set, blocks getTask and fetchTask until it is closed.
	gate chan struct{}

	// estimate, if it has request, makes answers carry the policy's
	// fields: the tasks left after the one handed out, and this estimate.
	estimate map[string]float64
	// pullFrom is the request whose scripted tasks answer pulls (a
	// request id shortjobs.PullRequestID makes), named with it and "app".
	pullFrom string

	finished []string // "request/task" from tasksFinished
	done     []string // tasks reported by taskDone
	msgs     []string // "task:status:message" relayed, by either call
}

func newFakeScheds() *fakeScheds {
	return &fakeScheds{tasks: map[string][]string{}, asked: map[string]int{},
		fetched: map[int64][]*sparrowrpc.TTaskLaunchSpec{}, fetchCalls: map[int64]int{}}
}

// script adds tasks for request.
func (f *fakeScheds) script(request string, tasks ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tasks[request] = append(f.tasks[request], tasks...)
}

func (f *fakeScheds) wait() {
	f.mu.Lock()
	g := f.gate
	f.mu.Unlock()
	if g != nil {
		<-g
	}
}

// handOut is the next task of request, if any. Called with f.mu held.
func (f *fakeScheds) handOut(request string) []*sparrowrpc.TTaskLaunchSpec {
	f.asked[request]++
	name := request
	_, pull := shortjobs.PullScheduler(request)
	if pull {
		name = f.pullFrom
	}
	left := f.tasks[name]
	if len(left) == 0 {
		return []*sparrowrpc.TTaskLaunchSpec{}
	}
	f.tasks[name] = left[1:]
	spec := &sparrowrpc.TTaskLaunchSpec{TaskId: left[0], Message: []byte("m")}
	if pull {
		spec.RequestId, spec.AppId = thrift.StringPtr(name), thrift.StringPtr("app")
	}
	if est, ok := f.estimate[name]; ok {
		spec.RemainingTasks = thrift.Int32Ptr(int32(len(left) - 1))
		spec.TaskSeconds = thrift.Float64Ptr(est)
	}
	return []*sparrowrpc.TTaskLaunchSpec{spec}
}

func (f *fakeScheds) GetTask(gt, request string) ([]*sparrowrpc.TTaskLaunchSpec, error) {
	f.wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.handOut(request), nil
}

func (f *fakeScheds) FetchTask(gt, request string, id int64) ([]*sparrowrpc.TTaskLaunchSpec, error) {
	f.wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.noFetch {
		return nil, errUnknownMethod
	}
	f.fetchCalls[id]++
	specs, again := f.fetched[id]
	if !again {
		specs = f.handOut(request)
		f.fetched[id] = specs
		if len(specs) > 0 && f.lostAnswers > 0 {
			f.lostAnswers--
			return nil, errAnswerLost
		}
	}
	if f.inDoubt {
		return nil, errAnswerLost
	}
	return specs, nil
}

func (f *fakeScheds) TasksFinished(gt string, ids []*sparrowrpc.TFullTaskId) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, t := range ids {
		f.finished = append(f.finished, t.RequestId+"/"+t.TaskId)
	}
	return nil
}

func (f *fakeScheds) SendFrontendMessage(svc, app string, id *sparrowrpc.TFullTaskId, status int32, msg []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.msgs = append(f.msgs, fmt.Sprintf("%s:%d:%s", id.TaskId, status, msg))
	return nil
}

func (f *fakeScheds) TaskDone(svc, app string, id *sparrowrpc.TFullTaskId, status int32, msg []byte) error {
	f.mu.Lock()
	if f.noTaskDone {
		f.mu.Unlock()
		return errUnknownMethod
	}
	f.done = append(f.done, id.TaskId)
	f.mu.Unlock()
	return f.SendFrontendMessage(svc, app, id, status, msg)
}

func (f *fakeScheds) TasksDone(svc string, tasks []*sparrowrpc.TTaskDone) error {
	f.mu.Lock()
	if f.noTasksDone {
		f.mu.Unlock()
		return errUnknownMethod
	}
	f.batches = append(f.batches, len(tasks))
	for _, t := range tasks {
		f.done = append(f.done, t.TaskId.TaskId)
		f.msgs = append(f.msgs, fmt.Sprintf("%s:%d:%s", t.TaskId.TaskId, t.Status, t.Message))
	}
	f.mu.Unlock()
	return nil
}

func (f *fakeScheds) Close() {}

// askedFor is how many tasks request was asked for.
func (f *fakeScheds) askedFor(request string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.asked[request]
}

// fetches is how many fetchTask calls there were, how many fetch IDs
// were asked more than once, and the most calls for one.
func (f *fakeScheds) fetches() (calls, again, most int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, n := range f.fetchCalls {
		calls += n
		if n > 1 {
			again++
		}
		most = max(most, n)
	}
	return calls, again, most
}

func (f *fakeScheds) read(list *[]string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(*list)
}

// fakeExecs records launches; an executor listed in dead fails its
// liveness checks, and failLaunch fails every launch. launchTaskAndWait
// answers with reply (nil: not done), and records each launch it made in
// waited as well as launched.
type fakeExecs struct {
	mu         sync.Mutex
	launched   []string // "request/task"
	dead       map[string]bool
	failLaunch bool
	forgotten  []string
	reply      *sparrowrpc.TLaunchReply
	waited     []time.Duration
	batches    []int // the size of each launchTasksAndWait call
}

func (e *fakeExecs) LaunchTasksAndWait(addr string, tasks []*sparrowrpc.TLaunchItem, wait time.Duration) ([]*sparrowrpc.TLaunchReply, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.failLaunch || e.dead[addr] {
		return nil, errors.New("connection refused")
	}
	e.batches = append(e.batches, len(tasks))
	replies := make([]*sparrowrpc.TLaunchReply, len(tasks))
	for i, t := range tasks {
		e.launched = append(e.launched, t.TaskId.RequestId+"/"+t.TaskId.TaskId)
		e.waited = append(e.waited, wait)
		replies[i] = &sparrowrpc.TLaunchReply{}
		if e.reply != nil {
			replies[i] = e.reply
		}
	}
	return replies, nil
}

func (e *fakeExecs) LaunchTaskAndWait(addr string, msg []byte, id *sparrowrpc.TFullTaskId, user *sparrowrpc.TUserGroupInfo, wait time.Duration) (*sparrowrpc.TLaunchReply, error) {
	if err := e.LaunchTask(addr, msg, id, user); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.waited = append(e.waited, wait)
	if e.reply == nil {
		return &sparrowrpc.TLaunchReply{}, nil
	}
	return e.reply, nil
}

func (e *fakeExecs) LaunchTask(addr string, msg []byte, id *sparrowrpc.TFullTaskId, user *sparrowrpc.TUserGroupInfo) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.failLaunch || e.dead[addr] {
		return errors.New("connection refused")
	}
	e.launched = append(e.launched, id.RequestId+"/"+id.TaskId)
	return nil
}

// launchOrder returns the launches so far in launch order.
func (e *fakeExecs) launchOrder() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.launched)
}

func (e *fakeExecs) Alive(addr string, _ time.Duration) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.dead[addr] {
		return fmt.Errorf("executor at %s stopped accepting connections", addr)
	}
	return nil
}

func (e *fakeExecs) Forget(addr string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.forgotten = append(e.forgotten, addr)
}

func (e *fakeExecs) Close() {}

func (e *fakeExecs) kill(addr string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.dead == nil {
		e.dead = map[string]bool{}
	}
	e.dead[addr] = true
}

// launches returns the launches seen, sorted.
func (e *fakeExecs) launches() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Sorted(slices.Values(e.launched))
}

type staticDir map[string]string

func (d staticDir) GetTaskAddr(s string) (string, bool) { a, ok := d[s]; return a, ok }

// Addresses in the harness: reservations name schedSvc, which the
// directory maps to schedGT; the executor for "app" registers at
// backend.
const (
	schedSvc = "127.0.0.1:1"
	schedGT  = "127.0.0.1:7"
	backend  = "127.0.0.1:9"
)

type harness struct {
	nm    *NodeMonitor
	sched *fakeScheds
	execs *fakeExecs
	self  *sparrowrpc.THostPort // the scheduler address named in reservations
	apps  [][]string            // app lists passed to OnAppsChanged
	mu    sync.Mutex
}

// opts are newHarness's choices; the zero value of each is the default.
type opts struct {
	slots int
	cfg   func(*Config)
}

// newHarness returns a node monitor with an executor for "app"
// registered. Call it inside a synctest bubble.
func newHarness(t *testing.T, o opts) *harness {
	t.Helper()
	if o.slots == 0 {
		o.slots = 1
	}
	h := &harness{sched: newFakeScheds(), execs: &fakeExecs{}}
	h.self, _ = rpc.ParseHostPort(schedSvc)
	cfg := Config{Slots: o.slots, Internal: "127.0.0.1:2", Log: zerolog.Nop(), OnAppsChanged: func(apps []string) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.apps = append(h.apps, apps)
	}}
	if o.cfg != nil {
		o.cfg(&cfg)
	}
	nm, err := newNodeMonitor(cfg, staticDir{schedSvc: schedGT}, h.sched, h.execs)
	if err != nil {
		t.Fatal(err)
	}
	h.nm = nm
	if ok, err := nm.RegisterBackend(t.Context(), "app", backend); !ok || err != nil {
		t.Fatalf("register backend: %v %v", ok, err)
	}
	t.Cleanup(func() {
		h.sched.mu.Lock()
		if g := h.sched.gate; g != nil {
			select {
			case <-g:
			default:
				close(g)
			}
		}
		h.sched.mu.Unlock()
		synctest.Wait()
		nm.Close()
		noSockets(t)
	})
	return h
}

// lastApps is the app list last passed to OnAppsChanged.
func (h *harness) lastApps() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.apps) == 0 {
		return nil
	}
	return h.apps[len(h.apps)-1]
}

// gate makes getTask and fetchTask block until open is called.
func (h *harness) gate() (open func()) {
	g := make(chan struct{})
	h.sched.mu.Lock()
	h.sched.gate = g
	h.sched.mu.Unlock()
	return func() { close(g) }
}

func (h *harness) req(app, request string, n int) *sparrowrpc.TEnqueueTaskReservationsRequest {
	return &sparrowrpc.TEnqueueTaskReservationsRequest{
		AppId: app, RequestId: request, SchedulerAddress: h.self, NumTasks: int32(n), User: &sparrowrpc.TUserGroupInfo{User: "u"},
	}
}

// enqueue queues n reservations of request for app and waits for the node
// monitor to act on them.
func (h *harness) enqueue(t *testing.T, app, request string, n int) bool {
	t.Helper()
	ok, err := h.nm.EnqueueTaskReservations(t.Context(), h.req(app, request, n))
	if err != nil {
		t.Fatalf("enqueue: %v", err)
	}
	synctest.Wait()
	return ok
}

func (h *harness) enqueueOffer(t *testing.T, request string, n int, task string, more ...string) *sparrowrpc.TEnqueueOfferReply {
	t.Helper()
	var moreOffers []*sparrowrpc.TTaskLaunchSpec
	for _, m := range more {
		moreOffers = append(moreOffers, &sparrowrpc.TTaskLaunchSpec{TaskId: m, Message: []byte("m")})
	}
	rep, err := h.nm.EnqueueTaskReservationsWithOffer(t.Context(), h.req("app", request, n),
		&sparrowrpc.TTaskLaunchSpec{TaskId: task, Message: []byte("m")}, moreOffers)
	if err != nil {
		t.Fatalf("enqueue with offer: %v", err)
	}
	synctest.Wait()
	return rep
}

// finish reports tasks of request finished, as an executor does, and
// waits for the node monitor to act on it.
func (h *harness) finish(request string, tasks ...string) {
	ids := make([]*sparrowrpc.TFullTaskId, len(tasks))
	for i, task := range tasks {
		ids[i] = &sparrowrpc.TFullTaskId{RequestId: request, TaskId: task, AppId: "app", SchedulerAddress: h.self}
	}
	h.nm.TasksFinished(context.Background(), ids)
	synctest.Wait()
}

// wantState fails t unless the state's counts are want's (Apps, Draining
// and the ended tasks' outcomes, which TestTaskOutcomes checks, are not
// compared).
func wantState(t *testing.T, h *harness, want State) {
	t.Helper()
	got := h.nm.State()
	got.Apps = nil
	got.Draining = false
	got.Finished, got.Failed, got.Lost = 0, 0, 0
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("state %+v, want %+v", got, want)
	}
}
