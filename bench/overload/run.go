package overload

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sparrowfleet/sparrow/bench/driver"
	"github.com/sparrowfleet/sparrow/bench/procs"
)

// Run measures every multiple in cfg.Multiples, a fresh fleet each, and
// returns the points measured so far if one fails.
func Run(ctx context.Context, cfg Config) ([]Point, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	var points []Point
	for i, m := range cfg.Multiples {
		pc := cfg
		pc.Say = func(s string) { cfg.say("[%d/%d, %s]: %s", i+1, len(cfg.Multiples), FormatMultiple(m), s) }
		p, err := runPoint(ctx, pc, m)
		if err != nil {
			return points, fmt.Errorf("%s of capacity (logs in %s): %w", FormatMultiple(m), pointDir(cfg, m), err)
		}
		points = append(points, p)
	}
	return points, nil
}

func pointDir(cfg Config, m float64) string {
	return filepath.Join(cfg.Dir, "x"+strconv.FormatFloat(m, 'g', -1, 64))
}

// runPoint starts a fleet, offers it m times its capacity for
// cfg.Duration while sampling it, lets the driver drain, and stops it.
func runPoint(ctx context.Context, cfg Config, m float64) (Point, error) {
	dir := pointDir(cfg, m)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Point{}, fmt.Errorf("point dir: %w", err)
	}
	capacity := cfg.Capacity()
	p := Point{Multiple: m, CapacityTasksPerS: capacity, OfferedTasksPerS: m * capacity}
	fleet, err := procs.StartFleet(ctx, procs.FleetSpec{
		Binary: cfg.Binary, Schedulers: cfg.Schedulers, NodeMonitors: cfg.NodeMonitors, Slots: cfg.Slots,
		GossipProfile: cfg.GossipProfile, Net: cfg.Net, Dir: dir, LogLevel: cfg.LogLevel, Pprof: cfg.HeapProfiles,
		SchedulerArgs:   cfg.SchedulerArgs,
		NodeMonitorArgs: append([]string{"--max-queued", strconv.Itoa(cfg.MaxQueued)}, cfg.NodeMonitorArgs...),
		ReadyTimeout:    cfg.ReadyTimeout,
	}, cfg.Say)
	if err != nil {
		return p, err
	}
	defer fleet.Stop()
	members := fleet.Members()
	offsets := make([]int64, len(members))
	for i, mi := range members {
		if st, err := os.Stat(mi.Log); err == nil {
			offsets[i] = st.Size()
		}
	}
	p.LoadAvg[0] = loadAvg()

	rate := m * capacity / float64(cfg.Tasks)
	jobs := max(1, int(math.Ceil(rate*cfg.Duration.Seconds())))
	args := []string{"drive", "--json", "--log-level", "error", "--app", "sleep",
		"--schedulers", strings.Join(fleet.Schedulers(), ","), "--listen", fleet.Addr(3, 0, 50201),
		"--jobs", strconv.Itoa(jobs), "--tasks", strconv.Itoa(cfg.Tasks),
		"--rate", strconv.FormatFloat(rate, 'g', -1, 64), "--task-duration", cfg.TaskDuration.String(),
		"--deadline", (cfg.Duration + cfg.Drain).String(), "--progress-every", "5s"}
	if cfg.FrontendTimeout > 0 {
		args = append(args, "--timeout", cfg.FrontendTimeout.String())
	}
	args = append(args, cfg.DriverArgs...)
	logf, err := os.Create(filepath.Join(dir, "drive.log"))
	if err != nil {
		return p, fmt.Errorf("driver log: %w", err)
	}
	defer logf.Close()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, cfg.Binary, args...)
	cmd.Stdout, cmd.Stderr = io.MultiWriter(&out, logf), logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cfg.say("offering %.4g tasks/s (%d jobs x %d tasks at %.4g jobs/s) for %v", m*capacity, jobs, cfg.Tasks, rate, cfg.Duration)
	if err := cmd.Start(); err != nil {
		return p, fmt.Errorf("start driver: %w", err)
	}
	start := time.Now()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	for _, mi := range members {
		p.Processes = append(p.Processes, Process{Role: mi.Role, Name: mi.Name})
	}
	p.Processes = append(p.Processes, Process{Role: procs.Frontend, Name: "driver"})
	pids := make([]int, 0, len(p.Processes))
	for _, mi := range members {
		pids = append(pids, mi.PID)
	}
	pids = append(pids, cmd.Process.Pid)
	s := &sampler{fleet: fleet, members: members, pids: pids, start: start, dir: dir}
	p.Samples, err = s.run(ctx, cfg)
	if err != nil {
		stopDriver(cmd, exited)
		return p, err
	}

	// Let the driver finish its drain; it exits by its deadline.
	var runErr error
	select {
	case runErr = <-exited:
	case <-time.After(time.Until(start.Add(cfg.Duration + cfg.Drain + 30*time.Second))):
		cfg.say("driver still running 30 s past its deadline; stopping it")
		runErr = stopDriver(cmd, exited)
	case <-ctx.Done():
		stopDriver(cmd, exited)
		return p, ctx.Err()
	}
	var sum driver.Summary
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil {
		return p, fmt.Errorf("driver summary (exit %v; see %s): %w", runErr, logf.Name(), err)
	}
	gossip := map[string]GossipEvents{}
	for i, mi := range members {
		if mi.Role == procs.Executor {
			continue
		}
		b, err := readFrom(mi.Log, offsets[i])
		if err != nil {
			return p, err
		}
		gossip[mi.Name] = ScanGossip(b)
	}
	p.LoadAvg[1] = loadAvg()
	summarize(&p, cfg.Settle.Seconds(), cfg.Duration.Seconds(), sum, gossip)
	if err := writeJSON(filepath.Join(dir, "point.json"), p); err != nil {
		return p, err
	}
	cfg.say("goodput %.1f tasks/s (%.1f%% of capacity), %d submit errors, %d saturation refusals, %.3f attempts per task, %d members declared dead",
		p.GoodputTasksPerS, p.GoodputPct, p.SubmitErrors, p.Refusals, p.AttemptsPerTask, len(p.Gossip.DeclaredDead))
	return p, nil
}

// stopDriver ends the driver: SIGTERM (it prints its summary), then a
// kill after 10 s.
func stopDriver(cmd *exec.Cmd, exited <-chan error) error {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		return err
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		return errors.Join(errors.New("driver killed"), <-exited)
	}
}

// readFrom reads a file from offset on.
func readFrom(path string, offset int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("member log: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, fmt.Errorf("member log %s: %w", path, err)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("member log %s: %w", path, err)
	}
	return b, nil
}

// loadAvg is the 1-minute load average, or -1 if unreadable.
func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return unknown
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return unknown
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return unknown
	}
	return v
}

// writeJSON writes v, indented, to path.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
