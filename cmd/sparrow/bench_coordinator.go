package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/bench/guidance"
)

// bench coordinator: the coordinator's cost per period at fleet sizes no
// test machine runs (bench/guidance).
func init() { benchCmd.AddCommand(newBenchCoordinatorCmd()) }

func newBenchCoordinatorCmd() *cobra.Command {
	var o guidance.Options
	cmd := &cobra.Command{
		Use:   "coordinator",
		Short: "Measure the fairness coordinator's CPU and guidance gossip at 100 to 10,000 node monitors",
		Long: `Drive the coordinator's publish path (CMMF solve with core/fairshare and
encoding with fairgossip, as coordinator.Guide does) with synthetic node
reports: nodes spread round robin over machine types, each user with work
on 4 nodes of each of 1-3 random types. Every period a --churn fraction of
users change their queued and running counts on one node. Measured: CPU
time per period (getrusage), name table, snapshot and delta sizes.
Computed: gossip bytes each member sends per second under memberlist's
retransmit rule (RetransmitMult x ceil(log10(members+1)) sends of every
message by every member, since members relay the guidance), against
memberlist's LAN gossip capacity. Direct delivery (coordinator
--delivery direct): every node's reply encoded as coordinator.Replies does,
its CPU per period measured, its bytes per node and at the coordinator.
--gossip also runs that many real
memberlist members in this process on loopback (LAN timing, compression
off) and counts the bytes they send.`,
		Example: `  sparrow bench coordinator
  sparrow bench coordinator --sizes 100:4:20 --gossip 100 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.Run(cmd.OutOrStdout(), os.Stderr) },
	}
	o.AddFlags(cmd.Flags())
	return cmd
}
