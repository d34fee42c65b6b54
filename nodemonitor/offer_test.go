package nodemonitor

import (
	"context"
	"slices"
	"testing"

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
