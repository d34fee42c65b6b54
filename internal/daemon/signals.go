package daemon

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/rs/zerolog"
)

// SignalContext is ctx, ended also by SIGINT or SIGTERM.
func SignalContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}

// RunUntilSignal blocks until SIGINT or SIGTERM, then calls stop. A second
// signal while stop runs (a drain) ends the process at once, the signal's
// default action.
func RunUntilSignal(log zerolog.Logger, stop func() error) error {
	ctx, cancel := SignalContext(context.Background())
	<-ctx.Done()
	cancel()
	log.Info().Msg("signal received; leaving the cluster and shutting down")
	if err := stop(); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// DrainOnSignal blocks until SIGTERM or SIGINT, or a drain asked over
// HTTP (a value on asked), then calls stop, which drains for up to
// timeout and closes the daemon. A second signal during the drain stops
// the process at once (the signal's default action).
func DrainOnSignal(log zerolog.Logger, asked <-chan struct{}, timeout time.Duration, stop func() error) error {
	ctx, cancel := SignalContext(context.Background())
	select {
	case <-ctx.Done():
		log.Info().Dur("drain_timeout", timeout).Msg("signal received; draining, then leaving the cluster")
	case <-asked:
		log.Info().Dur("drain_timeout", timeout).Msg("drain asked over HTTP; draining, then leaving the cluster")
	}
	cancel()
	if err := stop(); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// OnSIGHUP calls fn on every SIGHUP, one call at a time, until the
// returned stop is called.
func OnSIGHUP(fn func()) (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-ch:
				fn()
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}
