package main

import (
	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/coordinator"
	"github.com/sparrowfleet/sparrow/internal/buildinfo"
	"github.com/sparrowfleet/sparrow/internal/httpapi"
	"github.com/sparrowfleet/sparrow/internal/membership"
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
func genReference() (map[string][]byte, error) { return refdocs.Reference(rootCmd, docCollectors()) }

// docCollectors builds, idle and unconnected, every collector a daemon
// registers on its /metrics, in the order the reference lists them. Keep
// this list the same as the daemons' own (their HTTP surfaces, and
// daemon.MemberCollectors).
func docCollectors() []refdocs.Collector {
	return []refdocs.Collector{
		{ServedBy: "scheduler", Collector: scheduler.Collector(func() scheduler.Stats { return scheduler.Stats{} })},
		{ServedBy: "nodemonitor", Collector: nodemonitor.Collector(func() nodemonitor.State { return nodemonitor.State{} })},
		{ServedBy: "coordinator", Collector: coordinator.Collector(func() coordinator.Stats { return coordinator.Stats{} })},
		{ServedBy: "scheduler, nodemonitor", Collector: metrics.RPCCollector(func() rpc.Stats { return rpc.Stats{} })},
		{ServedBy: "scheduler, nodemonitor", Collector: metrics.CallsCollector(func() rpc.CallStats { return rpc.CallStats{} })},
		{ServedBy: "scheduler, nodemonitor, coordinator", Collector: membership.Collector(func() membership.Stats { return membership.Stats{NodesReported: true} })},
		{ServedBy: "scheduler, nodemonitor, coordinator", Collector: metrics.BuildInfo(buildinfo.Info{}, "")},
		{ServedBy: "scheduler, nodemonitor, coordinator", Collector: adminGuardForDocs()},
	}
}

// adminGuardForDocs is the guard every daemon's operator endpoint serves
// sparrow_http_refused_total from, guarding /drain as the node monitor's
// does, so that its counters exist; without a token file it cannot fail.
func adminGuardForDocs() *httpapi.AdminGuard {
	g, _ := httpapi.NewAdminGuard("", zerolog.Nop())
	g.Protect("/drain", nil)
	return g
}
