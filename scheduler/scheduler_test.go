package scheduler

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/core/placement"
	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// waitTimeout bounds every wait on a condition; it is a deadline for a hung
// test, not an expectation of speed.
const waitTimeout = 10 * time.Second

const schedAddr = "127.0.0.1:20503"

// hub wakes waiters whenever a fake peer records something.
type hub struct {
	mu sync.Mutex
	ch chan struct{}
}

func newHub() *hub { return &hub{ch: make(chan struct{})} }

func (h *hub) changed() {
	h.mu.Lock()
	close(h.ch)
	h.ch = make(chan struct{})
	h.mu.Unlock()
}

func (h *hub) wake() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ch
}

// waitUntil waits for cond, re-checking whenever a fake peer records
// something (and every few milliseconds, for scheduler-side state), until
// waitTimeout.
func (h *hub) waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	h.waitFor(t, waitTimeout, what, cond)
}

func (h *hub) waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		wake := h.wake()
		if cond() {
			return
		}
		select {
		case <-wake:
		case <-tick.C:
		case <-deadline.C:
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
	}
}

// fakeNM is a node monitor's InternalService on the fake network.
type fakeNM struct {
	name, addr string
	hp         *sparrowrpc.THostPort
	hub        *hub
	net        *memNet
	refuse     atomic.Bool

	mu sync.Mutex
	// gate, if set, holds each enqueue until it is closed; offerGate
	// holds only those that carry an offer.
	gate      chan struct{}
	offerGate chan struct{}
	// capped: accept only while room > 0, one enqueue taking one room
	// (a queue with that many free positions); refuse the rest as full.
	capped   bool
	room     int
	accepted map[string]int // request -> reservations accepted
	attempts map[string]int // request -> reservations offered, accepted or not
	cancels  map[string]int // request -> cancel calls
	msgs     []*sparrowrpc.TEnqueueTaskReservationsRequest
	// takeOffers: launch an offered task at once, as an idle node
	// monitor does; otherwise offers are declined. took records them.
	takeOffers atomic.Bool
	// takeMost, if above 0, takes at most that many of a call's offers
	// (free slots), declining the rest; oneOffer ignores moreOffers, as
	// a node monitor that knows only one offer per call does; free, if
	// at least 0, is the free slots each answer reports.
	takeMost atomic.Int32
	oneOffer atomic.Bool
	free     atomic.Int32
	// guided: decline offers as a node monitor whose queue weights a
	// coordinator guides does, saying so.
	guided atomic.Bool
	// outcome is what OfferOutcome answers, with boot as the start nonce
	// (also sent with offers' answers); questionFails makes it fail
	// instead. questions counts its calls.
	outcome       atomic.Int32
	boot          atomic.Value // string
	questionFails atomic.Bool
	questions     int
	took          map[string][]string // request -> offered task ids taken
	// works holds each updateRemainingWork call's updates, in order.
	works      [][]*sparrowrpc.TRemainingWork
	offerSpecs []*sparrowrpc.TTaskLaunchSpec // every offered task received
	offered    int                           // offers received
}

func (n *fakeNM) EnqueueTaskReservationsWithOffer(ctx context.Context, req *sparrowrpc.TEnqueueTaskReservationsRequest, offer *sparrowrpc.TTaskLaunchSpec, moreOffers []*sparrowrpc.TTaskLaunchSpec) (*sparrowrpc.TEnqueueOfferReply, error) {
	n.mu.Lock()
	gate := n.offerGate
	n.mu.Unlock()
	if gate != nil {
		<-gate
	}
	ok, err := n.EnqueueTaskReservations(ctx, req)
	if err != nil || !ok {
		return &sparrowrpc.TEnqueueOfferReply{}, err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.offered += 1 + len(moreOffers)
	n.offerSpecs = append(append(n.offerSpecs, offer), moreOffers...)
	boot := n.bootNonce()
	if n.guided.Load() {
		guided := true
		return &sparrowrpc.TEnqueueOfferReply{Accepted: true, Guided: &guided, Boot: &boot}, nil
	}
	if !n.takeOffers.Load() {
		return &sparrowrpc.TEnqueueOfferReply{Accepted: true, Boot: &boot}, nil
	}
	rep := &sparrowrpc.TEnqueueOfferReply{Accepted: true, Launched: true, Boot: &boot}
	if f := n.free.Load(); f >= 0 {
		rep.FreeSlots = &f
	}
	offers := []*sparrowrpc.TTaskLaunchSpec{offer}
	if !n.oneOffer.Load() {
		offers = append(offers, moreOffers...)
		rep.MoreLaunched = make([]bool, len(moreOffers))
	}
	for k, o := range offers {
		if most := int(n.takeMost.Load()); most > 0 && k >= most {
			break
		}
		n.accepted[req.RequestId]-- // each taken task uses one reservation
		n.took[req.RequestId] = append(n.took[req.RequestId], o.TaskId)
		if k > 0 {
			rep.MoreLaunched[k-1] = true
		}
	}
	return rep, nil
}

func (n *fakeNM) OfferOutcome(_ context.Context, requestID, taskID string) (*sparrowrpc.TOfferOutcome, error) {
	defer n.hub.changed()
	n.mu.Lock()
	n.questions++
	n.mu.Unlock()
	if n.questionFails.Load() {
		return nil, fmt.Errorf("offerOutcome(%s, %s): fails as told", requestID, taskID)
	}
	return &sparrowrpc.TOfferOutcome{Outcome: n.outcome.Load(), Boot: n.bootNonce()}, nil
}

// offers returns how many offers n has received.
func (n *fakeNM) offers() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.offered
}

// bootNonce is the fake's start nonce ("" until set).
func (n *fakeNM) bootNonce() string {
	b, _ := n.boot.Load().(string)
	return b
}

func (n *fakeNM) EnqueueTaskReservations(_ context.Context, req *sparrowrpc.TEnqueueTaskReservationsRequest) (bool, error) {
	n.mu.Lock()
	gate := n.gate
	n.mu.Unlock()
	if gate != nil {
		<-gate
	}
	defer n.hub.changed()
	n.mu.Lock()
	defer n.mu.Unlock()
	n.msgs = append(n.msgs, req)
	n.attempts[req.RequestId] += int(req.NumTasks)
	if n.refuse.Load() || (n.capped && n.room <= 0) {
		return false, nil
	}
	if n.capped {
		n.room--
	}
	n.accepted[req.RequestId] += int(req.NumTasks)
	return true, nil
}

func (n *fakeNM) CancelTaskReservations(_ context.Context, req *sparrowrpc.TCancelTaskReservationsRequest) error {
	defer n.hub.changed()
	n.mu.Lock()
	defer n.mu.Unlock()
	n.cancels[req.RequestId]++
	return nil
}

func (n *fakeNM) UpdateRemainingWork(_ context.Context, updates []*sparrowrpc.TRemainingWork) error {
	defer n.hub.changed()
	n.mu.Lock()
	defer n.mu.Unlock()
	n.works = append(n.works, updates)
	return nil
}

// workCalls returns the updateRemainingWork calls received so far.
func (n *fakeNM) workCalls() [][]*sparrowrpc.TRemainingWork {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.works)
}

func (n *fakeNM) get(m map[string]int, req string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return m[req]
}

func (n *fakeNM) acceptedFor(req string) int { return n.get(n.accepted, req) }
func (n *fakeNM) attemptsFor(req string) int { return n.get(n.attempts, req) }
func (n *fakeNM) cancelsFor(req string) int  { return n.get(n.cancels, req) }

func (n *fakeNM) requests() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Sorted(maps.Keys(n.attempts))
}

// fakeView is a NodeView over a fixed set of nodes per app.
type fakeView struct {
	mu    sync.Mutex
	byApp map[string][]placement.Node
}

func (v *fakeView) Candidates(app string) []placement.Node {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.byApp[app]
}

func (v *fakeView) Node(addr string) (placement.Node, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, ns := range v.byApp {
		for _, n := range ns {
			if n.Addr == addr {
				return n, true
			}
		}
	}
	return placement.Node{}, false
}

type cluster struct {
	s    *Scheduler
	nms  []*fakeNM
	view *fakeView
	hub  *hub
	net  *memNet
}

const app = "spark"

// startNM serves a fake node monitor on the fake network.
func startNM(t *testing.T, h *hub, net *memNet, name string) *fakeNM {
	t.Helper()
	nm := &fakeNM{
		name: name, addr: net.addr(), hub: h, net: net,
		accepted: make(map[string]int), attempts: make(map[string]int), cancels: make(map[string]int),
		took: make(map[string][]string),
	}
	nm.free.Store(-1)
	var err error
	if nm.hp, err = rpc.ParseHostPort(nm.addr); err != nil {
		t.Fatal(err)
	}
	net.serveNode(nm.addr, nm)
	return nm
}

// stop makes nm unreachable, as a node monitor whose server closed.
func (nm *fakeNM) stop() { nm.net.stop(nm.addr) }

func (nm *fakeNM) node(i int) placement.Node {
	host, _, _ := strings.Cut(nm.addr, ":")
	return placement.Node{Addr: nm.addr, Host: host, Name: nm.name, Attrs: map[string]string{placement.RackAttr: fmt.Sprintf("r%d", i%2)}}
}

// newCluster starts n fake node monitors hosting app and a scheduler that
// sees them. Node i is named "nm<i>" and is in rack "r<i%2>"; all share the
// loopback host, so tests express preferences by name or rack.
func newCluster(t *testing.T, n int, cfg Config) *cluster {
	t.Helper()
	if !inBubble() {
		t.Fatal("newCluster outside synctest.Test: scheduler tests run on the fake clock")
	}
	noSockets(t)
	c := &cluster{hub: newHub(), view: &fakeView{byApp: make(map[string][]placement.Node)}, net: newMemNet(cfg.RPC)}
	for i := range n {
		nm := startNM(t, c.hub, c.net, fmt.Sprintf("nm%d", i))
		c.nms = append(c.nms, nm)
		c.view.byApp[app] = append(c.view.byApp[app], nm.node(i))
	}
	if cfg.Address == "" {
		cfg.Address = schedAddr
	}
	if cfg.Seed == 0 {
		cfg.Seed = 1
	}
	cfg.Log = zerolog.Nop()
	s, err := newWith(cfg, c.view, c.net, c.net)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	// Runs after the test's own clean-ups (which release its gates):
	// held calls, offers in doubt and retries end on timers, so the fake
	// clock is moved past every such bound for the bubble to end with
	// no goroutine left.
	t.Cleanup(func() { time.Sleep(quiesce + cfg.MaxHold) })
	c.s = s
	return c
}

func (c *cluster) accepted(req string) int {
	total := 0
	for _, nm := range c.nms {
		total += nm.acceptedFor(req)
	}
	return total
}

func (c *cluster) waitAccepted(t *testing.T, req string, want int) {
	t.Helper()
	c.hub.waitUntil(t, fmt.Sprintf("%d reservations for %s", want, req), func() bool { return c.accepted(req) >= want })
	if got := c.accepted(req); got != want {
		t.Fatalf("%d reservations for %s, want %d", got, req, want)
	}
}

func (c *cluster) getTask(t *testing.T, req string, nm *fakeNM) []*sparrowrpc.TTaskLaunchSpec {
	t.Helper()
	specs, err := c.s.GetTask(context.Background(), req, nm.hp)
	if err != nil {
		t.Fatalf("GetTask(%s, %s): %v", req, nm.name, err)
	}
	if specs == nil {
		t.Fatalf("GetTask(%s, %s) returned a nil list; want an empty one", req, nm.name)
	}
	if len(specs) > 1 {
		t.Fatalf("GetTask(%s, %s) returned %d tasks, want at most 1", req, nm.name, len(specs))
	}
	return specs
}

// getTaskOnEach calls getTask for req once from each of nms, as their
// free slots would, and returns the task IDs handed out, in order.
func (c *cluster) getTaskOnEach(t *testing.T, req string, nms []*fakeNM) []string {
	t.Helper()
	var got []string
	for _, nm := range nms {
		for _, spec := range c.getTask(t, req, nm) {
			got = append(got, spec.TaskId)
		}
	}
	return got
}

// distinct reports whether no ID appears twice in ids.
func distinct(ids []string) bool {
	return len(slices.Compact(slices.Sorted(slices.Values(ids)))) == len(ids)
}

func job(id string, ratio float64, tasks ...*sparrowrpc.TTaskSpec) *sparrowrpc.TSchedulingRequest {
	r := &sparrowrpc.TSchedulingRequest{App: app, Tasks: tasks}
	if id != "" {
		r.RequestId = &id
	}
	if ratio != 0 {
		r.ProbeRatio = &ratio
	}
	return r
}

func freeTasks(m int) []*sparrowrpc.TTaskSpec {
	out := make([]*sparrowrpc.TTaskSpec, m)
	for i := range out {
		out[i] = &sparrowrpc.TTaskSpec{TaskId: fmt.Sprintf("t%d", i), Message: fmt.Appendf(nil, "msg%d", i)}
	}
	return out
}

func onNodes(id string, names ...string) *sparrowrpc.TTaskSpec {
	return &sparrowrpc.TTaskSpec{TaskId: id, Preference: &sparrowrpc.TPlacementPreference{Nodes: names}}
}

func TestNewValidatesConfig(t *testing.T) {
	view := &fakeView{}
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"bad address", Config{Address: "nope"}, "scheduler address"},
		{"bad ratio", Config{Address: schedAddr, ProbeRatio: 0.5}, "below 1"},
		{"NaN ratio", Config{Address: schedAddr, ProbeRatio: math.NaN()}, "finite"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(tt.cfg, view)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New = %v, %v; want error containing %q", s, err, tt.want)
			}
		})
	}
	s, err := New(Config{Address: schedAddr}, view)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.cfg.ProbeRatio != DefaultProbeRatio {
		t.Fatalf("default ratio %v, want %v", s.cfg.ProbeRatio, DefaultProbeRatio)
	}
}

func TestSubmitJobPlacesReservations(t *testing.T) {
	tests := []struct {
		name     string
		n, m     int
		reqRatio float64 // 0: not set in the request
		cfgRatio float64 // 0: DefaultProbeRatio
		want     int
	}{
		{name: "default d=2", n: 10, m: 3, want: 6},
		{name: "request d=1.5", n: 10, m: 4, reqRatio: 1.5, want: 6},
		{name: "config d=1.1", n: 20, m: 10, cfgRatio: 1.1, want: 11},
		{name: "d=1 uses every node", n: 5, m: 5, reqRatio: 1, want: 5},
		{name: "request overrides config", n: 12, m: 4, reqRatio: 3, cfgRatio: 1, want: 12},
		{name: "fewer nodes than reservations", n: 4, m: 3, reqRatio: 2, want: 6},
		{name: "one node", n: 1, m: 2, want: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := newCluster(t, tt.n, Config{ProbeRatio: tt.cfgRatio})
				if err := c.s.SubmitJob(context.Background(), job("job", tt.reqRatio, freeTasks(tt.m)...)); err != nil {
					t.Fatal(err)
				}
				c.waitAccepted(t, "job", tt.want)
				lo, hi := tt.want/tt.n, (tt.want+tt.n-1)/tt.n
				used := 0
				for _, nm := range c.nms {
					got := nm.acceptedFor("job")
					if got > 0 {
						used++
					}
					if tt.want <= tt.n && got > 1 {
						t.Fatalf("%s got %d reservations; with enough nodes each should get at most one", nm.name, got)
					}
					if tt.want > tt.n && (got < lo || got > hi) {
						t.Fatalf("%s got %d reservations, want %d..%d", nm.name, got, lo, hi)
					}
					nm.mu.Lock()
					for _, msg := range nm.msgs {
						if msg.AppId != app || msg.RequestId != "job" || rpc.HostPortString(msg.SchedulerAddress) != schedAddr || msg.User == nil {
							t.Errorf("enqueue message %+v", msg)
						}
					}
					nm.mu.Unlock()
				}
				if used != min(tt.want, tt.n) {
					t.Fatalf("reservations on %d nodes, want %d", used, min(tt.want, tt.n))
				}
				c.hub.waitUntil(t, "Stats to count the reservations", func() bool { return c.s.Stats().Reservations == uint64(tt.want) })
				st := c.s.Stats()
				if st.JobsSubmitted != 1 || st.TasksSubmitted != uint64(tt.m) || st.ActiveRequests != 1 || st.EnqueueFailures != 0 {
					t.Fatalf("stats %+v", st)
				}
			})
		})
	}
}

func TestSubmitJobErrors(t *testing.T) {
	tests := []struct {
		name string
		req  *sparrowrpc.TSchedulingRequest
		want []string
	}{
		{name: "nil request", req: nil, want: []string{"missing scheduling request"}},
		{name: "missing app", req: &sparrowrpc.TSchedulingRequest{Tasks: freeTasks(1)}, want: []string{"missing app"}},
		{name: "NaN ratio", req: job("", math.NaN(), freeTasks(1)...), want: []string{"finite"}},
		{name: "ratio too big", req: job("", 101, freeTasks(1)...), want: []string{"above the maximum"}},
		{name: "duplicate task ids", req: job("", 0, freeTasks(2)[0], freeTasks(2)[0]), want: []string{"duplicate task id", `"t0"`}},
		{name: "no live node for app", req: &sparrowrpc.TSchedulingRequest{App: "hive", Tasks: freeTasks(1)}, want: []string{"no live node monitor", `"hive"`}},
		{name: "constrained task has no node", req: job("", 0, freeTasks(1)[0], onNodes("picky", "elsewhere")), want: []string{`"picky"`, "elsewhere", app}},
		{
			name: "unsatisfiable constraint",
			req:  &sparrowrpc.TSchedulingRequest{App: app, Tasks: freeTasks(1), Constraints: []*sparrowrpc.TConstraint{{Key: "gpu", Op: "exists"}}},
			want: []string{"no live node monitor satisfies constraint", `"gpu exists"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := newCluster(t, 3, Config{})
				err := c.s.SubmitJob(context.Background(), tt.req)
				var ire *sparrowrpc.IncompleteRequestException
				if !errors.As(err, &ire) {
					t.Fatalf("SubmitJob = %v, want an IncompleteRequestException", err)
				}
				for _, s := range tt.want {
					if !strings.Contains(ire.Message, s) {
						t.Errorf("message %q does not mention %s", ire.Message, s)
					}
				}
				if st := c.s.Stats(); st.JobsSubmitted != 0 || st.ActiveRequests != 0 {
					t.Fatalf("refused requests left state: %+v", st)
				}
			})
		})
	}
	synctest.Test(t, func(t *testing.T) { submitJobErrorsOnState(t, newCluster(t, 3, Config{})) })
}

// submitJobErrorsOnState: requests refused for the scheduler's own state.
func submitJobErrorsOnState(t *testing.T, c *cluster) {
	// An empty task list is a successful no-op.
	if err := c.s.SubmitJob(context.Background(), job("", 0)); err != nil {
		t.Fatalf("empty job: %v", err)
	}
	if st := c.s.Stats(); st.JobsSubmitted != 0 || st.ActiveRequests != 0 {
		t.Fatalf("empty job left state: %+v", st)
	}

	// A request id in use is refused; the first request is untouched.
	if err := c.s.SubmitJob(context.Background(), job("dup", 1, freeTasks(1)...)); err != nil {
		t.Fatal(err)
	}
	err := c.s.SubmitJob(context.Background(), job("dup", 1, freeTasks(2)...))
	var ire *sparrowrpc.IncompleteRequestException
	if !errors.As(err, &ire) || !strings.Contains(ire.Message, `"dup" is already in use`) {
		t.Fatalf("duplicate request id: %v", err)
	}
	if st := c.s.Stats(); st.JobsSubmitted != 1 || st.TasksSubmitted != 1 || st.ActiveRequests != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestSubmitJobNoLiveNodes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 0, Config{})
		err := c.s.SubmitJob(context.Background(), job("", 0, freeTasks(1)...))
		var ire *sparrowrpc.IncompleteRequestException
		if !errors.As(err, &ire) || !strings.Contains(ire.Message, "no live node monitor") {
			t.Fatalf("SubmitJob with no nodes: %v", err)
		}
	})
}

// holders returns, for each node monitor, how many reservations it holds
// for req, as a list with one entry per reservation.
func (c *cluster) holders(req string) []*fakeNM {
	var out []*fakeNM
	for _, nm := range c.nms {
		for range nm.acceptedFor(req) {
			out = append(out, nm)
		}
	}
	return out
}

func TestGetTaskLateBindingAndCancel(t *testing.T) {
	for _, noCancel := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoCancel=%v", noCancel), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := newCluster(t, 8, Config{NoCancel: noCancel})
				if err := c.s.SubmitJob(context.Background(), job("job", 2, freeTasks(3)...)); err != nil {
					t.Fatal(err)
				}
				c.waitAccepted(t, "job", 6)
				hold := c.holders("job") // six distinct nodes
				var idle *fakeNM
				for _, nm := range c.nms {
					if nm.acceptedFor("job") == 0 {
						idle = nm
					}
				}

				// A node with no reservation gets nothing and takes nothing.
				if got := c.getTask(t, "job", idle); len(got) != 0 {
					t.Fatalf("node without a reservation got %v", got)
				}
				// Unknown request: empty.
				if got := c.getTask(t, "nope", hold[0]); len(got) != 0 {
					t.Fatalf("unknown request gave %v", got)
				}

				// The first three askers get the tasks in submission order.
				askers := []*fakeNM{hold[4], hold[1], hold[5]}
				for i, nm := range askers {
					got := c.getTask(t, "job", nm)
					want := fmt.Sprintf("t%d", i)
					if len(got) != 1 || got[0].TaskId != want || string(got[0].Message) != "msg"+want[1:] {
						t.Fatalf("ask %d by %s: %v, want %s", i, nm.name, got, want)
					}
					if active := c.s.Stats().ActiveRequests; active != map[bool]int{true: 0, false: 1}[i == 2] {
						t.Fatalf("after ask %d: %d active requests", i, active)
					}
				}

				// Later askers get empty lists.
				for _, nm := range hold {
					if got := c.getTask(t, "job", nm); len(got) != 0 {
						t.Fatalf("late ask by %s got %v", nm.name, got)
					}
				}
				st := c.s.Stats()
				if st.TasksLaunched != 3 || st.ActiveRequests != 0 {
					t.Fatalf("stats %+v", st)
				}

				if noCancel {
					if st.Cancellations != 0 {
						t.Fatalf("NoCancel sent %d cancellations", st.Cancellations)
					}
					for _, nm := range c.nms {
						if nm.cancelsFor("job") != 0 {
							t.Fatalf("NoCancel: %s got a cancel", nm.name)
						}
					}
					return
				}
				// Cancellations go to the three holders that never asked, once each.
				if st.Cancellations != 3 {
					t.Fatalf("%d cancellations, want 3", st.Cancellations)
				}
				targets := []*fakeNM{hold[0], hold[2], hold[3]}
				c.hub.waitUntil(t, "cancels to the unasked holders", func() bool {
					for _, nm := range targets {
						if nm.cancelsFor("job") == 0 {
							return false
						}
					}
					return true
				})
				for _, nm := range c.nms {
					want := 0
					if slices.Contains(targets, nm) {
						want = 1
					}
					if got := nm.cancelsFor("job"); got != want {
						t.Fatalf("%s got %d cancels, want %d", nm.name, got, want)
					}
				}
			})
		})
	}
}

func TestGetTaskConcurrentAskers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 10, Config{})
		const m = 25
		if err := c.s.SubmitJob(context.Background(), job("job", 2, freeTasks(m)...)); err != nil {
			t.Fatal(err)
		}
		c.waitAccepted(t, "job", 2*m)
		var mu sync.Mutex
		got := make(map[string]int)
		var wg sync.WaitGroup
		for _, nm := range c.holders("job") {
			wg.Add(1)
			go func() {
				defer wg.Done()
				specs, err := c.s.GetTask(context.Background(), "job", nm.hp)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				for _, s := range specs {
					got[s.TaskId]++
				}
			}()
		}
		wg.Wait()
		if len(got) != m {
			t.Fatalf("%d distinct tasks launched, want %d", len(got), m)
		}
		for id, n := range got {
			if n != 1 {
				t.Fatalf("task %s launched %d times", id, n)
			}
		}
		if st := c.s.Stats(); st.ActiveRequests != 0 || st.TasksLaunched != m || st.EmptyGetTasks != m {
			t.Fatalf("stats %+v", st)
		}
	})
}

func TestConstrainedTasksGoToAllowedNodes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 8, Config{})
		rackTask := &sparrowrpc.TTaskSpec{TaskId: "racked", Preference: &sparrowrpc.TPlacementPreference{Racks: []string{"r1"}}}
		req := job("job", 2, onNodes("c0", "nm2", "nm3", "nm4"), rackTask)
		if err := c.s.SubmitJob(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		c.waitAccepted(t, "job", 4)
		allowed := map[string]bool{"nm2": true, "nm3": true, "nm4": true, "nm1": true, "nm5": true, "nm7": true}
		for _, nm := range c.nms {
			if nm.acceptedFor("job") > 0 && !allowed[nm.name] {
				t.Fatalf("reservation on %s, which no task allows", nm.name)
			}
		}
		launched := make(map[string]string)
		for _, nm := range c.holders("job") {
			for _, s := range c.getTask(t, "job", nm) {
				launched[s.TaskId] = nm.name
			}
		}
		if len(launched) != 2 {
			t.Fatalf("launched %v, want both tasks", launched)
		}
		if n := launched["c0"]; n != "nm2" && n != "nm3" && n != "nm4" {
			t.Fatalf("c0 ran on %s", n)
		}
		if n := launched["racked"]; n != "nm1" && n != "nm3" && n != "nm5" && n != "nm7" {
			t.Fatalf("racked ran on %s, not in rack r1", n)
		}
	})
}

func TestFailedEnqueueIsReplaced(t *testing.T) {
	tests := []struct {
		name string
		fail func(t *testing.T, c *cluster) *fakeNM
	}{
		{
			name: "node refuses",
			fail: func(t *testing.T, c *cluster) *fakeNM {
				c.nms[0].refuse.Store(true)
				return c.nms[0]
			},
		},
		{
			name: "node unreachable",
			fail: func(t *testing.T, c *cluster) *fakeNM {
				// Still in the view, but nothing listens on its port.
				c.nms[0].stop()
				return c.nms[0]
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := newCluster(t, 4, Config{})
				bad := tt.fail(t, c)
				// d=1 on 4 nodes for 4 tasks: every node, including the bad
				// one, gets exactly one reservation.
				if err := c.s.SubmitJob(context.Background(), job("job", 1, freeTasks(4)...)); err != nil {
					t.Fatal(err)
				}
				c.waitAccepted(t, "job", 4)
				if bad.acceptedFor("job") != 0 {
					t.Fatalf("bad node accepted")
				}
				c.hub.waitUntil(t, "the failure to be counted", func() bool { return c.s.Stats().EnqueueFailures == 1 })
				if got := c.getTask(t, "job", bad); len(got) != 0 {
					t.Fatalf("failed node got %v", got)
				}
				launched := 0
				for _, nm := range c.holders("job") {
					launched += len(c.getTask(t, "job", nm))
				}
				if launched != 4 {
					t.Fatalf("%d of 4 tasks launched after re-placement", launched)
				}
				if st := c.s.Stats(); st.ActiveRequests != 0 || st.TasksLaunched != 4 {
					t.Fatalf("stats %+v", st)
				}
			})
		})
	}
}

// frontendRecorder is a FrontendService that records messages.
type frontendRecorder struct {
	hub  *hub
	mu   sync.Mutex
	msgs []*sparrowrpc.TFullTaskId
	stat []int32
}

func (f *frontendRecorder) FrontendMessage(_ context.Context, id *sparrowrpc.TFullTaskId, status int32, _ []byte) error {
	defer f.hub.changed()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.msgs = append(f.msgs, id)
	f.stat = append(f.stat, status)
	return nil
}

func (f *frontendRecorder) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.msgs)
}

func TestAllNodesRefuseFailsTheTasks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 3, Config{})
		for _, nm := range c.nms {
			nm.refuse.Store(true)
		}
		fe := c.startFrontendRecorder(t)

		if err := c.s.SubmitJob(context.Background(), job("doomed", 1, freeTasks(2)...)); err != nil {
			t.Fatal(err)
		}
		c.hub.waitUntil(t, "task failure reports", func() bool { return fe.count() >= 2 })
		if st := c.s.Stats(); st.ActiveRequests != 0 {
			t.Fatalf("request still active after giving up: %+v", st)
		}
		fe.mu.Lock()
		defer fe.mu.Unlock()
		var ids []string
		for i, m := range fe.msgs {
			if fe.stat[i] != sparrowrpc.STATUS_TASK_FAILED || m.RequestId != "doomed" || m.AppId != app || rpc.HostPortString(m.SchedulerAddress) != schedAddr {
				t.Fatalf("frontend message %+v status %d", m, fe.stat[i])
			}
			ids = append(ids, m.TaskId)
		}
		slices.Sort(ids)
		if !slices.Equal(ids, []string{"t0", "t1"}) {
			t.Fatalf("failed tasks %v, want t0 and t1 once each", ids)
		}
		for _, nm := range c.nms {
			if nm.attemptsFor("doomed") == 0 {
				t.Errorf("%s was never tried", nm.name)
			}
		}
	})
}

// startFrontendRecorder serves a FrontendService for app and registers it.
func (c *cluster) startFrontendRecorder(t *testing.T) *frontendRecorder {
	t.Helper()
	fe := &frontendRecorder{hub: c.hub}
	addr := c.net.addr()
	c.net.serveFrontend(addr, fe)
	if ok, err := c.s.RegisterFrontend(context.Background(), app, addr); !ok || err != nil {
		t.Fatalf("RegisterFrontend = %v, %v", ok, err)
	}
	return fe
}

func TestReprobesAreBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, maxReprobes+4, Config{})
		for _, nm := range c.nms {
			nm.refuse.Store(true)
		}
		fe := c.startFrontendRecorder(t)
		if err := c.s.SubmitJob(context.Background(), job("job", 1, freeTasks(1)...)); err != nil {
			t.Fatal(err)
		}
		c.hub.waitUntil(t, "the task to be reported failed", func() bool { return fe.count() >= 1 })
		tried := 0
		for _, nm := range c.nms {
			tried += nm.attemptsFor("job")
		}
		// The first placement and maxReprobes re-placements, one node each.
		if tried != maxReprobes+1 {
			t.Fatalf("%d enqueues tried, want %d", tried, maxReprobes+1)
		}
		if st := c.s.Stats(); st.ActiveRequests != 0 || st.EnqueueFailures != maxReprobes+1 {
			t.Fatalf("stats %+v", st)
		}
	})
}

func TestGiveUpReportsOnlyUnlaunchedTasks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 2, Config{})
		good, bad := c.nms[0], c.nms[1]
		bad.refuse.Store(true)
		gate := make(chan struct{})
		bad.mu.Lock()
		bad.gate = gate
		bad.mu.Unlock()
		fe := c.startFrontendRecorder(t)
		// d=1, two tasks, two nodes: one reservation each.
		if err := c.s.SubmitJob(context.Background(), job("job", 1, freeTasks(2)...)); err != nil {
			t.Fatal(err)
		}
		c.hub.waitUntil(t, "the good node's reservation", func() bool { return good.acceptedFor("job") == 1 })
		got := c.getTask(t, "job", good)
		if len(got) != 1 {
			t.Fatalf("good node got %v", got)
		}
		other := map[string]string{"t0": "t1", "t1": "t0"}[got[0].TaskId]
		// Both nodes leave; then the bad node's refusal arrives and there is
		// nowhere left to place t1.
		c.view.mu.Lock()
		c.view.byApp[app] = nil
		c.view.mu.Unlock()
		close(gate)
		c.hub.waitUntil(t, "the failure report", func() bool { return fe.count() >= 1 })
		fe.mu.Lock()
		defer fe.mu.Unlock()
		if len(fe.msgs) != 1 || fe.msgs[0].TaskId != other || fe.stat[0] != sparrowrpc.STATUS_TASK_FAILED {
			t.Fatalf("reports %+v %v, want only %s failed", fe.msgs, fe.stat, other)
		}
		if st := c.s.Stats(); st.ActiveRequests != 0 {
			t.Fatalf("stats %+v", st)
		}
	})
}

func TestRegisterFrontendValidation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 0, Config{})
		tests := []struct {
			app, addr string
			ok        bool
		}{
			{"a", "127.0.0.1:1", true},
			{"", "127.0.0.1:1", false},
			{strings.Repeat("a", maxAppBytes+1), "127.0.0.1:1", false},
			{"a", "no-port", false},
			{"a", "h:0", false},
		}
		for _, tt := range tests {
			ok, err := c.s.RegisterFrontend(context.Background(), tt.app, tt.addr)
			if ok != tt.ok || (err == nil) != tt.ok {
				t.Errorf("RegisterFrontend(%.10q, %q) = %v, %v", tt.app, tt.addr, ok, err)
			}
		}
		err := c.s.SendFrontendMessage(context.Background(), "unregistered", &sparrowrpc.TFullTaskId{}, 0, nil)
		if err == nil || !strings.Contains(err.Error(), `"unregistered"`) {
			t.Fatalf("message for an app without frontend: %v", err)
		}
	})
}

func TestGeneratedRequestIDsAreDistinct(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 2, Config{})
		for range 3 {
			if err := c.s.SubmitJob(context.Background(), job("", 1, freeTasks(1)...)); err != nil {
				t.Fatal(err)
			}
		}
		c.hub.waitUntil(t, "three requests' reservations", func() bool {
			seen := map[string]bool{}
			for _, nm := range c.nms {
				for _, r := range nm.requests() {
					seen[r] = true
				}
			}
			return len(seen) == 3
		})
		if st := c.s.Stats(); st.ActiveRequests != 3 {
			t.Fatalf("stats %+v", st)
		}
	})
}

// Regression: a request id the scheduler makes up must not collide with one a
// frontend chose (the prefix is visible in every task id); a collision would
// replaceAndUnlock that request's state and hand its nodes another job's tasks.
func TestGeneratedRequestIDSkipsClientChosenIDs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 2, Config{})
		c.s.mu.Lock()
		next := fmt.Sprintf("%s-%d", c.s.book.idPrefix, c.s.book.nextID+1)
		c.s.mu.Unlock()

		first := []*sparrowrpc.TTaskSpec{{TaskId: "first-job-task"}}
		if err := c.s.SubmitJob(context.Background(), job(next, 1, first...)); err != nil {
			t.Fatal(err)
		}
		second := []*sparrowrpc.TTaskSpec{{TaskId: "second-job-task"}}
		if err := c.s.SubmitJob(context.Background(), job("", 1, second...)); err != nil {
			t.Fatal(err)
		}
		if st := c.s.Stats(); st.ActiveRequests != 2 {
			t.Fatalf("two jobs submitted but %d requests active: the generated id %q overwrote the frontend's request", st.ActiveRequests, next)
		}
		c.hub.waitUntil(t, "the first job's reservation", func() bool { return c.accepted(next) >= 1 })
		for _, nm := range c.holders(next) {
			for _, s := range c.getTask(t, next, nm) {
				if s.TaskId != "first-job-task" {
					t.Fatalf("request %q handed out %q from another job", next, s.TaskId)
				}
			}
		}
	})
}

// Regression: a constrained task can be stranded. Late binding shares probes
// across constrained tasks (paper §4.1): a node gets the earliest unlaunched
// constrained task it allows. With t0 allowed on {nm0, nm1}, t1 only on
// {nm1} and d=1, Plan may put t0's probe on nm0 and t1's on nm1; if nm1 asks
// first it is given t0, and no reservation is left where t1 may run. The
// scheduler must notice (placement.Request.Uncovered) and probe again, or
// the job hangs.
func TestStrandedConstrainedTaskIsProbedAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 2, Config{})
		nm0, nm1 := c.nms[0], c.nms[1]
		tasks := []*sparrowrpc.TTaskSpec{onNodes("t0", "nm0", "nm1"), onNodes("t1", "nm1")}

		// Find a request whose probes landed one on each node (about half do).
		req := ""
		for i := 0; i < 64 && req == ""; i++ {
			id := fmt.Sprintf("job-%d", i)
			if err := c.s.SubmitJob(context.Background(), job(id, 1, tasks...)); err != nil {
				t.Fatal(err)
			}
			c.waitAccepted(t, id, 2)
			if nm0.acceptedFor(id) == 1 {
				req = id
				continue
			}
			// Both on nm1: it runs both tasks; move on.
			c.getTask(t, id, nm1)
			c.getTask(t, id, nm1)
		}
		if req == "" {
			t.Fatal("no request placed one probe on each node")
		}

		launched := map[string]string{}
		asked := map[*fakeNM]int{}
		ask := func(nm *fakeNM) {
			asked[nm]++
			for _, s := range c.getTask(t, req, nm) {
				if prev, dup := launched[s.TaskId]; dup {
					t.Fatalf("task %s launched on %s and %s", s.TaskId, prev, nm.name)
				}
				launched[s.TaskId] = nm.name
			}
		}
		// nm1 reaches the front of its queue first, then nm0.
		ask(nm1)
		ask(nm0)
		// Serve any reservations placed afterwards, as real node monitors would.
		// A fixed scheduler probes again (or assigned differently above).
		deadline := time.Now().Add(3 * time.Second)
		for len(launched) < 2 {
			progressed := false
			for _, nm := range c.nms {
				for asked[nm] < nm.acceptedFor(req) {
					ask(nm)
					progressed = true
				}
			}
			if progressed {
				continue
			}
			if time.Now().After(deadline) {
				t.Fatalf("task(s) never launched; launched %v, request still active: %d; "+
					"no reservation remains on a node the stranded task allows and none was re-placed",
					launched, c.s.Stats().ActiveRequests)
			}
			wake := c.hub.wake()
			select {
			case <-wake:
			case <-time.After(10 * time.Millisecond):
			}
		}
		if launched["t1"] != "nm1" {
			t.Fatalf("t1 ran on %s, which it does not allow", launched["t1"])
		}
		if st := c.s.Stats(); st.ActiveRequests != 0 {
			t.Fatalf("request still active: %+v", st)
		}
	})
}

// TestBusyPoolIsNotANodeFailure: an enqueue our own pool cannot send
// (every connection to the node busy) is sent again, not counted against
// the node. Striking the node off would fail a task that may run only
// there.
func TestBusyPoolIsNotANodeFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 1, Config{RPC: rpc.Config{MaxConnsPerPeer: 1, ConnectTimeout: 50 * time.Millisecond}})
		nm := c.nms[0]
		gate := make(chan struct{})
		var open sync.Once
		release := func() { open.Do(func() { close(gate) }) }
		t.Cleanup(release) // before the servers close, even if the test fails
		nm.mu.Lock()
		nm.gate = gate // holds the first enqueue, and with it the one connection
		nm.mu.Unlock()
		ctx := context.Background()
		if err := c.s.SubmitJob(ctx, job("first", 1, onNodes("f0", "nm0"))); err != nil {
			t.Fatal(err)
		}
		if err := c.s.SubmitJob(ctx, job("second", 1, onNodes("s0", "nm0"))); err != nil {
			t.Fatal(err)
		}
		c.hub.waitFor(t, 10*time.Second, "the second enqueue to find the pool busy", func() bool { return c.s.Stats().EnqueueBusy > 0 })
		release()
		c.waitAccepted(t, "second", 1)
		c.waitAccepted(t, "first", 1)
		if st := c.s.Stats(); st.EnqueueFailures != 0 || st.ActiveRequests != 2 {
			t.Fatalf("stats %+v: want no enqueue failure and both requests live", st)
		}
		if got := c.getTask(t, "second", nm); len(got) != 1 {
			t.Fatalf("second's task on its only node: got %v", got)
		}
	})
}
