package integration

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/core/placement"
	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/scheduler"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// The scheduler's package tests drive it over an in-memory network that
// gives the errors the Thrift pool gives. These tests check the same
// behaviours over real loopback Thrift: a node monitor that lacks an
// extension (UNKNOWN_METHOD), one whose answer comes past the call
// timeout, and one that is not listening.

// thriftNM is a node monitor's InternalService on a loopback server whose
// processor may lack methods.
type thriftNM struct {
	addr string
	hp   *sparrowrpc.THostPort

	mu       sync.Mutex
	gate     chan struct{} // if set, holds each enqueue until closed
	accepted map[string]int
	offers   int
	launch   bool // take offers
}

func startThriftNM(t *testing.T, lacking ...string) *thriftNM {
	t.Helper()
	srv, err := rpc.Listen("127.0.0.1:0", rpc.Config{}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	nm := &thriftNM{addr: srv.Addr(), accepted: make(map[string]int)}
	if nm.hp, err = rpc.ParseHostPort(nm.addr); err != nil {
		t.Fatal(err)
	}
	proc := sparrowrpc.NewInternalServiceProcessor(nm)
	for _, m := range lacking {
		delete(proc.ProcessorMap(), m)
	}
	go srv.Serve(proc)
	t.Cleanup(func() { srv.Close() })
	return nm
}

func (n *thriftNM) EnqueueTaskReservations(_ context.Context, req *sparrowrpc.TEnqueueTaskReservationsRequest) (bool, error) {
	n.mu.Lock()
	gate := n.gate
	n.mu.Unlock()
	if gate != nil {
		<-gate
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.accepted[req.RequestId] += int(req.NumTasks)
	return true, nil
}

func (n *thriftNM) EnqueueTaskReservationsWithOffer(ctx context.Context, req *sparrowrpc.TEnqueueTaskReservationsRequest, _ *sparrowrpc.TTaskLaunchSpec, _ []*sparrowrpc.TTaskLaunchSpec) (*sparrowrpc.TEnqueueOfferReply, error) {
	if _, err := n.EnqueueTaskReservations(ctx, req); err != nil {
		return nil, err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.offers++
	if n.launch {
		n.accepted[req.RequestId]--
	}
	return &sparrowrpc.TEnqueueOfferReply{Accepted: true, Launched: n.launch}, nil
}

func (n *thriftNM) CancelTaskReservations(context.Context, *sparrowrpc.TCancelTaskReservationsRequest) error {
	return nil
}

func (n *thriftNM) UpdateRemainingWork(context.Context, []*sparrowrpc.TRemainingWork) error {
	return nil
}

func (n *thriftNM) OfferOutcome(context.Context, string, string) (*sparrowrpc.TOfferOutcome, error) {
	return &sparrowrpc.TOfferOutcome{Outcome: sparrowrpc.OFFER_DECLINED}, nil
}

func (n *thriftNM) acceptedFor(req string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.accepted[req]
}

func (n *thriftNM) offersSeen() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.offers
}

// staticView is a scheduler.NodeView over fixed node monitors.
type staticView []placement.Node

func (v staticView) Candidates(string) []placement.Node { return v }
func (v staticView) Node(addr string) (placement.Node, bool) {
	for _, n := range v {
		if n.Addr == addr {
			return n, true
		}
	}
	return placement.Node{}, false
}

// thriftScheduler returns a scheduler over nms, calling them over Thrift.
func thriftScheduler(t *testing.T, cfg scheduler.Config, nms ...*thriftNM) *scheduler.Scheduler {
	t.Helper()
	var view staticView
	for i, nm := range nms {
		host, _, _ := strings.Cut(nm.addr, ":")
		view = append(view, placement.Node{Addr: nm.addr, Host: host, Name: fmt.Sprintf("nm%d", i)})
	}
	cfg.Address, cfg.Seed, cfg.Log = "127.0.0.1:20503", 1, zerolog.Nop()
	s, err := scheduler.New(cfg, view)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func freeJob(id string, m int) *sparrowrpc.TSchedulingRequest {
	ratio := 1.0
	r := &sparrowrpc.TSchedulingRequest{App: "spark", RequestId: &id, ProbeRatio: &ratio}
	for i := range m {
		r.Tasks = append(r.Tasks, &sparrowrpc.TTaskSpec{TaskId: fmt.Sprintf("t%d", i)})
	}
	return r
}

// TestSchedulerOffersFallBackOverThrift: node monitors whose server lacks
// the offer method get the reservations again without it, and no more
// offers.
func TestSchedulerOffersFallBackOverThrift(t *testing.T) {
	nms := []*thriftNM{startThriftNM(t, "enqueueTaskReservationsWithOffer"), startThriftNM(t, "enqueueTaskReservationsWithOffer")}
	s := thriftScheduler(t, scheduler.Config{}, nms...)
	for j := range 2 {
		id := fmt.Sprintf("job%d", j)
		if err := s.SubmitJob(context.Background(), freeJob(id, 2)); err != nil {
			t.Fatal(err)
		}
		waitFor(t, id+"'s reservations", 10*time.Second, func() bool {
			return nms[0].acceptedFor(id)+nms[1].acceptedFor(id) == 2
		})
		for _, nm := range nms {
			got, err := s.GetTask(context.Background(), id, nm.hp)
			if err != nil || len(got) != 1 {
				t.Fatalf("%s: %s got %v, %v; want one task", id, nm.addr, got, err)
			}
		}
	}
	if st := s.Stats(); st.OffersMade != 2 || st.OffersTaken != 0 || st.TasksLaunched != 4 {
		t.Fatalf("stats %+v: want the first job's 2 offers refused as unknown and none after", st)
	}
	for _, nm := range nms {
		if n := nm.offersSeen(); n != 0 {
			t.Errorf("%s saw %d offers through a processor without the method", nm.addr, n)
		}
	}
}

// TestSchedulerOfferInDoubtWithoutTheQuestionOverThrift: an offer whose
// answer comes past the call timeout, sent to a node monitor that lacks
// offerOutcome, is counted launched there.
func TestSchedulerOfferInDoubtWithoutTheQuestionOverThrift(t *testing.T) {
	nm := startThriftNM(t, "offerOutcome")
	gate := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(gate) }) }
	t.Cleanup(release)
	nm.gate = gate
	s := thriftScheduler(t, scheduler.Config{RPC: rpc.Config{CallTimeout: 200 * time.Millisecond}}, nm)
	if err := s.SubmitJob(context.Background(), freeJob("job", 1)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the offer in doubt counted launched", 10*time.Second, func() bool { return s.Stats().OffersTaken == 1 })
	if st := s.Stats(); st.OffersInDoubt != 1 || st.TasksLaunched != 1 || st.RunningTracked != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// TestSchedulerUnreachableNodeOverThrift: a node monitor that is not
// listening is struck off for the request and its reservations placed on
// the other.
func TestSchedulerUnreachableNodeOverThrift(t *testing.T) {
	live := startThriftNM(t)
	ln, err := rpc.Listen("127.0.0.1:0", rpc.Config{}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	dead := &thriftNM{addr: ln.Addr(), accepted: make(map[string]int)}
	ln.Close()
	s := thriftScheduler(t, scheduler.Config{NoOffers: true}, live, dead)
	if err := s.SubmitJob(context.Background(), freeJob("job", 2)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "both reservations on the live node monitor", 10*time.Second, func() bool { return live.acceptedFor("job") == 2 })
	for range 2 {
		if got, err := s.GetTask(context.Background(), "job", live.hp); err != nil || len(got) != 1 {
			t.Fatalf("getTask on the live node monitor: %v, %v", got, err)
		}
	}
	if st := s.Stats(); st.EnqueueFailures != 1 || st.TasksLaunched != 2 || st.ActiveRequests != 0 {
		t.Fatalf("stats %+v: want one failed enqueue and both tasks launched", st)
	}
}
