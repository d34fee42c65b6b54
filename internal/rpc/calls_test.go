package rpc

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"testing"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

func TestCallCounterCounts(t *testing.T) {
	distinct := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("m%d", i)
		}
		return out
	}
	capped := map[string]int64{OtherMethod: 3}
	for _, name := range distinct(MaxMethods) {
		capped[name] = 1
	}
	for _, tt := range []struct {
		name  string
		calls []string
		want  map[string]int64
	}{
		{"none", nil, map[string]int64{}},
		{"one method", []string{"getTask", "getTask"}, map[string]int64{"getTask": 2}},
		{"several methods", []string{"getTask", "tasksFinished", "getTask"}, map[string]int64{"getTask": 2, "tasksFinished": 1}},
		{"the empty name is a name", []string{""}, map[string]int64{"": 1}},
		{"other counts as other", []string{OtherMethod, OtherMethod}, map[string]int64{OtherMethod: 2}},
		{"names past the cap count as other", append(distinct(MaxMethods+3), "m0"),
			func() map[string]int64 { m := maps.Clone(capped); m["m0"] = 2; return m }()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var c CallCounter
			for _, m := range tt.calls {
				c.Add(m)
			}
			if got := c.Counts(); !maps.Equal(got, tt.want) {
				t.Fatalf("counts %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCallCounterKnownNameDoesNotAllocate(t *testing.T) {
	var c CallCounter
	name := string([]byte("enqueueTaskReservations"))
	c.Add(name)
	if n := testing.AllocsPerRun(100, func() { c.Add(name) }); n != 0 {
		t.Fatalf("counting a known name allocated %v times a call, want 0", n)
	}
}

func TestCallCounterConcurrent(t *testing.T) {
	var c CallCounter
	const workers, each = 8, 200
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				c.Add(fmt.Sprintf("m%d", (w*each+i)%(2*MaxMethods)))
			}
		}()
	}
	wg.Wait()
	got := c.Counts()
	var total int64
	for _, n := range got {
		total += n
	}
	if total != workers*each {
		t.Fatalf("counted %d calls, want %d", total, workers*each)
	}
	if len(got) != MaxMethods+1 {
		t.Fatalf("kept %d names, want %d and %q", len(got), MaxMethods, OtherMethod)
	}
}

func TestNilCallsHaveNoCounts(t *testing.T) {
	var c *Calls
	if st := c.Stats(); len(st.Served) != 0 || len(st.Made) != 0 {
		t.Fatalf("nil Calls reported %+v", st)
	}
}

// TestCallsCountedOverLoopback counts calls made by a pool and served by
// a server, each with its own Calls; a method the server's service lacks
// is served as OtherMethod and made under its name.
func TestCallsCountedOverLoopback(t *testing.T) {
	var served, made Calls
	srv, _ := startFrontend(t, Config{Calls: &served})
	p := newFrontendPool(t, Config{Calls: &made})
	const n = 5
	for i := range n {
		if err := sendStatus(p, srv.Addr(), int32(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := sendStatus(p, srv.Addr(), failStatus); err == nil {
		t.Fatal("failing call succeeded")
	}
	other := NewPool(Config{Calls: &made}, sparrowrpc.NewExtendedFrontendServiceClient)
	t.Cleanup(other.Close)
	err := other.Call(context.Background(), srv.Addr(), func(ctx context.Context, c *sparrowrpc.ExtendedFrontendServiceClient) error {
		return c.FrontendMessages(ctx, nil)
	})
	if !IsUnknownMethod(err) {
		t.Fatalf("a method the server lacks returned %v, want unknown method", err)
	}

	wantMade := map[string]int64{"frontendMessage": n + 1, "frontendMessages": 1}
	if got := made.Stats(); !maps.Equal(got.Made, wantMade) || len(got.Served) != 0 {
		t.Fatalf("pool counted %+v, want made %v and nothing served", got, wantMade)
	}
	wantServed := map[string]int64{"frontendMessage": n + 1, OtherMethod: 1}
	waitFor(t, "the served counts", func() bool { return maps.Equal(served.Stats().Served, wantServed) })
	if got := served.Stats().Made; len(got) != 0 {
		t.Fatalf("server counted calls made: %v", got)
	}
}

// TestServedUnknownNamesCountAsOther sends calls whose names the service
// lacks, one not even UTF-8, each on its own connection (the server
// closes a connection after an unknown method).
func TestServedUnknownNamesCountAsOther(t *testing.T) {
	var served Calls
	srv, _ := startFrontend(t, Config{Calls: &served})
	emptyArgs := func(p thrift.TProtocol) error {
		ctx := context.Background()
		if err := p.WriteStructBegin(ctx, "args"); err != nil {
			return err
		}
		if err := p.WriteFieldStop(ctx); err != nil {
			return err
		}
		return p.WriteStructEnd(ctx)
	}
	for _, name := range []string{"noSuchMethod", "\xff\xfe", OtherMethod, ""} {
		c := dialRaw(t, srv.Addr())
		if _, err := c.Write(rawMessage(t, name, thrift.CALL, emptyArgs)); err != nil {
			t.Fatal(err)
		}
		expectClosed(t, c)
	}
	want := map[string]int64{OtherMethod: 4}
	waitFor(t, "the served counts", func() bool { return maps.Equal(served.Stats().Served, want) })
}

// BenchmarkCallCounterAdd is the cost a call pays to be counted, from
// parallel callers of a few methods.
func BenchmarkCallCounterAdd(b *testing.B) {
	var c CallCounter
	names := []string{"enqueueTaskReservationsWithOffer", "launchTaskAndWait", "tasksDone", "frontendMessages"}
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			c.Add(names[i%len(names)])
			i++
		}
	})
}
