package nodemonitor

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/core/slots"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

func (h *harness) enqueueOffer(t *testing.T, req string, n int, task string) *sparrowrpc.TEnqueueOfferReply {
	t.Helper()
	rep, err := h.nm.EnqueueTaskReservationsWithOffer(context.Background(), &sparrowrpc.TEnqueueTaskReservationsRequest{
		AppId: "app", RequestId: req, SchedulerAddress: h.self, NumTasks: int32(n), User: &sparrowrpc.TUserGroupInfo{User: "u"},
	}, &sparrowrpc.TTaskLaunchSpec{TaskId: task, Message: []byte("m")})
	if err != nil {
		t.Fatalf("enqueue with offer: %v", err)
	}
	return rep
}

// TestOfferTakenByAFreeSlot: an offer that finds a free slot is launched
// there at once, with no getTask, and uses one of the reservations; the
// request's other reservations ask with getTask as usual.
func TestOfferTakenByAFreeSlot(t *testing.T) {
	h := newHarness(t, 2, false)
	h.sched.mu.Lock()
	h.sched.tasks["r"] = []string{"t1"}
	h.sched.mu.Unlock()
	if rep := h.enqueueOffer(t, "r", 2, "t0"); !rep.Accepted || !rep.Launched || rep.GetGuided() {
		t.Fatalf("answer %+v, want accepted and launched", rep)
	}
	waitState(t, h.nm, "both tasks running", func(s State) bool { return s.Running == 2 })
	waitState(t, h.nm, "the backend to see 2 launches", func(State) bool { return h.back.count() == 2 })
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
func TestOfferDeclinedWhenBusy(t *testing.T) {
	h := newHarness(t, 1, true) // getTask blocks: the slot stays busy
	h.enqueue(t, "app", "busy", 1)
	waitState(t, h.nm, "the slot to be taken", func(s State) bool { return s.Fetching == 1 })
	if rep := h.enqueueOffer(t, "r", 1, "t0"); !rep.Accepted || rep.Launched || rep.GetGuided() {
		t.Fatalf("answer %+v, want accepted and declined, not as guided", rep)
	}
	if st := h.nm.State(); st.Queued != 1 || st.Launches != 0 {
		t.Fatalf("state %+v, want the reservation queued and nothing launched", st)
	}
	if _, err := h.nm.EnqueueTaskReservationsWithOffer(context.Background(), &sparrowrpc.TEnqueueTaskReservationsRequest{
		AppId: "app", RequestId: "r2", SchedulerAddress: h.self, NumTasks: 1,
	}, nil); err == nil {
		t.Error("an offer without a task was accepted")
	}
	// An app without an executor here is refused, offer and all.
	rep, err := h.nm.EnqueueTaskReservationsWithOffer(context.Background(), &sparrowrpc.TEnqueueTaskReservationsRequest{
		AppId: "other", RequestId: "r3", SchedulerAddress: h.self, NumTasks: 1,
	}, &sparrowrpc.TTaskLaunchSpec{TaskId: "x"})
	if err != nil || rep.Accepted || rep.Launched {
		t.Errorf("unknown app: %+v, %v; want refused", rep, err)
	}
}

// TestGuidedQueueDeclinesOffers: while a coordinator guides the weights,
// a free slot is not given to an offer: the reservation asks by getTask.
func TestGuidedQueueDeclinesOffers(t *testing.T) {
	h := newHarness(t, 1, false)
	h.nm.mu.Lock()
	guided := h.nm.guided != nil
	h.nm.mu.Unlock()
	if guided {
		t.Fatal("a new node monitor is already guided")
	}
	h.nm.mu.Lock()
	h.nm.guided = map[string]float64{"u": 1}
	h.nm.mu.Unlock()
	h.sched.mu.Lock()
	h.sched.tasks["r"] = []string{"t0"}
	h.sched.mu.Unlock()
	if rep := h.enqueueOffer(t, "r", 1, "offered"); !rep.Accepted || rep.Launched || !rep.GetGuided() {
		t.Fatalf("answer %+v, want accepted and declined as guided", rep)
	}
	waitState(t, h.nm, "the task from getTask", func(s State) bool { return s.Launches == 1 })
	if got := h.sched.askedFor("r"); got != 1 {
		t.Errorf("getTask asked %d times, want 1", got)
	}
}

// TestOfferOutcomeAnswersAndIsFinal: offerOutcome says what this node
// monitor did with an offer; one asked about before it arrives is
// answered "unseen", and when it does arrive, on a free slot, it is
// declined so that the answer stays true; its reservation queues and asks
// by getTask. Every answer carries the process's start nonce.
func TestOfferOutcomeAnswersAndIsFinal(t *testing.T) {
	h := newHarness(t, 3, false)
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
	waitState(t, h.nm, "the backend to see the getTask's task", func(State) bool { return h.back.count() == 2 })
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
	h.enqueue(t, "app", "fill", 1)
	waitState(t, h.nm, "every slot taken", func(s State) bool { return s.Free == 0 })
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

// TestOfferLedgerForgets: answers are forgotten after offerMemory, oldest
// first, and the ledger shrinks with them.
func TestOfferLedgerForgets(t *testing.T) {
	var l offerLedger
	t0 := time.Unix(1000, 0)
	for i := range 100 {
		l.record(slots.TaskKey{RequestID: "r", TaskID: fmt.Sprint(i)}, int32(i%2), t0.Add(time.Duration(i)*time.Second))
	}
	if out, ok := l.decided(slots.TaskKey{RequestID: "r", TaskID: "4"}); !ok || out != 0 {
		t.Fatalf("decided(4) = %v, %v; want 0", out, ok)
	}
	if out, ok := l.decided(slots.TaskKey{RequestID: "r", TaskID: "5"}); !ok || out != 1 {
		t.Fatalf("decided(5) = %v, %v; want 1", out, ok)
	}
	// At 69 s + offerMemory, the answers recorded at 0..69 s are
	// offerMemory old or older; 70..99 s are younger.
	now := t0.Add(69*time.Second + offerMemory)
	l.record(slots.TaskKey{RequestID: "r", TaskID: "new"}, 2, now)
	if got := l.len(); got != 31 {
		t.Fatalf("%d answers remembered, want the 30 younger than offerMemory and the new one", got)
	}
	if _, ok := l.decided(slots.TaskKey{RequestID: "r", TaskID: "69"}); ok {
		t.Error("an answer exactly offerMemory old is remembered")
	}
	if _, ok := l.decided(slots.TaskKey{RequestID: "r", TaskID: "70"}); !ok {
		t.Error("an answer younger than offerMemory is forgotten")
	}
}
