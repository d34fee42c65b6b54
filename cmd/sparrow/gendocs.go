package main

import (
	"fmt"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/coordinator"
	"github.com/sparrowfleet/sparrow/core/placement"
	"github.com/sparrowfleet/sparrow/internal/metrics"
	"github.com/sparrowfleet/sparrow/internal/refdocs"
	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/nodemonitor"
	"github.com/sparrowfleet/sparrow/scheduler"
)

func init() { rootCmd.AddCommand(newGenDocsCmd()) }

func newGenDocsCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:    "gen-docs",
		Short:  "Write the command and metrics reference (docs/reference) from the code",
		Hidden: true,
		Long: `Write the generated reference: one Markdown page per command with every
flag (cli/), and every Prometheus metric the daemons export with its type
and help text (metrics.md). "make docs" runs it; a test fails when the
committed files differ from what it writes.`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			files, err := genReference()
			if err != nil {
				return err
			}
			return refdocs.Write(out, files)
		},
	}
	cmd.Flags().StringVar(&out, "out", "docs/reference", "directory to write the reference into (its cli/ folder is replaced)")
	return cmd
}

// genReference returns the reference's files, keyed by their path relative
// to the reference directory.
func genReference() (map[string][]byte, error) {
	files, err := refdocs.CLI(rootCmd)
	if err != nil {
		return nil, err
	}
	cs, closeAll, err := docCollectors()
	if err != nil {
		return nil, err
	}
	defer closeAll()
	m, err := refdocs.Metrics(cs)
	if err != nil {
		return nil, err
	}
	files["metrics.md"] = m
	return files, nil
}

// noNodes is an empty node view, enough to build a scheduler whose
// collector is asked for its descriptors.
type noNodes struct{}

func (noNodes) Candidates(string) []placement.Node { return nil }
func (noNodes) Node(string) (placement.Node, bool) { return placement.Node{}, false }

// docCollectors builds, idle and unconnected, every collector a daemon
// registers on its /metrics, in the order the reference lists them. Keep
// this list the same as the daemons' own (their HTTP surfaces); the
// returned close releases what the collectors were built on.
func docCollectors() ([]refdocs.Collector, func(), error) {
	s, err := scheduler.New(scheduler.Config{Address: "127.0.0.1:20503", Log: zerolog.Nop()}, noNodes{})
	if err != nil {
		return nil, nil, fmt.Errorf("metrics reference: scheduler: %w", err)
	}
	n, err := nodemonitor.New(nodemonitor.Config{Slots: 1, Internal: "127.0.0.1:20502", Log: zerolog.Nop()}, nil)
	if err != nil {
		s.Close()
		return nil, nil, fmt.Errorf("metrics reference: node monitor: %w", err)
	}
	return []refdocs.Collector{
		{ServedBy: "scheduler", Collector: metrics.SchedulerCollector(s)},
		{ServedBy: "nodemonitor", Collector: metrics.NodeMonitorCollector(n)},
		{ServedBy: "coordinator", Collector: metrics.CoordinatorCollector(func() coordinator.Stats { return coordinator.Stats{} })},
		{ServedBy: "scheduler, nodemonitor", Collector: metrics.RPCCollector(func() rpc.Stats { return rpc.Stats{} })},
	}, func() { s.Close() }, nil
}
