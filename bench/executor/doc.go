// Package executor is the sleep executor of sparrow executor: a
// BackendService for one app that registers with its node monitor
// (retrying until it answers, and again after it restarts), runs each
// task by sleeping for the duration in its message, optionally logs each
// launch as a JSON line, and drains running tasks when stopped.
package executor
