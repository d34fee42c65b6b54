// Package driver is an application frontend for fault tests and remote
// benchmarks (`sparrow drive`): it submits a fixed number of jobs to a fleet
// through client.Frontend at a given rate and retries at the application
// level, as the paper's Spark does (§6.3, §7.3). A task the fleet reports
// lost (STATUS_TASK_LOST) or failed (STATUS_TASK_FAILED), and every job
// reported in flight at a scheduler failover, is resubmitted as a new job
// with a new request id. The run ends when every original job's tasks have
// all finished OK, or at a deadline, and yields a Summary with the counts
// and timings a fault test needs.
//
// Each original job is a logical job; every submission covering some of its
// tasks is an attempt with its own request id ("<run>-j<job>.<attempt>").
// A logical task is done at the first OK message from any of its attempts;
// later OK messages (the old attempt finished after all) are counted as
// late, never as completions.
//
// Resubmissions are not immediate: against a saturated fleet, immediate
// resubmission feeds a retry storm. A logical job's k-th resubmission
// waits a delay drawn with full jitter from [0, min(max, base·2^(k-1)))
// (client.Backoff), deterministic for a seed, plus any delay a saturated
// scheduler's refusal suggests (client.SaturatedError.RetryAfter). And a
// retry budget (client.RetryBudget) bounds them: over a sliding window, resubmitted tasks are
// at most a fraction of the first-attempt tasks, or a floor if more; past
// it a job is failed instead of resubmitted, and the run is not OK.
//
// It is an experiment harness: the daemons and the client library must not
// import it.
package driver
