package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/nodemonitor"
	"github.com/sparrowfleet/sparrow/scheduler"
)

// snapshotCollector reports metrics computed from one snapshot per scrape.
type snapshotCollector struct {
	descs []*prometheus.Desc
	fill  func(ch chan<- prometheus.Metric)
}

func (c *snapshotCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

func (c *snapshotCollector) Collect(ch chan<- prometheus.Metric) { c.fill(ch) }

// metric is one series read from a snapshot.
type metric[S any] struct {
	name, help string
	kind       prometheus.ValueType
	value      func(S) float64
}

func newCollector[S any](snapshot func() S, ms []metric[S]) *snapshotCollector {
	c := &snapshotCollector{}
	for _, m := range ms {
		c.descs = append(c.descs, prometheus.NewDesc(m.name, m.help, nil, nil))
	}
	c.fill = func(ch chan<- prometheus.Metric) {
		s := snapshot()
		for i, m := range ms {
			ch <- prometheus.MustNewConstMetric(c.descs[i], m.kind, m.value(s))
		}
	}
	return c
}

const (
	counter = prometheus.CounterValue
	gauge   = prometheus.GaugeValue
)

// SchedulerCollector exposes a scheduler's counters, and its locality
// relaxation (locality.go).
func SchedulerCollector(s *scheduler.Scheduler) prometheus.Collector {
	type st = scheduler.Stats
	return collectors{newSchedulerLocality(s), newSchedulerHold(s), newSchedulerFrontend(s), newCollector(s.Stats, []metric[st]{
		{"sparrow_scheduler_jobs_submitted_total", "Jobs accepted by submitJob.", counter, func(s st) float64 { return float64(s.JobsSubmitted) }},
		{"sparrow_scheduler_tasks_submitted_total", "Tasks in accepted jobs.", counter, func(s st) float64 { return float64(s.TasksSubmitted) }},
		{"sparrow_scheduler_tasks_launched_total", "Tasks handed to node monitors by getTask or taken as offers.", counter, func(s st) float64 { return float64(s.TasksLaunched) }},
		{"sparrow_scheduler_gettask_empty_total", "getTask calls answered with no task.", counter, func(s st) float64 { return float64(s.EmptyGetTasks) }},
		{"sparrow_scheduler_offers_total", "Tasks offered with reservations for an idle node monitor to launch at once.", counter, func(s st) float64 { return float64(s.OffersMade) }},
		{"sparrow_scheduler_offers_taken_total", "Offered tasks launched at once, or in doubt and then said taken (or counted launched where the node monitor could not be asked or had restarted).", counter, func(s st) float64 { return float64(s.OffersTaken) }},
		{"sparrow_scheduler_offers_in_doubt_total", "Offers whose calls failed after they were sent, so that the node monitor was asked whether it took them.", counter, func(s st) float64 { return float64(s.OffersInDoubt) }},
		{"sparrow_scheduler_offer_doubts_declined_total", "Offers in doubt that the node monitor said it declined or never saw: handed out again.", counter, func(s st) float64 { return float64(s.DoubtsDeclined) }},
		{"sparrow_scheduler_fetches_asked_again_total", "fetchTask calls from node monitors asking again about a fetch already answered, whose answer they did not get.", counter, func(s st) float64 { return float64(s.FetchesAskedAgain) }},
		{"sparrow_scheduler_backups_sent_total", "Backup reservations, kept back while a job's every task was offered, sent because an offer was declined.", counter, func(s st) float64 { return float64(s.BackupsSent) }},
		{"sparrow_scheduler_reservations_total", "Reservations sent to node monitors.", counter, func(s st) float64 { return float64(s.Reservations) }},
		{"sparrow_scheduler_enqueue_failures_total", "Reservation enqueues refused or failed.", counter, func(s st) float64 { return float64(s.EnqueueFailures) }},
		{"sparrow_scheduler_cancellations_total", "cancelTaskReservations calls sent.", counter, func(s st) float64 { return float64(s.Cancellations) }},
		{"sparrow_scheduler_reprobes_total", "Rounds of reservations placed again.", counter, func(s st) float64 { return float64(s.Reprobes) }},
		{"sparrow_scheduler_sweeps_saturated_total", "Requests past their reservation timeout given no extra reservations because a node monitor had recently refused reservations as full.", counter, func(s st) float64 { return float64(s.SweepsSaturated) }},
		{"sparrow_scheduler_tasks_lost_total", "Running tasks reported lost with their node monitor.", counter, func(s st) float64 { return float64(s.TasksLost) }},
		{"sparrow_scheduler_active_requests", "Requests with unlaunched tasks.", gauge, func(s st) float64 { return float64(s.ActiveRequests) }},
		{"sparrow_scheduler_running_tracked", "Launched tasks not yet reported finished.", gauge, func(s st) float64 { return float64(s.RunningTracked) }},
	})}
}

// NodeMonitorCollector exposes a node monitor's slots and queue.
func NodeMonitorCollector(n *nodemonitor.NodeMonitor) prometheus.Collector {
	type st = nodemonitor.State
	return newCollector(n.State, []metric[st]{
		{"sparrow_nodemonitor_slots", "Configured slots.", gauge, func(s st) float64 { return float64(s.Slots) }},
		{"sparrow_nodemonitor_slots_free", "Slots neither fetching nor running.", gauge, func(s st) float64 { return float64(s.Free) }},
		{"sparrow_nodemonitor_slots_fetching", "Slots waiting on getTask.", gauge, func(s st) float64 { return float64(s.Fetching) }},
		{"sparrow_nodemonitor_tasks_running", "Tasks running.", gauge, func(s st) float64 { return float64(s.Running) }},
		{"sparrow_nodemonitor_reservations_queued", "Reservations queued.", gauge, func(s st) float64 { return float64(s.Queued) }},
		{"sparrow_nodemonitor_launches_total", "Tasks launched on executors.", counter, func(s st) float64 { return float64(s.Launches) }},
		{"sparrow_nodemonitor_apps", "Apps with a registered executor.", gauge, func(s st) float64 { return float64(len(s.Apps)) }},
	})
}

// RPCCollector exposes a daemon's Thrift connection counters.
func RPCCollector(stats func() rpc.Stats) prometheus.Collector {
	type st = rpc.Stats
	return newCollector(stats, []metric[st]{
		{"sparrow_rpc_connections_open", "Thrift connections being served.", gauge, func(s st) float64 { return float64(s.Open) }},
		{"sparrow_rpc_connections_refused_per_host_total", "Connections refused at the per-host cap.", counter, func(s st) float64 { return float64(s.RefusedPerHost) }},
		{"sparrow_rpc_connections_refused_at_cap_total", "Connections refused at the global cap with none idle.", counter, func(s st) float64 { return float64(s.RefusedAtCap) }},
		{"sparrow_rpc_connections_evicted_total", "Idle connections closed at the global cap to admit new ones.", counter, func(s st) float64 { return float64(s.Evicted) }},
		{"sparrow_rpc_connections_idle_closed_total", "Connections closed by the opt-in idle timeout.", counter, func(s st) float64 { return float64(s.IdleClosed) }},
		{"sparrow_rpc_frame_timeouts_total", "Connections closed for not finishing a frame in time.", counter, func(s st) float64 { return float64(s.FrameTimeouts) }},
		{"sparrow_rpc_budget_refused_total", "Requests refused because decode memory stayed taken.", counter, func(s st) float64 { return float64(s.BudgetRefused) }},
	})
}
