// Package locality runs the live locality experiment: data locality
// under skew on an in-process fleet (bench/fleet: real Thrift and gossip
// on loopback, each member on its own 127.0.x.y address).
//
// Node monitors sit in racks (node attribute "rack"). A catalogue of input
// blocks has 3 replicas each, placed as HDFS does (one node, two on one
// other rack). Jobs arrive as a Poisson process; each task reads one block
// drawn by a Zipf popularity and prefers the block's replica nodes. The
// executors implement a scaled-down read model: a task runs its CPU time
// plus nothing on a replica's node, the block over the rack bandwidth in a
// replica's rack, over the core bandwidth elsewhere; every launch is
// classified node-local, rack-local or elsewhere.
//
// The same trace runs in three modes, each on a fresh fleet: strict
// preferences (delayThreshold 0, as an original Sparrow client sends),
// the scheduler's relaxation after a delay (delayThreshold > 0), and the
// same plus a coordinator's locality prices. Beside them, reference.go
// schedules the trace offline with centralized Quincy (core/quincy's
// policy Q, solved by core/flow) in a discrete-event simulation of the
// same cluster and read model.
//
// workload.go, analysis.go and reference.go are pure and deterministic
// (randomness from an injected seed, no clock); run.go and modes.go drive
// the fleet; report.go makes the table, the JSON and the plots. It is an
// experiment harness: the daemons and the client library must not import
// it.
package locality
