package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/bench/driver"
	"github.com/sparrowfleet/sparrow/bench/fleet"
	"github.com/sparrowfleet/sparrow/client"
)

// Config is one executor, as sparrow executor's flags give it.
type Config struct {
	// App is the app it runs tasks for (required).
	App string
	// NodeMonitor is the NodeMonitorService host:port it registers with.
	NodeMonitor string
	// Listen is its BackendService address; Advertise the host given to
	// the node monitor when Listen is a wildcard address.
	Listen, Advertise string
	// Node is the node name written in launch lines; "" is the host name.
	Node string
	// CPUProfile, if set, is the file the run's CPU profile is written
	// to; {node} in it becomes Node.
	CPUProfile string
	// LogLaunches writes one JSON line per launchTask; ReportLaunchTime
	// puts each task's launch time in its message to the frontend.
	LogLaunches, ReportLaunchTime bool
	// RegisterTimeout bounds the first registration; Drain is how long
	// running tasks may finish once ctx ends; Watch is how often the
	// node monitor is checked, to re-register after it restarts (0
	// never).
	RegisterTimeout, Drain, Watch time.Duration
}

// launchLog writes one JSON line per launch; safe for concurrent use.
type launchLog struct {
	mu   sync.Mutex
	w    io.Writer
	node string
}

type launchLine struct {
	Launch launchRecord `json:"launch"`
}

type launchRecord struct {
	Request string `json:"request"`
	Task    string `json:"task"`
	Node    string `json:"node"`
	App     string `json:"app"`
	At      string `json:"at"`
}

func (l *launchLog) record(t client.LaunchedTask) {
	b, err := json.Marshal(launchLine{launchRecord{
		Request: t.Ref.RequestID, Task: t.Ref.TaskID, Node: l.node, App: t.Ref.App,
		At: time.Now().UTC().Format(time.RFC3339Nano),
	}})
	if err != nil {
		return
	}
	b = append(b, '\n')
	l.mu.Lock()
	l.w.Write(b)
	l.mu.Unlock()
}

// Run runs the executor until ctx ends, then drains it and closes it.
// Launch lines, with cfg.LogLaunches, go to stdout.
func Run(ctx context.Context, cfg Config, log zerolog.Logger, stdout io.Writer) error {
	if cfg.App == "" {
		return fmt.Errorf("--app is required")
	}
	if cfg.Node == "" {
		cfg.Node, _ = os.Hostname()
	}
	log = log.With().Str("app", cfg.App).Str("node", cfg.Node).Logger()
	if cfg.CPUProfile != "" {
		stop, err := startCPUProfile(strings.ReplaceAll(cfg.CPUProfile, "{node}", cfg.Node))
		if err != nil {
			return err
		}
		defer stop()
	}

	var running atomic.Int64
	ll := &launchLog{w: stdout, node: cfg.Node}
	bcfg := client.BackendConfig{
		App: cfg.App, NodeMonitor: cfg.NodeMonitor, Listen: cfg.Listen, AdvertiseHost: cfg.Advertise,
		Run: func(ctx context.Context, t client.LaunchedTask) ([]byte, error) {
			running.Add(1)
			defer running.Add(-1)
			at := time.Now()
			body, err := fleet.SleepTask(ctx, t)
			if err == nil && cfg.ReportLaunchTime {
				body = driver.LaunchBody(at)
			}
			return body, err
		},
		Log: log,
	}
	if cfg.LogLaunches {
		bcfg.OnLaunch = ll.record
	}

	// The node monitor may not be up yet (containers start in any order):
	// keep trying to register until it answers or the timeout passes.
	regCtx, regCancel := context.WithTimeout(ctx, cfg.RegisterTimeout)
	defer regCancel()
	var be *client.Backend
	var lastErr error
	for attempt := 0; be == nil; attempt++ {
		b, err := client.NewBackend(regCtx, bcfg)
		if err == nil {
			be = b
			break
		}
		if lastErr == nil || err.Error() != lastErr.Error() {
			log.Info().Err(err).Msg("node monitor not answering yet; retrying")
		}
		lastErr = err
		select {
		case <-regCtx.Done():
			if ctx.Err() != nil {
				return nil // signalled before registering
			}
			return fmt.Errorf("executor for app %q: no node monitor at %s accepted it within %v: %w",
				cfg.App, cfg.NodeMonitor, cfg.RegisterTimeout, lastErr)
		case <-time.After(backoff(attempt)):
		}
	}
	log.Info().Str("backend", be.Addr()).Str("node_monitor", cfg.NodeMonitor).Msg("executor registered with its node monitor")

	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		watchNodeMonitor(ctx, be, cfg, log)
	}()

	<-ctx.Done()
	<-watchDone
	log.Info().Int64("running", running.Load()).Dur("drain", cfg.Drain).Msg("signal received; draining running tasks")
	deadline := time.Now().Add(cfg.Drain)
	for running.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := running.Load(); n > 0 {
		log.Warn().Int64("running", n).Msg("drain timed out; cancelling running tasks (reported failed)")
	}
	return be.Close()
}

// startCPUProfile profiles the process into path until the returned stop
// is called.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile %s: %w", path, err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// backoff is the wait before registration attempt n+1: 100 ms doubling to
// 1 s.
func backoff(n int) time.Duration {
	d := 100 * time.Millisecond << min(n, 5)
	return min(d, time.Second)
}

// watchNodeMonitor re-registers the executor when its node monitor comes
// back after being unreachable (a restart forgets registrations). It only
// dials the port; a live node monitor sees no traffic.
func watchNodeMonitor(ctx context.Context, be *client.Backend, cfg Config, log zerolog.Logger) {
	if cfg.Watch <= 0 {
		<-ctx.Done()
		return
	}
	t := time.NewTicker(cfg.Watch)
	defer t.Stop()
	down := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		conn, err := net.DialTimeout("tcp", cfg.NodeMonitor, cfg.Watch)
		if err != nil {
			if !down {
				log.Warn().Err(err).Str("node_monitor", cfg.NodeMonitor).Msg("node monitor unreachable")
			}
			down = true
			continue
		}
		conn.Close()
		if !down {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err = be.Register(rctx)
		cancel()
		if err != nil {
			log.Warn().Err(err).Msg("node monitor is back but re-registration failed; retrying")
			continue
		}
		down = false
		log.Info().Str("node_monitor", cfg.NodeMonitor).Msg("node monitor is back; re-registered")
	}
}
