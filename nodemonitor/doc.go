// Package nodemonitor is the Sparrow node monitor daemon: a thin shell
// around the slots state machine. It queues reservations from schedulers,
// and whenever a slot is free it pulls a task from the reservation's
// scheduler (getTask) and launches it on the app's executor (launchTask).
//
// The slot machine and the queue disciplines live in core/slots and
// core/queue; this package adds locking, Thrift and gossip around them and
// must not grow algorithms of its own. NodeMonitor wires small parts, each
// with its own state, lock and tests:
//
//   - slotTable (slottable.go): the slots and reservation queue, the
//     launch count, the task clock (taskclock.go), the coordinator's
//     weights on the queue (weightGuide, guidance.go) and the drain's
//     refusal of new work.
//   - executorRegistry (executors.go): each app's executor and its failed
//     liveness checks.
//   - fetcher (fetch.go): getTask and fetchTask, asking again about a
//     fetch whose answer was lost.
//   - reporter (notify.go): finished reports, batched per scheduler, and
//     executors' messages relayed to schedulers (taskDone, or the two
//     original calls).
//   - offerLedger (offerledger.go): what was answered to each recent
//     offer, so that offerOutcome's answer is final.
//   - schedulerSet (gone.go): schedulers gossip declared gone.
//
// Peers that answered an extension with UNKNOWN_METHOD are remembered in
// one rpc.Capabilities. Schedulers and executors are reached through the
// Schedulers and Executors interfaces (clients.go): Thrift in the daemon,
// in-memory fakes in this package's tests, which run in testing/synctest
// bubbles and open no socket; loopback Thrift tests live in integration/.
//
// Daemon (daemon.go) adds the two Thrift services, gossip membership, the
// executor liveness loop, the coordinator protocol (coordinated.go) and
// the drain (drain.go).
package nodemonitor
