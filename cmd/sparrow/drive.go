package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/bench/driver"
	"github.com/sparrowfleet/sparrow/client"
	"github.com/sparrowfleet/sparrow/internal/daemon"
)

func init() { rootCmd.AddCommand(newDriveCmd()) }

func newDriveCmd() *cobra.Command {
	var (
		cfg         driver.Config
		schedulers  string
		asJSON      bool
		constraints []string
		prefer      driver.PreferenceFlags
		trace       driver.TraceFlags
	)
	cmd := &cobra.Command{
		Use:   "drive",
		Short: "Drive jobs through running schedulers, resubmitting lost work (fault tests, remote benchmarks)",
		Long: `Act as an application frontend against a running fleet: submit --jobs jobs
of --tasks sleep tasks (--task-duration each; the fleet's executors must be
"sparrow executor" or understand the same messages) at --rate jobs/s, or at
the rate that keeps --load of --slots busy.

Like the paper's Spark frontend, it retries at the application level: a task
reported lost (status 1001: its node monitor died) or failed (1002: its
executor failed), and every job reported in flight when the frontend fails
over to another scheduler, is resubmitted as a new job with a new request
id. The run ends when every original job's tasks have all finished OK, or
at --deadline.

Resubmissions back off (--retry-base, doubling per resubmission of the same
job up to --retry-max, full jitter drawn from --seed) and are bounded by a
retry budget: over any --retry-window, resubmitted tasks may be at most
--retry-budget of the first-attempt tasks, or --retry-budget-min if more.
Past the budget a job is failed instead of resubmitted, and the run exits
non-zero saying so: a saturated fleet is not sent more work the more it
fails.

With --prefer-nodes, tasks prefer nodes as in the locality workload
(docs/experiments/locality.md, sparrow bench locality): a catalogue of --blocks input
blocks, each with --replicas replicas on the listed node monitors (named
as the schedulers know them: gossip member names or hosts), which are
split into --prefer-racks contiguous racks (list them rack by rack, as
their --attr rack= says). Replicas are placed as HDFS does: one on a node
drawn uniformly, the others on distinct nodes of one other rack. Each task
reads one block drawn by a Zipf(--zipf) popularity and prefers its
replicas' nodes; a resubmitted task keeps its block. --delay-threshold > 0
opts every task into relaxation (the scheduler widens to the replicas'
racks after it, to the cluster after twice it, sooner if a coordinator's
locality prices say so); 0 keeps preferences strict. --input-bytes sets
each task's input size for the prices. All of it is drawn from --seed.

With --job-trace FILE it replays a job trace instead (docs/TRACE-REPLAY.md):
each job is submitted at its arrival and each task sleeps its duration,
both divided by --time-scale; the summary adds job response times (arrival
to last task's end, in seconds) for short and long jobs, split by
--cutoff on the job's mean task duration (--json: members "short" and
"long", each with n, mean, p50, p90 and p99). The whole file is checked
first: a malformed line is an error naming the file, the line and the
field, and nothing is submitted.

Progress goes to stderr once a second; SIGUSR1 records a mark (the time and
the jobs and tasks in flight), for fault injectors. The summary (--json: one
JSON object on the last line of stdout) has the jobs and tasks submitted and
completed, lost and failed reports, resubmissions, failovers with their
detection and reconnection times, the first and last lost reports
(RFC 3339, nanoseconds) and job response times. Exits non-zero unless every
job completed.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("log-level") {
				logLevel = "warn"
			}
			log, err := newLogger()
			if err != nil {
				return err
			}
			if cfg.Constraints, err = driver.ParseConstraints(constraints); err != nil {
				return err
			}
			if cfg.Prefer, err = prefer.Preferences(cmd.Flags().Changed); err != nil {
				return err
			}
			if cfg.Trace, err = trace.Load(cfg.Jobs, cmd.Flags().Changed); err != nil {
				return err
			}
			for _, s := range strings.Split(schedulers, ",") {
				if s = strings.TrimSpace(s); s != "" {
					cfg.Schedulers = append(cfg.Schedulers, s)
				}
			}
			ctx, cancel := daemon.SignalContext(cmd.Context())
			defer cancel()
			marks, stopMarks := driver.MarkSignals()
			defer stopMarks()
			cfg.Marks, cfg.Log, cfg.Progress = marks, log, cmd.ErrOrStderr()
			sum, err := driver.Run(ctx, cfg)
			if err != nil {
				return err
			}
			if err := driver.WriteSummary(cmd.OutOrStdout(), sum, asJSON); err != nil {
				return err
			}
			if err := trace.WriteJobsOut(sum); err != nil {
				return err
			}
			if !sum.OK {
				return fmt.Errorf("drive: %s", sum.Error)
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&schedulers, "schedulers", "127.0.0.1:20503", "comma-separated SchedulerService host:port list, in failover order")
	fs.StringVar(&cfg.App, "app", "sleep", "app to submit jobs for (executors must serve it)")
	fs.IntVar(&cfg.Jobs, "jobs", 100, "original jobs to submit")
	fs.IntVar(&cfg.Tasks, "tasks", 4, "tasks per job")
	fs.DurationVar(&cfg.TaskDuration, "task-duration", 100*time.Millisecond, "how long each task sleeps (the task message)")
	fs.Float64Var(&cfg.Rate, "rate", 0, "job arrival rate in jobs/s (0: derive from --load and --slots)")
	fs.Float64Var(&cfg.Load, "load", 0.8, "target fraction of --slots busy, used when --rate is 0 (above 1 overloads the fleet so queues build)")
	fs.IntVar(&cfg.Slots, "slots", 0, "the fleet's total slots, used with --load")
	fs.BoolVar(&cfg.Poisson, "poisson", false, "Poisson arrivals at --rate instead of evenly spaced ones")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "seed for Poisson arrivals, the resubmission backoff's jitter and --prefer-nodes' replicas and block draws")
	fs.Float64Var(&cfg.ProbeRatio, "probe-ratio", 0, "probe ratio d for each job (0: the scheduler's default)")
	fs.StringVar(&cfg.Listen, "listen", client.DefaultFrontendListen, "FrontendService address (schedulers send task messages here)")
	fs.StringVar(&cfg.AdvertiseHost, "advertise-host", "auto", `host given to schedulers when --listen is a wildcard; "auto": 127.0.0.1 if every scheduler is on loopback, else the local address of the interface that routes to the first scheduler not on loopback`)
	fs.DurationVar(&cfg.Deadline, "deadline", 2*time.Minute, "give up (exit non-zero) if the jobs have not all completed this long after the start")
	fs.DurationVar(&cfg.Timeout, "timeout", client.DefaultTimeout, "scheduler failure-detection timeout (the paper's 100 ms)")
	fs.DurationVar(&cfg.Heartbeat, "heartbeat", client.DefaultHeartbeat, "idle heartbeat to the current scheduler (negative disables)")
	cfg.RegisterRetryFlags(fs)
	fs.IntVar(&cfg.MaxInFlight, "max-in-flight", driver.DefaultMaxInFlight, "most submitJob calls in flight at once; past it arrivals and resubmissions wait for one to return, so a fleet that holds calls while saturated slows the driver to its pace (negative: no bound; calls past the connection pool then fail as busy and are retried)")
	fs.StringVar(&cfg.RunID, "run-id", "", "prefix of every request id (default: random)")
	fs.BoolVar(&cfg.KeepSamples, "samples", false, "with --json, put every job's response time and every task's scheduling delay in the summary (\"samples\"), so that several drivers' runs can be merged")
	fs.DurationVar(&cfg.ProgressEvery, "progress-every", time.Second, "interval between progress lines on stderr")
	fs.BoolVar(&asJSON, "json", false, "print the summary as one JSON object on the last line of stdout")
	fs.StringVar(&cfg.User.Name, "user", "", "user every job runs for (node monitors' fair and choosy queues share slots among users)")
	fs.StringVar(&cfg.User.Group, "group", "", "group of --user")
	fs.StringArrayVar(&constraints, "constraint", nil, `placement constraint on every task (repeatable): "key=v1|v2" (one of the values), "key!=v1|v2" (none of them, or absent) or "key" (the attribute exists); node monitors advertise attributes with --attr`)
	prefer.Register(fs)
	trace.Register(fs)
	return cmd
}
