// Package batch coalesces items bound for the same destination into
// batched sends: at most one send per destination is in flight, and items
// that arrive meanwhile go together in the next. Under load this turns one
// RPC per item into one per batch, with no added delay when idle.
//
// It is plumbing: only this module may import it, and it holds no scheduling
// logic (that lives in core/).
package batch
