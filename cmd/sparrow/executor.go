package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/bench/driver"
	"github.com/sparrowfleet/sparrow/bench/fleet"
	"github.com/sparrowfleet/sparrow/client"
)

func init() { rootCmd.AddCommand(newExecutorCmd()) }

type executorFlags struct {
	app, nodeMonitor, listen, advertise, node string
	cpuProfile                                string
	logLaunches, reportLaunchTime             bool
	registerTimeout, drain, watch             time.Duration
}

func newExecutorCmd() *cobra.Command {
	var (
		ef   executorFlags
		conf *daemonConfig
	)
	cmd := &cobra.Command{
		Use:   "executor",
		Short: "Run a sleep executor (BackendService) for one app beside a node monitor",
		Long: `Run an executor for one app: it serves BackendService, registers with its
node monitor (retrying until the node monitor answers, so start order does
not matter) and runs each launched task by sleeping for the duration in the
task's message ("200ms"; an empty message is a no-op). It reports the task
back to its frontend and finished to its node monitor.

With --log-launches it prints one JSON line per launchTask on stdout:
  {"launch":{"request":"...","task":"...","node":"...","app":"...","at":"..."}}
so that launches can be checked for exactly-once across every executor.

It re-registers if its node monitor restarts. On SIGTERM it waits up to
--drain for running tasks to finish, then cancels the rest (they are
reported failed, status 1002) and exits.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := newLogger()
			if err != nil {
				return err
			}
			conf.report(log)
			return runExecutor(ef, log, cmd.OutOrStdout())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&ef.app, "app", "", "the app this executor runs tasks for (required)")
	fs.StringVar(&ef.nodeMonitor, "node-monitor", client.DefaultNodeMonitor, "NodeMonitorService host:port of the node monitor on this machine")
	fs.StringVar(&ef.listen, "listen", "127.0.0.1:20101", "BackendService address (the node monitor calls launchTask here)")
	fs.StringVar(&ef.advertise, "advertise-host", "127.0.0.1", "host given to the node monitor when --listen is a wildcard address")
	fs.StringVar(&ef.node, "node", "", "node name written in launch logs (default: the host name)")
	fs.BoolVar(&ef.logLaunches, "log-launches", false, "print one JSON line per launchTask on stdout")
	fs.BoolVar(&ef.reportLaunchTime, "report-launch-time", false, "put each task's launch time in its OK message to the frontend, so sparrow drive reports scheduling delay (submit to launch); the hosts' clocks must agree")
	fs.DurationVar(&ef.registerTimeout, "register-timeout", 2*time.Minute, "give up if the node monitor does not accept the registration within this long")
	fs.DurationVar(&ef.drain, "drain", 5*time.Second, "on SIGTERM, how long to let running tasks finish before cancelling them")
	fs.DurationVar(&ef.watch, "watch", time.Second, "how often to check the node monitor, to re-register after it restarts (0 disables)")
	fs.StringVar(&ef.cpuProfile, "cpuprofile", "", "write a CPU profile (pprof format) of the executor's whole run to this file, finished at shutdown; {node} in the path becomes --node, so executors sharing $SPARROW_CPUPROFILE write one file each")
	conf = withConfig(cmd)
	return cmd
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

func runExecutor(ef executorFlags, log zerolog.Logger, stdout io.Writer) error {
	if ef.app == "" {
		return fmt.Errorf("--app is required")
	}
	if ef.node == "" {
		ef.node, _ = os.Hostname()
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	log = log.With().Str("app", ef.app).Str("node", ef.node).Logger()
	if ef.cpuProfile != "" {
		stop, err := startCPUProfile(strings.ReplaceAll(ef.cpuProfile, "{node}", ef.node))
		if err != nil {
			return err
		}
		defer stop()
	}

	var running atomic.Int64
	ll := &launchLog{w: stdout, node: ef.node}
	cfg := client.BackendConfig{
		App: ef.app, NodeMonitor: ef.nodeMonitor, Listen: ef.listen, AdvertiseHost: ef.advertise,
		Run: func(ctx context.Context, t client.LaunchedTask) ([]byte, error) {
			running.Add(1)
			defer running.Add(-1)
			at := time.Now()
			body, err := fleet.SleepTask(ctx, t)
			if err == nil && ef.reportLaunchTime {
				body = driver.LaunchBody(at)
			}
			return body, err
		},
		Log: log,
	}
	if ef.logLaunches {
		cfg.OnLaunch = ll.record
	}

	// The node monitor may not be up yet (containers start in any order):
	// keep trying to register until it answers or the timeout passes.
	regCtx, regCancel := context.WithTimeout(ctx, ef.registerTimeout)
	defer regCancel()
	var be *client.Backend
	var lastErr error
	for attempt := 0; be == nil; attempt++ {
		b, err := client.NewBackend(regCtx, cfg)
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
				ef.app, ef.nodeMonitor, ef.registerTimeout, lastErr)
		case <-time.After(backoff(attempt)):
		}
	}
	log.Info().Str("backend", be.Addr()).Str("node_monitor", ef.nodeMonitor).Msg("executor registered with its node monitor")

	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		watchNodeMonitor(ctx, be, ef, log)
	}()

	<-ctx.Done()
	<-watchDone
	log.Info().Int64("running", running.Load()).Dur("drain", ef.drain).Msg("signal received; draining running tasks")
	deadline := time.Now().Add(ef.drain)
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
func watchNodeMonitor(ctx context.Context, be *client.Backend, ef executorFlags, log zerolog.Logger) {
	if ef.watch <= 0 {
		<-ctx.Done()
		return
	}
	t := time.NewTicker(ef.watch)
	defer t.Stop()
	down := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		conn, err := net.DialTimeout("tcp", ef.nodeMonitor, ef.watch)
		if err != nil {
			if !down {
				log.Warn().Err(err).Str("node_monitor", ef.nodeMonitor).Msg("node monitor unreachable")
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
		log.Info().Str("node_monitor", ef.nodeMonitor).Msg("node monitor is back; re-registered")
	}
}
