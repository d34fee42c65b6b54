package main

import (
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/bench/locality"
)

// The three-way locality experiment on a live fleet.
func init() { benchCmd.AddCommand(newBenchLocalityCmd()) }

func newBenchLocalityCmd() *cobra.Command {
	var o locality.Options
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
			if err := o.Validate(); err != nil {
				return err
			}
			ctx, cancel := benchContext(cmd, true)
			defer cancel()
			logs := &locality.MuteWriter{W: os.Stderr}
			var err error
			if o.Log, err = fleetLog(logs); err != nil {
				return err
			}
			o.Mute = logs.Muted.Store
			o.Say = lines(cmd.ErrOrStderr())
			o.Command = "sparrow " + strings.Join(os.Args[1:], " ")
			return o.RunAll(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fs := cmd.Flags()
	w := &o.Workload
	fs.IntVar(&w.Topology.Nodes, "nodes", 40, "node monitors")
	fs.IntVar(&w.Topology.Racks, "racks", 4, "racks the node monitors are split into (node attribute \"rack\")")
	fs.IntVar(&w.Slots, "slots", 1, "slots per node monitor")
	fs.IntVar(&o.Schedulers, "schedulers", 1, "schedulers; jobs go to their frontends in turn")
	fs.IntVar(&w.Blocks, "blocks", 400, "input blocks in the catalogue, each with 3 replicas")
	fs.Float64Var(&o.BlockMiB, "block-mib", 64, "size of every block, MiB")
	fs.Float64Var(&w.ZipfS, "zipf", 1.1, "Zipf exponent s of block popularity: P(k-th block) ∝ k^-s")
	fs.IntVar(&w.TasksPerJob, "tasks", 10, "tasks per job, each reading one block")
	fs.Float64Var(&w.Load, "load", 0.7, "offered load as a fraction of all slots, counting each task at --cpu")
	fs.DurationVar(&w.CPU, "cpu", 200*time.Millisecond, "each task's CPU time (its whole run time when node-local)")
	fs.DurationVar(&w.Duration, "duration", 60*time.Second, "how long jobs arrive, per mode")
	fs.Float64Var(&o.RackMiBps, "rack-mibps", 64/0.100, "bandwidth of a read within a rack, MiB/s (scaled down: 64 MiB in 100 ms)")
	fs.Float64Var(&o.CoreMiBps, "core-mibps", 64/0.600, "bandwidth of a read across the core switch, MiB/s (scaled down: 64 MiB in 600 ms)")
	fs.DurationVar(&o.DelayThreshold, "delay-threshold", 0, "the relaxing modes' delayThreshold (0: 3 x --cpu)")
	fs.Float64Var(&o.RackCost, "rack-cost", 1, "ψ: cost of moving a GB across a rack switch, in Quincy's units (ω = 0.5 per second of waiting), for the prices and the reference; 0.745 matches the default read model")
	fs.Float64Var(&o.CoreCost, "core-cost", 2, "ξ: cost of moving a GB across the core switch, in Quincy's units, for the prices and the reference; 4.47 matches the default read model")
	fs.DurationVar(&o.Period, "period", time.Second, "coordinator period and node monitors' report interval (guided mode)")
	fs.DurationVar(&o.Drain, "drain", 30*time.Second, "longest wait for unfinished jobs after the last arrival")
	fs.StringVar(&o.Modes, "modes", "strict,delay,guided", "comma-separated modes to run: strict, delay, guided")
	fs.Uint64Var(&w.Seed, "seed", 1, "seed of the trace (replicas, arrivals, blocks); the same for every mode")
	fs.Uint64Var(&o.Seed, "sched-seed", 1, "seed of the schedulers' sampling")
	fs.StringVar(&o.GossipProfile, "gossip-profile", "lan", "members' gossip timing: lan, local or wan")
	fs.StringVar(&o.OutDir, "out-dir", ".", "directory for locality.json and the locality-fractions and locality-response plots")
	fs.BoolVar(&o.JSON, "json", false, "print the JSON report on stdout instead of the table")
	fs.BoolVar(&o.Reference, "reference", true, "also schedule the trace offline with centralized Quincy (policy Q) as the reference")
	fs.Float64Var(&o.MaxLoad, "max-load", 0, "before each mode, wait until the host's 1-minute load (/proc/loadavg) is below this (0: don't wait)")
	fs.DurationVar(&o.MaxLoadWait, "max-load-wait", 5*time.Minute, "longest wait for --max-load; the run then goes ahead and says so")
	return cmd
}
