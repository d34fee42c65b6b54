package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/bench/guidance"
	"github.com/sparrowfleet/sparrow/internal/fairgossip"
	"github.com/sparrowfleet/sparrow/internal/report"
)

// bench coordinator: the coordinator's cost per period at fleet sizes no
// test machine runs (bench/guidance).
func init() { benchCmd.AddCommand(newBenchCoordinatorCmd()) }

func newBenchCoordinatorCmd() *cobra.Command {
	var (
		cfg           guidance.Config
		sizes, gossip string
		asJSON        bool
	)
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
		RunE: func(cmd *cobra.Command, _ []string) error {
			sz, err := guidance.ParseSizes(sizes)
			if err != nil {
				return err
			}
			gossipAt, err := guidance.ParseGossip(gossip)
			if err != nil {
				return err
			}
			if err := cfg.Validate(); err != nil {
				return err
			}
			rep, err := guidance.MeasureAll(sz, gossipAt, cfg, os.Stderr)
			if err != nil {
				return err
			}
			return report.Print(cmd.OutOrStdout(), rep, report.If(asJSON, report.TableThenJSON))
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&sizes, "sizes", "100:4:20,1000:20:200,10000:100:5000", "fleet sizes as nodes:types:users, comma separated")
	fs.IntVar(&cfg.Periods, "periods", 12, "periods measured per size (after the warm-up periods)")
	fs.IntVar(&cfg.Slots, "slots", 8, "slots per node")
	fs.Float64Var(&cfg.Churn, "churn", 0.1, "fraction of users whose work changes each period")
	fs.IntVar(&cfg.RetransmitMult, "retransmit-mult", 4, "memberlist RetransmitMult (4 in the lan and local profiles)")
	fs.IntVar(&cfg.SnapshotEvery, "snapshot-every", fairgossip.DefaultSnapshotEvery, "periods between snapshots")
	fs.IntVar(&cfg.TableEvery, "table-every", fairgossip.DefaultTableEvery, "periods between resends of the name table")
	fs.StringVar(&gossip, "gossip", "", "also measure with real in-process memberlist members at these sizes' node counts (comma separated, e.g. 100)")
	fs.IntVar(&cfg.GossipPeriods, "gossip-periods", 20, "periods (1 s each) of the real gossip measurement")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "seed of the synthetic reports")
	fs.BoolVar(&asJSON, "json", false, "also print the results as one JSON array on the last line")
	return cmd
}
