// Package fairshare turns what node monitors report about their users
// into the coordinator's fair-share guidance: the cluster-wide running
// count of every user (for Choosy at the node monitors), each user's
// constrained max-min fair (CMMF) target, and per-machine-type weights
// that make plain weighted fair queues reproduce the CMMF split.
//
// The coordinator cannot see users' placement constraints directly; it
// infers them from where their work is. A user is taken to be able to use
// a machine type when it has reservations queued or tasks running on some
// node of that type: schedulers probe only nodes that satisfy a job's
// constraints, and batch sampling spreads a job's probes over all of them,
// so a user with queued work usually has probes on every type it may use.
// A user's demand is its queued plus running work across the cluster.
//
// It is part of the deterministic core: it must not do I/O, start
// goroutines, read the wall clock or use global randomness. Callers inject
// time and randomness, so the daemons and the simulator run exactly this
// code.
package fairshare
