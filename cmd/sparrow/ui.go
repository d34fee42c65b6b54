package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/client/fleetstatus"
	"github.com/sparrowfleet/sparrow/internal/dashboard"
)

func init() { rootCmd.AddCommand(newUICmd()) }

func newUICmd() *cobra.Command {
	var (
		// The observer waits this long for its join.
		c       = fleetstatus.DashboardConfig{Config: fleetstatus.Config{Timeout: 5 * time.Second}}
		keyFile string
	)
	cmd := &cobra.Command{
		Use:   "ui --join HOST:PORT",
		Short: "Serve the fleet dashboard as a gossip observer",
		Long: `Join the gossip cluster as an observer and serve the fleet dashboard at
http://--listen/ui/: members by role and health with their versions, every
node monitor's slots as a grid, per-user work beside the coordinator's
targets, each scheduler's throughput, scheduling delay and held submits,
and the locality prices. Every daemon started with --http-listen serves
the same page at /ui/; this command is for operators who want it apart.

The dashboard reads what the members publish (gossip and /status) every
--interval and keeps --history samples per series in memory. The page is
read-only. With --screenshot it instead writes a PNG of the page after a
few polls, using a headless Chromium, and exits.`,
		Example: `  sparrow ui --join 10.0.0.1:7946 --listen 127.0.0.1:8080
  sparrow ui --join 10.0.0.1:7946 --screenshot fleet.png`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel, err := startObserver(cmd, &c.Config, keyFile)
			if err != nil {
				return err
			}
			defer cancel()
			return fleetstatus.ServeDashboard(ctx, c, cmd.OutOrStdout())
		},
	}
	fs := cmd.Flags()
	observerFlags(fs, &c.Config, &keyFile, "")
	fs.StringVar(&c.Listen, "listen", "127.0.0.1:8080", "host:port to serve the dashboard on (plain HTTP: keep it private)")
	fs.DurationVar(&c.Interval, "interval", dashboard.DefaultInterval, "how often to poll the fleet and refresh the page")
	fs.IntVar(&c.History, "history", dashboard.DefaultHistory, "samples kept per series (the charts span --interval times this)")
	fs.StringVar(&c.Screenshot, "screenshot", "", "write a PNG of the dashboard to this file after --screenshot-after polls, then exit (needs Chromium)")
	fs.IntVar(&c.ScreenshotAfter, "screenshot-after", 5, "polls to wait before --screenshot, so the charts have history")
	fs.StringVar(&c.Browser, "browser", "", "Chromium binary for --screenshot (default: chromium, chromium-browser or google-chrome on $PATH)")
	fs.IntVar(&c.Width, "screenshot-width", 1400, "--screenshot page width in pixels")
	fs.IntVar(&c.Height, "screenshot-height", 1800, "--screenshot page height in pixels")
	return cmd
}
