package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/core/queue"
	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/nodemonitor"
	sparrowrpc "github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// TestNodeMonitorLeaveGrace: a drained node monitor closing with a leave
// grace still answers once its leave is done, so that a scheduler that
// has not heard of the leave gets an offer refused, not a dropped call;
// Close returns after the grace.
func TestNodeMonitorLeaveGrace(t *testing.T) {
	if testing.Short() {
		t.Skip("starts daemons")
	}
	seed := startTestNodeMonitor(t, "seed", 1, false)
	logs, log := newLogBuffer(t, "leaving")
	h := loopbackHosts.host()
	const grace = 3 * time.Second
	d, err := nodemonitor.StartDaemon(nodemonitor.DaemonConfig{
		Listen: h + ":0", InternalListen: h + ":0", Gossip: h + ":0", Join: []string{seed.Cluster.Addr()},
		GossipProfile: "local", Name: "leaving", Slots: 1, Queue: queue.NewFIFO(), LeaveGrace: grace, Log: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	member := func() bool {
		for _, m := range seed.Cluster.Members("") {
			if m.Name == "leaving" {
				return true
			}
		}
		return false
	}
	waitFor(t, "the seed to see the node monitor", 10*time.Second, member)
	if res := d.Drain(time.Second); res.Unfinished != 0 {
		t.Fatalf("drain %+v", res)
	}
	closed := make(chan struct{})
	go func() {
		d.Close()
		close(closed)
	}()
	waitFor(t, "the seed to see the node monitor leave", 10*time.Second, func() bool { return !member() })
	waitFor(t, "the node monitor to have left and be in its grace", 10*time.Second, func() bool {
		return strings.Contains(logs.String(), "refusing new work until the leave has spread")
	})

	pool := rpc.NewPool(rpc.Config{}, sparrowrpc.NewInternalServiceClient)
	defer pool.Close()
	self, _ := rpc.ParseHostPort("127.0.0.1:1")
	var rep *sparrowrpc.TEnqueueOfferReply
	err = pool.Call(context.Background(), d.InternalAddr(), func(ctx context.Context, c *sparrowrpc.InternalServiceClient) error {
		var err error
		rep, err = c.EnqueueTaskReservationsWithOffer(ctx, &sparrowrpc.TEnqueueTaskReservationsRequest{
			AppId: "app", RequestId: "r", SchedulerAddress: self, NumTasks: 1, User: &sparrowrpc.TUserGroupInfo{},
		}, &sparrowrpc.TTaskLaunchSpec{TaskId: "t", Message: []byte{}}, nil)
		return err
	})
	select {
	case <-closed:
		t.Fatal("Close returned before the offer was answered: no grace")
	default:
	}
	if err != nil || rep.GetAccepted() || rep.GetLaunched() {
		t.Fatalf("offer during the leave grace: reply %+v, err %v; want refused, not launched", rep, err)
	}
	select {
	case <-closed:
	case <-time.After(grace + 10*time.Second):
		t.Fatal("Close did not return after the grace")
	}
}
