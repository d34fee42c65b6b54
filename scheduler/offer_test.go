package scheduler

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// TestOffersLaunchOnIdleNodeMonitors: idle node monitors take the tasks
// offered with the first reservations; the job is done without a getTask,
// its backup reservations are never sent, and no task goes out twice.
func TestOffersLaunchOnIdleNodeMonitors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 8, Config{})
		for _, nm := range c.nms {
			nm.takeOffers.Store(true)
		}
		if err := c.s.SubmitJob(context.Background(), job("job", 2, freeTasks(3)...)); err != nil {
			t.Fatal(err)
		}
		c.hub.waitUntil(t, "the job to launch", func() bool { return c.s.Stats().ActiveRequests == 0 })
		took := map[string]string{}
		for _, nm := range c.nms {
			nm.mu.Lock()
			for _, id := range nm.took["job"] {
				if other, dup := took[id]; dup {
					t.Errorf("task %s taken by %s and %s", id, other, nm.name)
				}
				took[id] = nm.name
			}
			nm.mu.Unlock()
		}
		if len(took) != 3 {
			t.Fatalf("offers taken: %v, want t0, t1 and t2", took)
		}
		st := c.s.Stats()
		if st.OffersMade != 3 || st.OffersTaken != 3 || st.TasksLaunched != 3 || st.RunningTracked != 3 {
			t.Fatalf("stats %+v", st)
		}
		// Only the three offers went out: the backups were kept back, so
		// there is nothing to cancel and nobody to ask in vain.
		sent, cancels := 0, 0
		for _, nm := range c.nms {
			sent += nm.attemptsFor("job")
			cancels += nm.cancelsFor("job")
		}
		if sent != 3 || cancels != 0 || st.BackupsSent != 0 {
			t.Fatalf("%d enqueues, %d cancels, %d backups sent; want 3, 0, 0", sent, cancels, st.BackupsSent)
		}
		for _, nm := range c.holders("job") {
			if got := c.getTask(t, "job", nm); len(got) != 0 {
				t.Errorf("%s got %v after every task launched", nm.name, got)
			}
		}
	})
}

// TestDeclinedOfferSendsTheBackups: busy node monitors decline the
// offers and queue their reservations; the backups kept back then go
// out, so each task again has its d·m reservations to choose among, and
// each task is handed out once by getTask.
func TestDeclinedOfferSendsTheBackups(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 8, Config{}) // the fakes decline offers
		if err := c.s.SubmitJob(context.Background(), job("job", 2, freeTasks(3)...)); err != nil {
			t.Fatal(err)
		}
		c.waitAccepted(t, "job", 6)
		if st := c.s.Stats(); st.OffersMade != 3 || st.OffersTaken != 0 || st.BackupsSent != 3 {
			t.Fatalf("stats %+v: want 3 offers declined and 3 backups sent", st)
		}
		if got := c.getTaskOnEach(t, "job", c.holders("job")); len(got) != 3 || !distinct(got) {
			t.Fatalf("tasks handed out: %v, want t0, t1 and t2, once each", got)
		}
	})
}

// TestPartialOffersSendEverything: when offers cannot cover every task
// (here, no node monitor has the method), nothing is kept back.
func TestPartialOffersSendEverything(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 8, Config{})
		c.s.mu.Lock()
		for _, nm := range c.nms[:7] {
			c.s.offers.caps.MarkLacking(nm.addr, methodOffer)
		}
		c.s.mu.Unlock()
		if err := c.s.SubmitJob(context.Background(), job("job", 2, freeTasks(3)...)); err != nil {
			t.Fatal(err)
		}
		c.waitAccepted(t, "job", 6)
		if st := c.s.Stats(); st.OffersMade > 1 || st.BackupsSent != 0 {
			t.Fatalf("stats %+v: want at most one offer and no backups", st)
		}
	})
}

// TestGetTaskWaitsForOfferAnswers: a getTask that finds the job's only
// task offered and unanswered waits for the answer; declined, the task is
// its. Answered at once, it would have been empty and the task left to
// the busy node monitor's queue.
func TestGetTaskWaitsForOfferAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 2, Config{})
		waiting := make(chan struct{})
		var once sync.Once
		c.s.mu.Lock()
		c.s.offers.waitHook = func() { once.Do(func() { close(waiting) }) }
		c.s.mu.Unlock()
		gate := make(chan struct{})
		var release sync.Once
		open := func() { release.Do(func() { close(gate) }) }
		t.Cleanup(open) // before the node monitors' servers close
		for _, nm := range c.nms {
			nm.mu.Lock()
			nm.gate = gate // every enqueue waits: the offer stays unanswered
			nm.mu.Unlock()
		}
		if err := c.s.SubmitJob(context.Background(), job("job", 2, freeTasks(1)...)); err != nil {
			t.Fatal(err)
		}
		c.hub.waitUntil(t, "the offer to be made", func() bool { return c.s.Stats().OffersMade == 1 })
		got := make(chan []*sparrowrpc.TTaskLaunchSpec, 1)
		go func() {
			specs, err := c.s.GetTask(context.Background(), "job", c.nms[0].hp)
			if err != nil {
				t.Error(err)
			}
			got <- specs
		}()
		select {
		case <-waiting:
		case <-time.After(10 * time.Second):
			t.Fatal("getTask did not wait for the offer")
		}
		open() // the fakes decline offers by default
		select {
		case specs := <-got:
			if len(specs) != 1 || specs[0].TaskId != "t0" {
				t.Fatalf("getTask after the decline: %v, want t0", specs)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("getTask still waiting after the offer was answered")
		}
		if st := c.s.Stats(); st.OffersTaken != 0 || st.TasksLaunched != 1 {
			t.Fatalf("stats %+v", st)
		}
	})
}

// gateAll holds every enqueue at c's node monitors until the returned
// function is called (or the test ends).
func gateAll(t *testing.T, c *cluster) (release func()) {
	gate := make(chan struct{})
	var once sync.Once
	release = func() {
		once.Do(func() {
			for _, nm := range c.nms {
				nm.mu.Lock()
				nm.gate = nil
				nm.mu.Unlock()
			}
			close(gate)
		})
	}
	t.Cleanup(release)
	for _, nm := range c.nms {
		nm.mu.Lock()
		nm.gate = gate
		nm.mu.Unlock()
	}
	return release
}

// TestOfferInDoubtTakenCountsAsLaunchedThere: an offer whose call fails
// after it was sent is in doubt; the node monitor, asked, says it took
// it, so the task is counted launched there and handed to no other.
func TestOfferInDoubtTakenCountsAsLaunchedThere(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 1, Config{RPC: rpc.Config{CallTimeout: 200 * time.Millisecond}})
		gateAll(t, c)
		c.nms[0].outcome.Store(sparrowrpc.OFFER_TAKEN)
		if err := c.s.SubmitJob(context.Background(), job("job", 1, freeTasks(1)...)); err != nil {
			t.Fatal(err)
		}
		c.hub.waitUntil(t, "the offer to time out and be settled", func() bool { return c.s.Stats().OffersTaken == 1 })
		st := c.s.Stats()
		if st.OffersInDoubt != 1 || st.DoubtsDeclined != 0 || st.TasksLaunched != 1 || st.RunningTracked != 1 || st.ActiveRequests != 0 {
			t.Fatalf("stats %+v: want the task in doubt, then counted launched on the node", st)
		}
	})
}

// TestOfferInDoubtNotTakenGoesElsewhere: the node monitor says it declined
// the offer in doubt, so the task is handed out again, by getTask on the
// node monitor its reservations were placed on since, once.
func TestOfferInDoubtNotTakenGoesElsewhere(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 2, Config{RPC: rpc.Config{CallTimeout: time.Second}})
		for _, nm := range c.nms {
			nm.outcome.Store(sparrowrpc.OFFER_DECLINED)
		}
		release := gateAll(t, c)
		if err := c.s.SubmitJob(context.Background(), job("job", 1, freeTasks(1)...)); err != nil {
			t.Fatal(err)
		}
		c.hub.waitFor(t, 10*time.Second, "the offer in doubt to be declined", func() bool { return c.s.Stats().DoubtsDeclined == 1 })
		release() // the reservations placed again, on the other node monitor, go through
		// The offer's own call, released, is accepted late at the first node
		// monitor (whose reservations the scheduler has dropped), and the
		// reservation placed again at the other.
		c.waitAccepted(t, "job", 2)
		if got := c.getTaskOnEach(t, "job", c.nms); len(got) != 1 {
			t.Fatalf("getTask handed out %v, want the one task once", got)
		}
		if st := c.s.Stats(); st.OffersTaken != 0 || st.TasksLaunched != 1 || st.OffersInDoubt != 1 {
			t.Fatalf("stats %+v", st)
		}
	})
}

// TestOfferInDoubtOnALostNodeIsReportedLost: a node monitor that cannot
// answer whether it took an offer, and is then declared lost, has the task
// counted launched there and reported lost with it: it may have started.
// That holds too when the loss reports only the tasks running when the
// node monitor was seen to go (the daemon's snapshot, taken while the
// offer was still in doubt).
func TestOfferInDoubtOnALostNodeIsReportedLost(t *testing.T) {
	for _, snapshot := range []bool{false, true} {
		t.Run(fmt.Sprintf("snapshot=%v", snapshot), func(t *testing.T) { offerInDoubtOnALostNode(t, snapshot) })
	}
}

func offerInDoubtOnALostNode(t *testing.T, snapshot bool) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 1, Config{RPC: rpc.Config{CallTimeout: 200 * time.Millisecond}})
		gateAll(t, c)
		nm := c.nms[0]
		nm.questionFails.Store(true)
		if err := c.s.SubmitJob(context.Background(), job("job", 1, freeTasks(1)...)); err != nil {
			t.Fatal(err)
		}
		c.hub.waitUntil(t, "a question about the offer in doubt", func() bool {
			nm.mu.Lock()
			defer nm.mu.Unlock()
			return nm.questions > 0
		})
		if st := c.s.Stats(); st.OffersInDoubt != 1 || st.OffersTaken != 0 || st.TasksLaunched != 0 {
			t.Fatalf("stats %+v: want the offer in doubt, unsettled", st)
		}
		if snapshot {
			c.s.mu.Lock()
			went := c.s.running.snapshot(nm.addr)
			c.s.mu.Unlock()
			c.s.nodeLostOf(nm.addr, went)
		} else {
			c.s.NodeLost(nm.addr)
		}
		if st := c.s.Stats(); st.OffersTaken != 1 || st.TasksLost != 1 || st.RunningTracked != 0 {
			t.Fatalf("stats %+v: want the task counted launched there and reported lost", st)
		}
	})
}

// TestOfferInDoubtUnseen: "unseen" is believed from the node monitor
// process the offer was sent to (the start nonce it gave before the offer
// left): the task is handed out again. From a process started since, it
// proves nothing, and the task is counted launched there.
func TestOfferInDoubtUnseen(t *testing.T) {
	for _, restarted := range []bool{false, true} {
		t.Run(fmt.Sprintf("restarted=%v", restarted), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := newCluster(t, 2, Config{RPC: rpc.Config{CallTimeout: time.Second}})
				for _, nm := range c.nms {
					nm.boot.Store("b1")
					nm.outcome.Store(sparrowrpc.OFFER_UNSEEN)
					nm.takeOffers.Store(true)
				}
				// A first job's offers, answered, tell the scheduler each
				// node monitor's nonce.
				if err := c.s.SubmitJob(context.Background(), job("warm", 1, freeTasks(2)...)); err != nil {
					t.Fatal(err)
				}
				c.hub.waitUntil(t, "the first job's offers taken", func() bool { return c.s.Stats().OffersTaken == 2 })
				c.s.mu.Lock()
				known := len(c.s.offers.boot)
				c.s.mu.Unlock()
				if known != 2 {
					t.Fatalf("nonces known for %d node monitors, want 2", known)
				}
				release := gateAll(t, c)
				for _, nm := range c.nms {
					nm.takeOffers.Store(false)
					if restarted {
						nm.boot.Store("b2")
					}
				}
				if err := c.s.SubmitJob(context.Background(), job("job", 1, freeTasks(1)...)); err != nil {
					t.Fatal(err)
				}
				c.hub.waitFor(t, 10*time.Second, "the offer in doubt settled", func() bool {
					st := c.s.Stats()
					return st.OffersInDoubt == 1 && (st.DoubtsDeclined == 1 || st.OffersTaken == 3)
				})
				release()
				st := c.s.Stats()
				if restarted {
					if st.OffersTaken != 3 || st.DoubtsDeclined != 0 {
						t.Fatalf("stats %+v: want the task counted launched (unseen by a restarted process)", st)
					}
					return
				}
				if st.DoubtsDeclined != 1 || st.OffersTaken != 2 {
					t.Fatalf("stats %+v: want the task handed out again (unseen by the same process)", st)
				}
				c.waitAccepted(t, "job", 2)
				if got := c.getTaskOnEach(t, "job", c.nms); len(got) != 1 {
					t.Fatalf("getTask handed out %v, want the one task once", got)
				}
			})
		})
	}
}

// TestOfferInDoubtWithoutTheQuestion: a node monitor that answers
// offerOutcome UNKNOWN_METHOD (a version before it) has the offer in doubt
// counted launched there, and later doubts there too, without asking.
func TestOfferInDoubtWithoutTheQuestion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 1, Config{RPC: rpc.Config{CallTimeout: 200 * time.Millisecond}})
		nm := c.nms[0]
		c.net.lack(nm.addr, methodOfferOutcome)
		gateAll(t, c)
		if err := c.s.SubmitJob(context.Background(), job("job", 1, freeTasks(1)...)); err != nil {
			t.Fatal(err)
		}
		c.hub.waitUntil(t, "the offer in doubt counted launched", func() bool { return c.s.Stats().OffersTaken == 1 })
		c.s.mu.Lock()
		noQuery := c.s.offers.caps.Lacks(nm.addr, methodOfferOutcome)
		c.s.mu.Unlock()
		if !noQuery {
			t.Fatal("the node monitor without offerOutcome is not remembered")
		}
		if st := c.s.Stats(); st.TasksLaunched != 1 || st.RunningTracked != 1 {
			t.Fatalf("stats %+v", st)
		}
	})
}

// TestOfferFallsBackForNodeMonitorsWithoutIt: a node monitor that answers
// the offer UNKNOWN_METHOD (an older version) gets the reservations again
// without it, and no more offers.
func TestOfferFallsBackForNodeMonitorsWithoutIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 2, Config{})
		for _, nm := range c.nms {
			c.net.lack(nm.addr, methodOffer)
			nm.takeOffers.Store(true)
		}
		for j := range 2 {
			id := fmt.Sprintf("job%d", j)
			if err := c.s.SubmitJob(context.Background(), job(id, 1, freeTasks(2)...)); err != nil {
				t.Fatal(err)
			}
			c.waitAccepted(t, id, 2)
			for _, nm := range c.nms {
				if got := c.getTask(t, id, nm); len(got) != 1 {
					t.Fatalf("%s: %s got %v, want one task", id, nm.name, got)
				}
			}
		}
		st := c.s.Stats()
		if st.OffersMade != 2 || st.OffersTaken != 0 || st.TasksLaunched != 4 {
			t.Fatalf("stats %+v: want the first job's 2 offers refused as unknown and none after", st)
		}
		for _, nm := range c.nms {
			offered := nm.offers()
			if offered != 0 {
				t.Errorf("%s saw %d offers through a processor without the method", nm.name, offered)
			}
		}
	})
}

// TestNoOffers: with Config.NoOffers every reservation is plain, even to
// node monitors that would take an offer.
func TestNoOffers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 2, Config{NoOffers: true})
		for _, nm := range c.nms {
			nm.takeOffers.Store(true)
		}
		if err := c.s.SubmitJob(context.Background(), job("job", 1, freeTasks(2)...)); err != nil {
			t.Fatal(err)
		}
		c.waitAccepted(t, "job", 2)
		for _, nm := range c.nms {
			offered := nm.offers()
			if offered != 0 {
				t.Fatalf("%s got %d offers with offers off", nm.name, offered)
			}
			if got := c.getTask(t, "job", nm); len(got) != 1 {
				t.Fatalf("%s got %v, want a task by getTask", nm.name, got)
			}
		}
	})
}

// TestGuidedNodeMonitorsGetPlainReservations: a node monitor that declines
// an offer because a coordinator guides its queues is sent plain
// reservations, and no offers, for the next job; every task still goes
// out once by getTask.
func TestGuidedNodeMonitorsGetPlainReservations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 4, Config{})
		for _, nm := range c.nms {
			nm.guided.Store(true)
		}
		if err := c.s.SubmitJob(context.Background(), job("first", 2, freeTasks(2)...)); err != nil {
			t.Fatal(err)
		}
		c.waitAccepted(t, "first", 4)
		st := c.s.Stats()
		if st.OffersMade != 2 || st.OffersTaken != 0 || st.BackupsSent != 2 {
			t.Fatalf("first job: stats %+v, want 2 offers declined and 2 backups sent", st)
		}
		// Every node monitor offered a task said it was guided, and is paused
		// once the scheduler has read its answer.
		paused := map[string]bool{}
		for _, nm := range c.nms {
			if nm.offers() > 0 {
				paused[nm.addr] = true
			}
		}
		c.hub.waitUntil(t, "the guided node monitors paused", func() bool {
			c.s.mu.Lock()
			defer c.s.mu.Unlock()
			for addr := range paused {
				if _, ok := c.s.offers.guidedUntil[addr]; !ok {
					return false
				}
			}
			return len(c.s.offers.guidedUntil) == len(paused)
		})
		if err := c.s.SubmitJob(context.Background(), job("second", 2, freeTasks(2)...)); err != nil {
			t.Fatal(err)
		}
		c.waitAccepted(t, "second", 4)
		// The second job's reservations may go to the node monitors the
		// first job's offers did not reach, which are offered to; the two
		// that said they were guided get none.
		for _, nm := range c.nms {
			offered := nm.offers()
			if paused[nm.addr] && offered != 1 {
				t.Errorf("%s, guided, got %d offers, want only the first job's", nm.addr, offered)
			}
		}
		for _, id := range []string{"first", "second"} {
			if got := c.getTaskOnEach(t, id, c.holders(id)); len(got) != 2 || !distinct(got) {
				t.Fatalf("%s: tasks handed out %v, want 2, once each", id, got)
			}
		}
	})
}

// TestOffersResumeAfterThePause: a guided node monitor's pause ends, and
// it is offered tasks again (its coordinator may be gone).
func TestOffersResumeAfterThePause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 1, Config{})
		addr := c.nms[0].addr
		c.s.mu.Lock()
		defer c.s.mu.Unlock()
		now := time.Now()
		c.s.offers.pause(addr, now.Add(guidedOfferPause))
		if c.s.offers.offersTo(addr, time.Now) {
			t.Fatal("offered to a node monitor in its pause")
		}
		c.s.offers.pause(addr, now.Add(-time.Millisecond))
		if !c.s.offers.offersTo(addr, time.Now) {
			t.Fatal("not offered to once the pause ended")
		}
		if _, ok := c.s.offers.guidedUntil[addr]; ok {
			t.Fatal("an ended pause was kept")
		}
	})
}

// TestGetTaskDoesNotWaitForOffersInDoubt: a getTask for a request whose
// only unlaunched task is an offer in doubt answers at once, without the
// task, rather than wait for an answer that may take until the node
// monitor is declared lost (past the getTask's own timeout, so the answer
// would go unread).
func TestGetTaskDoesNotWaitForOffersInDoubt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 4, Config{RPC: rpc.Config{CallTimeout: 200 * time.Millisecond}})
		gate := make(chan struct{})
		t.Cleanup(func() { close(gate) })
		for _, nm := range c.nms {
			nm.mu.Lock()
			nm.offerGate = gate
			nm.mu.Unlock()
			nm.questionFails.Store(true)
		}
		waits := 0
		c.s.mu.Lock()
		c.s.offers.waitHook = func() { waits++ }
		c.s.mu.Unlock()
		if err := c.s.SubmitJob(context.Background(), job("job", 2, freeTasks(1)...)); err != nil {
			t.Fatal(err)
		}
		c.hub.waitUntil(t, "the offer in doubt and its task's reservations placed again", func() bool {
			return c.s.Stats().OffersInDoubt == 1 && c.accepted("job") > 0
		})
		for _, nm := range c.holders("job") {
			if got := c.getTask(t, "job", nm); len(got) != 0 {
				t.Fatalf("%s got %v while the task's offer is in doubt", nm.name, got)
			}
		}
		c.s.mu.Lock()
		w := waits
		c.s.mu.Unlock()
		if w != 0 {
			t.Fatalf("getTask waited %d times for an offer in doubt", w)
		}
		if st := c.s.Stats(); st.TasksLaunched != 0 || st.OffersTaken != 0 {
			t.Fatalf("stats %+v: the task must stay set aside", st)
		}
	})
}

// TestHeldCallWaitsForAnOfferInDoubt: a held submitJob (Config.MaxHeldJobs)
// whose offer is in doubt is answered only once the doubt is settled, as
// accepted: the task may have launched, and a frontend told "refused"
// would resubmit it. Settled by the node monitor's answer (taken), or by
// the node monitor being declared lost (the task reported lost).
func TestHeldCallWaitsForAnOfferInDoubt(t *testing.T) {
	for _, lost := range []bool{false, true} {
		t.Run(map[bool]string{false: "taken", true: "node lost"}[lost], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := newCluster(t, 1, Config{MaxHeldJobs: 4, MaxHold: time.Minute, RPC: rpc.Config{CallTimeout: 200 * time.Millisecond}})
				gateAll(t, c)
				nm := c.nms[0]
				nm.outcome.Store(sparrowrpc.OFFER_TAKEN)
				nm.questionFails.Store(lost)
				call := submitAsync(c, job("job", 1, freeTasks(1)...))
				if lost {
					// Two questions: the call has had a retry's pause to be
					// answered wrongly.
					c.hub.waitUntil(t, "two questions about the offer in doubt", func() bool {
						nm.mu.Lock()
						defer nm.mu.Unlock()
						return nm.questions >= 2
					})
					if answered(call) {
						t.Fatalf("held call answered while its offer is in doubt: %v", <-call)
					}
					c.s.NodeLost(nm.addr)
				}
				if err := waitAnswer(t, call); err != nil {
					t.Fatalf("held call: %v; want it accepted", err)
				}
				st := c.s.Stats()
				if st.OffersInDoubt != 1 || st.OffersTaken != 1 || st.TasksLaunched != 1 || st.Hold.Refused != 0 {
					t.Fatalf("stats %+v: want the offer in doubt counted launched and the job accepted", st)
				}
				if lost && st.TasksLost != 1 {
					t.Fatalf("%d tasks reported lost with the node monitor, want 1", st.TasksLost)
				}
			})
		})
	}
}

// TestOfferInDoubtAfterTheNodeWasLost: the node monitor is declared lost
// while the offer's call is still out; the call then fails, so the offer
// is in doubt on a node whose loss was already handled. When the question
// about it goes unanswered, the task is counted launched there and
// reported lost at once, since no later loss of that node will report it.
func TestOfferInDoubtAfterTheNodeWasLost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 1, Config{RPC: rpc.Config{CallTimeout: 200 * time.Millisecond}})
		gateAll(t, c)
		fe := c.startFrontendRecorder(t)
		nm := c.nms[0]
		nm.questionFails.Store(true)
		if err := c.s.SubmitJob(context.Background(), job("job", 1, freeTasks(1)...)); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // the offer's call is out, held at the node monitor
		if st := c.s.Stats(); st.OffersInDoubt != 0 || st.OffersTaken != 0 {
			t.Fatalf("stats %+v: want the offer's call still out", st)
		}
		c.view.mu.Lock()
		delete(c.view.byApp, app)
		c.view.mu.Unlock()
		c.s.NodeLost(nm.addr)
		c.hub.waitFor(t, maxDoubt+10*time.Second, "the offer in doubt to be settled", func() bool { return c.s.Stats().OffersTaken == 1 })
		if st := c.s.Stats(); st.OffersInDoubt != 1 || st.TasksLost != 1 || st.RunningTracked != 0 {
			t.Fatalf("stats %+v: want the task counted launched there and reported lost", st)
		}
		c.hub.waitUntil(t, "the loss to reach the frontend", func() bool { return fe.count() == 1 })
	})
}

// A node monitor that said it has free slots is offered that many of a
// job's tasks in one call. What it takes launches there; what it declines
// (more offers than it has free slots, or an older node monitor that knows
// one offer per call) goes to the job's backups, handed out once each by
// getTask. Each answer's free slots are what the next offers go by.
func TestSeveralOffersPerCall(t *testing.T) {
	for _, tt := range []struct {
		name      string
		takeMost  int32
		oneOffer  bool
		wantTaken int
	}{
		{name: "all taken", wantTaken: 4},
		{name: "fewer free slots than said", takeMost: 2, wantTaken: 2},
		{name: "node monitor with one offer per call", oneOffer: true, wantTaken: 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := newCluster(t, 8, Config{})
				for _, nm := range c.nms {
					nm.takeOffers.Store(true)
					nm.takeMost.Store(tt.takeMost)
					nm.oneOffer.Store(tt.oneOffer)
					nm.free.Store(3)
					c.s.mu.Lock()
					c.s.offers.setFree(nm.addr, 8)
					c.s.mu.Unlock()
				}
				if err := c.s.SubmitJob(context.Background(), job("job", 2, freeTasks(4)...)); err != nil {
					t.Fatal(err)
				}
				synctest.Wait()
				took := map[string]string{}
				var takers []*fakeNM
				for _, nm := range c.nms {
					nm.mu.Lock()
					if len(nm.took["job"]) > 0 {
						takers = append(takers, nm)
					}
					for _, id := range nm.took["job"] {
						if other, dup := took[id]; dup {
							t.Errorf("task %s taken by %s and %s", id, other, nm.name)
						}
						took[id] = nm.name
					}
					nm.mu.Unlock()
				}
				if len(took) != tt.wantTaken {
					t.Fatalf("offers taken: %v, want %d", took, tt.wantTaken)
				}
				st := c.s.Stats()
				if st.OffersMade != 4 || st.OffersTaken != uint64(tt.wantTaken) {
					t.Fatalf("stats %+v: want 4 offers made in one call, %d taken", st, tt.wantTaken)
				}
				var offered []*fakeNM
				for _, nm := range c.nms {
					if nm.attemptsFor("job") > 0 {
						offered = append(offered, nm)
					}
				}
				if tt.wantTaken == 4 && (st.BackupsSent != 0 || len(offered) != 1) {
					t.Fatalf("%d backups sent, %d node monitors called; want 0, 1", st.BackupsSent, len(offered))
				}
				holders := c.holders("job")
				got := c.getTaskOnEach(t, "job", holders)
				for _, id := range got {
					if _, dup := took[id]; dup {
						t.Errorf("task %s handed out by getTask after its offer was taken", id)
					}
					took[id] = "getTask"
				}
				if len(took) != 4 || !distinct(got) {
					t.Fatalf("tasks launched %v, want all 4 once each", took)
				}
				c.s.mu.Lock()
				defer c.s.mu.Unlock()
				if len(takers) != 1 {
					t.Fatalf("offers taken on %d node monitors, want one call's", len(takers))
				}
				if free := c.s.offers.free[takers[0].addr]; free != 3 {
					t.Errorf("%s's free slots recorded as %d, want the 3 its answer said", takers[0].name, free)
				}
			})
		})
	}
}

// TestOffersSpreadOverIdleNodeMonitors: jobs whose reservations cover
// every node monitor of an idle fleet offer their tasks starting at a
// random one of them, not always at the first in node order, so that
// every node monitor gets its share of the work.
func TestOffersSpreadOverIdleNodeMonitors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 6, Config{})
		for _, nm := range c.nms {
			// Idle node monitors of two slots: each answer says two are
			// free, so the scheduler offers each two tasks at once.
			nm.takeOffers.Store(true)
			nm.free.Store(2)
		}
		for j := range 30 {
			id := fmt.Sprintf("job%d", j)
			if err := c.s.SubmitJob(context.Background(), job(id, 2, freeTasks(6)...)); err != nil {
				t.Fatal(err)
			}
			c.hub.waitUntil(t, id+" to launch", func() bool { return c.s.Stats().ActiveRequests == 0 })
		}
		for _, nm := range c.nms {
			nm.mu.Lock()
			took := 0
			for _, ids := range nm.took {
				took += len(ids)
			}
			nm.mu.Unlock()
			// A sixth of the tasks each on average; the first few in node
			// order would take them all.
			if took < 10 {
				t.Errorf("%s took %d offers of 30 jobs' 180 tasks, want at least 10", nm.name, took)
			}
		}
	})
}
