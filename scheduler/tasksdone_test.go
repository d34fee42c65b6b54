package scheduler

import (
	"context"
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
