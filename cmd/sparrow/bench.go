package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
)

// benchCmd groups the benchmark and experiment scenarios run against a real
// fleet; each scenario adds itself as a subcommand from its own file.
var benchCmd = &cobra.Command{
	Use:   "bench",
	Short: "Run benchmark and policy experiments against a real fleet",
	Long: `Run scenarios against a real fleet (in this process over loopback Thrift
and gossip, unless a scenario says otherwise) and print their results as a
table, or as JSON with --json. Each scenario documents its flags.`,
}

func init() { rootCmd.AddCommand(benchCmd) }

// benchContext stops on SIGINT/SIGTERM; quiet turns an in-process fleet's
// logs down to warnings unless --log-level is given.
func benchContext(cmd *cobra.Command, quiet bool) (context.Context, context.CancelFunc) {
	if quiet && !cmd.Flags().Changed("log-level") {
		logLevel = "warn"
	}
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}

// fleetLog is an in-process fleet's logger at --log-level, writing JSON
// lines to w.
func fleetLog(w io.Writer) (zerolog.Logger, error) {
	base, err := newLogger() // validates --log-level
	return zerolog.New(w).Level(base.GetLevel()).With().Timestamp().Logger(), err
}

// printLines prints each progress line on w.
func printLines(w io.Writer) func(string) { return func(s string) { fmt.Fprintln(w, s) } }

// thisBinary sets *path, when empty, to this executable: the binary the
// multi-process benchmarks start their members from.
func thisBinary(path *string) error {
	if *path != "" {
		return nil
	}
	var err error
	if *path, err = os.Executable(); err != nil {
		return fmt.Errorf("find this binary (set --binary): %w", err)
	}
	return nil
}
