package integration

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

const (
	// bigFrames is how many maximum-size frames arrive at once.
	bigFrames = 100
	// bigFramesPeakLimit bounds the scheduler's peak resident memory while
	// they are served: the default decode budget (512 MiB) plus the
	// process's baseline and the garbage collector's headroom. Without the
	// budget, 100 frames of 16 MB decoded at once take over 3 GB.
	bigFramesPeakLimit = 1536 << 20
)

// TestConcurrentMaxFramesMemory sends 100 submitJob frames of the default
// maximum size (16,384,000 bytes, the original Java transport's limit) at
// once to a `sparrow scheduler` process with default flags, and reads the
// process's peak resident memory (VmHWM). Every frame is decoded and
// answered: the app has no node monitor, so each job is refused after
// decoding with IncompleteRequestException, or, if decode memory stayed
// taken for the budget wait, with a "server busy" error. Two shapes: 1 KiB
// task messages (what a large real job looks like) and empty messages
// (the most tasks a frame can carry). The figures go in docs/SECURITY.md:
//
//	go test -count=1 -run TestConcurrentMaxFramesMemory -v ./integration/
func TestConcurrentMaxFramesMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the daemon and sends 1.6 GB over loopback")
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc to read peak memory")
	}
	bin := buildSparrow(t, false) // the race detector would multiply memory
	for _, shape := range []struct {
		name    string
		message int
	}{
		{"1 KiB task messages", 1024},
		{"empty task messages", 0},
	} {
		t.Run(shape.name, func(t *testing.T) {
			sched := startProc(t, bin, procSpec{role: "scheduler", host: "127.0.0.51", secondFlag: "--gettask-listen",
				extra: []string{"--gossip-profile", "local", "--log-level", "warn"}})
			frame, tasks := maxSubmitJobFrame(t, shape.message)
			base := procMemory(t, sched.cmd.Process.Pid, "VmRSS")
			start := time.Now()
			var wg sync.WaitGroup
			results := make(chan error, bigFrames)
			for range bigFrames {
				wg.Add(1)
				go func() {
					defer wg.Done()
					results <- sendFrame(sched.service, frame)
				}()
			}
			wg.Wait()
			close(results)
			refused, busy := 0, 0
			for err := range results {
				var ire *sparrowrpc.IncompleteRequestException
				switch {
				case errors.As(err, &ire) && strings.Contains(ire.Message, "no live node monitor"):
					refused++
				case err != nil && strings.Contains(err.Error(), "server busy"):
					busy++
				default:
					t.Errorf("frame answered with %v; want the job refused after decoding, or server busy", err)
				}
			}
			peak := procMemory(t, sched.cmd.Process.Pid, "VmHWM")
			t.Logf("%d frames of %d bytes (%d tasks each) at once: %d decoded and answered, %d answered busy, in %v; scheduler RSS %d MiB before, peak %d MiB",
				bigFrames, len(frame)-4, tasks, refused, busy, time.Since(start).Round(time.Millisecond), base>>20, peak>>20)
			if refused == 0 {
				t.Errorf("no frame was decoded")
			}
			if peak > bigFramesPeakLimit {
				t.Errorf("peak RSS %d MiB, over the %d MiB bound", peak>>20, bigFramesPeakLimit>>20)
			}
			// The daemon keeps serving.
			if err := sendFrame(sched.service, frame); err == nil || (!strings.Contains(err.Error(), "no live node monitor")) {
				t.Errorf("a frame after the burst: %v, want it decoded and refused by name", err)
			}
			sched.stop(t)
		})
	}
}

// maxSubmitJobFrame builds a framed submitJob call as close to
// rpc.DefaultMaxFrameBytes as whole tasks allow, with message bytes per
// task.
func maxSubmitJobFrame(t *testing.T, message int) ([]byte, int) {
	t.Helper()
	body := func(n int) []byte {
		req := &sparrowrpc.TSchedulingRequest{App: "bulk", User: &sparrowrpc.TUserGroupInfo{User: "u", Group: "g"}}
		msg := make([]byte, message)
		for i := range n {
			req.Tasks = append(req.Tasks, &sparrowrpc.TTaskSpec{TaskId: fmt.Sprintf("%08d", i), Message: msg})
		}
		mem := thrift.NewTMemoryBuffer()
		p := thrift.NewTBinaryProtocolConf(mem, nil)
		ctx := context.Background()
		args := sparrowrpc.SchedulerServiceSubmitJobArgs{Req: req}
		if err := p.WriteMessageBegin(ctx, "submitJob", thrift.CALL, 1); err != nil {
			t.Fatal(err)
		}
		if err := args.Write(ctx, p); err != nil {
			t.Fatal(err)
		}
		p.WriteMessageEnd(ctx)
		return mem.Bytes()
	}
	// Every task encodes to the same size (fixed-width ids): size one,
	// then fill the frame.
	one, two := len(body(1)), len(body(2))
	n := (rpc.DefaultMaxFrameBytes-one)/(two-one) + 1
	b := body(n)
	if len(b) > rpc.DefaultMaxFrameBytes {
		t.Fatalf("frame of %d tasks is %d bytes, over %d", n, len(b), rpc.DefaultMaxFrameBytes)
	}
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...), n
}

// sendFrame sends a prebuilt framed submitJob on a new connection and
// decodes the reply.
func sendFrame(addr string, frame []byte) error {
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(2 * time.Minute))
	if _, err := conn.Write(frame); err != nil {
		return fmt.Errorf("send: %w", err)
	}
	cfg := &thrift.TConfiguration{}
	trans := thrift.NewTFramedTransportConf(thrift.NewTSocketFromConnConf(conn, cfg), cfg)
	p := thrift.NewTBinaryProtocolConf(trans, cfg)
	client := thrift.NewTStandardClient(p, p)
	var res sparrowrpc.SchedulerServiceSubmitJobResult
	// Recv reads the reply to the call written above (seqid 1).
	if err := client.Recv(context.Background(), p, 1, "submitJob", &res); err != nil {
		return err
	}
	if res.E != nil {
		return res.E
	}
	return nil
}

// procMemory reads a "Vm..." line of /proc/pid/status, in bytes.
func procMemory(t *testing.T, pid int, field string) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, err := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}
