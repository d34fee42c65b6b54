package fleetstatus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"time"

	"github.com/sparrowfleet/sparrow/internal/dashboard"
)

// DashboardConfig says how an observer serves the fleet dashboard.
type DashboardConfig struct {
	// Config joins the fleet.
	Config
	// Listen is the dashboard's host:port (plain HTTP).
	Listen string
	// Interval is how often the fleet is polled; History how many
	// samples each series keeps.
	Interval time.Duration
	History  int
	// Screenshot, if set, is the PNG file written after ScreenshotAfter
	// polls, instead of serving until the context ends. Browser is the
	// Chromium binary ("": the first of chromium, chromium-browser and
	// google-chrome on $PATH); Width and Height the page's size.
	Screenshot      string
	ScreenshotAfter int
	Browser         string
	Width, Height   int
}

// ServeDashboard joins the fleet as an observer and serves the dashboard
// at http://Listen/ui/ until ctx ends, or writes its screenshot and
// returns; it prints the address, or the file written, on out.
func ServeDashboard(ctx context.Context, c DashboardConfig, out io.Writer) error {
	obs, err := Join(ctx, c.Config)
	if err != nil {
		return err
	}
	defer obs.Leave()
	dash := dashboard.New(dashboard.Config{
		Source: obs, Fetcher: dashboard.HTTPFetcher{Client: &http.Client{Timeout: c.Interval}},
		Self: obs.Name(), Interval: c.Interval, History: c.History,
	})
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", c.Listen, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/ui/", dash.Handler("/ui/"))
	mux.Handle("GET /{$}", http.RedirectHandler("/ui/", http.StatusFound))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	url := "http://" + ln.Addr().String() + "/ui/"
	if c.Screenshot == "" {
		fmt.Fprintf(out, "dashboard: %s (observer %s, gossip %s)\n", url, obs.Name(), obs.Addr())
		dash.Run(ctx)
		return nil
	}
	for range max(1, c.ScreenshotAfter) {
		dash.Poll(ctx, time.Now())
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(c.Interval):
		}
	}
	if err := screenshot(ctx, c, url); err != nil {
		return err
	}
	fmt.Fprintf(out, "wrote %s\n", c.Screenshot)
	return nil
}

// screenshot has a headless Chromium write url's page as a PNG.
func screenshot(ctx context.Context, c DashboardConfig, url string) error {
	browser := c.Browser
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
		"--user-data-dir="+tmp, fmt.Sprintf("--window-size=%d,%d", c.Width, c.Height),
		"--screenshot="+c.Screenshot, url)
	if out, err := run.CombinedOutput(); err != nil {
		return fmt.Errorf("%s --screenshot: %w: %s", browser, err, out)
	}
	return nil
}
