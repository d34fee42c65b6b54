// Package shortjobs is the long-task-aware scheduling policy: it keeps
// short jobs fast behind long ones without a central scheduler, after the
// mechanisms of Hawk (Delgado et al., USENIX ATC 2015) and Eagle (SoCC
// 2016), made decentralized.
//
// The parts, each usable on its own by the daemons and the simulator:
//
//   - [Config.Judge], [Config.Classify]: a job is long when its estimated
//     mean task duration is at least the cutoff. The estimate is the
//     job's own (a client may state it); without one, under
//     [UnestimatedByTasks] (the default) the job is short with half the
//     cutoff per task, and under [UnestimatedByHistory] the estimate is
//     [History]'s per-application mean of observed task durations, a job
//     with neither being long.
//   - [Monitor.Overran]: under Config.Overrun, a short job's task that has
//     run for the cutoff counts as long work on its node until it ends.
//   - [Partition]: a share of the nodes runs short jobs only (at least
//     one when the share is above zero), those of the smallest hash of
//     their names (NodeHash), so that every scheduler agrees without
//     talking to the others.
//   - [LongWork]: a node monitor counts the slots fetching or running
//     long tasks and advertises one byte (zero: none) through gossip;
//     [LongWork.Add] reports the changes worth gossiping.
//   - [LongLevel], [Monitor.Advert2], [AdvertLevel]: under
//     Config.LongSteer the advert has a second byte, a coarse level of the
//     long work the node runs and queues; [SteerLong] places a long job's
//     reservations among the general nodes of the lowest levels.
//   - [WorkStep], [RefreshTargets]: under Config.WorkRefresh a scheduler
//     tells the nodes holding a job's reservations its remaining work
//     each time its unlaunched tasks enter another power-of-two step.
//   - [AdaptiveShare]: sizes the short-only share from short demand and
//     long occupancy, in coarse steps, up at once and down slowly.
//   - [Steer]: a scheduler's choice of candidate nodes for a job: long
//     jobs avoid the short-only nodes; short jobs go to nodes advertising
//     no long work when there is at least one per task, else anywhere.
//     Placement then samples among the candidates as usual
//     (core/placement).
//   - [SRPT]: a node monitor's queue discipline ordering reservations by
//     priority, then by their job's estimated remaining work, with sticky
//     reservations (a freed slot asks the same job for another task
//     first) ahead of the rest, and a bound on how many times any queued
//     reservation may be passed over by a younger one, per slot of the
//     node.
//   - Pulls ([Backlog], [Puller]): a scheduler advertises the least
//     remaining work of its short jobs whose tasks have waited; node
//     monitors then queue one standing pull reservation for it with that
//     work, so that slots freed anywhere take the waiting short task with
//     the least remaining work, as a central queue would.
//   - [Monitor]: the node monitor's side in one place (the SRPT queue, the
//     long-work count, the sticky rule), with one method per event of a
//     reservation's life: Queued, Fetching, NoTask, Launched, Ended.
//
// A scheduler classifies a job (Estimate, Config.Classify), steers its
// probes (Steer over the Partition and the gossiped adverts, AdvertBusy), and
// places them among the candidates with core/placement as usual; it sends
// the job's class and estimated remaining work with the reservations, and
// the remaining tasks with each answer. A node monitor fetching for a
// sticky reservation asks for another task of the job without holding a
// reservation; the scheduler files a one-reservation probe for it
// (placement.Request.AddProbes) and answers through Request.Assign, so a
// task is still handed out at most once.
//
// Everything is deterministic: no I/O, goroutines, clocks or global
// randomness. No type is safe for concurrent use; the daemon holding one
// serialises access under its own lock.
package shortjobs
