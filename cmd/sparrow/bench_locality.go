package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/bench/locality"
)

// The three-way locality experiment on a live fleet.
func init() { benchCmd.AddCommand(newBenchLocalityCmd()) }

func newBenchLocalityCmd() *cobra.Command {
	var (
		cfg         locality.Config
		modes       string
		blockMiB    float64
		rackMiBps   float64
		coreMiBps   float64
		outDir      string
		asJSON      bool
		reference   bool
		maxLoad     float64
		maxLoadWait time.Duration
	)
	cmd := &cobra.Command{
		Use:   "locality",
		Short: "Data locality under skew on a live fleet: strict preferences, delay relaxation, coordinator guidance",
		Long: `Run the locality experiment on an in-process fleet (real Thrift and
gossip on loopback, each member on its own 127.0.x.y address): --nodes node
monitors x --slots slots in --racks racks (node attribute "rack"), and a
catalogue of --blocks input blocks of --block-mib MiB, each with 3
replicas placed as HDFS does (one node, two on one other rack). Jobs of
--tasks tasks arrive as a Poisson process offering --load of the slots
(counting each task at its CPU time); each task reads one block drawn by a
Zipf(--zipf) popularity and prefers the block's 3 replica nodes. It runs
--cpu plus the time to read its block: nothing on a replica's node, the
block over --rack-mibps within a replica's rack, over --core-mibps across
the core switch otherwise (a scaled-down network: by default a 64 MiB
block takes 100 ms within a rack and 600 ms across the core, beside 200 ms
of CPU). The defaults (1 slot, 200 ms tasks: 140 tasks/s at load 0.7)
keep the in-process fleet's RPC rate within what a shared 2-core host
serves; at 2 slots and 100 ms tasks (560 tasks/s) the fleet itself
saturated there (docs/LOCALITY.md).

With --reference, the same trace is also scheduled offline by centralized
Quincy (core/quincy's policy Q, solved with core/flow at every event, no
preemption) in a discrete-event simulation with the same read model: what
one scheduler seeing every queue at once would do with Quincy's costs.

The same trace (--seed) runs in each of --modes, each on a fresh fleet:
"strict" (delayThreshold 0, as an original Sparrow client means
preferences), "delay" (tasks opt into relaxation with --delay-threshold:
the scheduler widens to the replicas' racks, then the cluster), "guided"
(the same plus a coordinator with locality guidance, whose prices let the
scheduler widen at once when waiting costs more than moving the input).

Prints per mode the job response time (submit to the last task's result)
p50/p99, the scheduling delay (submit to launch) p50/p99, the fractions of
tasks run node-local, rack-local and elsewhere, and the bytes read within a
rack and across the core; writes locality.json and the plots
locality-fractions and locality-response (.svg and .png) into --out-dir.`,
		Example: `  nice sparrow bench locality --out-dir docs/img
  sparrow bench locality --nodes 8 --racks 2 --duration 10s --modes strict,delay`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var list []locality.Mode
			for _, name := range strings.Split(modes, ",") {
				m, err := locality.ModeByName(strings.TrimSpace(name))
				if err != nil {
					return fmt.Errorf("--modes: %w", err)
				}
				list = append(list, m)
			}
			w := &cfg.Workload
			switch {
			case w.Topology.Nodes < 1 || w.Topology.Racks < 1 || w.Slots < 1 || cfg.Schedulers < 1:
				return fmt.Errorf("--nodes, --racks, --slots and --schedulers must be at least 1")
			case w.Blocks < 1 || w.TasksPerJob < 1 || !(blockMiB > 0):
				return fmt.Errorf("--blocks and --tasks must be at least 1, --block-mib positive")
			case !(w.ZipfS >= 0) || !(w.Load > 0):
				return fmt.Errorf("--zipf must be at least 0 and --load positive")
			case w.CPU <= 0 || w.Duration <= 0 || cfg.DelayThreshold < 0 || cfg.Period <= 0 || cfg.Drain <= 0:
				return fmt.Errorf("--cpu, --duration, --period and --drain must be positive, --delay-threshold not negative")
			case !(rackMiBps > 0) || !(coreMiBps > 0):
				return fmt.Errorf("--rack-mibps and --core-mibps must be positive")
			case !(cfg.RackCost > 0) || !(cfg.CoreCost > 0) || cfg.RackCost > 1e6 || cfg.CoreCost > 1e6:
				return fmt.Errorf("--rack-cost and --core-cost must be in (0, 1e6]")
			}
			w.BlockBytes = int64(blockMiB * (1 << 20))
			cfg.Read = locality.ReadModel{RackBandwidth: rackMiBps * (1 << 20), CoreBandwidth: coreMiBps * (1 << 20)}
			if err := os.MkdirAll(outDir, 0o755); err != nil {
				return fmt.Errorf("--out-dir: %w", err)
			}
			ctx, cancel := policyContext(cmd)
			defer cancel()
			log, err := newLogger() // validates --log-level
			if err != nil {
				return err
			}
			stderr := cmd.ErrOrStderr()
			logs := &locality.MuteWriter{W: os.Stderr}
			cfg.Log = zerolog.New(logs).Level(log.GetLevel()).With().Timestamp().Logger()
			cfg.Mute = logs.Muted.Store
			cfg.Say = func(s string) { fmt.Fprintln(stderr, s) }
			fmt.Fprintf(stderr, "locality: %d node monitors x %d slots in %d racks, %d blocks, Zipf %g, load %g, %v per mode, modes %s\n",
				w.Topology.Nodes, w.Slots, w.Topology.Racks, w.Blocks, w.ZipfS, w.Load, w.Duration, modes)
			var rep locality.Report
			for k, m := range list {
				waitForQuietHost(ctx, stderr, maxLoad, maxLoadWait)
				r, err := locality.Run(ctx, cfg, []locality.Mode{m})
				if err != nil {
					return err
				}
				if k == 0 {
					rep = r
				} else {
					rep.Modes = append(rep.Modes, r.Modes...)
				}
			}
			if reference {
				ref, err := locality.RunReference(cfg)
				if err != nil {
					return fmt.Errorf("reference: %w", err)
				}
				rep.Reference = &ref
			}
			rep.Command = "sparrow " + strings.Join(os.Args[1:], " ")
			return rep.Write(outDir, asJSON, cmd.OutOrStdout(), stderr)
		},
	}
	fs := cmd.Flags()
	w := &cfg.Workload
	fs.IntVar(&w.Topology.Nodes, "nodes", 40, "node monitors")
	fs.IntVar(&w.Topology.Racks, "racks", 4, "racks the node monitors are split into (node attribute \"rack\")")
	fs.IntVar(&w.Slots, "slots", 1, "slots per node monitor")
	fs.IntVar(&cfg.Schedulers, "schedulers", 1, "schedulers; jobs go to their frontends in turn")
	fs.IntVar(&w.Blocks, "blocks", 400, "input blocks in the catalogue, each with 3 replicas")
	fs.Float64Var(&blockMiB, "block-mib", 64, "size of every block, MiB")
	fs.Float64Var(&w.ZipfS, "zipf", 1.1, "Zipf exponent s of block popularity: P(k-th block) ∝ k^-s")
	fs.IntVar(&w.TasksPerJob, "tasks", 10, "tasks per job, each reading one block")
	fs.Float64Var(&w.Load, "load", 0.7, "offered load as a fraction of all slots, counting each task at --cpu")
	fs.DurationVar(&w.CPU, "cpu", 200*time.Millisecond, "each task's CPU time (its whole run time when node-local)")
	fs.DurationVar(&w.Duration, "duration", 60*time.Second, "how long jobs arrive, per mode")
	fs.Float64Var(&rackMiBps, "rack-mibps", 64/0.100, "bandwidth of a read within a rack, MiB/s (scaled down: 64 MiB in 100 ms)")
	fs.Float64Var(&coreMiBps, "core-mibps", 64/0.600, "bandwidth of a read across the core switch, MiB/s (scaled down: 64 MiB in 600 ms)")
	fs.DurationVar(&cfg.DelayThreshold, "delay-threshold", 0, "the relaxing modes' delayThreshold (0: 3 x --cpu)")
	fs.Float64Var(&cfg.RackCost, "rack-cost", 1, "ψ: cost of moving a GB across a rack switch, in Quincy's units (ω = 0.5 per second of waiting), for the prices and the reference; 0.745 matches the default read model")
	fs.Float64Var(&cfg.CoreCost, "core-cost", 2, "ξ: cost of moving a GB across the core switch, in Quincy's units, for the prices and the reference; 4.47 matches the default read model")
	fs.DurationVar(&cfg.Period, "period", time.Second, "coordinator period and node monitors' report interval (guided mode)")
	fs.DurationVar(&cfg.Drain, "drain", 30*time.Second, "longest wait for unfinished jobs after the last arrival")
	fs.StringVar(&modes, "modes", "strict,delay,guided", "comma-separated modes to run: strict, delay, guided")
	fs.Uint64Var(&w.Seed, "seed", 1, "seed of the trace (replicas, arrivals, blocks); the same for every mode")
	fs.Uint64Var(&cfg.Seed, "sched-seed", 1, "seed of the schedulers' sampling")
	fs.StringVar(&cfg.GossipProfile, "gossip-profile", "lan", "members' gossip timing: lan, local or wan")
	fs.StringVar(&outDir, "out-dir", ".", "directory for locality.json and the locality-fractions and locality-response plots")
	fs.BoolVar(&asJSON, "json", false, "print the JSON report on stdout instead of the table")
	fs.BoolVar(&reference, "reference", true, "also schedule the trace offline with centralized Quincy (policy Q) as the reference")
	fs.Float64Var(&maxLoad, "max-load", 0, "before each mode, wait until the host's 1-minute load (/proc/loadavg) is below this (0: don't wait)")
	fs.DurationVar(&maxLoadWait, "max-load-wait", 5*time.Minute, "longest wait for --max-load; the run then goes ahead and says so")
	return cmd
}
