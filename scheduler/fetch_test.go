package scheduler

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// fetch calls FetchTask as node monitor nm would, and fails the test on an
// error or on more than one task.
func (c *cluster) fetch(t *testing.T, req string, nm *fakeNM, id int64) []*sparrowrpc.TTaskLaunchSpec {
	t.Helper()
	specs, err := c.s.FetchTask(context.Background(), req, nm.hp, id)
	if err != nil {
		t.Fatalf("FetchTask(%s, %s, %d): %v", req, nm.name, id, err)
	}
	if specs == nil || len(specs) > 1 {
		t.Fatalf("FetchTask(%s, %s, %d) returned %v; want a list of at most one task", req, nm.name, id, specs)
	}
	return specs
}

// fetchesRemembered is how many fetches the scheduler holds (s.running.fetches).
func (c *cluster) fetchesRemembered() int {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	return c.s.running.fetches.len()
}

// taskIDs is the task IDs of specs, for messages and comparisons.
func taskIDs(specs []*sparrowrpc.TTaskLaunchSpec) []string {
	var out []string
	for _, s := range specs {
		out = append(out, s.TaskId)
	}
	return out
}

// TestFetchAskedAgainGetsTheSameTask: a node monitor that did not get a
// fetch's answer and asks again with its fetch ID gets the task the first
// call handed out, counted once; a new fetch ID gets the next task.
func TestFetchAskedAgainGetsTheSameTask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 1, Config{NoOffers: true})
		nm := c.nms[0]
		if err := c.s.SubmitJob(context.Background(), job("j", 2, freeTasks(2)...)); err != nil {
			t.Fatal(err)
		}
		c.waitAccepted(t, "j", 4)
		first := c.fetch(t, "j", nm, 7)
		again := c.fetch(t, "j", nm, 7)
		if len(first) != 1 || len(again) != 1 || first[0].TaskId != again[0].TaskId || string(again[0].Message) != string(first[0].Message) {
			t.Fatalf("asked again: %v then %v; want the same task", taskIDs(first), taskIDs(again))
		}
		other := c.fetch(t, "j", nm, 8)
		if len(other) != 1 || other[0].TaskId == first[0].TaskId {
			t.Fatalf("a new fetch got %v after %v; want the other task", taskIDs(other), taskIDs(first))
		}
		if st := c.s.Stats(); st.TasksLaunched != 2 || st.FetchesAskedAgain != 1 || st.RunningTracked != 2 {
			t.Fatalf("stats %+v: want 2 launched, 1 asked again, 2 tracked", st)
		}
		// Finished tasks are no longer at risk: their fetches are forgotten.
		var done []*sparrowrpc.TFullTaskId
		for _, spec := range append(first, other...) {
			done = append(done, &sparrowrpc.TFullTaskId{AppId: app, RequestId: "j", TaskId: spec.TaskId})
		}
		if err := c.s.TasksFinished(context.Background(), nm.hp, done); err != nil {
			t.Fatal(err)
		}
		if left := c.fetchesRemembered(); left != 0 {
			t.Fatalf("%d fetches remembered after their tasks finished, want 0", left)
		}
	})
}

// TestFetchOfNothingIsForgotten: a fetch that handed out nothing is not
// remembered; asked again, it is answered afresh.
func TestFetchOfNothingIsForgotten(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 1, Config{NoOffers: true})
		nm := c.nms[0]
		if got := c.fetch(t, "unknown", nm, 3); len(got) != 0 {
			t.Fatalf("fetch for an unknown request got %v", taskIDs(got))
		}
		if left := c.fetchesRemembered(); left != 0 {
			t.Fatalf("%d fetches remembered after an empty answer, want 0", left)
		}
		if err := c.s.SubmitJob(context.Background(), job("j", 1, freeTasks(1)...)); err != nil {
			t.Fatal(err)
		}
		c.waitAccepted(t, "j", 1)
		if got := c.fetch(t, "j", nm, 3); len(got) != 1 {
			t.Fatalf("fetch 3 for j got %v; want the task", taskIDs(got))
		}
	})
}

// TestFetchAskedAgainAfterTheNodeWasLost: once the node monitor is
// declared lost, the task its fetch was handed is reported lost, and a
// later ask (the node monitor was only cut off) is answered afresh, here
// with nothing: a task is never both reported lost and launched.
func TestFetchAskedAgainAfterTheNodeWasLost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 1, Config{NoOffers: true})
		nm := c.nms[0]
		if err := c.s.SubmitJob(context.Background(), job("j", 1, freeTasks(1)...)); err != nil {
			t.Fatal(err)
		}
		c.waitAccepted(t, "j", 1)
		if got := c.fetch(t, "j", nm, 5); len(got) != 1 {
			t.Fatalf("first fetch got %v; want the task", taskIDs(got))
		}
		c.s.NodeLost(nm.addr)
		if got := c.fetch(t, "j", nm, 5); len(got) != 0 {
			t.Fatalf("asked again after the node was lost: got %v, want nothing", taskIDs(got))
		}
		if st := c.s.Stats(); st.TasksLost != 1 || st.TasksLaunched != 1 {
			t.Fatalf("stats %+v: want the one task launched once and reported lost", st)
		}
		if left := c.fetchesRemembered(); left != 0 {
			t.Fatalf("%d fetches remembered after the node was lost, want 0", left)
		}
	})
}

// TestFetchBadInput: fetch ID 0 is refused with an error naming it, and a
// fetch still being answered is not answered twice.
func TestFetchBadInput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 1, Config{NoOffers: true})
		nm := c.nms[0]
		if _, err := c.s.FetchTask(context.Background(), "j", nm.hp, 0); err == nil {
			t.Fatal("fetch id 0 accepted")
		}
		c.s.mu.Lock()
		c.s.running.fetches.begin(fetchKey{nm.addr, 9})
		c.s.mu.Unlock()
		if specs, err := c.s.FetchTask(context.Background(), "j", nm.hp, 9); err == nil {
			t.Fatalf("a fetch still being answered was answered again: %v", taskIDs(specs))
		}
	})
}

// TestFetchBook: a fetch is pending until answered, kept while its task
// is, an ask about an answered one counted, and forgotten otherwise; a
// getTask (fetch 0) records nothing.
func TestFetchBook(t *testing.T) {
	task := runningTask{app: "a", request: "r", task: "t"}
	tests := []struct {
		name       string
		fetch      int64
		handed     bool // a task was handed out
		kept       bool // and is tracked as handed out by this fetch
		wantKnown  bool // a second ask finds it answered
		askedAgain uint64
	}{
		{name: "handed out and tracked", fetch: 7, handed: true, kept: true, wantKnown: true, askedAgain: 1},
		{name: "handed out, not tracked", fetch: 7, handed: true},
		{name: "nothing handed out", fetch: 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b fetchBook
			key := fetchKey{"n", tt.fetch}
			if _, known := b.begin(key); known {
				t.Fatal("a new fetch is known")
			}
			if f, known := b.begin(key); !known || !f.pending || b.askedAgain != 0 {
				t.Fatalf("a fetch being answered: %+v, %v, asked again %d; want pending, not counted", f, known, b.askedAgain)
			}
			var spec *sparrowrpc.TTaskLaunchSpec
			if tt.handed {
				spec = &sparrowrpc.TTaskLaunchSpec{TaskId: task.task}
			}
			b.answered("n", tt.fetch, task, spec, tt.kept)
			f, known := b.begin(key)
			if known != tt.wantKnown {
				t.Fatalf("asked again: known %v, want %v", known, tt.wantKnown)
			}
			if known && (f.pending || f.task != task || f.spec != spec) {
				t.Fatalf("asked again: %+v, want the task handed out", f)
			}
			if b.askedAgain != tt.askedAgain {
				t.Fatalf("askedAgain %d, want %d", b.askedAgain, tt.askedAgain)
			}
			b.forget("n", tt.fetch)
			if b.len() != 0 {
				t.Fatalf("%d fetches remembered after forget", b.len())
			}
		})
	}
	var b fetchBook
	b.answered("n", 0, task, &sparrowrpc.TTaskLaunchSpec{}, true)
	if b.len() != 0 {
		t.Fatal("a getTask's answer was recorded as a fetch")
	}
}

// TestTasksFinishedFreesOfferSlots: each of this scheduler's tasks
// reported finished on a node monitor counts as a slot free there for the
// next offers, once that node monitor has said how many it has free; a
// stray or repeated report counts nothing.
func TestTasksFinishedFreesOfferSlots(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 1, Config{NoOffers: true})
		nm := c.nms[0]
		if err := c.s.SubmitJob(context.Background(), job("j", 2, freeTasks(2)...)); err != nil {
			t.Fatal(err)
		}
		c.waitAccepted(t, "j", 4)
		got := append(c.fetch(t, "j", nm, 1), c.fetch(t, "j", nm, 2)...)
		if len(got) != 2 {
			t.Fatalf("fetched %v, want both tasks", taskIDs(got))
		}
		freeAfter := func(tasks ...string) int {
			var ids []*sparrowrpc.TFullTaskId
			for _, id := range tasks {
				ids = append(ids, &sparrowrpc.TFullTaskId{AppId: app, RequestId: "j", TaskId: id})
			}
			if err := c.s.TasksFinished(context.Background(), nm.hp, ids); err != nil {
				t.Fatal(err)
			}
			c.s.mu.Lock()
			defer c.s.mu.Unlock()
			return c.s.offers.free[nm.addr]
		}
		if free := freeAfter(got[0].TaskId); free != 0 {
			t.Fatalf("free slots %d before the node monitor said any, want none recorded", free)
		}
		c.s.mu.Lock()
		c.s.offers.setFree(nm.addr, 0)
		c.s.mu.Unlock()
		for _, step := range []struct {
			tasks []string
			want  int
		}{
			{[]string{got[1].TaskId, "no-such-task"}, 1},
			{[]string{got[1].TaskId}, 1},
		} {
			if free := freeAfter(step.tasks...); free != step.want {
				t.Fatalf("after %v finished: %d free slots, want %d", step.tasks, free, step.want)
			}
		}
	})
}
