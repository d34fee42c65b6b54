// Package pingpong measures the reference the fleet's CPU cost per task is
// compared with: one Thrift call between two OS processes on loopback,
// framed binary, as CPU time per call on each side.
//
// The call is GetTaskService.getTask answered with an empty list, the
// smallest call a node monitor makes on a scheduler. Two stacks carry it:
//
//   - bare: the thrift library alone (TSimpleServer, TSocket, TFramedTransport,
//     TBinaryProtocol), the floor any Thrift service pays per call;
//   - rpc: the fleet's own internal/rpc server and client pool, with the
//     limits every daemon runs with (frame deadline, connection caps,
//     decode budget).
//
// Each runs flat out (one call after another on one connection) and paced
// at fixed rates, because the fleet's calls do not come back to back: at
// 800 tasks/s a node monitor sees a call every few milliseconds, and each
// finds its process parked. The difference between the paced and flat-out
// figures is the cost of waking up for a call.
//
// Run drives the client in this process and the server as a child process
// of the same binary (Serve, behind a hidden flag of the CLI), and reads
// the server's CPU time from /proc. Linux only, as bench/procs.
package pingpong
