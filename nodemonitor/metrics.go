package nodemonitor

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sparrowfleet/sparrow/internal/metrics"
)

// Collector exposes a node monitor's slots and queue to Prometheus, from
// one snapshot per scrape; pass the node monitor's State method.
func Collector(state func() State) prometheus.Collector {
	type st = State
	c, g := metrics.Counter[st], metrics.Gauge[st]
	return metrics.NewCollector(state,
		g("sparrow_nodemonitor_slots", "Configured slots.", func(s st) float64 { return float64(s.Slots) }),
		g("sparrow_nodemonitor_slots_free", "Slots neither fetching nor running.", func(s st) float64 { return float64(s.Free) }),
		g("sparrow_nodemonitor_slots_fetching", "Slots waiting on getTask.", func(s st) float64 { return float64(s.Fetching) }),
		g("sparrow_nodemonitor_tasks_running", "Tasks running.", func(s st) float64 { return float64(s.Running) }),
		g("sparrow_nodemonitor_reservations_queued", "Reservations queued.", func(s st) float64 { return float64(s.Queued) }),
		c("sparrow_nodemonitor_launches_total", "Tasks launched on executors.", func(s st) float64 { return float64(s.Launches) }),
		metrics.CounterVec("sparrow_nodemonitor_tasks_ended_total",
			"Tasks launched here that ended, by outcome: finished (the executor reported it done, by taskDone without STATUS_TASK_FAILED or by tasksFinished), failed (the executor reported STATUS_TASK_FAILED by taskDone, or the task could not be launched: no executor, or launchTask failed), lost (running when its executor was declared lost). Each task is counted once; with sparrow_nodemonitor_tasks_running they add up to sparrow_nodemonitor_launches_total.",
			[]string{"outcome"}, func(s st) []metrics.Labelled {
				return []metrics.Labelled{
					{Labels: []string{"finished"}, Value: float64(s.Finished)},
					{Labels: []string{"failed"}, Value: float64(s.Failed)},
					{Labels: []string{"lost"}, Value: float64(s.Lost)},
				}
			}),
		g("sparrow_nodemonitor_apps", "Apps offered: those with a registered executor, none while draining or paused.", func(s st) float64 { return float64(len(s.Apps)) }),
		g("sparrow_nodemonitor_paused", "1 while the node monitor takes no new reservations because its machine is out of service (--k8s-node: the Kubernetes Node is cordoned), else 0.", func(s st) float64 { return b2f(s.Paused) }),
		metrics.CounterVec("sparrow_nodemonitor_pulls_total",
			"Pulls made (--short-pull): getTask calls from this node's pull reservations, made only to schedulers advertising a short backlog of an app hosted here (or of any app), by result: task (a task was launched), empty (none: no task answered, or the call failed).",
			[]string{"result"}, func(s st) []metrics.Labelled {
				return []metrics.Labelled{
					{Labels: []string{"task"}, Value: float64(s.PullTasks)},
					{Labels: []string{"empty"}, Value: float64(s.PullsEmpty)},
				}
			}),
		c("sparrow_nodemonitor_work_updates_total", "Schedulers' updates of a job's remaining work (updateRemainingWork, under --short-jobs) that reordered its reservations queued here.", func(s st) float64 { return float64(s.WorkUpdates) }),
	)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
