package scheduler

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// tasksDone (several tasks' taskDone in one call) stops tracking every
// task and delivers every message before it returns; a task without an id
// is named in the error while the others still count.
func TestTasksDoneReportsFinishedAndDelivers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 1, Config{})
		fe := c.startFrontendRecorder(t)
		ctx := context.Background()
		if err := c.s.SubmitJob(ctx, job("j", 3, freeTasks(3)...)); err != nil {
			t.Fatal(err)
		}
		c.waitAccepted(t, "j", 9) // the job's reservations, all on the one node monitor
		nm := c.holders("j")[0]
		var done []*sparrowrpc.TTaskDone
		for range 3 {
			got := c.getTask(t, "j", nm)
			if len(got) != 1 {
				t.Fatalf("got %d tasks, want 1", len(got))
			}
			done = append(done, &sparrowrpc.TTaskDone{App: app, Status: 0, Message: []byte("done"),
				TaskId: &sparrowrpc.TFullTaskId{TaskId: got[0].TaskId, RequestId: "j", AppId: app}})
		}
		if st := c.s.Stats(); st.RunningTracked != 3 {
			t.Fatalf("stats %+v: want the 3 tasks tracked as running", st)
		}
		if err := c.s.TasksDone(ctx, append(done, &sparrowrpc.TTaskDone{App: app}), nm.hp); err == nil {
			t.Error("tasksDone with a task without an id: no error")
		}
		if n := fe.count(); n != 3 {
			t.Fatalf("%d messages delivered by the time tasksDone returned, want 3", n)
		}
		if st := c.s.Stats(); st.RunningTracked != 0 {
			t.Fatalf("stats %+v: want nothing tracked once the tasks are done", st)
		}
		if err := c.s.TasksDone(ctx, done, nil); err == nil {
			t.Error("tasksDone without a node monitor address accepted")
		}
	})
}

// A tasksDone's messages about one job go to its frontend in one
// frontendMessages call when the job advertised it and the frontend's link
// has room for them all; the messages the link has no room for at once go
// each alone (batched with whatever else is waiting, as any message is),
// and every message of a job that did not advertise the extension goes in
// a call of its own. Every message is delivered once.
func TestTasksDoneDeliversAJobsMessagesTogether(t *testing.T) {
	batchBit := int32(sparrowrpc.FRONTEND_MESSAGES)
	for _, tt := range []struct {
		name      string
		features  *int32
		inflight  int
		together  []string // messages of job r that go in one call
		mostCalls int
	}{
		{name: "advertised", features: &batchBit, together: []string{"a", "b", "c"}, mostCalls: 2},
		{name: "link room for two", features: &batchBit, inflight: 2, together: []string{"a", "b"}, mostCalls: 3},
		{name: "not advertised", mostCalls: 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := newCluster(t, 2, Config{NoOffers: true, FrontendMaxInflight: tt.inflight})
				fe := &batchFrontend{}
				addr := c.net.addr()
				c.net.serveFrontend(addr, fe)
				c.frontendJob(t, "r", 3, addr, tt.features)
				c.frontendJob(t, "q", 1, addr, tt.features)
				done := func(req, task string) *sparrowrpc.TTaskDone {
					return &sparrowrpc.TTaskDone{App: app, Message: []byte("done"),
						TaskId: &sparrowrpc.TFullTaskId{TaskId: task, RequestId: req, AppId: app}}
				}
				ends := []*sparrowrpc.TTaskDone{done("r", "a"), done("q", "d"), done("r", "b"), done("r", "c")}
				if err := c.s.TasksDone(context.Background(), ends, c.nms[0].hp); err != nil {
					t.Fatal(err)
				}
				calls, batch := fe.recorded()
				var all []string
				joined := len(tt.together) == 0
				for i, call := range calls {
					all = append(all, call...)
					if tt.features == nil && (batch[i] || len(call) != 1) {
						t.Errorf("call %v of a job that did not advertise frontendMessages", call)
					}
					joined = joined || subset(tt.together, call)
				}
				slices.Sort(all)
				if !slices.Equal(all, []string{"a", "b", "c", "d"}) || len(calls) > tt.mostCalls || !joined {
					t.Fatalf("calls %v: want a, b, c and d once each in at most %d calls, %v in one", calls, tt.mostCalls, tt.together)
				}
				if st := c.s.Stats().Frontend; st.Delivered != 4 || st.Inflight != 0 {
					t.Fatalf("stats %+v, want 4 delivered, none in flight", st)
				}
			})
		})
	}
}

// subset reports whether every one of want is in got.
func subset(want, got []string) bool {
	for _, w := range want {
		if !slices.Contains(got, w) {
			return false
		}
	}
	return true
}
