// Package nodemonitor is the Sparrow node monitor daemon: a thin shell
// around the slots state machine. It queues reservations from schedulers,
// and whenever a slot is free it pulls a task from the reservation's
// scheduler (getTask) and launches it on the app's executor (launchTask).
//
// It is a daemon shell: the slot machine and the queue disciplines live in
// core/slots and core/queue; this package adds locking, Thrift and gossip
// around them and must not grow algorithms of its own.
package nodemonitor
