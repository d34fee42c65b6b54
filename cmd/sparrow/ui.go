package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/client/fleetstatus"
	"github.com/sparrowfleet/sparrow/internal/dashboard"
	"github.com/sparrowfleet/sparrow/internal/membership"
)

func init() { rootCmd.AddCommand(newUICmd()) }

// uiOptions are `sparrow ui`'s flags.
type uiOptions struct {
	join, bind, profile, listen string
	interval                    time.Duration
	history                     int
	screenshot, browser         string
	screenshotAfter             int
	width, height               int
}

func newUICmd() *cobra.Command {
	var (
		o   uiOptions
		sec securityFlags
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
			ctx, cancel, keyring, log, err := startObserver(cmd, o.join, &sec)
			if err != nil {
				return err
			}
			defer cancel()
			return runUI(ctx, o, keyring, cmd, log)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.join, "join", "", "comma-separated gossip host:port of members to join through (required)")
	fs.StringVar(&o.bind, "gossip", "", "gossip host:port the observer binds and advertises (default: the local address that routes to the first --join seed, a free port)")
	fs.StringVar(&o.profile, "gossip-profile", "lan", "gossip timing of the observer: lan, local or wan")
	fs.StringVar(&o.listen, "listen", "127.0.0.1:8080", "host:port to serve the dashboard on (plain HTTP: keep it private)")
	fs.DurationVar(&o.interval, "interval", dashboard.DefaultInterval, "how often to poll the fleet and refresh the page")
	fs.IntVar(&o.history, "history", dashboard.DefaultHistory, "samples kept per series (the charts span --interval times this)")
	fs.StringVar(&o.screenshot, "screenshot", "", "write a PNG of the dashboard to this file after --screenshot-after polls, then exit (needs Chromium)")
	fs.IntVar(&o.screenshotAfter, "screenshot-after", 5, "polls to wait before --screenshot, so the charts have history")
	fs.StringVar(&o.browser, "browser", "", "Chromium binary for --screenshot (default: chromium, chromium-browser or google-chrome on $PATH)")
	fs.IntVar(&o.width, "screenshot-width", 1400, "--screenshot page width in pixels")
	fs.IntVar(&o.height, "screenshot-height", 1800, "--screenshot page height in pixels")
	fs.StringVar(&sec.gossipKeyFile, "gossip-key-file", "", "file of the fleet's base64 gossip keys, one per line, as the daemons take it; $"+membership.GossipKeyEnv+" may hold them instead")
	return cmd
}

func runUI(ctx context.Context, o uiOptions, keyring *memberlist.Keyring, cmd *cobra.Command, log zerolog.Logger) error {
	obs, err := fleetstatus.Join(ctx, fleetstatus.Config{
		Join: o.join, Bind: o.bind, Profile: o.profile, Keyring: keyring, Timeout: 5 * time.Second, Log: log,
	})
	if err != nil {
		return err
	}
	defer obs.Leave()
	dash := dashboard.New(dashboard.Config{
		Source: obs, Fetcher: dashboard.HTTPFetcher{Client: &http.Client{Timeout: o.interval}},
		Self: obs.Name(), Interval: o.interval, History: o.history,
	})
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", o.listen, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/ui/", dash.Handler("/ui/"))
	mux.Handle("GET /{$}", http.RedirectHandler("/ui/", http.StatusFound))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	url := "http://" + ln.Addr().String() + "/ui/"
	if o.screenshot == "" {
		fmt.Fprintf(cmd.OutOrStdout(), "dashboard: %s (observer %s, gossip %s)\n", url, obs.Name(), obs.Addr())
		dash.Run(ctx)
		return nil
	}
	for range max(1, o.screenshotAfter) {
		dash.Poll(ctx, time.Now())
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(o.interval):
		}
	}
	if err := screenshot(ctx, o, url); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %s\n", o.screenshot)
	return nil
}

// screenshot has a headless Chromium write url's page as a PNG.
func screenshot(ctx context.Context, o uiOptions, url string) error {
	browser := o.browser
	if browser == "" {
		for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
			if p, err := exec.LookPath(name); err == nil {
				browser = p
				break
			}
		}
	}
	if browser == "" {
		return errors.New("--screenshot needs Chromium: install it (Debian: apt-get install chromium) or name it with --browser")
	}
	tmp, err := os.MkdirTemp("", "sparrow-ui-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	run := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--user-data-dir="+tmp, fmt.Sprintf("--window-size=%d,%d", o.width, o.height),
		"--screenshot="+o.screenshot, url)
	if out, err := run.CombinedOutput(); err != nil {
		return fmt.Errorf("%s --screenshot: %w: %s", browser, err, out)
	}
	return nil
}
