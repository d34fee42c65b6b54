package main

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/bench/policy/live"
	"github.com/sparrowfleet/sparrow/internal/report"
)

// The policy experiments of the paper (§7.5 Figure 11, §7.6 Table 3) and a
// job-level constraints scenario (§4.1), run on a real in-process fleet.
// docs/POLICIES.md records their results next to the paper's.
func init() {
	benchCmd.AddCommand(newBenchFairnessCmd(), newBenchPriorityCmd(), newBenchConstraintsCmd())
}

// runPolicy validates the shared flags (c), then the scenario's
// (validate), starts the fleet's logging and progress lines on stderr,
// runs the scenario and prints its report.
func runPolicy(cmd *cobra.Command, c *live.Command, validate func() error, scenario func(context.Context) (report.Charted, error)) error {
	if err := c.Validate(); err != nil {
		return err
	}
	if err := validate(); err != nil {
		return err
	}
	ctx, cancel := benchContext(cmd, true)
	defer cancel()
	base, err := newLogger() // validates --log-level
	if err != nil {
		return err
	}
	c.Start(base.GetLevel(), os.Stderr, cmd.ErrOrStderr())
	r, err := scenario(ctx)
	if err != nil {
		return err
	}
	return c.Print(cmd.OutOrStdout(), cmd.ErrOrStderr(), r)
}

func newBenchFairnessCmd() *cobra.Command {
	var c live.Command
	var o live.FairnessOptions
	cmd := &cobra.Command{
		Use:   "fairness",
		Short: "Weighted fair sharing between two users as demand changes (paper Figure 11)",
		Long: `Reproduce the paper's Figure 11 (§7.5) on a real fleet with "fair" queues:
user0 offers --user0-load (default 1: the whole fleet) throughout, while
user1's offered load steps through --user1-loads, one step per --interval.
Jobs arrive as Poisson processes. Each user's share is the fraction of
the fleet's slot-time its tasks ran (executor start to finish) in each
--bin, printed next to its weighted max-min fair share of the offered
demands, with the mean absolute deviation. --weights w0:w1 sets the
users' weights on every node monitor.`,
		Example: `  sparrow bench fairness --plot docs/img/fairness-1-1.svg
  sparrow bench fairness --weights 1:3 --plot docs/img/fairness-1-3.svg`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runPolicy(cmd, &c, o.Validate, func(ctx context.Context) (report.Charted, error) {
				o.Common = c.Common
				return live.Fairness(ctx, o)
			})
		},
	}
	c.AddFlags(cmd.Flags(), 10)
	o.AddFlags(cmd.Flags())
	return cmd
}

func newBenchPriorityCmd() *cobra.Command {
	var c live.Command
	var o live.PriorityOptions
	cmd := &cobra.Command{
		Use:   "priority",
		Short: "A high-priority user beside a growing low-priority load (paper Table 3)",
		Long: `Reproduce the paper's Table 3 (§7.6) on a real fleet with "priority" queues:
for each --lp-loads value a fresh fleet runs a high-priority user
(priority 0) at --hp-load beside a low-priority user (priority 1) at that
load, for --duration of Poisson arrivals; then it waits at most --drain
for the jobs to finish. Response times (submit to last task's message)
are summarised over the jobs that completed within that window; for
overloaded runs the table also says how many LP jobs and tasks were still
queued, and gives a lower bound on the LP percentiles counting them as
finishing at the window's close. The paper's numbers are printed beside.`,
		Example: `  sparrow bench priority --plot docs/img/priority.svg`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runPolicy(cmd, &c, o.Validate, func(ctx context.Context) (report.Charted, error) {
				o.Common = c.Common
				return live.Priority(ctx, o)
			})
		},
	}
	c.AddFlags(cmd.Flags(), 10)
	o.AddFlags(cmd.Flags())
	return cmd
}

func newBenchConstraintsCmd() *cobra.Command {
	var c live.Command
	var o live.ConstraintsOptions
	cmd := &cobra.Command{
		Use:   "constraints",
		Short: "Jobs constrained to 20% of the nodes beside unconstrained jobs (paper §4.1)",
		Long: `Run jobs with a job-level constraint (§4.1: every task must run on a node
advertising --attr, which --attr-fraction of the node monitors do) at
--constrained-load of those nodes' slots, beside unconstrained jobs at
--free-load of the whole fleet's slots, and report both groups' response
times, where their tasks ran and how busy each kind of node was.`,
		Example: `  sparrow bench constraints --plot docs/img/constraints.svg`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runPolicy(cmd, &c, o.Validate, func(ctx context.Context) (report.Charted, error) {
				o.Common = c.Common
				return live.Constraints(ctx, o)
			})
		},
	}
	c.AddFlags(cmd.Flags(), 20)
	o.AddFlags(cmd.Flags())
	return cmd
}
