package rpc

// Fuzz targets for every service's Thrift decoding path, against hostile
// input. Each target feeds a byte stream to the generated
// processor of one service through Server.serveConn, the server's own
// per-connection loop, so the transport stack is exactly the server's:
// TSocket over the connection, buffered transport, framed transport,
// boundedProtocol, with the server's default Config. The connection is an
// in-memory net.Conn that reads the fuzz input and discards replies.
//
// Invariants checked for every input:
//   - no panic (a panic in Server.serveConn would kill the whole daemon);
//   - the connection's handler returns within fuzzDeadline (no hang or
//     runaway loop on a finite input);
//   - bytes allocated (runtime.MemStats.TotalAlloc) while serving the input
//     stay under fuzzAllocFixed + fuzzAllocPerByte*len(input): no
//     allocation driven by a size the peer claims rather than sends;
//   - bytes written back stay under fuzzWriteFixed +
//     fuzzWritePerByte*len(input): no reply amplification;
//   - the calls served are counted only under the service's method names
//     and OtherMethod: no name from the wire becomes a metric label.
//
// Run the seeds with go test; explore one target with, e.g.,
//
//	go test -run NONE -fuzz '^FuzzSchedulerService$' -fuzztime 60s ./rpc/
//
// See docs/FUZZING.md for the commands and results.

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

const (
	// fuzzDeadline bounds serving one input. Inputs are at most a few MiB
	// and are served in well under a millisecond per KiB; the slack is for
	// -race and a loaded machine. Exceeding it means a hang.
	fuzzDeadline = 10 * time.Second

	// fuzzAllocFixed covers what a connection costs whatever it is sent
	// (about 40 KiB: the 16 KiB read and write buffers of the buffered
	// transport, the framed transport's 4 KiB reader, TSocket) plus the
	// slack of TotalAlloc itself, which the runtime counts per span handed
	// to a P's cache, so that a reading can lag by up to a span per size
	// class. It is deliberately far below what one lying container header
	// could cost without boundedProtocol: a list claiming MaxMessageSize
	// (4 Mi) elements allocates 32 MiB of pointers or 64 MiB of strings
	// (TestFuzzAllocOracleCatchesUnboundedClaims shows the check fires).
	fuzzAllocFixed = 4 << 20

	// fuzzAllocPerByte is the allowance per input byte. Decoding is linear
	// in what is actually sent, with a large constant: generated code
	// allocates a struct for every element, and an empty struct is one wire
	// byte. The worst measured shape is a list of empty TFullTaskIds, about
	// 77 bytes per wire byte (a 64-byte size class and an 8-byte pointer
	// each); everything else measured, including many minimal calls on one
	// connection, is under 10 (TestDecodeAllocationPerWireByte lists the
	// shapes). The bound leaves room above that, and is far below the ~200
	// bytes per byte that 1-byte binary fields cost before boundedProtocol
	// read them exactly (TestDecodedBinaryIsNotOverAllocated).
	fuzzAllocPerByte = 128

	// A reply is at most a small constant plus the echoed method name
	// (twice, for an unknown method), and every call needs its own bytes.
	fuzzWriteFixed   = 64 << 10
	fuzzWritePerByte = 8
)

// fuzzConn is a net.Conn whose peer sent exactly the fuzz input and then
// closed its side; what the server writes is counted and dropped.
type fuzzConn struct {
	r       bytes.Reader
	written int
}

var fuzzAddr = &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 20503}

func (c *fuzzConn) Read(p []byte) (int, error)       { return c.r.Read(p) }
func (c *fuzzConn) Write(p []byte) (int, error)      { c.written += len(p); return len(p), nil }
func (c *fuzzConn) Close() error                     { return nil }
func (c *fuzzConn) LocalAddr() net.Addr              { return fuzzAddr }
func (c *fuzzConn) RemoteAddr() net.Addr             { return fuzzAddr }
func (c *fuzzConn) SetDeadline(time.Time) error      { return nil }
func (c *fuzzConn) SetReadDeadline(time.Time) error  { return nil }
func (c *fuzzConn) SetWriteDeadline(time.Time) error { return nil }

// newFuzzServer returns a Server, built by Listen with the default Config
// counting its calls, whose connections are answered by proc. It never accepts: fuzzServe
// hands it connections the way Serve does after Accept.
func newFuzzServer(f *testing.F, proc thrift.TProcessor) *Server {
	s, err := Listen("127.0.0.1:0", Config{Calls: new(Calls)}, zerolog.Nop())
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	s.mu.Lock()
	s.proc = proc
	s.mu.Unlock()
	return s
}

// fuzzServe serves stream on one connection of s, exactly as Serve does
// for an accepted connection, and checks the invariants listed at the top
// of this file.
func fuzzServe(t testing.TB, s *Server, stream []byte) {
	t.Helper()
	conn := &fuzzConn{}
	conn.r.Reset(stream)
	sc, err := s.admit(conn)
	if err != nil {
		t.Fatalf("admit: %v", err)
	}
	done := make(chan any, 1)
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Sprintf("%v\n%s", r, debug.Stack())
				return
			}
			done <- nil
		}()
		s.serveConn(sc)
	}()
	timer := time.NewTimer(fuzzDeadline)
	defer timer.Stop()
	select {
	case p := <-done:
		if p != nil {
			t.Fatalf("serving a %d-byte stream panicked: %v", len(stream), p)
		}
	case <-timer.C:
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		t.Fatalf("serving a %d-byte stream did not finish in %v:\n%s", len(stream), fuzzDeadline, buf)
	}
	runtime.ReadMemStats(&ms1)
	if d, limit := ms1.TotalAlloc-ms0.TotalAlloc, uint64(fuzzAllocFixed+fuzzAllocPerByte*len(stream)); d > limit {
		t.Fatalf("serving a %d-byte stream allocated %d bytes (%.0f per byte), over the %d-byte limit",
			len(stream), d, float64(d)/float64(max(1, len(stream))), limit)
	}
	if w, limit := conn.written, fuzzWriteFixed+fuzzWritePerByte*len(stream); w > limit {
		t.Fatalf("serving a %d-byte stream wrote back %d bytes, over the %d-byte limit", len(stream), w, limit)
	}
	known := s.proc.ProcessorMap()
	for name := range s.cfg.Calls.Stats().Served {
		if _, ok := known[name]; !ok && name != OtherMethod {
			t.Fatalf("serving a %d-byte stream counted calls under %q, not a method of the service", len(stream), name)
		}
	}
}

// frameStream is the stream a fuzz input stands for: the payload of one
// frame whose header the harness writes, or raw bytes (frame headers, if
// any, included).
func frameStream(framed bool, data []byte) []byte {
	if !framed {
		return data
	}
	return append(binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(data)), uint32(len(data))), data...)
}

// ---- Stub handlers: no-ops returning zero values. An argument equal to
// stubFail makes a method fail instead, so that the processors'
// exception-reply paths are fuzzed too.

const stubFail = "fail"

var errStub = errors.New("stub handler failure")

func stubErr(s string) error {
	if s == stubFail {
		return errStub
	}
	return nil
}

func taskIDErr(id *sparrowrpc.TFullTaskId) error {
	if id != nil {
		return stubErr(id.TaskId)
	}
	return nil
}

type stubScheduler struct{}

func (stubScheduler) RegisterFrontend(_ context.Context, app, _ string) (bool, error) {
	return false, stubErr(app)
}

func (stubScheduler) SubmitJob(_ context.Context, req *sparrowrpc.TSchedulingRequest) error {
	if req != nil && req.App == stubFail {
		return &sparrowrpc.IncompleteRequestException{Message: "stub"}
	}
	if req != nil && req.App == stubFail+"2" {
		return errStub
	}
	return nil
}

func (stubScheduler) SendFrontendMessage(_ context.Context, app string, _ *sparrowrpc.TFullTaskId, _ int32, _ []byte) error {
	return stubErr(app)
}
func (stubScheduler) TaskDone(_ context.Context, app string, _ *sparrowrpc.TFullTaskId, _ int32, _ []byte, _ *sparrowrpc.THostPort) error {
	return stubErr(app)
}

func (stubScheduler) TasksDone(_ context.Context, tasks []*sparrowrpc.TTaskDone, _ *sparrowrpc.THostPort) error {
	if len(tasks) > 0 && tasks[0] != nil {
		return stubErr(tasks[0].App)
	}
	return nil
}

type stubGetTask struct{}

func (stubGetTask) GetTask(_ context.Context, requestID string, _ *sparrowrpc.THostPort) ([]*sparrowrpc.TTaskLaunchSpec, error) {
	return nil, stubErr(requestID)
}

func (stubGetTask) FetchTask(_ context.Context, requestID string, _ *sparrowrpc.THostPort, _ int64) ([]*sparrowrpc.TTaskLaunchSpec, error) {
	return nil, stubErr(requestID)
}

func (stubGetTask) TasksFinished(_ context.Context, _ *sparrowrpc.THostPort, tasks []*sparrowrpc.TFullTaskId) error {
	if len(tasks) > 0 {
		return taskIDErr(tasks[0])
	}
	return nil
}

type stubNodeMonitor struct{}

func (stubNodeMonitor) RegisterBackend(_ context.Context, app, _ string) (bool, error) {
	return false, stubErr(app)
}

func (stubNodeMonitor) RegisterBackendWithFeatures(_ context.Context, app, _ string, _ int32) (bool, error) {
	return false, stubErr(app)
}

func (stubNodeMonitor) TasksFinished(_ context.Context, tasks []*sparrowrpc.TFullTaskId) error {
	if len(tasks) > 0 {
		return taskIDErr(tasks[0])
	}
	return nil
}

func (stubNodeMonitor) SendFrontendMessage(_ context.Context, app string, _ *sparrowrpc.TFullTaskId, _ int32, _ []byte) error {
	return stubErr(app)
}

func (stubNodeMonitor) TaskDone(_ context.Context, app string, _ *sparrowrpc.TFullTaskId, _ int32, _ []byte) error {
	return stubErr(app)
}

type stubInternal struct{}

func (stubInternal) EnqueueTaskReservations(_ context.Context, req *sparrowrpc.TEnqueueTaskReservationsRequest) (bool, error) {
	if req != nil {
		return false, stubErr(req.RequestId)
	}
	return false, nil
}

func (stubInternal) EnqueueTaskReservationsWithOffer(_ context.Context, req *sparrowrpc.TEnqueueTaskReservationsRequest, offer *sparrowrpc.TTaskLaunchSpec, _ []*sparrowrpc.TTaskLaunchSpec) (*sparrowrpc.TEnqueueOfferReply, error) {
	if req != nil {
		return nil, stubErr(req.RequestId)
	}
	return &sparrowrpc.TEnqueueOfferReply{}, nil
}

func (stubInternal) OfferOutcome(_ context.Context, requestID, taskID string) (*sparrowrpc.TOfferOutcome, error) {
	if requestID != "" {
		return nil, stubErr(requestID)
	}
	return &sparrowrpc.TOfferOutcome{}, nil
}

func (stubInternal) UpdateRemainingWork(_ context.Context, updates []*sparrowrpc.TRemainingWork) error {
	if len(updates) > 0 && updates[0] != nil {
		return stubErr(updates[0].RequestId)
	}
	return nil
}

func (stubInternal) CancelTaskReservations(_ context.Context, req *sparrowrpc.TCancelTaskReservationsRequest) error {
	if req != nil {
		return stubErr(req.RequestId)
	}
	return nil
}

type stubBackend struct{}

func (stubBackend) LaunchTask(_ context.Context, _ []byte, taskID *sparrowrpc.TFullTaskId, _ *sparrowrpc.TUserGroupInfo) error {
	return taskIDErr(taskID)
}

func (stubBackend) LaunchTaskAndWait(_ context.Context, _ []byte, taskID *sparrowrpc.TFullTaskId, _ *sparrowrpc.TUserGroupInfo, _ int32) (*sparrowrpc.TLaunchReply, error) {
	return &sparrowrpc.TLaunchReply{}, taskIDErr(taskID)
}

type stubFrontend struct{}

func (stubFrontend) FrontendMessage(_ context.Context, taskID *sparrowrpc.TFullTaskId, _ int32, _ []byte) error {
	return taskIDErr(taskID)
}

// ---- Seeds.

// encodeCall returns the framed bytes (header included) that the generated
// client of a service sends for call, through the same framed transport
// and protocol as a Pool's connections. No reply is ever read: the call
// returns an error after sending, which is ignored.
func encodeCall[C any](t testing.TB, newClient func(thrift.TClient) C, call func(ctx context.Context, c C) error) []byte {
	t.Helper()
	cfg := Config{}.withDefaults().thrift(0)
	out := thrift.NewTMemoryBuffer()
	oprot := newProtocol(newFramed(out, cfg), cfg)
	iprot := thrift.NewTBinaryProtocolConf(thrift.NewTMemoryBuffer(), cfg)
	_ = call(context.Background(), newClient(thrift.NewTStandardClient(iprot, oprot)))
	if out.Len() < 4 {
		t.Fatalf("client sent %d bytes", out.Len())
	}
	return bytes.Clone(out.Bytes())
}

// rawMessage builds one framed message by hand: a message header for
// method, then body written with the plain binary protocol. It makes
// seeds no client would send.
func rawMessage(t testing.TB, method string, typ thrift.TMessageType, body func(p thrift.TProtocol) error) []byte {
	t.Helper()
	ctx := context.Background()
	mem := thrift.NewTMemoryBuffer()
	p := thrift.NewTBinaryProtocolConf(mem, nil)
	if err := p.WriteMessageBegin(ctx, method, typ, 7); err != nil {
		t.Fatal(err)
	}
	if err := body(p); err != nil {
		t.Fatal(err)
	}
	return frameStream(true, mem.Bytes())
}

// listClaimBody writes a struct whose field id (a list of elemType) claims
// claim elements but carries none.
func listClaimBody(id int16, elemType thrift.TType, claim int) func(p thrift.TProtocol) error {
	return func(p thrift.TProtocol) error {
		ctx := context.Background()
		if err := p.WriteFieldBegin(ctx, "l", thrift.LIST, id); err != nil {
			return err
		}
		if err := p.WriteListBegin(ctx, elemType, claim); err != nil {
			return err
		}
		return p.WriteFieldStop(ctx)
	}
}

// addServiceSeeds adds, for each encoded call (a framed message with its
// header): the call raw and as a payload, two calls back to back, the call
// followed by every other one, truncated and oversized variants; then
// seeds common to every service.
func addServiceSeeds(f *testing.F, calls [][]byte) {
	for i, c := range calls {
		body := c[4:]
		f.Add(false, c)
		f.Add(true, body)
		f.Add(false, append(bytes.Clone(c), c...))
		f.Add(false, bytes.Clone(c[:len(c)/2]))                                                   // stream cut mid-frame
		f.Add(true, bytes.Clone(body[:len(body)-1]))                                              // message cut, frame consistent
		f.Add(false, append(binary.BigEndian.AppendUint32(nil, uint32(len(body)+100)), body...))  // frame claims more than sent
		f.Add(false, append(binary.BigEndian.AppendUint32(nil, DefaultMaxFrameBytes+1), body...)) // over the frame limit
		f.Add(false, append(binary.BigEndian.AppendUint32(nil, 0xffffffff), body...))
		if i > 0 {
			f.Add(false, append(bytes.Clone(calls[i-1]), c...))
		}
	}
	f.Add(false, []byte{})
	f.Add(true, []byte{})
	f.Add(false, []byte{0, 0, 0, 0}) // empty frame
	f.Add(false, []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	f.Add(true, []byte{0x80, 0x01, 0x00, 0x01, 0x7f, 0xff, 0xff, 0xff})             // method name claims 2 GiB
	f.Add(true, []byte{0x00, 0x00, 0x00, 0x03, 'a', 'b', 'c', 0x01, 0, 0, 0, 1, 0}) // old non-strict header
	f.Add(true, []byte{0x80, 0x02, 0x00, 0x01, 0, 0, 0, 0})                         // bad version
}

// addMethodSeeds adds hand-made messages for method: a huge list claim in
// field id (when the method has a list argument there), an unknown field
// to skip, nested deeply, and a reply-typed message.
func addMethodSeeds(f *testing.F, method string, listField int16, listElem thrift.TType) {
	if listField != 0 {
		for _, claim := range []int{1 << 30, 8 << 20, 1000} {
			f.Add(false, rawMessage(f, method, thrift.CALL, listClaimBody(listField, listElem, claim)))
		}
	}
	f.Add(false, rawMessage(f, method, thrift.CALL, func(p thrift.TProtocol) error {
		ctx := context.Background()
		// Unknown field 99, a list of lists nested past Skip's depth limit.
		p.WriteFieldBegin(ctx, "x", thrift.LIST, 99)
		for range 70 {
			p.WriteListBegin(ctx, thrift.LIST, 1)
		}
		return p.WriteFieldStop(ctx)
	}))
	f.Add(false, rawMessage(f, method, thrift.REPLY, func(p thrift.TProtocol) error {
		return p.WriteFieldStop(context.Background())
	}))
	f.Add(false, rawMessage(f, "no-such-"+method, thrift.CALL, func(p thrift.TProtocol) error {
		return p.WriteFieldStop(context.Background())
	}))
}

// Sample arguments, valid and not.
var (
	seedHP   = &sparrowrpc.THostPort{Host: "10.0.0.1", Port: 20503}
	seedUser = &sparrowrpc.TUserGroupInfo{User: "alice", Group: "eng", Priority: 3}
	seedID   = &sparrowrpc.TFullTaskId{TaskId: "t1", RequestId: "r1", AppId: "spark", SchedulerAddress: seedHP}
	seedIDs  = []*sparrowrpc.TFullTaskId{seedID, {TaskId: "t2", RequestId: "r1", AppId: "spark"}, {}}
)

func seedRequest() *sparrowrpc.TSchedulingRequest {
	ratio := 1.5
	reqID := "req-1"
	desc := "a job"
	return &sparrowrpc.TSchedulingRequest{
		App: "spark",
		Tasks: []*sparrowrpc.TTaskSpec{
			{TaskId: "t0", Preference: &sparrowrpc.TPlacementPreference{Nodes: []string{"h1", "h2"}, Racks: []string{"r1"}}, Message: []byte("m0")},
			{TaskId: "t1", Preference: &sparrowrpc.TPlacementPreference{}, Message: []byte{}},
			{TaskId: "t2", Preference: &sparrowrpc.TPlacementPreference{}, Message: bytes.Repeat([]byte{0xab}, 300)},
		},
		User:        seedUser,
		Description: &desc,
		ProbeRatio:  &ratio,
		Constraints: []*sparrowrpc.TConstraint{{Key: "gpu", Op: "exists"}, {Key: "rack", Op: "=", Values: []string{"r1", "r2"}}},
		RequestId:   &reqID,
	}
}

// ---- Targets, one per service.

// FuzzSchedulerService fuzzes SchedulerService decoding (registerFrontend,
// submitJob, sendFrontendMessage, taskDone). submitJob's request is the largest and
// most nested structure any peer sends.
func FuzzSchedulerService(f *testing.F) {
	enc := func(call func(ctx context.Context, c *sparrowrpc.SchedulerServiceClient) error) []byte {
		return encodeCall(f, sparrowrpc.NewSchedulerServiceClient, call)
	}
	addServiceSeeds(f, [][]byte{
		enc(func(ctx context.Context, c *sparrowrpc.SchedulerServiceClient) error {
			_, err := c.RegisterFrontend(ctx, "spark", "10.0.0.2:50201")
			return err
		}),
		enc(func(ctx context.Context, c *sparrowrpc.SchedulerServiceClient) error {
			return c.SubmitJob(ctx, seedRequest())
		}),
		enc(func(ctx context.Context, c *sparrowrpc.SchedulerServiceClient) error {
			return c.SubmitJob(ctx, &sparrowrpc.TSchedulingRequest{App: "spark", User: &sparrowrpc.TUserGroupInfo{}})
		}),
		enc(func(ctx context.Context, c *sparrowrpc.SchedulerServiceClient) error {
			r := seedRequest()
			r.App = stubFail
			return c.SubmitJob(ctx, r)
		}),
		enc(func(ctx context.Context, c *sparrowrpc.SchedulerServiceClient) error {
			return c.SendFrontendMessage(ctx, "spark", seedID, 1001, []byte("lost"))
		}),
		enc(func(ctx context.Context, c *sparrowrpc.SchedulerServiceClient) error {
			return c.SendFrontendMessage(ctx, stubFail, seedID, 0, nil)
		}),
		enc(func(ctx context.Context, c *sparrowrpc.SchedulerServiceClient) error {
			return c.TaskDone(ctx, "spark", seedID, 0, []byte("ok"), &sparrowrpc.THostPort{Host: "10.0.0.3", Port: 20502})
		}),
		enc(func(ctx context.Context, c *sparrowrpc.SchedulerServiceClient) error {
			return c.TaskDone(ctx, stubFail, seedID, 0, nil, nil)
		}),
	})
	addMethodSeeds(f, "registerFrontend", 0, 0)
	addMethodSeeds(f, "submitJob", 0, 0)
	addMethodSeeds(f, "sendFrontendMessage", 0, 0)
	addMethodSeeds(f, "taskDone", 0, 0)
	// submitJob's request (field 1) with a lying task list (its field 2).
	for _, claim := range []int{1 << 30, 8 << 20, 1000} {
		f.Add(false, rawMessage(f, "submitJob", thrift.CALL, func(p thrift.TProtocol) error {
			ctx := context.Background()
			p.WriteFieldBegin(ctx, "req", thrift.STRUCT, 1)
			p.WriteFieldBegin(ctx, "app", thrift.STRING, 1)
			p.WriteString(ctx, "spark")
			return listClaimBody(2, thrift.STRUCT, claim)(p)
		}))
	}
	s := newFuzzServer(f, sparrowrpc.NewSchedulerServiceProcessor(stubScheduler{}))
	f.Fuzz(func(t *testing.T, framed bool, data []byte) {
		fuzzServe(t, s, frameStream(framed, data))
	})
}

// FuzzGetTaskService fuzzes GetTaskService decoding (getTask, fetchTask,
// oneway tasksFinished).
func FuzzGetTaskService(f *testing.F) {
	enc := func(call func(ctx context.Context, c *sparrowrpc.GetTaskServiceClient) error) []byte {
		return encodeCall(f, sparrowrpc.NewGetTaskServiceClient, call)
	}
	addServiceSeeds(f, [][]byte{
		enc(func(ctx context.Context, c *sparrowrpc.GetTaskServiceClient) error {
			_, err := c.GetTask(ctx, "req-1", seedHP)
			return err
		}),
		enc(func(ctx context.Context, c *sparrowrpc.GetTaskServiceClient) error {
			_, err := c.GetTask(ctx, stubFail, seedHP)
			return err
		}),
		enc(func(ctx context.Context, c *sparrowrpc.GetTaskServiceClient) error {
			return c.TasksFinished(ctx, seedHP, seedIDs)
		}),
	})
	addMethodSeeds(f, "getTask", 0, 0)
	addMethodSeeds(f, "tasksFinished", 2, thrift.STRUCT)
	addMethodSeeds(f, "fetchTask", 0, 0)
	s := newFuzzServer(f, sparrowrpc.NewGetTaskServiceProcessor(stubGetTask{}))
	f.Fuzz(func(t *testing.T, framed bool, data []byte) {
		fuzzServe(t, s, frameStream(framed, data))
	})
}

// FuzzNodeMonitorService fuzzes NodeMonitorService decoding
// (registerBackend, tasksFinished, sendFrontendMessage, taskDone).
func FuzzNodeMonitorService(f *testing.F) {
	enc := func(call func(ctx context.Context, c *sparrowrpc.NodeMonitorServiceClient) error) []byte {
		return encodeCall(f, sparrowrpc.NewNodeMonitorServiceClient, call)
	}
	addServiceSeeds(f, [][]byte{
		enc(func(ctx context.Context, c *sparrowrpc.NodeMonitorServiceClient) error {
			_, err := c.RegisterBackend(ctx, "spark", "127.0.0.1:20101")
			return err
		}),
		enc(func(ctx context.Context, c *sparrowrpc.NodeMonitorServiceClient) error {
			return c.TasksFinished(ctx, seedIDs)
		}),
		enc(func(ctx context.Context, c *sparrowrpc.NodeMonitorServiceClient) error {
			return c.SendFrontendMessage(ctx, "spark", seedID, 0, []byte("progress 50%"))
		}),
		enc(func(ctx context.Context, c *sparrowrpc.NodeMonitorServiceClient) error {
			return c.SendFrontendMessage(ctx, stubFail, seedID, 0, nil)
		}),
		enc(func(ctx context.Context, c *sparrowrpc.NodeMonitorServiceClient) error {
			return c.TaskDone(ctx, "spark", seedID, 0, []byte("done"))
		}),
	})
	addMethodSeeds(f, "registerBackend", 0, 0)
	addMethodSeeds(f, "tasksFinished", 1, thrift.STRUCT)
	addMethodSeeds(f, "sendFrontendMessage", 0, 0)
	addMethodSeeds(f, "taskDone", 0, 0)
	s := newFuzzServer(f, sparrowrpc.NewNodeMonitorServiceProcessor(stubNodeMonitor{}))
	f.Fuzz(func(t *testing.T, framed bool, data []byte) {
		fuzzServe(t, s, frameStream(framed, data))
	})
}

// FuzzInternalService fuzzes InternalService decoding
// (enqueueTaskReservations, its WithOffer extension,
// cancelTaskReservations).
func FuzzInternalService(f *testing.F) {
	enc := func(call func(ctx context.Context, c *sparrowrpc.InternalServiceClient) error) []byte {
		return encodeCall(f, sparrowrpc.NewInternalServiceClient, call)
	}
	addServiceSeeds(f, [][]byte{
		enc(func(ctx context.Context, c *sparrowrpc.InternalServiceClient) error {
			_, err := c.EnqueueTaskReservations(ctx, &sparrowrpc.TEnqueueTaskReservationsRequest{
				AppId: "spark", User: seedUser, RequestId: "req-1", SchedulerAddress: seedHP, NumTasks: 3,
			})
			return err
		}),
		enc(func(ctx context.Context, c *sparrowrpc.InternalServiceClient) error {
			_, err := c.EnqueueTaskReservations(ctx, &sparrowrpc.TEnqueueTaskReservationsRequest{
				RequestId: stubFail, User: &sparrowrpc.TUserGroupInfo{}, SchedulerAddress: &sparrowrpc.THostPort{}, NumTasks: -1,
			})
			return err
		}),
		enc(func(ctx context.Context, c *sparrowrpc.InternalServiceClient) error {
			_, err := c.EnqueueTaskReservationsWithOffer(ctx, &sparrowrpc.TEnqueueTaskReservationsRequest{
				AppId: "spark", User: seedUser, RequestId: "req-1", SchedulerAddress: seedHP, NumTasks: 2,
			}, &sparrowrpc.TTaskLaunchSpec{TaskId: "0", Message: []byte("run")}, []*sparrowrpc.TTaskLaunchSpec{{TaskId: "1", Message: []byte("run")}})
			return err
		}),
		enc(func(ctx context.Context, c *sparrowrpc.InternalServiceClient) error {
			return c.CancelTaskReservations(ctx, &sparrowrpc.TCancelTaskReservationsRequest{RequestId: "req-1"})
		}),
		enc(func(ctx context.Context, c *sparrowrpc.InternalServiceClient) error {
			_, err := c.OfferOutcome(ctx, "req-1", "0")
			return err
		}),
		enc(func(ctx context.Context, c *sparrowrpc.InternalServiceClient) error {
			return c.UpdateRemainingWork(ctx, []*sparrowrpc.TRemainingWork{{RequestId: "req-1", RemainingWork: 12.5}, {RequestId: "req-2"}})
		}),
	})
	addMethodSeeds(f, "enqueueTaskReservations", 0, 0)
	addMethodSeeds(f, "enqueueTaskReservationsWithOffer", 0, 0)
	addMethodSeeds(f, "cancelTaskReservations", 0, 0)
	addMethodSeeds(f, "offerOutcome", 0, 0)
	addMethodSeeds(f, "updateRemainingWork", 1, thrift.STRUCT)
	s := newFuzzServer(f, sparrowrpc.NewInternalServiceProcessor(stubInternal{}))
	f.Fuzz(func(t *testing.T, framed bool, data []byte) {
		fuzzServe(t, s, frameStream(framed, data))
	})
}

// FuzzBackendService fuzzes BackendService decoding (launchTask).
func FuzzBackendService(f *testing.F) {
	enc := func(call func(ctx context.Context, c *sparrowrpc.BackendServiceClient) error) []byte {
		return encodeCall(f, sparrowrpc.NewBackendServiceClient, call)
	}
	addServiceSeeds(f, [][]byte{
		enc(func(ctx context.Context, c *sparrowrpc.BackendServiceClient) error {
			return c.LaunchTask(ctx, []byte("run me"), seedID, seedUser)
		}),
		enc(func(ctx context.Context, c *sparrowrpc.BackendServiceClient) error {
			return c.LaunchTask(ctx, nil, &sparrowrpc.TFullTaskId{TaskId: stubFail}, &sparrowrpc.TUserGroupInfo{})
		}),
	})
	addMethodSeeds(f, "launchTask", 0, 0)
	s := newFuzzServer(f, sparrowrpc.NewBackendServiceProcessor(stubBackend{}))
	f.Fuzz(func(t *testing.T, framed bool, data []byte) {
		fuzzServe(t, s, frameStream(framed, data))
	})
}

// FuzzFrontendService fuzzes FrontendService decoding (frontendMessage).
func FuzzFrontendService(f *testing.F) {
	enc := func(call func(ctx context.Context, c *sparrowrpc.FrontendServiceClient) error) []byte {
		return encodeCall(f, sparrowrpc.NewFrontendServiceClient, call)
	}
	addServiceSeeds(f, [][]byte{
		enc(func(ctx context.Context, c *sparrowrpc.FrontendServiceClient) error {
			return c.FrontendMessage(ctx, seedID, 1002, []byte("executor gone"))
		}),
		enc(func(ctx context.Context, c *sparrowrpc.FrontendServiceClient) error {
			return c.FrontendMessage(ctx, &sparrowrpc.TFullTaskId{TaskId: stubFail}, 0, nil)
		}),
	})
	addMethodSeeds(f, "frontendMessage", 0, 0)
	s := newFuzzServer(f, sparrowrpc.NewFrontendServiceProcessor(stubFrontend{}))
	f.Fuzz(func(t *testing.T, framed bool, data []byte) {
		fuzzServe(t, s, frameStream(framed, data))
	})
}

// ---- Checks on the harness itself.

// TestFuzzHarnessServesCalls makes sure the harness really reaches the
// handlers: a stream of valid calls gets one reply per two-way call.
func TestFuzzHarnessServesCalls(t *testing.T) {
	var n countingScheduler
	s, err := Listen("127.0.0.1:0", Config{}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.proc = sparrowrpc.NewSchedulerServiceProcessor(&n)
	call := encodeCall(t, sparrowrpc.NewSchedulerServiceClient, func(ctx context.Context, c *sparrowrpc.SchedulerServiceClient) error {
		return c.SubmitJob(ctx, seedRequest())
	})
	fuzzServe(t, s, bytes.Repeat(call, 3))
	if n.submits != 3 {
		t.Fatalf("handler saw %d submitJob calls, want 3", n.submits)
	}
}

type countingScheduler struct {
	stubScheduler
	submits int
}

func (c *countingScheduler) SubmitJob(ctx context.Context, req *sparrowrpc.TSchedulingRequest) error {
	if req == nil || len(req.Tasks) != 3 || req.Constraints[1].Values[1] != "r2" {
		return fmt.Errorf("bad decode: %+v", req)
	}
	c.submits++
	return nil
}

// allocsDecoding returns the bytes allocated to serve stream with proc on
// a fresh connection whose protocol newProt builds (the server's own, or a
// plain binary protocol).
func allocsDecoding(t *testing.T, proc thrift.TProcessor, stream []byte, newProt func(*thrift.TFramedTransport, *thrift.TConfiguration) thrift.TProtocol) uint64 {
	t.Helper()
	cfg := Config{}.withDefaults().thrift(time.Second)
	conn := &fuzzConn{}
	conn.r.Reset(stream)
	var ms0, ms1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms0)
	framed := newFramed(thrift.NewTSocketFromConnConf(conn, cfg), cfg)
	prot := newProt(framed, cfg)
	for {
		if ok, _ := proc.Process(context.Background(), prot, prot); !ok {
			break
		}
	}
	runtime.ReadMemStats(&ms1)
	return ms1.TotalAlloc - ms0.TotalAlloc
}

// TestFuzzAllocOracleCatchesUnboundedClaims shows the allocation bound of
// fuzzServe has teeth: the same lying list header that boundedProtocol
// refuses costs more than the bound through a plain binary protocol.
func TestFuzzAllocOracleCatchesUnboundedClaims(t *testing.T) {
	stream := rawMessage(t, "tasksFinished", thrift.CALL, listClaimBody(1, thrift.STRUCT, 4<<20-1))
	limit := uint64(fuzzAllocFixed + fuzzAllocPerByte*len(stream))
	proc := sparrowrpc.NewNodeMonitorServiceProcessor(stubNodeMonitor{})
	plain := allocsDecoding(t, proc, stream, func(fr *thrift.TFramedTransport, cfg *thrift.TConfiguration) thrift.TProtocol {
		return thrift.NewTBinaryProtocolConf(fr, cfg)
	})
	if plain <= limit {
		t.Fatalf("a %d-byte lying claim cost %d bytes unbounded, under the fuzz limit %d: the oracle would miss it", len(stream), plain, limit)
	}
	bounded := allocsDecoding(t, proc, stream, newProtocol)
	if bounded > limit {
		t.Fatalf("a %d-byte lying claim cost %d bytes through boundedProtocol, over the fuzz limit %d", len(stream), bounded, limit)
	}
	t.Logf("%d-byte stream: %d bytes allocated unbounded, %d bounded, limit %d", len(stream), plain, bounded, limit)
}

// Message bodies of n repetitions of the costliest shapes per wire byte.

// emptyStructList: a list of n empty structs in field id.
func emptyStructList(id int16, n int) func(p thrift.TProtocol) error {
	return func(p thrift.TProtocol) error {
		ctx := context.Background()
		p.WriteFieldBegin(ctx, "l", thrift.LIST, id)
		p.WriteListBegin(ctx, thrift.STRUCT, n)
		for range n {
			p.WriteFieldStop(ctx)
		}
		return p.WriteFieldStop(ctx)
	}
}

// repeatedBinary: binary field id sent n times with size bytes each
// (generated code keeps the last).
func repeatedBinary(id int16, n, size int) func(p thrift.TProtocol) error {
	return func(p thrift.TProtocol) error {
		ctx := context.Background()
		for range n {
			p.WriteFieldBegin(ctx, "b", thrift.STRING, id)
			p.WriteBinary(ctx, make([]byte, size))
		}
		return p.WriteFieldStop(ctx)
	}
}

// tinyMessageTasks: submitJob with n tasks whose only field is a
// size-byte message.
func tinyMessageTasks(n, size int) func(p thrift.TProtocol) error {
	return func(p thrift.TProtocol) error {
		ctx := context.Background()
		p.WriteFieldBegin(ctx, "req", thrift.STRUCT, 1)
		p.WriteFieldBegin(ctx, "tasks", thrift.LIST, 2)
		p.WriteListBegin(ctx, thrift.STRUCT, n)
		for range n {
			p.WriteFieldBegin(ctx, "message", thrift.STRING, 3)
			p.WriteBinary(ctx, make([]byte, size))
			p.WriteFieldStop(ctx)
		}
		p.WriteFieldStop(ctx)
		return p.WriteFieldStop(ctx)
	}
}

// TestDecodeAllocationPerWireByte measures the decoding shapes that cost
// the most memory per wire byte, which fuzzAllocPerByte must cover.
func TestDecodeAllocationPerWireByte(t *testing.T) {
	const n = 20000
	nm := sparrowrpc.NewNodeMonitorServiceProcessor(stubNodeMonitor{})
	sched := sparrowrpc.NewSchedulerServiceProcessor(stubScheduler{})
	gt := sparrowrpc.NewGetTaskServiceProcessor(stubGetTask{})
	noArgs := func(p thrift.TProtocol) error { return p.WriteFieldStop(context.Background()) }
	calls := func(method string, n int) []byte {
		return bytes.Repeat(rawMessage(t, method, thrift.CALL, noArgs), n)
	}
	shapes := []struct {
		name   string
		proc   thrift.TProcessor
		stream []byte
	}{
		{"getTask calls without arguments", gt, calls("getTask", n/10)},
		{"oneway tasksFinished calls without arguments", gt, calls("tasksFinished", n/10)},
		{"registerFrontend calls without arguments", sched, calls("registerFrontend", n/10)},
		{"submitJob calls without arguments", sched, calls("submitJob", n/10)},
		{"tasksFinished, empty task ids", nm, rawMessage(t, "tasksFinished", thrift.CALL, emptyStructList(1, n))},
		{"sendFrontendMessage, repeated empty message", nm, rawMessage(t, "sendFrontendMessage", thrift.CALL, repeatedBinary(4, n, 0))},
		{"sendFrontendMessage, repeated 1-byte message", nm, rawMessage(t, "sendFrontendMessage", thrift.CALL, repeatedBinary(4, n, 1))},
		{"sendFrontendMessage, repeated 64-byte app", nm, rawMessage(t, "sendFrontendMessage", thrift.CALL, repeatedBinary(1, n, 64))},
		{"submitJob, tasks with 1-byte messages", sched, rawMessage(t, "submitJob", thrift.CALL, tinyMessageTasks(n, 1))},
		{"submitJob, tasks with 100-byte messages", sched, rawMessage(t, "submitJob", thrift.CALL, tinyMessageTasks(n/10, 100))},
	}
	for _, sh := range shapes {
		d := allocsDecoding(t, sh.proc, sh.stream, newProtocol)
		perByte := float64(d) / float64(len(sh.stream))
		t.Logf("%s: %d wire bytes, %d allocated, %.0f per wire byte", sh.name, len(sh.stream), d, perByte)
		if perByte > fuzzAllocPerByte {
			t.Errorf("%s: %.0f bytes allocated per wire byte, over fuzzAllocPerByte %d", sh.name, perByte, fuzzAllocPerByte)
		}
	}
}

// keepScheduler keeps the last submitted request, as the real scheduler
// keeps a job's task specs until its tasks launch.
type keepScheduler struct {
	stubScheduler
	req *sparrowrpc.TSchedulingRequest
}

func (k *keepScheduler) SubmitJob(_ context.Context, req *sparrowrpc.TSchedulingRequest) error {
	k.req = req
	return nil
}

// TestDecodedBinaryIsNotOverAllocated is a regression test for memory
// amplification found while tuning the fuzz allocation bound. thrift
// v0.17's TBinaryProtocol reads every string and binary through
// safeReadBytes, which copies into a fresh bytes.Buffer: the buffer
// reserves 512 bytes before its first read and, unless the value fills
// it, doubles before the read that reports the end. A 1-byte task message
// was thus allocated 1.5 KiB and kept in a 1 KiB array, so one 4 MiB
// submitJob frame of 466k tasks with 1-byte messages allocated ~755 MiB and
// left ~483 MiB live in the handler's request. boundedProtocol now reads
// binary and string fields into exact allocations (readExact); this test
// fails if that is lost, for example by an override being dropped or
// bypassed.
func TestDecodedBinaryIsNotOverAllocated(t *testing.T) {
	const n = 20000
	stream := rawMessage(t, "submitJob", thrift.CALL, tinyMessageTasks(n, 1))
	k := &keepScheduler{}
	d := allocsDecoding(t, sparrowrpc.NewSchedulerServiceProcessor(k), stream, newProtocol)
	if k.req == nil || len(k.req.Tasks) != n {
		t.Fatalf("submitJob was not decoded")
	}
	if c := cap(k.req.Tasks[0].Message); c > 8 {
		t.Errorf("a 1-byte task message is kept in a %d-byte array", c)
	}
	// With exact-size reads this shape costs ~10 bytes per wire byte (a
	// 48-byte TTaskSpec, its pointer and an 8-byte message per 9 bytes).
	if perByte := float64(d) / float64(len(stream)); perByte > 32 {
		t.Errorf("decoding %d tasks with 1-byte messages allocated %d bytes, %.0f per wire byte (want <= 32)", n, d, perByte)
	}
}
