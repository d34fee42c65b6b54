package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/bench/driver"
	"github.com/sparrowfleet/sparrow/client"
	"github.com/sparrowfleet/sparrow/internal/jobtrace"
)

func init() { rootCmd.AddCommand(newDriveCmd()) }

func newDriveCmd() *cobra.Command {
	var (
		cfg         driver.Config
		schedulers  string
		asJSON      bool
		constraints []string
		preferNodes string
		trace       driveTraceFlags
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
(docs/LOCALITY.md, sparrow bench locality): a catalogue of --blocks input
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
			for _, c := range constraints {
				pc, err := parseConstraint(c)
				if err != nil {
					return fmt.Errorf("--constraint: %w", err)
				}
				cfg.Constraints = append(cfg.Constraints, pc)
			}
			if cfg.Prefer, err = parsePreferences(preferNodes, cfg.Prefer, cmd.Flags().Changed); err != nil {
				return err
			}
			if cfg.Trace, err = trace.load(cfg.Jobs, cmd.Flags().Changed); err != nil {
				return err
			}
			for _, s := range strings.Split(schedulers, ",") {
				if s = strings.TrimSpace(s); s != "" {
					cfg.Schedulers = append(cfg.Schedulers, s)
				}
			}
			ctx, cancel := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer cancel()
			marks, stopMarks := driver.MarkSignals()
			defer stopMarks()
			cfg.Marks, cfg.Log, cfg.Progress = marks, log, cmd.ErrOrStderr()
			sum, err := driver.Run(ctx, cfg)
			if err != nil {
				return err
			}
			if err := printDriveSummary(cmd.OutOrStdout(), sum, asJSON); err != nil {
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
	fs.StringVar(&cfg.AdvertiseHost, "advertise-host", "auto", `host given to schedulers when --listen is a wildcard; "auto": 127.0.0.1 if every scheduler is on loopback, else this machine's first non-loopback IPv4 address`)
	fs.DurationVar(&cfg.Deadline, "deadline", 2*time.Minute, "give up (exit non-zero) if the jobs have not all completed this long after the start")
	fs.DurationVar(&cfg.Timeout, "timeout", client.DefaultTimeout, "scheduler failure-detection timeout (the paper's 100 ms)")
	fs.DurationVar(&cfg.Heartbeat, "heartbeat", client.DefaultHeartbeat, "idle heartbeat to the current scheduler (negative disables)")
	fs.DurationVar(&cfg.RetryBase, "retry-base", driver.DefaultRetryBase, "backoff before a job's first resubmission is drawn uniformly from [0, this); it doubles per resubmission of the same job (full jitter)")
	fs.DurationVar(&cfg.RetryMax, "retry-max", driver.DefaultRetryMax, "cap of the drawn backoff (a delay the scheduler suggests in a refusal, \"retry after 2s\", is added on top)")
	fs.Float64Var(&cfg.RetryBudget, "retry-budget", driver.DefaultRetryBudget, "retry budget: resubmitted tasks at most this fraction of the first-attempt tasks of the last --retry-window (past it a job is failed, and the run exits non-zero); negative: no fraction, only --retry-budget-min")
	fs.DurationVar(&cfg.RetryWindow, "retry-window", driver.DefaultRetryWindow, "sliding window of the retry budget")
	fs.IntVar(&cfg.RetryBudgetMin, "retry-budget-min", driver.DefaultRetryBudgetMin, "floor of the retry budget, in resubmitted tasks per --retry-window, so that a small run can still recover from a fault; negative: no floor")
	fs.IntVar(&cfg.MaxInFlight, "max-in-flight", driver.DefaultMaxInFlight, "most submitJob calls in flight at once; past it arrivals and resubmissions wait for one to return, so a fleet that holds calls while saturated slows the driver to its pace (negative: no bound; calls past the connection pool then fail as busy and are retried)")
	var submitRetry time.Duration
	fs.DurationVar(&submitRetry, "submit-retry", 0, "ignored: refused submits now back off like every resubmission (--retry-base, --retry-max)")
	_ = fs.MarkDeprecated("submit-retry", "use --retry-base and --retry-max")
	fs.StringVar(&cfg.RunID, "run-id", "", "prefix of every request id (default: random)")
	fs.BoolVar(&cfg.KeepSamples, "samples", false, "with --json, put every job's response time and every task's scheduling delay in the summary (\"samples\"), so that several drivers' runs can be merged")
	fs.DurationVar(&cfg.ProgressEvery, "progress-every", time.Second, "interval between progress lines on stderr")
	fs.BoolVar(&asJSON, "json", false, "print the summary as one JSON object on the last line of stdout")
	fs.StringVar(&cfg.User.Name, "user", "", "user every job runs for (node monitors' fair and choosy queues share slots among users)")
	fs.StringVar(&cfg.User.Group, "group", "", "group of --user")
	fs.StringArrayVar(&constraints, "constraint", nil, `placement constraint on every task (repeatable): "key=v1|v2" (one of the values), "key!=v1|v2" (none of them, or absent) or "key" (the attribute exists); node monitors advertise attributes with --attr`)
	fs.StringVar(&preferNodes, "prefer-nodes", "", "comma-separated node monitors (gossip member names or hosts, rack by rack) holding the input blocks; every task then prefers the nodes of the block it reads (off when empty)")
	fs.IntVar(&cfg.Prefer.Racks, "prefer-racks", 1, "with --prefer-nodes: racks the listed nodes are split into, in order and nearly equal (node i is in rack i*racks/nodes)")
	fs.IntVar(&cfg.Prefer.Replicas, "replicas", 3, "with --prefer-nodes: replicas per block (one on a random node, the others on one other rack)")
	fs.IntVar(&cfg.Prefer.Blocks, "blocks", 100, "with --prefer-nodes: input blocks in the catalogue")
	fs.Float64Var(&cfg.Prefer.Zipf, "zipf", 1.1, "with --prefer-nodes: Zipf exponent s of block popularity, P(k-th block) ∝ k^-s (0: uniform)")
	fs.DurationVar(&cfg.Prefer.DelayThreshold, "delay-threshold", 0, "with --prefer-nodes: each task's delayThreshold, whole milliseconds; > 0 lets the scheduler relax its preferences after it (or sooner on a coordinator's prices), 0 keeps them strict")
	fs.Int64Var(&cfg.Prefer.InputBytes, "input-bytes", 0, "with --prefer-nodes: each task's input size in bytes (TPlacementPreference.inputBytes), which prices moving it; 0 leaves it unset (the scheduler's --locality-input-bytes)")
	fs.StringVar(&trace.file, "job-trace", "", "replay this job trace instead of generated jobs (one job a line: submit_s n_tasks mean_task_s d_1 … d_n): each job at its arrival, each task sleeping its duration, both divided by --time-scale; with --jobs set, only the first jobs. The whole file is checked before anything is submitted")
	fs.Float64Var(&trace.scale, "time-scale", 1, "with --job-trace: divide every task duration and arrival gap by this factor")
	fs.Float64Var(&trace.cutoff, "cutoff", jobtrace.CutoffYahoo, "with --job-trace: jobs whose mean task duration, in trace seconds before --time-scale, is at least this are long (Hawk/Eagle: 90.5811 for Yahoo, 1129.532 for Google)")
	fs.BoolVar(&trace.estimates, "send-estimates", false, "with --job-trace: send each job's mean task duration, divided by --time-scale, as its estimate (taskSeconds), for schedulers run with --short-jobs (give them --short-cutoff of --cutoff divided by --time-scale)")
	return cmd
}

// driveTraceFlags are --job-trace and the flags that go with it.
type driveTraceFlags struct {
	file          string
	scale, cutoff float64
	estimates     bool
}

// driveTraceOnlyFlags mean something only with --job-trace; driveWorkloadFlags
// shape the generated workload a trace replaces.
var (
	driveTraceOnlyFlags = []string{"time-scale", "cutoff", "send-estimates"}
	driveWorkloadFlags  = []string{"tasks", "task-duration", "rate", "load", "poisson", "prefer-nodes"}
)

// load reads the trace, if one is named (nil otherwise); jobs limits it
// when --jobs was given. It refuses flags that do not fit: a run that
// silently dropped them would not be the experiment asked for.
func (t driveTraceFlags) load(jobs int, changed func(string) bool) (*driver.Trace, error) {
	if t.file == "" {
		for _, f := range driveTraceOnlyFlags {
			if changed(f) {
				return nil, fmt.Errorf("--%s needs --job-trace", f)
			}
		}
		return nil, nil
	}
	for _, f := range driveWorkloadFlags {
		if changed(f) {
			return nil, fmt.Errorf("--%s does not apply to --job-trace (the trace gives the jobs and their arrivals)", f)
		}
	}
	limit := 0
	if changed("jobs") {
		limit = jobs
	}
	fh, err := os.Open(t.file)
	if err != nil {
		return nil, fmt.Errorf("--job-trace: %w", err)
	}
	defer fh.Close()
	tr, err := driver.LoadTrace(fh, t.file, t.scale, t.cutoff, limit)
	if err != nil {
		return nil, fmt.Errorf("--job-trace: %w", err)
	}
	tr.Estimates = t.estimates
	return tr, nil
}

// preferenceFlags are the flags that only mean something with
// --prefer-nodes.
var preferenceFlags = []string{"prefer-racks", "replicas", "blocks", "zipf", "delay-threshold", "input-bytes"}

// parsePreferences completes p (the other preference flags) with the
// --prefer-nodes list, or refuses those flags without it: a run that
// silently dropped them would not be the experiment asked for.
func parsePreferences(nodes string, p driver.Preferences, changed func(string) bool) (driver.Preferences, error) {
	p.Nodes = nil
	for _, n := range strings.Split(nodes, ",") {
		if n = strings.TrimSpace(n); n != "" {
			p.Nodes = append(p.Nodes, n)
		}
	}
	if len(p.Nodes) == 0 {
		for _, f := range preferenceFlags {
			if changed(f) {
				return driver.Preferences{}, fmt.Errorf("--%s needs --prefer-nodes", f)
			}
		}
		return driver.Preferences{}, nil
	}
	if err := p.Validate(); err != nil {
		return driver.Preferences{}, fmt.Errorf("--prefer-nodes: %w", err)
	}
	return p, nil
}

// parseConstraint reads one --constraint: "key=v1|v2", "key!=v1|v2" or
// "key" (exists).
func parseConstraint(s string) (client.Constraint, error) {
	s = strings.TrimSpace(s)
	key, vals, op := s, "", "exists"
	if k, v, ok := strings.Cut(s, "!="); ok {
		key, vals, op = k, v, "!="
	} else if k, v, ok := strings.Cut(s, "="); ok {
		key, vals, op = k, v, "="
	}
	key = strings.TrimSpace(key)
	if key == "" || strings.ContainsAny(key, "=!|") {
		return client.Constraint{}, fmt.Errorf("%q: want key=v1|v2, key!=v1|v2 or key", s)
	}
	c := client.Constraint{Key: key, Op: op}
	if op == "exists" {
		return c, nil
	}
	for _, v := range strings.Split(vals, "|") {
		if v = strings.TrimSpace(v); v == "" {
			return client.Constraint{}, fmt.Errorf("%q: empty value", s)
		}
		c.Values = append(c.Values, v)
	}
	return c, nil
}

func printDriveSummary(w io.Writer, s driver.Summary, asJSON bool) error {
	if asJSON {
		b, err := json.Marshal(s)
		if err != nil {
			return fmt.Errorf("encode summary: %w", err)
		}
		_, err = fmt.Fprintln(w, string(b))
		return err
	}
	status := "ok"
	if !s.OK {
		status = "NOT OK: " + s.Error
	}
	fmt.Fprintf(w, "sparrow drive %s: %s\n", s.RunID, status)
	fmt.Fprintf(w, "  jobs completed     %d of %d (%d tasks of %d)\n", s.JobsCompleted, s.JobsSubmitted, s.TasksCompleted, s.TasksSubmitted)
	fmt.Fprintf(w, "  reports            %d ok (%d late, %d duplicate), %d lost, %d failed, %d stale\n",
		s.OKReports, s.LateOKReports, s.DuplicateOKReports, s.LostReports, s.FailedReports, s.StaleReports)
	fmt.Fprintf(w, "  resubmitted        %d jobs, %d tasks %v; %d submit errors\n", s.ResubmittedJobs, s.ResubmittedTasks, s.ResubmittedBy, s.SubmitErrors)
	fmt.Fprintf(w, "  retry backoff      %d delayed (p50 %.1f ms, max %.1f ms), %d waited a suggested delay\n",
		s.RetriesDelayed, s.RetryDelayMs.P50, s.RetryDelayMs.Max, s.RetryAfterHonoured)
	if s.RetryBudgetExhausted {
		fmt.Fprintf(w, "  retry budget       EXHAUSTED at %s: %d jobs (%d tasks) failed instead of resubmitted\n",
			s.RetryBudgetExhaustedAt, s.JobsFailedByBudget, s.TasksFailedByBudget)
	}
	for _, f := range s.Failovers {
		fmt.Fprintf(w, "  failover           %s -> %s at %s, reconnected in %.1f ms, %d jobs in flight, relaunched %.1f ms later\n",
			f.From, f.To, f.DetectedAt, f.ReconnectMs, f.InFlightJobs, f.RelaunchTookMs)
	}
	if s.FirstLostAt != "" {
		fmt.Fprintf(w, "  lost reports       first %s, last %s\n", s.FirstLostAt, s.LastLostAt)
	}
	fmt.Fprintf(w, "  affected jobs      %d (%d completed, last at %s)\n", s.AffectedJobs, s.AffectedCompleted, s.LastAffectedDoneAt)
	if p := s.Preferences; p != nil {
		fmt.Fprintf(w, "  preferences        %d nodes in %d racks, %d blocks x %d replicas, Zipf %g (hottest block %.1f%% of tasks), delay threshold %g ms\n",
			p.Nodes, p.Racks, p.Blocks, p.Replicas, p.Zipf, 100*p.HottestBlockShare, p.DelayThresholdMs)
	}
	fmt.Fprintf(w, "  response time      p50 %.1f ms  p99 %.1f ms  max %.1f ms\n", s.ResponseMs.P50, s.ResponseMs.P99, s.ResponseMs.Max)
	fmt.Fprintf(w, "  elapsed            %.1f s\n", s.ElapsedS)
	if s.Trace != nil && s.Result != nil {
		fmt.Fprintf(w, "  trace              %s: %d jobs, %d tasks, time scale %g, cutoff %g s, load %.3g\n",
			s.Trace.File, s.Trace.Jobs, s.Trace.Tasks, s.Trace.TimeScale, s.Result.Cutoff, s.Trace.Load)
		return jobtrace.WriteTable(w, []jobtrace.Named{{Name: "live", Result: *s.Result}}, "")
	}
	return nil
}
