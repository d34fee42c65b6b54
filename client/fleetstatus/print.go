package fleetstatus

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"golang.org/x/term"
)

// Print joins the fleet as an observer, prints it once, or every watch
// (when positive) until ctx ends, and leaves: as tables (Render), or as
// one JSON object a line with asJSON. Watching tables on a terminal
// redraws them in place instead of scrolling.
func Print(ctx context.Context, cfg Config, out io.Writer, asJSON bool, watch time.Duration) error {
	obs, err := Join(ctx, cfg)
	if err != nil {
		return err
	}
	defer obs.Leave()
	redraw := watch > 0 && !asJSON && isTerminal(out)
	for {
		v := obs.Collect(ctx)
		if ctx.Err() != nil {
			return nil // interrupted mid-collection: print nothing half-read
		}
		if redraw {
			fmt.Fprint(out, "\x1b[H\x1b[2J") // home and clear: redraw in place
		}
		if asJSON {
			if err := json.NewEncoder(out).Encode(v); err != nil {
				return err
			}
		} else {
			Render(out, v)
		}
		if watch == 0 {
			return nil
		}
		if !redraw && !asJSON {
			fmt.Fprintln(out)
		}
		t := time.NewTimer(watch)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// isTerminal reports whether out is a terminal.
func isTerminal(out io.Writer) bool {
	f, ok := out.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// WatchInterval is a refresh interval flag (pflag.Value): a duration, or
// a bare number of seconds; never negative.
type WatchInterval time.Duration

func (w *WatchInterval) String() string { return time.Duration(*w).String() }

// Type names the flag's kind in help text.
func (w *WatchInterval) Type() string { return "interval" }

// Set parses "5" (seconds) or "5s".
func (w *WatchInterval) Set(s string) error {
	if n, err := strconv.ParseFloat(s, 64); err == nil {
		*w = WatchInterval(n * float64(time.Second))
	} else if d, err := time.ParseDuration(s); err == nil {
		*w = WatchInterval(d)
	} else {
		return fmt.Errorf("want seconds (5) or a duration (5s)")
	}
	if *w < 0 {
		return fmt.Errorf("must not be negative")
	}
	return nil
}
