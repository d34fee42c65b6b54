package nodemonitor

import (
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sparrowfleet/sparrow/core/queue"
	"github.com/sparrowfleet/sparrow/core/slots"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// An offer that finds a free slot is launched there at once, with no
// getTask, and uses one of the reservations; the request's other
// reservations ask with getTask as usual.
func TestOfferTakenByAFreeSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, opts{slots: 2})
		h.sched.script("r", "t1")
		if rep := h.enqueueOffer(t, "r", 2, "t0"); !rep.Accepted || !rep.Launched || rep.GetGuided() {
			t.Fatalf("answer %+v, want accepted and launched", rep)
		}
		wantState(t, h, State{Slots: 2, Running: 2, Launches: 2})
		if got := h.sched.askedFor("r"); got != 1 {
			t.Errorf("asked for %d tasks, want 1 (the offer took the other slot)", got)
		}
		if got := h.execs.launches(); !slices.Equal(got, []string{"r/t0", "r/t1"}) {
			t.Errorf("launched %v, want r/t0 and r/t1", got)
		}
	})
}

// With no free slot the offer is declined and the reservation queues; an
// app without an executor here is refused, offer and all.
func TestOfferDeclinedWhenBusy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, opts{slots: 1})
		h.gate() // the slot stays busy fetching
		h.enqueue(t, "app", "busy", 1)
		if rep := h.enqueueOffer(t, "r", 1, "t0"); !rep.Accepted || rep.Launched || rep.GetGuided() {
			t.Fatalf("answer %+v, want accepted and declined, not as guided", rep)
		}
		wantState(t, h, State{Slots: 1, Fetching: 1, Queued: 1})
		if _, err := h.nm.EnqueueTaskReservationsWithOffer(t.Context(), h.req("app", "r2", 1), nil, nil); err == nil {
			t.Error("an offer without a task was accepted")
		}
		rep, err := h.nm.EnqueueTaskReservationsWithOffer(t.Context(), h.req("other", "r3", 1), &sparrowrpc.TTaskLaunchSpec{TaskId: "x"}, nil)
		if err != nil || rep.Accepted || rep.Launched {
			t.Errorf("unknown app: %+v, %v; want refused", rep, err)
		}
	})
}

// While a coordinator guides the weights, a free slot is not given to an
// offer: the reservation asks by getTask.
func TestGuidedQueueDeclinesOffers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fair, err := queue.NewFair(1, nil)
		if err != nil {
			t.Fatal(err)
		}
		h := newHarness(t, opts{slots: 1, cfg: func(c *Config) { c.Queue = fair }})
		if h.nm.slots.guided() {
			t.Fatal("a new node monitor is already guided")
		}
		if _, err := h.nm.ApplyGuidance(Guidance{Version: 1, Weights: map[string]float64{"u": 1}}); err != nil {
			t.Fatal(err)
		}
		h.sched.script("r", "t0")
		if rep := h.enqueueOffer(t, "r", 1, "offered"); !rep.Accepted || rep.Launched || !rep.GetGuided() {
			t.Fatalf("answer %+v, want accepted and declined as guided", rep)
		}
		if got := h.execs.launches(); !slices.Equal(got, []string{"r/t0"}) {
			t.Errorf("launched %v, want r/t0 from getTask", got)
		}
	})
}

// offerOutcome says what this node monitor did with an offer; one asked
// about before it arrives is answered "unseen", and when it does arrive,
// on a free slot, it is declined so that the answer stays true; its
// reservation queues and asks by getTask. Every answer carries the
// process's start nonce.
func TestOfferOutcomeAnswersAndIsFinal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, opts{slots: 3})
		rep := h.enqueueOffer(t, "r", 1, "t0")
		if !rep.Launched || rep.GetBoot() == "" {
			t.Fatalf("answer %+v, want launched, with the start nonce", rep)
		}
		ask := func(req, task string) int32 {
			t.Helper()
			out, err := h.nm.OfferOutcome(t.Context(), req, task)
			if err != nil {
				t.Fatalf("OfferOutcome(%s, %s): %v", req, task, err)
			}
			if out.Boot != rep.GetBoot() {
				t.Fatalf("OfferOutcome(%s, %s) nonce %q, offers' %q", req, task, out.Boot, rep.GetBoot())
			}
			return out.Outcome
		}
		if out := ask("r", "t0"); out != sparrowrpc.OFFER_TAKEN {
			t.Fatalf("r/t0: %v, want taken", out)
		}
		if out := ask("late", "t0"); out != sparrowrpc.OFFER_UNSEEN {
			t.Fatalf("late/t0 before the offer: %v, want unseen", out)
		}
		h.sched.script("late", "t1")
		if rep := h.enqueueOffer(t, "late", 1, "t0"); !rep.Accepted || rep.Launched || rep.GetGuided() {
			t.Fatalf("answer %+v, want the late offer declined (its scheduler heard it was unseen)", rep)
		}
		if got := h.execs.launches(); !slices.Equal(got, []string{"late/t1", "r/t0"}) {
			t.Errorf("launched %v, want r/t0 and late/t1 (by getTask), never late/t0", got)
		}
		if out := ask("late", "t0"); out != sparrowrpc.OFFER_UNSEEN {
			t.Errorf("late/t0 after: %v, want still unseen", out)
		}
		// An offer that finds no free slot is declined, and said so.
		h.sched.script("fill", "f0")
		h.enqueue(t, "app", "fill", 1)
		wantState(t, h, State{Slots: 3, Running: 3, Launches: 3})
		if rep := h.enqueueOffer(t, "busy", 1, "t0"); rep.Launched {
			t.Fatalf("answer %+v, want declined on a full node", rep)
		}
		if out := ask("busy", "t0"); out != sparrowrpc.OFFER_DECLINED {
			t.Errorf("busy/t0: %v, want declined", out)
		}
		if _, err := h.nm.OfferOutcome(t.Context(), "", "t0"); err == nil {
			t.Error("OfferOutcome without a request id: no error")
		}
	})
}

// An offer and a question about it, racing, always agree: whatever the
// question hears is what happened to the offer.
func TestOfferAndQuestionAgree(t *testing.T) {
	for i := range 50 {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, opts{slots: 1})
			task := fmt.Sprint("t", i)
			var heard int32
			done := make(chan struct{})
			go func() {
				defer close(done)
				out, _ := h.nm.OfferOutcome(t.Context(), "r", task)
				heard = out.Outcome
			}()
			rep := h.enqueueOffer(t, "r", 1, task)
			<-done
			synctest.Wait()
			launched := h.execs.launches()
			switch heard {
			case sparrowrpc.OFFER_TAKEN:
				if !rep.Launched || len(launched) != 1 {
					t.Fatalf("heard taken; reply %+v, launched %v", rep, launched)
				}
			case sparrowrpc.OFFER_UNSEEN:
				if rep.Launched || len(launched) != 0 {
					t.Fatalf("heard unseen; reply %+v, launched %v", rep, launched)
				}
			default:
				t.Fatalf("heard %v on an idle node", heard)
			}
		})
	}
}

// The ledger's decide and ask, and what each remembers.
func TestOfferLedgerDecideAndAsk(t *testing.T) {
	now := time.Unix(1000, 0)
	key := slots.TaskKey{RequestID: "r", TaskID: "t"}
	tests := []struct {
		name      string
		askFirst  bool
		take      bool
		wantFresh bool
		wantTaken bool
		wantAsk   int32
	}{
		{"taken", false, true, true, true, sparrowrpc.OFFER_TAKEN},
		{"declined", false, false, true, false, sparrowrpc.OFFER_DECLINED},
		{"asked first: unseen for good", true, true, false, false, sparrowrpc.OFFER_UNSEEN},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l offerLedger
			if tt.askFirst {
				l.ask(key, now)
			}
			var fresh bool
			taken := l.decide(key, now, func(f bool) bool { fresh = f; return f && tt.take })
			if fresh != tt.wantFresh || taken != tt.wantTaken {
				t.Fatalf("decide: fresh %v taken %v, want %v %v", fresh, taken, tt.wantFresh, tt.wantTaken)
			}
			if got := l.ask(key, now); got != tt.wantAsk {
				t.Errorf("ask after: %v, want %v", got, tt.wantAsk)
			}
			if taken := l.decide(key, now, func(f bool) bool { return f }); taken {
				t.Error("an offer that came twice was taken the second time")
			}
		})
	}
}

// Answers are forgotten after offerMemory, oldest first, and the ledger
// shrinks with them.
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

// Several tasks offered in one call take as many free slots as there are,
// in order, and the rest are declined, their reservations queued. An
// executor registered with BACKEND_LAUNCH_BATCH gets the taken tasks in one
// launchTasksAndWait call; any other executor, one launch per task. A task
// offered twice in one call is taken at most once. The answer says how
// many slots are left free, and the ledger answers offerOutcome for each.
func TestSeveralOffersInOneCall(t *testing.T) {
	batch := int32(sparrowrpc.BACKEND_LAUNCH_AND_WAIT | sparrowrpc.BACKEND_LAUNCH_BATCH)
	for _, tt := range []struct {
		name         string
		features     int32
		reservations int
		offers       []string
		wantMore     []bool
		wantFree     int32
		wantBatches  []int
		wantLaunched []string
		wantState    State
	}{
		{name: "more offers than free slots, batched", features: batch, reservations: 4,
			offers: []string{"t0", "t1", "t2", "t3"}, wantMore: []bool{true, true, false}, wantFree: 0,
			wantBatches: []int{3}, wantLaunched: []string{"r/t0", "r/t1", "r/t2"},
			wantState: State{Slots: 3, Running: 3, Queued: 1, Launches: 3}},
		{name: "fewer offers than free slots, batched", features: batch, reservations: 2,
			offers: []string{"t0", "t1"}, wantMore: []bool{true}, wantFree: 1,
			wantBatches: []int{2}, wantLaunched: []string{"r/t0", "r/t1"},
			wantState: State{Slots: 3, Free: 1, Running: 2, Launches: 2}},
		{name: "executor without batches", features: sparrowrpc.BACKEND_LAUNCH_AND_WAIT, reservations: 2,
			offers: []string{"t0", "t1"}, wantMore: []bool{true}, wantFree: 1,
			wantLaunched: []string{"r/t0", "r/t1"},
			wantState:    State{Slots: 3, Free: 1, Running: 2, Launches: 2}},
		{name: "a task offered twice runs once", features: batch, reservations: 2,
			offers: []string{"t0", "t0"}, wantMore: []bool{false}, wantFree: 1,
			wantLaunched: []string{"r/t0"},
			wantState:    State{Slots: 3, Free: 1, Fetching: 1, Running: 1, Launches: 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, opts{slots: 3})
				if ok, err := h.nm.RegisterBackendWithFeatures(t.Context(), "app", backend, tt.features); !ok || err != nil {
					t.Fatalf("registerBackendWithFeatures: %v %v", ok, err)
				}
				h.gate() // a reservation left over asks, and waits
				rep := h.enqueueOffer(t, "r", tt.reservations, tt.offers[0], tt.offers[1:]...)
				if !rep.Accepted || !rep.Launched || !slices.Equal(rep.MoreLaunched, tt.wantMore) || rep.GetFreeSlots() != tt.wantFree {
					t.Errorf("answer %+v, want launched, more %v, %d free", rep, tt.wantMore, tt.wantFree)
				}
				wantState(t, h, tt.wantState)
				h.execs.mu.Lock()
				batches := slices.Clone(h.execs.batches)
				h.execs.mu.Unlock()
				if !slices.Equal(batches, tt.wantBatches) {
					t.Errorf("launchTasksAndWait batches %v, want %v", batches, tt.wantBatches)
				}
				if got := sorted(h.execs.launches()); !slices.Equal(got, tt.wantLaunched) {
					t.Errorf("launched %v, want %v", got, tt.wantLaunched)
				}
				for i, task := range tt.offers {
					want := int32(sparrowrpc.OFFER_DECLINED)
					if slices.Contains(tt.wantLaunched, "r/"+task) {
						want = sparrowrpc.OFFER_TAKEN
					}
					if got, _ := h.nm.OfferOutcome(t.Context(), "r", task); got.Outcome != want {
						t.Errorf("offerOutcome of offer %d (%s): %d, want %d", i, task, got.Outcome, want)
					}
				}
			})
		})
	}
}
