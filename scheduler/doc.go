// Package scheduler is the Sparrow scheduler daemon: a thin shell that
// validates requests, asks the placement core where reservations go, sends
// them to node monitors over Thrift, and answers their getTask calls by late
// binding. It keeps no state about cluster load beyond what admission
// needs; a request's state lives only until all of its tasks have launched.
//
// Placement preferences are strict unless a task opts in, with a positive
// delayThreshold, to having them relaxed to its racks and then the cluster
// after a delay or at once when the coordinator's locality prices say so;
// locality.go states the semantics.
//
// On a saturated fleet (node monitors refusing reservations because their
// queues are full) a scheduler with Config.MaxHeldJobs > 0 holds the
// submitJob call until the job's reservations are placed, within bounds;
// past them it refuses the job whole with "fleet saturated ... retry after
// <d>", withdrawing what was placed, unless a task already launched, in
// which case the job is accepted and its remainder re-placed. hold.go
// states the semantics and why.
//
// # Parts
//
// Scheduler wires small parts, each a type with its own state, file and
// tests, to what it is given (its wiring: config, address, view, log,
// clock, peers). None has a lock of its own (rpc.Capabilities aside):
// Scheduler serialises every call to them under its one mutex, and takes
// that mutex only for decisions, never across an RPC. A part that needs
// another's state is handed it by Scheduler or asks through a method.
//
//   - requestBook (requests.go): the live requests, by id, and the ids
//     this scheduler makes up; each request's placement and late-binding
//     state is its core/placement.Request.
//   - gate (gate.go): admission control. holdBook (holdbook.go): the
//     held submitJob calls, their arrival order and the capacity signal,
//     the refusal's suggested delay, when the fleet last refused as full;
//     admissionBook (admission.go): node monitors' load reports and the
//     expected-wait estimate; and whether the scheduler drains.
//   - offerBook (offerbook.go): offers and offers in doubt. Which node
//     monitors lack the offer methods (rpc.Capabilities), which asked for
//     a pause, their start nonces, and the offers in doubt on each.
//   - runningBook (running.go): lost-node bookkeeping. The tasks running
//     on each node monitor, and those reported lost; and with them
//     fetchBook (fetch.go), the fetch memory, so that a node monitor
//     asking again about a fetch gets the same answer.
//   - relaxer (relaxer.go): locality relaxation. The queue of requests by
//     next delay step, the coordinator's prices, rack indexes, counts.
//   - frontendBook (frontendbook.go, frontendlink.go): frontend links. The
//     app registry and the bounded, paced link to each frontend.
//   - steerBook (steer.go): steering (Config.SteerAfter). Which node
//     monitors serve each user's reservations and which sit on them
//     (core/placement.Steer), and when each request is due to be given
//     reservations where its user is served.
//   - shortPolicy (shortjobs.go): the long-task-aware policy
//     (Config.ShortJobs): job classes, the history of task durations, and
//     the candidates of short and long jobs.
//   - placer (scheduler.go): the seeded randomness of placement and
//     jitter.
//   - placementPipeline (pipeline.go): the one path from a request's
//     tasks to candidate node monitors and a plan. See "Placement" below.
//
// The decisions that span parts (submit, getTask, an enqueue's answer,
// re-placement, a held call's round, a node's loss, a sweep) are
// Scheduler methods in scheduler.go, hold.go, offer.go, locality.go,
// nodeloss.go and sweep.go.
//
// # Placement
//
// Every decision that places reservations runs the placementPipeline's
// stages, in one order: the view (live node monitors hosting the app),
// dropping node monitors that failed the request, the job's constraints,
// the long-task-aware policy's steering by job class, a rule for node
// monitors already holding the request's reservations, per-user steering,
// and the sampler's plan. A call site names only what differs, in
// placeOptions:
//
//   - submission (submitLocked): the feasible candidates admission looked
//     at, and user spreading (steerBook.candidates);
//   - re-placement after a failed enqueue or a lost node
//     (reprobeAndUnlock): nothing; holders may take more;
//   - a held call's round (stepHeldLocked): holders last;
//   - the reservation-timeout sweep (sweepOne): holders dropped;
//   - steering of stranded requests (steerStranded): holders dropped,
//     only node monitors serving the user, d = 1;
//   - locality relaxation (relaxLocked): holders dropped, the widened
//     plan (a task with nowhere new to go is starved, not an error).
//
// A new call site uses the pipeline too: pipeline_guard_test.go fails if
// any function but the pipeline calls placement.Filter, the policy's or
// the user steering, or the sampler's plan.
//
// Decisions return what is to be sent rather than calling node monitors:
// SubmitJob's decision (submitLocked) returns reservationBatch values,
// one enqueue per node monitor, and sendReservations (dispatch.go), once
// the mutex is released, is the one layer that sends them; the other
// decisions' probes go out through it too.
// The daemon (daemon.go) adds the Thrift servers, gossip and the sweep.
//
// It is a daemon shell: placement, sampling and the request's placement
// state live in core/placement; this package adds locking, Thrift and
// gossip around them and must not grow algorithms of its own.
package scheduler
