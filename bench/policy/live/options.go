package live

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/term"

	"github.com/sparrowfleet/sparrow/bench/policy"
)

// The Validate methods name the command-line flags of `sparrow bench
// fairness|priority|constraints` that set the field out of range, so that
// the command can return their errors as they are.

// Validate checks the fleet and job shape every experiment shares.
func (c Common) Validate() error {
	switch {
	case c.Fleet.Schedulers < 1:
		return fmt.Errorf("--schedulers must be at least 1")
	case c.Fleet.NodeMonitors < 1:
		return fmt.Errorf("--nodes must be at least 1")
	case c.Fleet.Slots < 1:
		return fmt.Errorf("--slots must be at least 1")
	case c.TasksPerJob < 1:
		return fmt.Errorf("--tasks must be at least 1")
	case c.TaskDuration <= 0:
		return fmt.Errorf("--task-duration must be positive (the shares are measured in slot-time)")
	}
	return nil
}

// Validate checks the Figure 11 settings other than Common.
func (o FairnessOptions) Validate() error {
	if err := policy.CheckLoads("--user1-loads", o.User1Loads); err != nil {
		return err
	}
	if err := policy.CheckLoads("--user0-load", []float64{o.User0Load}); err != nil {
		return err
	}
	if o.Interval <= 0 || o.Bin <= 0 {
		return fmt.Errorf("--interval and --bin must be positive")
	}
	return nil
}

// Validate checks the Table 3 settings other than Common.
func (o PriorityOptions) Validate() error {
	if err := policy.CheckLoads("--lp-loads", o.LPLoads); err != nil {
		return err
	}
	if !(o.HPLoad > 0) {
		return fmt.Errorf("--hp-load must be positive")
	}
	return checkWindow(o.Duration, o.Drain, o.Warmup)
}

// Validate checks the constraints settings other than Common.
func (o ConstraintsOptions) Validate() error {
	if !(o.AttrFraction > 0 && o.AttrFraction <= 1) {
		return fmt.Errorf("--attr-fraction must be in (0, 1]")
	}
	if err := policy.CheckLoads("--constrained-load/--free-load", []float64{o.ConstrainedLoad, o.FreeLoad}); err != nil {
		return err
	}
	return checkWindow(o.Duration, o.Drain, o.Warmup)
}

func checkWindow(duration, drain, warmup time.Duration) error {
	if duration <= 0 || drain < 0 || warmup < 0 || warmup >= duration {
		return fmt.Errorf("--duration must be positive, --drain and --warmup not negative, and --warmup shorter than --duration")
	}
	return nil
}

// ParseAttr splits --attr's "key=value"; both must be non-empty.
func ParseAttr(s string) (key, val string, err error) {
	key, val, ok := strings.Cut(s, "=")
	if !ok || key == "" || val == "" {
		return "", "", fmt.Errorf("--attr %q: want key=value", s)
	}
	return key, val, nil
}

// NewLog returns the fleet's logger at level, writing through a LogWatch
// to out: as console lines when out is a terminal, JSON lines otherwise.
// The watch counts what the fleet says during each measurement and mutes
// its teardown.
func NewLog(out *os.File, level zerolog.Level) (zerolog.Logger, *LogWatch) {
	var w io.Writer = out
	if term.IsTerminal(int(out.Fd())) {
		w = zerolog.ConsoleWriter{Out: out, TimeFormat: time.TimeOnly}
	}
	watch := NewLogWatch(w)
	return zerolog.New(watch).Level(level).With().Timestamp().Logger(), watch
}

// WaitQuiet waits, up to maxWait, for the host's 1-minute load average
// to fall below maxLoad before a live run starts, saying so on progress;
// past maxWait it goes ahead and says that too. maxLoad <= 0 does not
// wait.
func WaitQuiet(ctx context.Context, progress io.Writer, maxLoad float64, maxWait time.Duration) {
	waited, gaveUp := WaitForLoad(ctx, maxLoad, maxWait, 10*time.Second, func(l float64, d time.Duration) {
		fmt.Fprintf(progress, "waiting for load %.1f < %.1f (%v)\n", l, maxLoad, d.Round(time.Second))
	})
	if gaveUp {
		fmt.Fprintf(progress, "load still above %.1f after %v; running anyway\n", maxLoad, waited.Round(time.Second))
	}
}
