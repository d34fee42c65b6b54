package scheduler

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// A node monitor declared lost takes its running tasks with it: they are
// reported lost, its reservations are placed elsewhere, and a message that
// arrives later about a lost task (the node was alive after all) is dropped
// so the frontend never hears "lost" and then "done". Tasks reported
// finished before the loss are not reported.
func TestNodeLostReportsRunningTasksOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 3, Config{})
		fe := c.startFrontendRecorder(t)
		ctx := context.Background()
		if err := c.s.SubmitJob(ctx, job("j", 1, freeTasks(3)...)); err != nil {
			t.Fatal(err)
		}
		// d=1: three tasks on three nodes, one reservation each.
		c.waitAccepted(t, "j", 3)
		holders := c.holders("j")
		victim, survivor := holders[0], holders[1]
		if got := c.getTask(t, "j", victim); len(got) != 1 {
			t.Fatalf("victim got %d tasks, want 1", len(got))
		}
		// The survivor's task finishes, and its node monitor says so.
		done := c.getTask(t, "j", survivor)
		if len(done) != 1 {
			t.Fatalf("survivor got %d tasks, want 1", len(done))
		}
		finished := &sparrowrpc.TFullTaskId{TaskId: done[0].TaskId, RequestId: "j", AppId: app}
		c.s.TasksFinished(ctx, survivor.hp, []*sparrowrpc.TFullTaskId{finished})

		c.s.NodeLost(rpc.HostPortString(victim.hp))
		c.hub.waitUntil(t, "the lost report", func() bool { return fe.count() == 1 })
		fe.mu.Lock()
		lost := fe.msgs[0]
		if fe.stat[0] != sparrowrpc.STATUS_TASK_LOST || lost.RequestId != "j" {
			t.Errorf("message %+v status %d, want j's task reported STATUS_TASK_LOST", lost, fe.stat[0])
		}
		fe.mu.Unlock()
		if st := c.s.Stats(); st.TasksLost != 1 || st.RunningTracked != 0 {
			t.Errorf("stats %+v: want 1 task lost and nothing left tracked", st)
		}

		// The node was not dead after all: its executor reports one task done.
		if err := c.s.SendFrontendMessage(ctx, app, lost, 0, []byte("done")); err != nil {
			t.Fatal(err)
		}
		// A message about some other task still goes through, proving the first
		// was dropped rather than merely slow.
		other := &sparrowrpc.TFullTaskId{TaskId: "x", RequestId: "other", AppId: app}
		if err := c.s.SendFrontendMessage(ctx, app, other, 0, nil); err != nil {
			t.Fatal(err)
		}
		c.hub.waitUntil(t, "the other message", func() bool { return fe.count() == 2 })
		fe.mu.Lock()
		last := fe.msgs[len(fe.msgs)-1]
		fe.mu.Unlock()
		if last.RequestId != "other" {
			t.Errorf("last message is about %s/%s; the late message for a lost task got through", last.RequestId, last.TaskId)
		}
		if st := c.s.Stats(); st.LateDropped != 1 {
			t.Errorf("LateDropped = %d, want 1", st.LateDropped)
		}
	})
}

// taskDone (a node monitor's finished report and its executor's message
// in one call) stops tracking the task, so the node's later loss reports
// nothing for it, and delivers the message before it returns.
func TestTaskDoneReportsFinishedAndDelivers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 1, Config{})
		fe := c.startFrontendRecorder(t)
		ctx := context.Background()
		if err := c.s.SubmitJob(ctx, job("j", 1, freeTasks(1)...)); err != nil {
			t.Fatal(err)
		}
		c.waitAccepted(t, "j", 1)
		nm := c.holders("j")[0]
		got := c.getTask(t, "j", nm)
		if len(got) != 1 {
			t.Fatalf("got %d tasks, want 1", len(got))
		}
		if st := c.s.Stats(); st.RunningTracked != 1 {
			t.Fatalf("stats %+v: want the task tracked as running", st)
		}
		id := &sparrowrpc.TFullTaskId{TaskId: got[0].TaskId, RequestId: "j", AppId: app}
		if err := c.s.TaskDone(ctx, app, id, 0, []byte("done"), nm.hp); err != nil {
			t.Fatal(err)
		}
		if n := fe.count(); n != 1 {
			t.Fatalf("%d messages delivered by the time taskDone returned, want 1", n)
		}
		if st := c.s.Stats(); st.RunningTracked != 0 {
			t.Fatalf("stats %+v: want nothing tracked once the task is done", st)
		}
		c.s.NodeLost(rpc.HostPortString(nm.hp))
		if st := c.s.Stats(); st.TasksLost != 0 || fe.count() != 1 {
			t.Fatalf("stats %+v, %d messages: a finished task was reported lost", st, fe.count())
		}
		if err := c.s.TaskDone(ctx, app, id, 0, nil, nil); err == nil {
			t.Error("taskDone without a node monitor address accepted")
		}
	})
}
