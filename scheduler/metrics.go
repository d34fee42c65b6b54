package scheduler

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sparrowfleet/sparrow/internal/metrics"
)

// DelayBuckets are the upper bounds, in seconds, of the scheduling-delay
// histogram (Stats.LaunchDelay): from a millisecond, where an idle fleet
// hands tasks out, to half an hour, which only a backlogged fleet's queues
// reach. Up to 10 s each bound is 2 to 2.5 times the one before, so a
// quantile read from them is within that factor of the true one; past it
// the bounds are wider.
var DelayBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800}

// ResponseBuckets are the upper bounds, in seconds, of the task-response
// histogram (Stats.ResponseSeconds): from 10 ms, the shortest tasks'
// scheduling and run time, to six hours, for long batch tasks. Up to 10 s
// each bound is 2 to 2.5 times the one before; past it, 2 to 5 times.
var ResponseBuckets = []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 1800, 3600, 7200, 21600}

// Collector exposes a scheduler's counters to Prometheus: its placements,
// offers and reservations, the holds and refusals of a saturated fleet
// (hold.go, admission.go), its messages to frontends (frontendlink.go) and
// its relaxation of placement preferences (locality.go). It reads one
// snapshot per scrape, so every series of a scrape agrees; pass the
// scheduler's Stats method.
func Collector(stats func() Stats) prometheus.Collector {
	type st = Stats
	c, g := metrics.Counter[st], metrics.Gauge[st]
	return metrics.NewCollector(stats,
		c("sparrow_scheduler_jobs_submitted_total", "Jobs accepted by submitJob.", func(s st) float64 { return float64(s.JobsSubmitted) }),
		c("sparrow_scheduler_tasks_submitted_total", "Tasks in accepted jobs.", func(s st) float64 { return float64(s.TasksSubmitted) }),
		c("sparrow_scheduler_tasks_launched_total", "Tasks handed to node monitors by getTask or taken as offers.", func(s st) float64 { return float64(s.TasksLaunched) }),
		c("sparrow_scheduler_launch_delay_seconds_total", "Scheduling delay summed over the launched tasks, from each job's submission to the task's hand-out; divided by sparrow_scheduler_tasks_launched_total it is the mean delay (sparrow_scheduler_scheduling_delay_seconds has its distribution).", func(s st) float64 { return s.LaunchDelaySeconds }),
		metrics.Histogram("sparrow_scheduler_scheduling_delay_seconds", "Scheduling delay of the launched tasks, from each job's submission to this scheduler to the task's hand-out by getTask or a taken offer; histogram_quantile(0.99, ...) of its rate is the p99.", DelayBuckets,
			func(s st) metrics.Distribution { return s.LaunchDelay }),
		metrics.Histogram("sparrow_scheduler_task_response_seconds", "Response of the launched tasks as this scheduler sees it, from each job's submission to the node monitor's report that the task finished (tasks reported lost are not counted).", ResponseBuckets,
			func(s st) metrics.Distribution { return s.ResponseSeconds }),
		c("sparrow_scheduler_gettask_empty_total", "getTask calls answered with no task.", func(s st) float64 { return float64(s.EmptyGetTasks) }),
		c("sparrow_scheduler_offers_total", "Tasks offered with reservations for an idle node monitor to launch at once.", func(s st) float64 { return float64(s.OffersMade) }),
		c("sparrow_scheduler_offers_taken_total", "Offered tasks launched at once, or in doubt and then said taken (or counted launched where the node monitor could not be asked or had restarted).", func(s st) float64 { return float64(s.OffersTaken) }),
		c("sparrow_scheduler_offers_in_doubt_total", "Offers whose calls failed after they were sent, so that the node monitor was asked whether it took them.", func(s st) float64 { return float64(s.OffersInDoubt) }),
		c("sparrow_scheduler_offer_doubts_declined_total", "Offers in doubt that the node monitor said it declined or never saw: handed out again.", func(s st) float64 { return float64(s.DoubtsDeclined) }),
		c("sparrow_scheduler_fetches_asked_again_total", "fetchTask calls from node monitors asking again about a fetch already answered, whose answer they did not get.", func(s st) float64 { return float64(s.FetchesAskedAgain) }),
		c("sparrow_scheduler_pulls_total", "Pulls answered (--short-pull): getTask calls from a node monitor's pull reservation, asking for a task of a backlogged short job that the node monitor may run.", func(s st) float64 { return float64(s.PullsAnswered) }),
		c("sparrow_scheduler_pulled_tasks_total", "Pulls answered with a task.", func(s st) float64 { return float64(s.PulledTasks) }),
		c("sparrow_scheduler_backups_sent_total", "Backup reservations, kept back while a job's every task was offered, sent because an offer was declined.", func(s st) float64 { return float64(s.BackupsSent) }),
		c("sparrow_scheduler_reservations_total", "Reservations sent to node monitors.", func(s st) float64 { return float64(s.Reservations) }),
		c("sparrow_scheduler_enqueue_failures_total", "Reservation enqueues refused or failed.", func(s st) float64 { return float64(s.EnqueueFailures) }),
		c("sparrow_scheduler_cancellations_total", "cancelTaskReservations calls sent.", func(s st) float64 { return float64(s.Cancellations) }),
		c("sparrow_scheduler_reprobes_total", "Rounds of reservations placed again.", func(s st) float64 { return float64(s.Reprobes) }),
		c("sparrow_scheduler_steered_total", "Reservations added, with --steer-after, on node monitors serving a request's user while its others sat where the user is not served.", func(s st) float64 { return float64(s.Steered) }),
		c("sparrow_scheduler_sticky_fetches_total", "getTask calls, under the long-task-aware policy (--short-jobs), from a node monitor holding no reservation of the request: a freed slot asking its job for another task.", func(s st) float64 { return float64(s.StickyFetches) }),
		c("sparrow_scheduler_overrun_long_total", "Jobs that stated no estimate, classed short under the long-task-aware policy, taken as long once one of their tasks ran for --short-cutoff (--short-overrun).", func(s st) float64 { return float64(s.OverrunLong) }),
		c("sparrow_scheduler_overrun_declined_total", "getTask calls from node monitors of the short-only share answered with no task because the job was taken long by its overrun and holds reservations elsewhere.", func(s st) float64 { return float64(s.OverrunDeclined) }),
		metrics.CounterVec("sparrow_scheduler_work_updates_total",
			"Jobs' remaining-work updates for the node monitors holding their reservations (--short-work-refresh), by result: sent (delivered), failed (dropped: the call failed, or the node monitor lacks updateRemainingWork).",
			[]string{"result"}, func(s st) []metrics.Labelled {
				return []metrics.Labelled{
					{Labels: []string{"sent"}, Value: float64(s.WorkUpdatesSent)},
					{Labels: []string{"failed"}, Value: float64(s.WorkUpdatesFailed)},
				}
			}),
		c("sparrow_scheduler_work_update_calls_total", "updateRemainingWork calls to node monitors, each carrying the updates queued for one node monitor.", func(s st) float64 { return float64(s.WorkUpdateCalls) }),
		c("sparrow_scheduler_sweeps_saturated_total", "Requests past their reservation timeout given no extra reservations because a node monitor had recently refused reservations as full.", func(s st) float64 { return float64(s.SweepsSaturated) }),
		c("sparrow_scheduler_tasks_lost_total", "Running tasks reported lost with their node monitor.", func(s st) float64 { return float64(s.TasksLost) }),
		g("sparrow_scheduler_active_requests", "Requests with unlaunched tasks.", func(s st) float64 { return float64(s.ActiveRequests) }),
		g("sparrow_scheduler_running_tracked", "Launched tasks not yet reported finished.", func(s st) float64 { return float64(s.RunningTracked) }),

		// Holds and refusals of a saturated fleet.
		g("sparrow_scheduler_held_calls", "submitJob calls held now: node monitors refused their reservations as full and they are being placed again.", func(s st) float64 { return float64(s.Hold.Held) }),
		c("sparrow_scheduler_holds_total", "submitJob calls that were held on a saturated fleet.", func(s st) float64 { return float64(s.Hold.Holds) }),
		c("sparrow_scheduler_saturation_refusals_total", "Jobs refused as saturated past --max-held-jobs or --max-hold, with nothing launched.", func(s st) float64 { return float64(s.Hold.Refused) }),
		c("sparrow_scheduler_hold_released_total", "Partly launched jobs whose held call was answered at a bound, their unplaced remainder handed to re-placement.", func(s st) float64 { return float64(s.Hold.Released) }),
		c("sparrow_scheduler_hold_rounds_total", "Rounds of re-placing reservations refused as full for held calls.", func(s st) float64 { return float64(s.Hold.Rounds) }),
		c("sparrow_scheduler_admission_holds_total", "Jobs whose expected queue wait exceeded --max-queue-wait at submission: held before placement, or refused at once past --max-held-jobs.", func(s st) float64 { return float64(s.Hold.AdmissionHolds) }),
		c("sparrow_scheduler_admission_refusals_total", "Jobs refused as saturated because their expected queue wait stayed above --max-queue-wait (also counted in sparrow_scheduler_saturation_refusals_total).", func(s st) float64 { return float64(s.Hold.AdmissionRefused) }),
		c("sparrow_scheduler_load_reports_total", "Node monitors' load reports taken for admission by expected queue wait (only with --max-queue-wait).", func(s st) float64 { return float64(s.Hold.LoadReports) }),
		metrics.Histogram("sparrow_scheduler_hold_seconds", "How long held submitJob calls were held, from submission to answer.", HoldBuckets,
			func(s st) metrics.Distribution { return s.Hold.Seconds }),

		// Messages to frontends.
		c("sparrow_scheduler_frontend_messages_delivered_total", "Task messages a frontend accepted.", func(s st) float64 { return float64(s.Frontend.Delivered) }),
		metrics.CounterVec("sparrow_scheduler_frontend_messages_dropped_total",
			"Task messages not delivered, by reason: failed (the call was made and failed), unreachable (not sent: the frontend is down and no probe was due, or it was deregistered), inflight (no in-flight slot freed within the call timeout, see --frontend-max-inflight), no_frontend (no frontend registered for the app).",
			[]string{"reason"}, func(s st) []metrics.Labelled {
				f := s.Frontend
				return []metrics.Labelled{
					{Labels: []string{"failed"}, Value: float64(f.Failed)},
					{Labels: []string{"unreachable"}, Value: float64(f.DroppedUnreachable)},
					{Labels: []string{"inflight"}, Value: float64(f.DroppedInflight)},
					{Labels: []string{"no_frontend"}, Value: float64(f.DroppedNoFrontend)},
				}
			}),
		c("sparrow_scheduler_frontends_deregistered_total", "Frontend addresses whose apps were deregistered after --frontend-dead-after unreachable.", func(s st) float64 { return float64(s.Frontend.Deregistered) }),
		g("sparrow_scheduler_frontend_apps", "Apps with a registered frontend (at most 65,536).", func(s st) float64 { return float64(s.Frontend.Apps) }),
		g("sparrow_scheduler_frontend_messages_inflight", "Task messages being delivered to frontends now.", func(s st) float64 { return float64(s.Frontend.Inflight) }),
		g("sparrow_scheduler_frontend_messages_waiting", "Task messages waiting for an in-flight slot to their frontend.", func(s st) float64 { return float64(s.Frontend.Waiting) }),
		g("sparrow_scheduler_frontend_links", "Frontend links kept: with messages in flight, down, or with drops not yet logged.", func(s st) float64 { return float64(s.Frontend.Links) }),
		g("sparrow_scheduler_frontends_down", "Frontends whose last delivery failed: their messages are dropped but for one probe per backoff.", func(s st) float64 { return float64(s.Frontend.Down) }),

		// Relaxation of placement preferences and locality of launches.
		metrics.CounterVec("sparrow_scheduler_tasks_widened_total",
			"Tasks whose placement preferences were relaxed, by the level reached (rack, cluster) and the cause (delay, prices).",
			[]string{"level", "cause"}, func(s st) []metrics.Labelled {
				l := s.Locality
				return []metrics.Labelled{
					{Labels: []string{"rack", "delay"}, Value: float64(l.WidenedRackByDelay)},
					{Labels: []string{"rack", "prices"}, Value: float64(l.WidenedRackByPrices)},
					{Labels: []string{"cluster", "delay"}, Value: float64(l.WidenedClusterByDelay)},
					{Labels: []string{"cluster", "prices"}, Value: float64(l.WidenedClusterByPrices)},
				}
			}),
		metrics.CounterVec("sparrow_scheduler_preferred_tasks_launched_total",
			"Launches of tasks with placement preferences, by locality: node (where the client allowed), rack (a preferred node's rack), cluster (elsewhere).",
			[]string{"level"}, func(s st) []metrics.Labelled {
				l := s.Locality
				return []metrics.Labelled{
					{Labels: []string{"node"}, Value: float64(l.LaunchedNode)},
					{Labels: []string{"rack"}, Value: float64(l.LaunchedRack)},
					{Labels: []string{"cluster"}, Value: float64(l.LaunchedCluster)},
				}
			}),
		g("sparrow_scheduler_relaxing_requests", "Requests with a task that may still relax its preferences.", func(s st) float64 { return float64(s.Locality.Relaxing) }),
		g("sparrow_scheduler_locality_prices_version", "Version of the coordinator's locality prices held.", func(s st) float64 { return float64(s.Locality.PricesVersion) }),
		g("sparrow_scheduler_locality_prices_fresh", "1 while the held locality prices are fresh enough to guide placement.", func(s st) float64 { return metrics.Bool(s.Locality.PricesFresh) }),
		c("sparrow_scheduler_locality_prices_accepted_total", "Locality price sets installed.", func(s st) float64 { return float64(s.Locality.PricesAccepted) }),
	)
}
