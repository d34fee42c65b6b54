// Package report prints the results of the simulator's and the
// benchmarks' commands in one way: a text table, JSON beside it (on the
// last line) or instead of it, and an optional plot written to a file.
//
// It is plumbing for this module's harnesses only. A result is any value
// with a WriteTable method; its JSON is encoding/json's. The package holds
// no state and starts no goroutines; writing a plot is its only file I/O,
// besides [WriteJSONFile].
package report
