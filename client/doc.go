// Package client is the library applications link to use a sparrowfleet:
// a Frontend submits jobs to schedulers, fails over between them and
// receives task messages; a Backend is an executor that runs the tasks its
// node monitor launches and reports them finished.
//
// What every frontend needs lives here, in small parts of their own:
// typed errors for a refused or unreachable submission (errors.go:
// SaturatedError with the scheduler's suggested delay, UnknownAppError,
// UnplaceableError, InvalidRequestError, UnreachableError), a full-jitter
// exponential Backoff and the parser of a refusal's "retry after <d>"
// (backoff.go), a sliding-window RetryBudget (budget.go), and the
// RetryPolicy that makes Submit resubmit with them (retry.go). Backoff and
// RetryBudget are pure: the caller supplies the draw and the time. The
// frontend's sessions, one per connection, with the jobs in flight on
// each (sessions.go), are what lets it work and fail over behind a load
// balancer; the host it advertises is picked by AutoAdvertiseHost
// (advertise.go) unless given.
//
// It is the public client library: it must not import the experiment
// harnesses, and it keeps the original Sparrow wire protocol unchanged
// (extensions are additive).
package client
