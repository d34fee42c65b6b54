package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strings"
	"sync"
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

	ll := &launchLog{w: stdout, node: cfg.Node}
	bcfg := client.BackendConfig{
		App: cfg.App, NodeMonitor: cfg.NodeMonitor, Listen: cfg.Listen, AdvertiseHost: cfg.Advertise,
		Run: func(ctx context.Context, t client.LaunchedTask) ([]byte, error) {
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

	bcfg.RegisterBackoff = client.DefaultRegisterBackoff
	bcfg.Watch = cfg.Watch
	if cfg.Watch <= 0 {
		bcfg.Watch = -1
	}
	// The node monitor may not be up yet (containers start in any order):
	// NewBackend keeps trying until it answers or the timeout passes.
	regCtx, regCancel := context.WithTimeout(ctx, cfg.RegisterTimeout)
	defer regCancel()
	be, err := client.NewBackend(regCtx, bcfg)
	if err != nil {
		if ctx.Err() != nil {
			return nil // signalled before registering
		}
		return fmt.Errorf("executor for app %q: no node monitor at %s accepted it within %v: %w",
			cfg.App, cfg.NodeMonitor, cfg.RegisterTimeout, err)
	}

	<-ctx.Done()
	log.Info().Int("running", be.Running()).Dur("drain", cfg.Drain).Msg("signal received; draining running tasks")
	drainCtx, drainCancel := context.WithTimeout(context.Background(), cfg.Drain)
	defer drainCancel()
	if err := be.Shutdown(drainCtx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
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
