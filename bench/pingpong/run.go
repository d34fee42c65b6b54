package pingpong

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/sparrowfleet/sparrow/bench/procs"
	"github.com/sparrowfleet/sparrow/internal/report"
	"github.com/sparrowfleet/sparrow/internal/stats"
)

// ServeArgs are the arguments, before MODE, that make the binary a ping-pong
// server (a hidden flag of "sparrow bench pingpong"): Run starts Binary with
// ServeArgs, MODE, "--listen", ADDR, and the child prints ReadyPrefix and
// its bound address on one line of stdout.
var ServeArgs = []string{"bench", "pingpong", "--serve"}

// ReadyPrefix begins the server's line that gives its address.
const ReadyPrefix = "pingpong listening on "

// Config is one benchmark run.
type Config struct {
	// Binary is the sparrow binary started as the server.
	Binary string
	// Modes are the stacks to measure, in order.
	Modes []Mode
	// Rates are the offered calls per second; 0 means flat out.
	Rates []float64
	// Duration is how long each point runs. The server's CPU time comes
	// from /proc in 10 ms ticks, so a point should burn well over that.
	Duration time.Duration
	// Listen is the server's address ("127.0.0.1:0").
	Listen string
	// Dir, if set, receives the points as pingpong.json.
	Dir string
	// Say, when set, reports progress.
	Say func(string)
}

// Points are a run's result, as `sparrow bench pingpong` prints it.
type Points []Point

// WriteTable prints the table of WriteTable.
func (ps Points) WriteTable(w io.Writer) error { return WriteTable(w, ps) }

// Options are `sparrow bench pingpong`: Config, with its modes and rates
// as the comma-separated lists the command takes (Validate parses them),
// and the output. Serve, if set, makes the process the server of that
// mode instead (the command starts itself so).
type Options struct {
	Config
	ModeList, RateList, Serve string
	// JSON prints the points as JSON instead of the table.
	JSON bool
}

// Validate parses ModeList and RateList into Config.
func (o *Options) Validate() (err error) {
	if o.Modes, err = ParseModes(o.ModeList); err != nil {
		return err
	}
	o.Rates, err = ParseRates(o.RateList)
	return err
}

// Run measures every point and prints the points on out.
func (o *Options) Run(ctx context.Context, out io.Writer) error {
	pts, err := Run(ctx, o.Config)
	if err != nil {
		return err
	}
	return report.Print(out, pts, report.If(o.JSON, report.JSONLine))
}

// ParseModes parses a comma-separated list of modes.
func ParseModes(list string) ([]Mode, error) {
	var out []Mode
	for _, s := range strings.Split(list, ",") {
		m, err := ParseMode(strings.TrimSpace(s))
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// ParseRates parses --rates: comma-separated calls per second, 0 for
// flat out.
func ParseRates(list string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(list, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("--rates: %q is not a rate (calls/s, 0 for flat out)", f)
		}
		out = append(out, v)
	}
	return out, nil
}

// Point is one mode at one rate.
type Point struct {
	Mode        Mode    `json:"mode"`
	OfferedRate float64 `json:"offered_calls_per_sec"` // 0: flat out
	Calls       int     `json:"calls"`
	Rate        float64 `json:"calls_per_sec"`
	// ClientUs and ServerUs are each side's CPU time (user + system) per
	// call, in microseconds.
	ClientUs float64 `json:"client_cpu_us_per_call"`
	ServerUs float64 `json:"server_cpu_us_per_call"`
	// LatencyUs is the round trip of each call, in microseconds.
	LatencyUs stats.Summary `json:"latency_us"`
}

func (c *Config) validate() error {
	switch {
	case c.Binary == "":
		return errors.New("ping-pong: no binary to start as the server")
	case len(c.Modes) == 0:
		return errors.New("ping-pong: no modes")
	case len(c.Rates) == 0:
		return errors.New("ping-pong: no rates")
	case c.Duration <= 0:
		return fmt.Errorf("ping-pong: duration %v must be positive", c.Duration)
	}
	for _, r := range c.Rates {
		if r < 0 {
			return fmt.Errorf("ping-pong: rate %g calls/s is negative", r)
		}
	}
	return nil
}

func (c *Config) say(format string, args ...any) {
	if c.Say != nil {
		c.Say(fmt.Sprintf(format, args...))
	}
}

// Run measures every mode at every rate, with a fresh server process per
// mode, and saves the points into cfg.Dir if it is set.
func Run(ctx context.Context, cfg Config) (Points, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	var out Points
	for _, m := range cfg.Modes {
		pts, err := runMode(ctx, cfg, m)
		if err != nil {
			return out, err
		}
		out = append(out, pts...)
	}
	if cfg.Dir != "" {
		return out, report.WriteJSONFile(filepath.Join(cfg.Dir, "pingpong.json"), out)
	}
	return out, nil
}

func runMode(ctx context.Context, cfg Config, mode Mode) ([]Point, error) {
	srv, addr, err := startServer(cfg, mode)
	if err != nil {
		return nil, err
	}
	defer stopServer(srv)
	c, err := dial(mode, addr)
	if err != nil {
		return nil, err
	}
	defer c.close()
	// One call first, so that connection setup is not measured.
	if err := c.call(ctx); err != nil {
		return nil, fmt.Errorf("ping-pong %s: first call: %w", mode, err)
	}
	var pts []Point
	for _, r := range cfg.Rates {
		cfg.say("%s at %s for %v", mode, rateName(r), cfg.Duration)
		p, err := measure(ctx, cfg, c, srv.Process.Pid, r)
		if err != nil {
			return pts, fmt.Errorf("ping-pong %s at %s: %w", mode, rateName(r), err)
		}
		p.Mode = mode
		pts = append(pts, p)
	}
	return pts, nil
}

func rateName(r float64) string {
	if r == 0 {
		return "flat out"
	}
	return fmt.Sprintf("%g calls/s", r)
}

// measure makes calls on c at rate r (0: back to back) for cfg.Duration and
// reads both sides' CPU time around them.
func measure(ctx context.Context, cfg Config, c caller, pid int, r float64) (Point, error) {
	srvBefore, err := procs.ReadUsage(pid)
	if err != nil {
		return Point{}, err
	}
	cliBefore, err := selfCPU()
	if err != nil {
		return Point{}, err
	}
	start := time.Now()
	end := start.Add(cfg.Duration)
	var lat []float64
	var gap time.Duration
	if r > 0 {
		gap = time.Duration(float64(time.Second) / r)
	}
	next := start
	for {
		now := time.Now()
		if !now.Before(end) {
			break
		}
		if gap > 0 {
			if d := next.Sub(now); d > 0 {
				time.Sleep(d)
			}
			// A late call does not start a burst to catch up.
			next = next.Add(gap)
			if now := time.Now(); next.Before(now) {
				next = now
			}
		}
		t0 := time.Now()
		if err := c.call(ctx); err != nil {
			return Point{}, fmt.Errorf("call %d: %w", len(lat)+1, err)
		}
		lat = append(lat, float64(time.Since(t0))/float64(time.Microsecond))
	}
	took := time.Since(start)
	cliAfter, err := selfCPU()
	if err != nil {
		return Point{}, err
	}
	srvAfter, err := procs.ReadUsage(pid)
	if err != nil {
		return Point{}, err
	}
	n := len(lat)
	if n == 0 {
		return Point{}, errors.New("no call completed")
	}
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) / float64(n) }
	return Point{
		OfferedRate: r,
		Calls:       n,
		Rate:        float64(n) / took.Seconds(),
		ClientUs:    us(cliAfter - cliBefore),
		ServerUs:    us(srvAfter.CPU - srvBefore.CPU),
		LatencyUs:   stats.Summarize(lat),
	}, nil
}

// selfCPU is this process's user + system time, in microsecond resolution.
func selfCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// startServer starts the server child and waits for its address.
func startServer(cfg Config, mode Mode) (*exec.Cmd, string, error) {
	args := append(append([]string(nil), ServeArgs...), string(mode), "--listen", cfg.Listen)
	cmd := exec.Command(cfg.Binary, args...)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", fmt.Errorf("ping-pong server: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("start ping-pong server (%s): %w", cfg.Binary, err)
	}
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(out)
		for s.Scan() {
			if a, ok := strings.CutPrefix(s.Text(), ReadyPrefix); ok {
				line <- a
				return
			}
		}
		close(line)
	}()
	select {
	case a, ok := <-line:
		if ok {
			return cmd, a, nil
		}
	case <-time.After(30 * time.Second):
	}
	stopServer(cmd)
	return nil, "", fmt.Errorf("ping-pong %s server (%s) did not report its address", mode, cfg.Binary)
}

// stopServer ends the child and reaps it.
func stopServer(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// AddFlags declares `sparrow bench pingpong`'s flags on fs, with their
// defaults.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Binary, "binary", "", "sparrow binary started as the server (default: this one)")
	fs.StringVar(&o.ModeList, "modes", "bare,rpc", `comma-separated stacks: "bare" (thrift library alone), "rpc" (internal/rpc)`)
	fs.StringVar(&o.RateList, "rates", "0,100,1000,5000", "comma-separated offered calls per second; 0 is flat out")
	fs.DurationVar(&o.Duration, "duration", 5*time.Second, "how long each point runs (the server's CPU time is read in 10 ms ticks)")
	fs.StringVar(&o.Listen, "listen", "127.0.0.1:0", "the server's address")
	fs.StringVar(&o.Dir, "out", "", "if set, also write pingpong.json into this directory")
	fs.BoolVar(&o.JSON, "json", false, "print the results as JSON instead of a table")
	fs.StringVar(&o.Serve, "serve", "", "internal: be the server of MODE (started by this command itself)")
	_ = fs.MarkHidden("serve")
}
