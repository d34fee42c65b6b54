package main

import (
	"encoding/json"
	"fmt"
	stdlog "log"
	"os"
	"path/filepath"

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

// writeJSONFile writes v, indented, to path, creating its directory.
func writeJSONFile(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("results dir: %w", err)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
