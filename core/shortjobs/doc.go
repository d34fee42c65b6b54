// Package shortjobs is the long-task-aware scheduling policy: it keeps
// short jobs fast behind long ones without a central scheduler, after the
// mechanisms of Hawk (Delgado et al., USENIX ATC 2015) and Eagle (SoCC
// 2016), made decentralized.
//
// The parts, each usable on its own by the daemons and the simulator:
//
//   - [Config.Classify]: a job is long when its estimated mean task
//     duration is at least the cutoff. The estimate is the job's own (a
//     client may state it) or, absent, [History]'s per-application mean
//     of observed task durations; a job with neither is long, so that an
//     unknown job can never block the short-only nodes.
//   - [ShortOnly]: a share of the nodes runs short jobs only, chosen by a
//     hash of the node's name so that every scheduler agrees without
//     talking to the others.
//   - [LongWork]: a node monitor counts the slots fetching or running
//     long tasks and advertises one byte (zero: none) through gossip;
//     [LongWork.Add] reports the changes worth gossiping.
//   - [Steer]: a scheduler's choice of candidate nodes for a job: long
//     jobs avoid the short-only nodes; short jobs go to nodes advertising
//     no long work when there is at least one per task, else anywhere.
//     Placement then samples among the candidates as usual
//     (core/placement).
//   - [SRPT]: a node monitor's queue discipline ordering reservations by
//     priority, then by their job's estimated remaining work, with sticky
//     reservations (a freed slot asks the same job for another task
//     first) ahead of the rest, and a bound on how many times any queued
//     reservation may be passed over by a younger one.
//
// Everything is deterministic: no I/O, goroutines, clocks or global
// randomness. No type is safe for concurrent use; the daemon holding one
// serialises access under its own lock.
package shortjobs
