package scheduler

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

func (m *memNet) FrontendMessages(ctx context.Context, addr string, messages []*sparrowrpc.TFrontendMessage) error {
	return m.frontendCall(ctx, addr, "frontendMessages", func(ctx context.Context, h sparrowrpc.FrontendService) error {
		ext, ok := h.(sparrowrpc.ExtendedFrontendService)
		if !ok {
			// What a processor generated for FrontendService alone answers.
			return thrift.NewTApplicationException(thrift.UNKNOWN_METHOD, "Unknown function frontendMessages")
		}
		return ext.FrontendMessages(ctx, messages)
	})
}

// batchFrontend serves frontendMessages and records every call, one
// entry per call: the task ids it carried, and whether it was a batch.
// While hold is set, each call waits for a value on release.
type batchFrontend struct {
	mu      sync.Mutex
	calls   [][]string
	batch   []bool
	hold    bool
	release chan struct{}
}

func (f *batchFrontend) record(ids []string, batch bool) {
	f.mu.Lock()
	hold := f.hold
	f.mu.Unlock()
	if hold {
		<-f.release
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, ids)
	f.batch = append(f.batch, batch)
}

func (f *batchFrontend) FrontendMessage(_ context.Context, id *sparrowrpc.TFullTaskId, _ int32, _ []byte) error {
	f.record([]string{id.TaskId}, false)
	return nil
}

func (f *batchFrontend) FrontendMessages(_ context.Context, msgs []*sparrowrpc.TFrontendMessage) error {
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		ids[i] = m.TaskId.TaskId
	}
	f.record(ids, true)
	return nil
}

func (f *batchFrontend) recorded() ([][]string, []bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls), slices.Clone(f.batch)
}

// frontendJob submits a job of n tasks naming addr as its frontend, with
// features as its frontendFeatures (nil: absent).
func (c *cluster) frontendJob(t *testing.T, req string, n int, addr string, features *int32) {
	t.Helper()
	r := withFrontend(job(req, 1, freeTasks(n)...), addr)
	r.FrontendFeatures = features
	if err := c.s.SubmitJob(context.Background(), r); err != nil {
		t.Fatal(err)
	}
}

// batchCluster returns a cluster whose job "r" of tasks tasks names a
// held batchFrontend, advertising features (nil: absent); lacks makes
// that frontend answer frontendMessages UNKNOWN_METHOD.
func batchCluster(t *testing.T, tasks int, features *int32, lacks bool) (*cluster, *batchFrontend) {
	t.Helper()
	c := newCluster(t, 2, Config{NoOffers: true})
	fe := &batchFrontend{hold: true, release: make(chan struct{})}
	addr := c.net.addr()
	c.net.serveFrontend(addr, fe)
	if lacks {
		c.net.lack(addr, "frontendMessages")
	}
	c.frontendJob(t, "r", tasks, addr, features)
	return c, fe
}

// sendAll sends a message for each of ids of job req, each from its own
// goroutine, started one after another once the previous one waits, and
// returns the channel their errors arrive on.
func (c *cluster) sendAll(req string, ids []string) <-chan error {
	errs := make(chan error, len(ids))
	for _, id := range ids {
		go func() {
			errs <- c.s.SendFrontendMessage(context.Background(), app, &sparrowrpc.TFullTaskId{TaskId: id, RequestId: req, AppId: app}, 0, nil)
		}()
		synctest.Wait()
	}
	return errs
}

// The messages that arrive for a frontend serving frontendMessages while
// a call to it is in flight go together in the next call, in the order
// they arrived; messages of a job that did not advertise the extension,
// or to a frontend that answers UNKNOWN_METHOD, go one per call.
func TestFrontendMessagesBatched(t *testing.T) {
	batchBit, otherBit := int32(sparrowrpc.FRONTEND_MESSAGES), int32(2)
	tests := []struct {
		name      string
		features  *int32
		lacks     bool // the frontend answers frontendMessages UNKNOWN_METHOD
		wantCalls [][]string
		wantBatch []bool
	}{
		{
			name: "advertised", features: &batchBit,
			wantCalls: [][]string{{"t0"}, {"t1", "t2", "t3", "t4"}, {"t5"}},
			wantBatch: []bool{true, true, true},
		},
		{
			name:      "not advertised",
			wantCalls: [][]string{{"t0"}, {"t1"}, {"t2"}, {"t3"}, {"t4"}, {"t5"}},
			wantBatch: []bool{false, false, false, false, false, false},
		},
		{
			name: "other bits only", features: &otherBit,
			wantCalls: [][]string{{"t0"}, {"t1"}, {"t2"}, {"t3"}, {"t4"}, {"t5"}},
			wantBatch: []bool{false, false, false, false, false, false},
		},
		{
			// The first call learns the frontend lacks the extension,
			// and its message goes alone; the rest never try it.
			name: "unknown method", features: &batchBit, lacks: true,
			wantCalls: [][]string{{"t0"}, {"t1"}, {"t2"}, {"t3"}, {"t4"}, {"t5"}},
			wantBatch: []bool{false, false, false, false, false, false},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, fe := batchCluster(t, 6, tt.features, tt.lacks)

				// t0 is held in the frontend; t1..t4 arrive meanwhile.
				errs := c.sendAll("r", []string{"t0", "t1", "t2", "t3", "t4"})
				if st := c.s.Stats().Frontend; st.Inflight != 5 {
					t.Fatalf("%d messages in flight, want 5", st.Inflight)
				}
				close(fe.release)
				for range 5 {
					if err := <-errs; err != nil {
						t.Fatal(err)
					}
				}
				// Alone, t5 goes at once.
				if err := <-c.sendAll("r", []string{"t5"}); err != nil {
					t.Fatal(err)
				}
				calls, batch := fe.recorded()
				if !tt.wantBatch[0] {
					// One message per call: the calls ran side by side,
					// so only the set is fixed.
					slices.SortFunc(calls, func(a, b []string) int { return slices.Compare(a, b) })
				}
				if !slices.EqualFunc(calls, tt.wantCalls, slices.Equal) || !slices.Equal(batch, tt.wantBatch) {
					t.Fatalf("calls %v (batch %v), want %v (batch %v)", calls, batch, tt.wantCalls, tt.wantBatch)
				}
				if st := c.s.Stats().Frontend; st.Delivered != 6 || st.Inflight != 0 || st.Failed != 0 {
					t.Fatalf("stats %+v, want 6 delivered, none in flight or failed", st)
				}
			})
		})
	}
}

// A batch whose call fails fails each of its messages as a single call
// would: each sender gets the error, each counts as failed, and the link
// goes down, so that the next message is dropped without a call.
func TestFrontendMessagesBatchFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		batchBit := int32(sparrowrpc.FRONTEND_MESSAGES)
		c, fe := batchCluster(t, 4, &batchBit, false)

		errs := c.sendAll("r", []string{"t0", "t1", "t2"})
		fe.release <- struct{}{} // t0 is delivered; the batch of t1 and t2 is held past the call timeout
		if err := <-errs; err != nil {
			t.Fatalf("t0: %v", err)
		}
		for range 2 {
			if err := <-errs; err == nil {
				t.Fatal("a message of a batch whose call timed out: no error")
			}
		}
		st := c.s.Stats().Frontend
		if st.Delivered != 1 || st.Failed != 2 || st.Down != 1 {
			t.Fatalf("stats %+v, want t0 delivered, the batch of 2 failed, the link down", st)
		}
		if err := <-c.sendAll("r", []string{"t3"}); err == nil {
			t.Fatal("message to a down frontend before its probe: no error")
		}
		if st := c.s.Stats().Frontend; st.DroppedUnreachable != 1 || st.Delivered != 1 || st.Failed != 2 {
			t.Fatalf("stats %+v, want one message dropped unreachable, nothing else sent", st)
		}
		close(fe.release)
		synctest.Wait()
		calls, _ := fe.recorded()
		if want := [][]string{{"t0"}, {"t1", "t2"}}; !slices.EqualFunc(calls, want, slices.Equal) {
			t.Fatalf("frontend handled %v, want %v (t3 never sent)", calls, want)
		}
	})
}

// Close sends every queued message before it returns.
func TestFrontendMessagesFlushedOnClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		batchBit := int32(sparrowrpc.FRONTEND_MESSAGES)
		c, fe := batchCluster(t, 3, &batchBit, false)
		errs := c.sendAll("r", []string{"t0", "t1", "t2"})
		closed := make(chan struct{})
		go func() { c.s.Close(); close(closed) }()
		synctest.Wait()
		select {
		case <-closed:
			t.Fatal("Close returned with messages queued")
		default:
		}
		close(fe.release)
		<-closed
		for range 3 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		calls, _ := fe.recorded()
		if want := [][]string{{"t0"}, {"t1", "t2"}}; !slices.EqualFunc(calls, want, slices.Equal) {
			t.Fatalf("calls %v, want %v", calls, want)
		}
	})
}
