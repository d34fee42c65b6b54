package main

import (
	"os"
	"strings"

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
			o.Say = printLines(cmd.ErrOrStderr())
			o.Command = "sparrow " + strings.Join(os.Args[1:], " ")
			return o.RunAll(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}
