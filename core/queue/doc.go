// Package queue implements the reservation queue disciplines of a Sparrow
// node monitor (Ousterhout et al., SOSP 2013, §4.2).
//
// A node monitor keeps reservations (probes sent by schedulers) queued until
// one of its slots frees up, and then asks a Discipline which reservation to
// serve next. Three disciplines are provided:
//
//   - "fifo": arrival order, as in the basic Sparrow design.
//   - "fair": weighted fair queuing over one FIFO queue per user, which is how
//     Sparrow enforces cluster-wide weighted fair shares without any central
//     coordination (§4.2, §7.5).
//   - "priority": one queue per priority value, always serving the most urgent
//     (numerically smallest) non-empty one, with weighted fair sharing between
//     users inside a priority (§4.2, §7.6).
//
// Everything here is deliberately pure: no goroutines, locks, clocks,
// randomness or I/O. The node monitor already serialises all queue access
// under its own lock, so a second layer of locking would only add cost, and
// determinism makes service order reproducible in tests and simulations.
//
// It is part of the deterministic core: it must not do I/O, start
// goroutines, read the wall clock or use global randomness. Callers inject
// time and randomness, so the daemons and the simulator run exactly this
// code.
package queue
