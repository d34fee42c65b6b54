package main

import (
	stdlog "log"
	"os"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/internal/daemon"
	"github.com/sparrowfleet/sparrow/internal/logging"
)

var logLevel string

func init() {
	rootCmd.PersistentFlags().StringVar(&logLevel, "log-level", "info",
		"log level: trace, debug, info, warn, error or disabled (console output on a terminal, JSON otherwise)")
}

func newLogger() (zerolog.Logger, error) {
	l, err := logging.New(os.Stderr, logLevel)
	if err != nil {
		return l, err
	}
	// Thrift's library logs through the standard log package when given no
	// logger; route those lines, and any other stray ones, into zerolog.
	stdlog.SetFlags(0)
	stdlog.SetOutput(logging.StdLogger(l, "stdlog").Writer())
	return l, nil
}

// onSIGHUP calls fn on every SIGHUP until the returned stop is called.
func onSIGHUP(fn func()) (stop func()) { return daemon.OnSIGHUP(fn) }

// noArgs rejects positional arguments with a clear message.
var noArgs = cobra.NoArgs
