package driver

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/sparrowfleet/sparrow/client"
	"github.com/sparrowfleet/sparrow/internal/jobtrace"
)

// ParseConstraint reads one --constraint: "key=v1|v2" (one of the
// values), "key!=v1|v2" (none of them, or absent) or "key" (exists).
func ParseConstraint(s string) (client.Constraint, error) {
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

// ParseConstraints reads every --constraint (ParseConstraint); nil for
// none.
func ParseConstraints(list []string) ([]client.Constraint, error) {
	var out []client.Constraint
	for _, s := range list {
		c, err := ParseConstraint(s)
		if err != nil {
			return nil, fmt.Errorf("--constraint: %w", err)
		}
		out = append(out, c)
	}
	return out, nil
}

// RegisterRetryFlags adds the resubmission policy's flags to fs, bound to
// c with the driver's defaults. --submit-retry, the old way to pace
// refused submits, is still accepted (deprecated) and ignored, so that
// scripts keep working.
func (c *Config) RegisterRetryFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&c.RetryBase, "retry-base", DefaultRetryBase, "backoff before a job's first resubmission is drawn uniformly from [0, this); it doubles per resubmission of the same job (full jitter)")
	fs.DurationVar(&c.RetryMax, "retry-max", DefaultRetryMax, "cap of the drawn backoff (a delay the scheduler suggests in a refusal, \"retry after 2s\", is added on top)")
	fs.Float64Var(&c.RetryBudget, "retry-budget", DefaultRetryBudget, "retry budget: resubmitted tasks at most this fraction of the first-attempt tasks of the last --retry-window (past it a job is failed, and the run exits non-zero); negative: no fraction, only --retry-budget-min")
	fs.DurationVar(&c.RetryWindow, "retry-window", DefaultRetryWindow, "sliding window of the retry budget")
	fs.IntVar(&c.RetryBudgetMin, "retry-budget-min", DefaultRetryBudgetMin, "floor of the retry budget, in resubmitted tasks per --retry-window, so that a small run can still recover from a fault; negative: no floor")
	var submitRetry time.Duration
	fs.DurationVar(&submitRetry, "submit-retry", 0, "ignored: refused submits now back off like every resubmission (--retry-base, --retry-max)")
	_ = fs.MarkDeprecated("submit-retry", "use --retry-base and --retry-max")
}

// PreferenceFlags are --prefer-nodes and the flags that shape the
// preferences it turns on (Preferences).
type PreferenceFlags struct {
	nodes string
	p     Preferences
}

// preferenceOnlyFlags mean something only with --prefer-nodes.
var preferenceOnlyFlags = []string{"prefer-racks", "replicas", "blocks", "zipf", "delay-threshold", "input-bytes"}

// Register adds the flags to fs.
func (f *PreferenceFlags) Register(fs *pflag.FlagSet) {
	fs.StringVar(&f.nodes, "prefer-nodes", "", "comma-separated node monitors (gossip member names or hosts, rack by rack) holding the input blocks; every task then prefers the nodes of the block it reads (off when empty)")
	fs.IntVar(&f.p.Racks, "prefer-racks", 1, "with --prefer-nodes: racks the listed nodes are split into, in order and nearly equal (node i is in rack i*racks/nodes)")
	fs.IntVar(&f.p.Replicas, "replicas", 3, "with --prefer-nodes: replicas per block (one on a random node, the others on one other rack)")
	fs.IntVar(&f.p.Blocks, "blocks", 100, "with --prefer-nodes: input blocks in the catalogue")
	fs.Float64Var(&f.p.Zipf, "zipf", 1.1, "with --prefer-nodes: Zipf exponent s of block popularity, P(k-th block) ∝ k^-s (0: uniform)")
	fs.DurationVar(&f.p.DelayThreshold, "delay-threshold", 0, "with --prefer-nodes: each task's delayThreshold, whole milliseconds; > 0 lets the scheduler relax its preferences after it (or sooner on a coordinator's prices), 0 keeps them strict")
	fs.Int64Var(&f.p.InputBytes, "input-bytes", 0, "with --prefer-nodes: each task's input size in bytes (TPlacementPreference.inputBytes), which prices moving it; 0 leaves it unset (the scheduler's --locality-input-bytes)")
}

// Preferences are the parsed flags, validated; the zero value without
// --prefer-nodes. changed says which flags were set: without
// --prefer-nodes the others are refused, since a run that silently
// dropped them would not be the experiment asked for.
func (f *PreferenceFlags) Preferences(changed func(string) bool) (Preferences, error) {
	p := f.p
	p.Nodes = nil
	for _, n := range strings.Split(f.nodes, ",") {
		if n = strings.TrimSpace(n); n != "" {
			p.Nodes = append(p.Nodes, n)
		}
	}
	if len(p.Nodes) == 0 {
		for _, name := range preferenceOnlyFlags {
			if changed(name) {
				return Preferences{}, fmt.Errorf("--%s needs --prefer-nodes", name)
			}
		}
		return Preferences{}, nil
	}
	if err := p.Validate(); err != nil {
		return Preferences{}, fmt.Errorf("--prefer-nodes: %w", err)
	}
	return p, nil
}

// TraceFlags are --job-trace and the flags that go with it.
type TraceFlags struct {
	File          string
	Scale, Cutoff float64
	Estimates     bool
	// JobsOut names the CSV file of every job's outcome (WriteJobsOut).
	JobsOut string
}

// traceOnlyFlags mean something only with --job-trace; workloadFlags
// shape the generated workload a trace replaces.
var (
	traceOnlyFlags = []string{"time-scale", "cutoff", "send-estimates", "jobs-out"}
	workloadFlags  = []string{"tasks", "task-duration", "rate", "load", "poisson", "prefer-nodes"}
)

// Register adds the flags to fs.
func (t *TraceFlags) Register(fs *pflag.FlagSet) {
	fs.StringVar(&t.File, "job-trace", "", "replay this job trace instead of generated jobs (one job a line: submit_s n_tasks mean_task_s d_1 … d_n): each job at its arrival, each task sleeping its duration, both divided by --time-scale; with --jobs set, only the first jobs. The whole file is checked before anything is submitted")
	fs.Float64Var(&t.Scale, "time-scale", 1, "with --job-trace: divide every task duration and arrival gap by this factor")
	fs.Float64Var(&t.Cutoff, "cutoff", jobtrace.CutoffYahoo, "with --job-trace: jobs whose mean task duration, in trace seconds before --time-scale, is at least this are long (Hawk/Eagle: 90.5811 for Yahoo, 1129.532 for Google)")
	fs.StringVar(&t.JobsOut, "jobs-out", "", "with --job-trace: write every completed job's outcome to this CSV file (run,job,class,mean_task_s,arrival_s,response_s; job is its ordinal in the trace, from 0, as in sparrow sim --jobs-out), to compare runs job by job")
	fs.BoolVar(&t.Estimates, "send-estimates", false, "with --job-trace: send each job's mean task duration, divided by --time-scale, as its estimate (taskSeconds), for schedulers run with --short-jobs (give them --short-cutoff of --cutoff divided by --time-scale)")
}

// Load reads the trace, if one is named (nil otherwise); jobs limits it
// when --jobs was given. changed says which flags were set: flags that do
// not fit are refused, since a run that silently dropped them would not
// be the experiment asked for.
func (t TraceFlags) Load(jobs int, changed func(string) bool) (*Trace, error) {
	if t.File == "" {
		for _, f := range traceOnlyFlags {
			if changed(f) {
				return nil, fmt.Errorf("--%s needs --job-trace", f)
			}
		}
		return nil, nil
	}
	for _, f := range workloadFlags {
		if changed(f) {
			return nil, fmt.Errorf("--%s does not apply to --job-trace (the trace gives the jobs and their arrivals)", f)
		}
	}
	limit := 0
	if changed("jobs") {
		limit = jobs
	}
	fh, err := os.Open(t.File)
	if err != nil {
		return nil, fmt.Errorf("--job-trace: %w", err)
	}
	defer fh.Close()
	tr, err := LoadTrace(fh, t.File, t.Scale, t.Cutoff, limit)
	if err != nil {
		return nil, fmt.Errorf("--job-trace: %w", err)
	}
	tr.Estimates = t.Estimates
	tr.KeepJobs = t.JobsOut != ""
	return tr, nil
}

// WriteJobsOut writes sum's per-job outcomes to the --jobs-out file, as
// run "live"; without --jobs-out it does nothing.
func (t TraceFlags) WriteJobsOut(sum Summary) error {
	if t.JobsOut == "" {
		return nil
	}
	f, err := os.Create(t.JobsOut)
	if err != nil {
		return fmt.Errorf("--jobs-out: %w", err)
	}
	if err := jobtrace.WriteJobs(f, "live", sum.Jobs, true); err != nil {
		f.Close()
		return fmt.Errorf("--jobs-out %s: %w", t.JobsOut, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--jobs-out: %w", err)
	}
	return nil
}
