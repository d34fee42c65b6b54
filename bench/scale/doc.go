// Package scale is the fleet-size benchmark (`sparrow bench scale`): for
// each fleet size it starts N node monitors and M schedulers in this
// process (bench/fleet: real memberlist gossip, each member on its own
// loopback address, and real Thrift, with one sleep executor per node
// monitor), and measures what grows with N: how long the fleet takes to
// form, how long a crashed node monitor stays a placement candidate, the
// gossip traffic and CPU time of an idle member, the scheduling delay and
// CPU per task at a fixed task rate, and how long an operator waits for
// `sparrow status` and the dashboard.
//
// It is an experiment harness; the daemons must not import it.
package scale
