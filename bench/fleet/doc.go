// Package fleet starts a whole sparrowfleet in one process on loopback —
// schedulers, node monitors and executors, over real Thrift and real gossip,
// each member on its own 127.0.x.y address — and drives synthetic
// workloads through it. `sparrow local`, `sparrow bench` and the
// integration tests are built on it.
//
// It is an experiment harness: the daemons and the client library must not
// import it.
package fleet
