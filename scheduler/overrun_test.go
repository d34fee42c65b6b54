package scheduler

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/core/placement"
	"github.com/sparrowfleet/sparrow/core/shortjobs"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// TestShortJobsOverrunTakesUnestimatedJobLong: under the overrun rule, a
// short job that stated no estimate and has a task still running the
// cutoff after it was handed out is taken as long at the next sweep: it
// leaves the pull backlog, a node monitor of the short-only share that
// asks gets no task while the job holds a reservation elsewhere, and the
// next task handed out carries a long job's estimate. A job that stated
// an estimate, one whose task finished before the cutoff, and the rule
// off are left alone.
func TestShortJobsOverrunTakesUnestimatedJobLong(t *testing.T) {
	const cutoff = 10
	for _, tt := range []struct {
		name     string
		overrun  bool
		seconds  float64 // the job's stated estimate; 0: none
		finished bool    // the first task is reported finished before the cutoff
		wantLong bool
	}{
		{"unestimated, running past the cutoff", true, 0, false, true},
		{"rule off", false, 0, false, false},
		{"stated estimate", true, 1, false, false},
		{"finished before the cutoff", true, 0, true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := &shortjobs.Config{Cutoff: cutoff, ShortShare: 0.3, StarveLimit: 4, Overrun: tt.overrun}
				c := awareClusterWith(t, 10, Config{NoOffers: true, ShortJobs: cfg, PullAfter: time.Second})
				req := job("u", 2, freeTasks(5)...)
				if tt.seconds > 0 {
					req = withSeconds(req, tt.seconds)
				}
				if err := c.s.SubmitJob(context.Background(), req); err != nil {
					t.Fatal(err)
				}
				c.waitAccepted(t, "u", 10)
				shortOnly, general := c.holdersByShare("u")
				if len(shortOnly) == 0 || len(general) < 3 {
					t.Fatalf("holders: %d short-only, %d general; the test needs both", len(shortOnly), len(general))
				}
				first := c.getTask(t, "u", general[0])
				if len(first) != 1 {
					t.Fatalf("first getTask got %v", first)
				}
				time.Sleep(time.Second)
				if w, _ := sweepWork(c.s, time.Now()); (w > 0) != (tt.seconds < cutoff) {
					t.Fatalf("backlog advert %v before the cutoff", w)
				}
				if tt.finished {
					id := &sparrowrpc.TFullTaskId{AppId: app, RequestId: "u", TaskId: first[0].TaskId}
					if err := c.s.TasksFinished(context.Background(), general[0].hp, []*sparrowrpc.TFullTaskId{id}); err != nil {
						t.Fatal(err)
					}
				}
				c.s.OverrunSweep(time.Now().Add((cutoff - 2) * time.Second))
				if got := c.s.Stats().OverrunLong; got != 0 {
					t.Fatalf("%d jobs taken long before the cutoff", got)
				}
				c.s.OverrunSweep(time.Now().Add(cutoff * time.Second))
				st := c.s.Stats()
				if got := st.OverrunLong == 1; got != tt.wantLong {
					t.Fatalf("taken long: %v (%d), want %v", got, st.OverrunLong, tt.wantLong)
				}
				w, _ := sweepWork(c.s, time.Now())
				if inBacklog := w > 0; inBacklog == tt.wantLong {
					t.Fatalf("backlog advert %v after the sweep; taken long %v", w, tt.wantLong)
				}
				got := c.getTask(t, "u", shortOnly[0])
				if declined := len(got) == 0; declined != tt.wantLong {
					t.Fatalf("the short-only node's getTask got %v; taken long %v", taskIDs(got), tt.wantLong)
				}
				if got := c.s.Stats().OverrunDeclined; got != map[bool]uint64{true: 1}[tt.wantLong] {
					t.Fatalf("%d getTasks declined", got)
				}
				next := c.getTask(t, "u", general[1])
				if len(next) != 1 {
					t.Fatalf("a general node's getTask got %v", next)
				}
				want := map[bool]float64{true: shortjobs.OverrunEstimate(cutoff), false: cutoff / 2}[tt.wantLong]
				if tt.seconds > 0 {
					want = tt.seconds
				}
				if got := next[0].GetTaskSeconds(); got != want {
					t.Fatalf("task handed out with %v s per task, want %v", got, want)
				}
				ids := append(append(taskIDs(first), taskIDs(got)...), taskIDs(next)...)
				ids = append(ids, c.getTaskOnEach(t, "u", general[2:])...)
				ids = append(ids, c.getTaskOnEach(t, "u", shortOnly)...)
				if !distinct(ids) || len(ids) != 5 {
					t.Fatalf("tasks handed out %v, want each of 5 once", ids)
				}
			})
		})
	}
}

// TestOverrunWatch: the watch gives back each task once, when the cutoff
// has passed since its hand-out, oldest first, and keeps the rest.
func TestOverrunWatch(t *testing.T) {
	w := newOverrunWatch(shortjobs.Config{Cutoff: 10, Overrun: true})
	t0 := time.Unix(1000, 0)
	for i := range 6 {
		w.handedOut(runningTask{request: fmt.Sprint(i)}, t0.Add(time.Duration(i)*time.Second))
	}
	for _, step := range []struct {
		at   time.Duration
		want []string
	}{
		{9 * time.Second, nil},
		{10 * time.Second, []string{"0"}},
		{12500 * time.Millisecond, []string{"1", "2"}},
		{12500 * time.Millisecond, nil},
		{time.Hour, []string{"3", "4", "5"}},
	} {
		var got []string
		for _, h := range w.due(nil, t0.Add(step.at)) {
			got = append(got, h.task.request)
		}
		if fmt.Sprint(got) != fmt.Sprint(step.want) {
			t.Fatalf("due at +%v: %v, want %v", step.at, got, step.want)
		}
	}
	if w.len() != 0 {
		t.Fatalf("%d tasks still watched", w.len())
	}
	var off *overrunWatch = newOverrunWatch(shortjobs.Config{Cutoff: 10})
	off.handedOut(runningTask{request: "x"}, t0)
	if got := off.due(nil, t0.Add(time.Hour)); off != nil || len(got) != 0 {
		t.Fatalf("with the rule off: watch %v, due %v", off, got)
	}
}

// TestShortJobsOverrunNeverStrandsAJob: a job taken long by its overrun
// whose reservations left are all on the short-only share gets its tasks
// there: a node monitor of the share is turned away only while the job
// holds a reservation elsewhere.
func TestShortJobsOverrunNeverStrandsAJob(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := &shortjobs.Config{Cutoff: 10, ShortShare: 0.3, StarveLimit: 4, Overrun: true}
		// No reservation timeout: its extra reservations would go to the
		// general nodes.
		c := awareClusterWith(t, 10, Config{NoOffers: true, ShortJobs: cfg, ReservationTimeout: -1})
		if err := c.s.SubmitJob(context.Background(), job("u", 1, freeTasks(10)...)); err != nil {
			t.Fatal(err)
		}
		c.waitAccepted(t, "u", 10)
		shortOnly, general := c.holdersByShare("u")
		if len(shortOnly) == 0 || len(general) == 0 || len(shortOnly)+len(general) != 10 {
			t.Fatalf("holders: %d short-only, %d general; want one reservation on each of 10 nodes, of both kinds", len(shortOnly), len(general))
		}
		ids := c.getTaskOnEach(t, "u", general[:1])
		c.s.OverrunSweep(time.Now().Add(time.Minute))
		if got := c.s.Stats().OverrunLong; got != 1 {
			t.Fatalf("%d jobs taken long, want 1", got)
		}
		ids = append(ids, c.getTaskOnEach(t, "u", general[1:])...)
		ids = append(ids, c.getTaskOnEach(t, "u", shortOnly)...)
		if st := c.s.Stats(); st.OverrunDeclined != 0 || len(ids) != 10 || !distinct(ids) {
			t.Fatalf("tasks handed out %v with %d getTasks declined; want each of 10 once, none declined", ids, st.OverrunDeclined)
		}
	})
}

// holdersByShare returns the node monitors holding req's reservations,
// split into those of app's short-only share and the others.
func (c *cluster) holdersByShare(req string) (shortOnly, general []*fakeNM) {
	part := c.s.short.partition(app, c.view.Candidates(app))
	for _, nm := range c.holders(req) {
		n, _ := c.view.Node(nm.addr)
		if part.ShortOnly(shortjobs.NodeHash(n.Name)) {
			shortOnly = append(shortOnly, nm)
		} else {
			general = append(general, nm)
		}
	}
	return shortOnly, general
}

// TestOverrunTick: the daemon sweeps for overruns every tenth of the
// cutoff, within [10 ms, 1 s], and not at all with the rule off.
func TestOverrunTick(t *testing.T) {
	for _, tt := range []struct {
		cutoff  float64
		overrun bool
		want    time.Duration
	}{
		{90.5811, true, time.Second},
		{0.9, true, 90 * time.Millisecond},
		{0.01, true, 10 * time.Millisecond},
		{90, false, 0},
	} {
		cfg := &shortjobs.Config{Cutoff: tt.cutoff, StarveLimit: 4, Overrun: tt.overrun}
		s, err := newWith(Config{Address: schedAddr, Seed: 1, ShortJobs: cfg, Log: zerolog.Nop()}, &fakeView{byApp: map[string][]placement.Node{}}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.OverrunTick(); got != tt.want {
			t.Errorf("cutoff %v s, overrun %v: tick %v, want %v", tt.cutoff, tt.overrun, got, tt.want)
		}
		s.Close()
	}
}

// TestOverrunRunningSince: a watched task counts as running past the
// cutoff only if the hand-out the watch saw is the one still running: not
// once it finished, nor once the same task of a request id used again was
// handed out later.
func TestOverrunRunningSince(t *testing.T) {
	p, err := newShortPolicy(&shortjobs.Config{Cutoff: 10, StarveLimit: 4, Overrun: true})
	if err != nil {
		t.Fatal(err)
	}
	guessed := shortJob{class: shortjobs.Short, guessed: true}
	t0 := time.Unix(1000, 0)
	finished := runningTask{app: app, request: "a", task: "0"}
	again := runningTask{app: app, request: "b", task: "0"}
	running := runningTask{app: app, request: "c", task: "0"}
	p.handedOut(finished, guessed, t0)
	p.handedOut(again, guessed, t0)
	p.handedOut(running, guessed, t0)
	p.handedOut(runningTask{app: app, request: "stated", task: "0"}, shortJob{class: shortjobs.Short}, t0)
	p.finished(finished, t0.Add(time.Second))
	p.handedOut(again, guessed, t0.Add(5*time.Second))
	var still []string
	for _, h := range p.watch.due(nil, t0.Add(10*time.Second)) {
		if p.runningSince(h.task, h.at) {
			still = append(still, h.task.request)
		}
	}
	if fmt.Sprint(still) != "[c]" {
		t.Fatalf("running past the cutoff: %v, want [c]", still)
	}
}
