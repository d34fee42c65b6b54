package client

import (
	"errors"
	"strings"
	"time"

	"github.com/sparrowfleet/sparrow/internal/refusal"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// A scheduler refuses a job whole, with an IncompleteRequestException
// carrying a code, a message and, for a saturated fleet or a draining
// scheduler, a suggested retry delay: the fleet is saturated past the
// scheduler's hold bounds, the scheduler is shutting down, no live node
// monitor hosts the job's app, none satisfies its constraints or
// preferences, or the request itself is malformed. Submit turns the
// refusal into one of the typed errors below, which a caller tells apart
// with errors.As; a refusal without a code (an older scheduler, the
// original Java one) is told by its message. Nothing of a refused job was scheduled, so submitting
// it again, even under the same request id, cannot run a task twice.

// Refusal is what every refused submission carries.
type Refusal struct {
	// RequestID is the refused job's request id ("" if it had none yet).
	RequestID string
	// Scheduler is the scheduler that refused the job; "" when the
	// frontend refused it before sending.
	Scheduler string
	// Message is the scheduler's message (or the frontend's reason).
	Message string
}

func (r Refusal) text() string {
	id := " " + r.RequestID
	if r.RequestID == "" {
		id = ""
	}
	if r.Scheduler == "" {
		return "submit" + id + ": " + r.Message
	}
	return "submit" + id + ": refused by scheduler " + r.Scheduler + ": " + r.Message
}

// SaturatedError is a job refused because the fleet is saturated: the
// scheduler held the call as long as it may and its node monitors stayed
// full. Submitting again later may succeed; RetryAfter is the delay the
// scheduler suggested (0: none), the floor of a RetryPolicy's wait.
// SchedulerDraining says the refusing scheduler is shutting down rather
// than out of capacity; a Frontend with another scheduler moves to it and
// submits there before it returns this error.
type SaturatedError struct {
	Refusal
	RetryAfter        time.Duration
	SchedulerDraining bool
}

func (e *SaturatedError) Error() string { return e.text() }

// UnknownAppError is a job refused because no live node monitor hosts its
// app: no executor of the app has registered, or all of them are gone.
type UnknownAppError struct {
	Refusal
	App string
}

func (e *UnknownAppError) Error() string { return e.text() }

// UnplaceableError is a job refused because, although node monitors host
// its app, none of the live ones satisfies its constraints, or a task's
// preferred nodes are all gone (a task pinned to one node whose node
// monitor the scheduler no longer sees).
type UnplaceableError struct {
	Refusal
}

func (e *UnplaceableError) Error() string { return e.text() }

// InvalidRequestError is a job refused because the request is malformed
// (over a size limit, a duplicate task id, a bad constraint or probe
// ratio, a request id in use, no tasks): submitting it again unchanged
// is refused again.
type InvalidRequestError struct {
	Refusal
}

func (e *InvalidRequestError) Error() string { return e.text() }

// UnreachableError means no configured scheduler answered: nothing was
// sent. errors.Is(err, ErrNoScheduler) holds for it.
type UnreachableError struct {
	// RequestID is the job being submitted ("" when registering).
	RequestID string
	// Schedulers are the addresses tried.
	Schedulers []string
	// Err holds each scheduler's failure (nil if none was tried).
	Err error
}

func (e *UnreachableError) Error() string {
	var b strings.Builder
	if e.RequestID != "" {
		b.WriteString("submit " + e.RequestID + ": ")
	}
	b.WriteString(ErrNoScheduler.Error())
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	return b.String()
}

// Unwrap lets errors.Is match ErrNoScheduler and each scheduler's error.
func (e *UnreachableError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrNoScheduler}
	}
	return []error{ErrNoScheduler, e.Err}
}

// refusalError is the typed error for a scheduler's refusal, e, of the
// job requestID of app. The refusal's code decides its type, through the
// table the schedulers build refusals from (internal/refusal); a refusal
// without a code (an older scheduler, the original Java one) is told by
// its message. An unknown code, from a newer scheduler, is taken as an
// invalid request: not retried.
func refusalError(scheduler, requestID, app string, e *sparrowrpc.IncompleteRequestException) error {
	r := Refusal{RequestID: requestID, Scheduler: scheduler, Message: e.GetMessage()}
	kind, after := refusal.Classify(e)
	switch kind {
	case refusal.Saturated, refusal.Draining:
		return &SaturatedError{Refusal: r, RetryAfter: after, SchedulerDraining: kind == refusal.Draining}
	case refusal.UnknownApp:
		return &UnknownAppError{Refusal: r, App: app}
	case refusal.Unplaceable:
		return &UnplaceableError{Refusal: r}
	default:
		return &InvalidRequestError{Refusal: r}
	}
}

// retryable reports whether err is a submission that reached no
// scheduler's book and may succeed later: a saturated fleet's refusal or
// no scheduler answering. It also returns the delay the scheduler
// suggested, if any.
func retryable(err error) (bool, time.Duration) {
	var sat *SaturatedError
	if errors.As(err, &sat) {
		return true, sat.RetryAfter
	}
	var un *UnreachableError
	if errors.As(err, &un) {
		return true, 0
	}
	return false, 0
}
