// Package stats summarises latency samples and holds the module's one
// definition of a quantile (nearest rank, Quantile). Pure: no clock, no
// I/O.
//
// It is plumbing: only this module may import it, and it holds no scheduling
// logic (that lives in core/).
package stats
