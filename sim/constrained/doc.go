// Package constrained is a deterministic discrete-event simulation of
// constrained multi-user fair sharing, after §7.1–7.2 of Ghodsi et al.,
// "Choosy: Max-Min Fair Sharing for Datacenter Jobs with Constraints"
// (EuroSys 2013).
//
// Nodes of several machine types advertise attributes; every job is a
// user whose tasks may run only on the nodes satisfying its constraints
// (drawn from a reconstruction of the Google constraint model the paper
// uses, see Model). The online policies are Sparrow's: a scheduler
// filters the nodes with placement.Filter, places reservations with
// placement.Sampler.Plan (batch sampling with late binding) and hands
// tasks out with placement.Request; each node is a slots.Core over the
// product's queue discipline, queue.Fair or queue.Choosy. Choosy gets its
// cluster-wide counts as the coordinator gives them (fairshare.Compute
// over the nodes' slots.Core.Usage, every period), or exactly at every
// decision. The reference is the paper's Restricted Offline scheduler,
// simulated centrally with cmmf.SolveInteger at every decision, and the
// ideal (migrating and preempting) CMMF allocation of each policy's own
// active users, solved at every sample.
//
// It is an experiment harness: daemons must not import it. It runs the
// core packages' code unchanged and is pure: no goroutines, no clock, no
// I/O, no global randomness; a run is a function of its Config.
package constrained
