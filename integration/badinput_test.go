package integration

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sparrowfleet/sparrow/bench/fleet"
	"github.com/sparrowfleet/sparrow/client"
	"github.com/sparrowfleet/sparrow/internal/refusal"
	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

func task(id string) *sparrowrpc.TTaskSpec {
	return &sparrowrpc.TTaskSpec{TaskId: id, Preference: &sparrowrpc.TPlacementPreference{}}
}

func ratio(d float64) *float64 { return &d }

// TestBadInputRefusedAndDaemonsKeepServing sends each kind of bad request
// to a live scheduler and node monitor over Thrift, checks that it is
// refused with a message naming the fault, and that a good job still runs
// afterwards.
func TestBadInputRefusedAndDaemonsKeepServing(t *testing.T) {
	led := newLedger()
	f := startFleet(t, fleet.Config{
		Schedulers: 1, NodeMonitors: 2, Slots: 2, Apps: []string{"app"},
		Run: echoTask(time.Millisecond), OnLaunch: led.launched,
	})
	sched := f.SchedulerAddrs()[0]
	pool := rpc.NewPool(rpc.Config{}, sparrowrpc.NewSchedulerServiceClient)
	defer pool.Close()
	submit := func(req *sparrowrpc.TSchedulingRequest) error {
		return pool.Call(context.Background(), sched, func(ctx context.Context, c *sparrowrpc.SchedulerServiceClient) error {
			return c.SubmitJob(ctx, req)
		})
	}

	// Each refusal carries its kind as a code (the client types it by
	// the code, not the message).
	cases := []struct {
		name string
		req  *sparrowrpc.TSchedulingRequest
		want string // "" means accepted
		kind refusal.Kind
	}{
		{"empty task list is a liveness check", &sparrowrpc.TSchedulingRequest{App: "app", Tasks: []*sparrowrpc.TTaskSpec{}}, "", 0},
		{"missing app", &sparrowrpc.TSchedulingRequest{Tasks: []*sparrowrpc.TTaskSpec{task("a")}}, "missing app", refusal.Invalid},
		{"no node monitor hosts the app", &sparrowrpc.TSchedulingRequest{App: "ghost", Tasks: []*sparrowrpc.TTaskSpec{task("a")}}, `no live node monitor hosts app "ghost"`, refusal.UnknownApp},
		{"no node monitor satisfies the constraint", &sparrowrpc.TSchedulingRequest{App: "app", Tasks: []*sparrowrpc.TTaskSpec{task("a")},
			Constraints: []*sparrowrpc.TConstraint{{Key: "zone", Op: "=", Values: []string{"nowhere"}}}}, "no live node monitor satisfies", refusal.Unplaceable},
		{"duplicate task ids", &sparrowrpc.TSchedulingRequest{App: "app", Tasks: []*sparrowrpc.TTaskSpec{task("a"), task("b"), task("a")}}, `duplicate task id "a"`, refusal.Invalid},
		{"NaN probe ratio", &sparrowrpc.TSchedulingRequest{App: "app", Tasks: []*sparrowrpc.TTaskSpec{task("a")}, ProbeRatio: ratio(math.NaN())}, "not a finite number", refusal.Invalid},
		{"probe ratio below 1", &sparrowrpc.TSchedulingRequest{App: "app", Tasks: []*sparrowrpc.TTaskSpec{task("a")}, ProbeRatio: ratio(0.5)}, "below 1", refusal.Invalid},
		{"absurd probe ratio", &sparrowrpc.TSchedulingRequest{App: "app", Tasks: []*sparrowrpc.TTaskSpec{task("a")}, ProbeRatio: ratio(1e9)}, "above the maximum", refusal.Invalid},
	}
	for _, tc := range cases {
		err := submit(tc.req)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: refused: %v", tc.name, err)
			}
			continue
		}
		var ire *sparrowrpc.IncompleteRequestException
		if !errors.As(err, &ire) {
			t.Errorf("%s: got %v, want IncompleteRequestException", tc.name, err)
			continue
		}
		if !strings.Contains(ire.Message, tc.want) {
			t.Errorf("%s: message %q does not name the fault (%q)", tc.name, ire.Message, tc.want)
		}
		if !ire.IsSetCode() || refusal.Kind(ire.GetCode()) != tc.kind || ire.IsSetRetryAfterMs() {
			t.Errorf("%s: code %v (set %v), retryAfterMs set %v; want code %v and no delay", tc.name, refusal.Kind(ire.GetCode()), ire.IsSetCode(), ire.IsSetRetryAfterMs(), tc.kind)
		}
	}
	if l, _ := led.counts(); l != 0 {
		t.Errorf("bad requests launched %d tasks; nothing may be partly scheduled", l)
	}

	// Node monitor: reservations for an app with no executor are refused,
	// and so is a flood that would pass the queue bound.
	nm := rpc.NewPool(rpc.Config{}, sparrowrpc.NewInternalServiceClient)
	defer nm.Close()
	self, _ := rpc.ParseHostPort(sched)
	for _, tc := range []struct {
		name string
		req  *sparrowrpc.TEnqueueTaskReservationsRequest
	}{
		{"unknown app", &sparrowrpc.TEnqueueTaskReservationsRequest{AppId: "ghost", RequestId: "r1", SchedulerAddress: self, NumTasks: 1, User: &sparrowrpc.TUserGroupInfo{}}},
		{"over the queue bound", &sparrowrpc.TEnqueueTaskReservationsRequest{AppId: "app", RequestId: "r2", SchedulerAddress: self, NumTasks: math.MaxInt32, User: &sparrowrpc.TUserGroupInfo{}}},
	} {
		var ok bool
		err := nm.Call(context.Background(), f.NodeMonitors[0].InternalAddr(), func(ctx context.Context, c *sparrowrpc.InternalServiceClient) error {
			var err error
			ok, err = c.EnqueueTaskReservations(ctx, tc.req)
			return err
		})
		if err != nil || ok {
			t.Errorf("enqueue %s: accepted=%v err=%v, want refused (false)", tc.name, ok, err)
		}
	}
	if q := f.NodeMonitors[0].State().Queued; q != 0 {
		t.Errorf("node monitor queued %d reservations from refused requests", q)
	}

	// Frames: a header claiming 1 GiB, and a small frame whose task list
	// claims 4M entries, are refused without allocating their claims.
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	expectClosed(t, sched, frame(nil, 1<<30))
	expectClosed(t, sched, frame(lyingSubmitJob(), 0))
	runtime.ReadMemStats(&after)
	// Without the guard the lying list alone preallocates 8 bytes per
	// claimed task: 32 MiB at the default frame limit.
	if grown := int64(after.TotalAlloc) - int64(before.TotalAlloc); grown > 16<<20 {
		t.Errorf("hostile frames made the process allocate %d MiB", grown>>20)
	}

	// Still serving: a good job runs to completion.
	fe, err := client.NewFrontend(context.Background(), client.FrontendConfig{
		App: "app", Schedulers: []string{sched}, Listen: "127.0.3.20:0", AdvertiseHost: "127.0.3.20",
		OnMessage: led.message, Timeout: 5 * time.Second, Log: testLogger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer fe.Close()
	if _, err := fe.Submit(context.Background(), newJob("good", 4)); err != nil {
		t.Fatalf("good job after bad input: %v", err)
	}
	waitFor(t, "the good job's messages", 10*time.Second, func() bool {
		_, m := led.counts()
		return m == 4
	})
}

// frame prefixes payload with a frame header; claim, if non-zero, replaces
// the real length.
func frame(payload []byte, claim uint32) []byte {
	if claim == 0 {
		claim = uint32(len(payload))
	}
	var b bytes.Buffer
	binary.Write(&b, binary.BigEndian, claim)
	b.Write(payload)
	return b.Bytes()
}

// lyingSubmitJob is a binary-protocol submitJob call whose task list header
// claims almost 4M tasks (8 bytes each to preallocate) but carries none.
func lyingSubmitJob() []byte {
	var b bytes.Buffer
	w := func(v any) { binary.Write(&b, binary.BigEndian, v) }
	w(uint32(0x80010001)) // strict binary, CALL
	w(int32(len("submitJob")))
	b.WriteString("submitJob")
	w(int32(1))                             // seqid
	w(byte(12))                             // arg 1: struct
	w(int16(1))                             //
	w(byte(15))                             // field 2 (tasks): list
	w(int16(2))                             //
	w(byte(12))                             // of structs
	w(int32(rpc.DefaultMaxFrameBytes - 1))  // claimed size: under thrift's own limit
	b.Write([]byte{0, 0, 0, 0, 0, 0, 0, 0}) // a few stray bytes
	return b.Bytes()
}

// expectClosed sends raw bytes to addr and expects the server to close the
// connection (or answer with an error) rather than wait for more.
func expectClosed(t *testing.T, addr string, raw []byte) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write(raw); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = io.ReadAll(conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Errorf("server kept the hostile connection open past 5s")
	}
}
