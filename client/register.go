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
	// DefaultWatch is how often a Backend checks that its node monitor
	// is still there, to register again after it restarts.
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
// node monitor, which forget registrations: every interval it probes the
// node monitor, and once a probe succeeds after one failed, it registers
// again (at the next interval again if that fails). A live node monitor
// sees only the probes. It returns when ctx ends.
func watchRegistration(ctx context.Context, every time.Duration, probe, register func(context.Context) error, log zerolog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	down := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, every)
		err := probe(pctx)
		cancel()
		if err != nil {
			if !down && ctx.Err() == nil {
				log.Warn().Err(err).Msg("node monitor unreachable; will register again when it is back")
			}
			down = true
			continue
		}
		if !down {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, 5*every)
		err = register(rctx)
		cancel()
		if err != nil {
			log.Warn().Err(err).Msg("node monitor is back but registering again failed; retrying")
			continue
		}
		down = false
		log.Info().Msg("node monitor is back; registered again")
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
