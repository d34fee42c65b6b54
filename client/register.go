package client

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/rs/zerolog"
)

// Registration defaults.
const (
	// DefaultWatch is how often a Backend whose connection to its node
	// monitor ended checks whether the node monitor answers again, to
	// register again after it restarts.
	DefaultWatch = time.Second
)

// DefaultRegisterBackoff spaces a Backend's registration attempts while
// its node monitor does not answer: 100 ms doubling to 1 s.
var DefaultRegisterBackoff = Backoff{Base: 100 * time.Millisecond, Max: time.Second}

// errRegistrationRefused is a node monitor answering a registration with
// false: trying again would be refused again.
var errRegistrationRefused = errors.New("registration refused")

// registerWithRetry calls register until it succeeds, is refused, or ctx
// ends, waiting backoff's ceiling for the attempt between tries (no
// jitter: each executor registers with its own node monitor, so there is
// no herd to spread). onFail, if not nil, sees each failed attempt
// (numbered from 1). It returns nil, the refusal, or the last attempt's
// error joined with ctx's.
func registerWithRetry(ctx context.Context, register func(context.Context) error, backoff Backoff, onFail func(attempt int, err error)) error {
	for attempt := 1; ; attempt++ {
		err := register(ctx)
		if err == nil || errors.Is(err, errRegistrationRefused) {
			return err
		}
		if onFail != nil {
			onFail(attempt, err)
		}
		wait := time.NewTimer(max(backoff.Ceiling(attempt), time.Millisecond))
		select {
		case <-wait.C:
		case <-ctx.Done():
			wait.Stop()
			return errors.Join(err, context.Cause(ctx))
		}
	}
}

// watchRegistration keeps an executor registered across restarts of its
// node monitor, which forget registrations. It holds a connection to the
// node monitor open (hold, which returns when the connection ends or
// could not be opened): that costs nothing while the node monitor runs,
// and ends as soon as its process does, however soon a new one starts at
// the same address. Then it probes the node monitor every interval until
// it answers, registers again (at the next interval again if that fails)
// and holds a connection again. A node monitor that closed the connection
// while running (an idle timeout) is registered with again, which it
// takes as a no-op. It returns when ctx ends.
func watchRegistration(ctx context.Context, every time.Duration, hold, probe, register func(context.Context) error, log zerolog.Logger) {
	for {
		err := hold(ctx)
		if ctx.Err() != nil {
			return
		}
		log.Warn().Err(err).Msg("node monitor unreachable; will register again when it is back")
		if !registerAgain(ctx, every, probe, register, log) {
			return
		}
		log.Info().Msg("node monitor is back; registered again")
	}
}

// registerAgain probes the node monitor every interval and registers
// once it answers, until a registration succeeds (true) or ctx ends
// (false).
func registerAgain(ctx context.Context, every time.Duration, probe, register func(context.Context) error, log zerolog.Logger) bool {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, every)
		err := probe(pctx)
		cancel()
		if err != nil {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, 5*every)
		err = register(rctx)
		cancel()
		if err == nil {
			return true
		}
		if ctx.Err() == nil {
			log.Warn().Err(err).Msg("node monitor answers but registering again failed; retrying")
		}
	}
}

// dialProbe checks that something listens at addr; it sends nothing.
func dialProbe(addr string) func(context.Context) error {
	return func(ctx context.Context) error {
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return err
		}
		return conn.Close()
	}
}
