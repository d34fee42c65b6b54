#!/usr/bin/env bash
# Fault-injection tests against a containerised sparrowfleet (`make e2e`).
#
# For each scenario it brings up a fresh fleet (deploy/docker-compose.e2e.yml:
# 3 schedulers, 6 node monitors x 2 slots, an executor sidecar per node
# monitor), warms it up, runs `sparrow drive` at ~1.2x capacity so node
# monitors hold queued reservations, injects one fault mid-run, and checks:
#   - the driver exits 0: every job completed, lost work resubmitted;
#   - no (request, task) pair was launched twice across all executors;
#   - the loss was reported where expected (failover for a scheduler,
#     lost tasks and re-placed reservations for a killed node monitor).
# Scenarios (E2E_SCENARIOS, default all, in this order):
#   baseline        no fault: the same workload's figures for comparison
#   scheduler-kill  docker kill the driver's scheduler (scheduler1)
#   nm-kill         docker kill nm3
#   executor-kill   docker kill ex2, the executor beside nm2 (nm2 lives on)
#   nm-pause        docker pause nm4 until gossip declares it dead, +1 s
#   nm-partition    docker network disconnect nm5 until declared dead, +1 s
#   scheduler-pause docker pause the driver's scheduler until it fails over, +1 s:
#                   unlike a kill, which closes its sockets at once, a hung
#                   scheduler is found only by the frontend's 100 ms timeout
#   scheduler-partition  docker network disconnect the driver's scheduler for
#                   E2E_SCHED_PARTITION_S (default 5 s): like a machine that
#                   vanished, its address no longer answers at all, so node
#                   monitors holding its reservations wait out their timeouts
#   nm-long-partition  disconnect nm5 for E2E_LONG_PARTITION_S (default 20 s,
#                   longer than the local gossip profile's 15 s
#                   GossipToTheDeadTime), reconnect, and require nm5 to run
#                   tasks again within 30 s
#   coordinator-kill  docker kill the fairness coordinator (E2E_COORDINATOR=1
#                   only): its guidance goes stale on every node monitor
# Modes, each off by default and combinable:
#   E2E_SHORT_JOBS=1  every scheduler and node monitor runs the long-task-
#                   aware policy with pulls (--short-jobs --short-pull
#                   --short-pull-after 200ms,
#                   cutoff 1 s, short-only share 0.25: nm1 and nm3 of the
#                   six node monitors), and the driver
#                   replays a mixed trace (scripts/e2e/shortjobs_trace.py:
#                   short jobs of 2-4 tasks x 0.1-0.3 s, every 12th job 4
#                   tasks x 1.5-2.5 s) with each job's duration estimate,
#                   so long-work adverts, steering, sticky fetches and the
#                   SRPT queue all take part; report.py adds the policy's
#                   figures (launches by class, long tasks on the
#                   short-only node, short tasks beside long work)
#   E2E_COORDINATOR=1  a fairness coordinator joins the fleet
#                   (scripts/e2e/coordinator.compose.yml) and publishes
#                   from every node monitor before the driver starts
# Results: a markdown table on stdout and in $E2E_OUT/results.md (default
# bin/e2e), with every container's logs per scenario under $E2E_OUT/<name>/.
# The fleet is always taken down (docker-compose down -v) on exit.
#
# Needs docker, docker-compose (v1), python3 and the image $E2E_IMAGE
# (`make docker`). Talks to nothing but its own containers.
set -euo pipefail
# A relative E2E_OUT is taken from the caller's directory: the driver's
# trace is mounted into its container by absolute path.
case ${E2E_OUT:-} in '' | /*) ;; *) E2E_OUT=$PWD/$E2E_OUT ;; esac
cd "$(dirname "$0")/../.."
ROOT=$PWD

PROJECT=${E2E_PROJECT:-sparrowe2e}
export E2E_IMAGE=${E2E_IMAGE:-sparrowfleet:dev}
export E2E_NET=${E2E_NET:-10.217.0}
export E2E_APP=${E2E_APP:-e2e}
export E2E_SLOTS=${E2E_SLOTS:-2}
OUT=${E2E_OUT:-$ROOT/bin/e2e}
SCENARIOS=${E2E_SCENARIOS:-baseline scheduler-kill nm-kill executor-kill nm-pause nm-partition scheduler-pause scheduler-partition nm-long-partition}
SHORT_JOBS=${E2E_SHORT_JOBS:-0}
COORDINATOR=${E2E_COORDINATOR:-0}
[ "$SHORT_JOBS" = 1 ] || SHORT_JOBS=0
[ "$COORDINATOR" = 1 ] || COORDINATOR=0
export E2E_SHORT_JOBS=$SHORT_JOBS
if ((SHORT_JOBS)); then
	# The trace's cutoff, in seconds, and the policy's on every member.
	SHORT_CUTOFF_S=1
	export E2E_SHORT_CUTOFF=${SHORT_CUTOFF_S}s E2E_SHORT_SHARE=0.25 E2E_SHORT_PULL=true E2E_SHORT_PULL_AFTER=200ms
	SHORT_ONLY="nm1 nm3" # the 2 (0.25 of 6, rounded up) of smallest name hash (shortjobs.Partition)
fi
JOBS=${E2E_JOBS:-180}
TASKS=${E2E_TASKS:-6}
TASK_DURATION=${E2E_TASK_DURATION:-200ms}
LOAD=${E2E_LOAD:-1.2}
NODES=6
SLOTS=$((NODES * E2E_SLOTS))
FAULT_AFTER=${E2E_FAULT_AFTER:-40}   # inject once this many jobs completed
DEADLINE_S=${E2E_DEADLINE_S:-120}    # the driver gives up after this many seconds
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3

COMPOSE=(docker-compose -p "$PROJECT" -f deploy/docker-compose.e2e.yml)
if ((COORDINATOR)); then COMPOSE+=(-f scripts/e2e/coordinator.compose.yml); fi
COORD_STATUS=http://$E2E_NET.31:9090/status
NETWORK=${PROJECT}_sparrow
SCHED_IPS=("$E2E_NET.11" "$E2E_NET.12" "$E2E_NET.13")

POLLER_PID=
E2E_TAG=e2e
# shellcheck source=scripts/e2e/lib.sh
. scripts/e2e/lib.sh
# The fault scenarios' report reads ISO times.
now() { date -u +%Y-%m-%dT%H:%M:%S.%NZ; }

# driver NAME ARGS...: run `sparrow drive` in a container on the fleet's
# network, as the compose file's driver service does (docker run starts in
# a second where docker-compose run takes three).
DRIVER_ARGS=(--app="$E2E_APP" --advertise-host=auto
	--schedulers="$E2E_NET.11:20503,$E2E_NET.12:20503,$E2E_NET.13:20503")
# DRIVER_MOUNTS: docker run options of the next driver (the trace's mount).
DRIVER_MOUNTS=()
driver() {
	local name=$1
	shift
	docker run --rm --name "$name" --label "$PROJECT.driver=1" --network "$NETWORK" "${DRIVER_MOUNTS[@]}" \
		"$E2E_IMAGE" drive "${DRIVER_ARGS[@]}" "$@" </dev/null
}

fleet_up() {
	log "fleet up"
	"${COMPOSE[@]}" up -d >"$DIR/compose-up.log" 2>&1 || {
		cat "$DIR/compose-up.log" >&2
		return 1
	}
	load_cids
	wait_for 60 "every executor to register" executors_registered || return 1
	if ((COORDINATOR)); then
		wait_for 60 "the coordinator to publish from all $NODES node monitors" coordinator_ready
	fi
}

# coordinator_ready: the coordinator is active and its last period had a
# report from every node monitor.
coordinator_ready() {
	"$PY" -c 'import json, sys, urllib.request
c = json.load(urllib.request.urlopen(sys.argv[1], timeout=1)).get("coordinator") or {}
sys.exit(0 if c.get("active") and c.get("reports") == int(sys.argv[2]) else 1)' "$COORD_STATUS" "$NODES" 2>/dev/null
}

executors_registered() {
	local i
	for i in $(seq 1 $NODES); do
		docker logs "$(cid ex$i)" 2>&1 | grep -F 'registered with the node monitor' >/dev/null || return 1
	done
}

# launches_on N: how many launches executor N has logged.
launches_on() { docker logs "$(cid ex$1)" 2>/dev/null | grep -c '"launch"' || true; }

every_executor_launched() {
	local i
	for i in $(seq 1 $NODES); do
		[ "$(launches_on "$i")" -gt 0 ] || return 1
	done
}

# warm_up: short runs through each scheduler at once, until every executor
# has run a task, so every scheduler sees every node monitor's app.
warm_up() {
	local dir=$1 try s pids
	for try in 1 2 3 4 5; do
		pids=()
		for s in 0 1 2; do
			driver "${PROJECT}_warm_s$((s + 1))" --schedulers="${SCHED_IPS[$s]}:20503" --listen=:50202 \
				--run-id="warm$try-s$((s + 1))" --jobs=8 --tasks=6 --task-duration=20ms --rate=20 \
				--deadline=30s --json >>"$dir/warmup.out" 2>>"$dir/warmup.err" &
			pids+=($!)
		done
		local ok=1 p
		for p in "${pids[@]}"; do wait "$p" || ok=0; done
		if ((ok)) && every_executor_launched; then
			log "warm: every scheduler placed work, every executor ran a task"
			return 0
		fi
		log "warm-up $try incomplete; again"
	done
	log "fleet never warmed up; see $dir/warmup.err"
	return 1
}

driver_completed() { # at least $1 jobs completed
	local n
	n=$(grep -o 'completed=[0-9]*' "$DIR/driver.err" 2>/dev/null | tail -1 | cut -d= -f2 || true)
	[ -n "$n" ] && [ "$n" -ge "$1" ]
}

start_driver() {
	DRIVER_NAME=${PROJECT}_driver_${SCENARIO}
	docker rm -f "$DRIVER_NAME" >/dev/null 2>&1 || true
	local work=(--jobs="$JOBS" --tasks="$TASKS" --task-duration="$TASK_DURATION" --load="$LOAD")
	if ((SHORT_JOBS)); then
		"$PY" scripts/e2e/shortjobs_trace.py "$JOBS" "$SLOTS" "$LOAD" >"$DIR/trace.tr"
		chmod 644 "$DIR/trace.tr" # the image runs as nobody
		DRIVER_MOUNTS=(-v "$DIR/trace.tr:/trace.tr:ro")
		work=(--job-trace=/trace.tr --send-estimates --cutoff="$SHORT_CUTOFF_S")
		log "driver: $JOBS jobs of the mixed trace ($DIR/trace.tr) at load $LOAD of $SLOTS slots, with estimates"
	else
		log "driver: $JOBS jobs x $TASKS tasks x $TASK_DURATION at load $LOAD of $SLOTS slots"
	fi
	driver "$DRIVER_NAME" --run-id="$SCENARIO" "${work[@]}" \
		--slots="$SLOTS" --deadline="${DEADLINE_S}s" --json \
		>"$DIR/driver.json" 2>"$DIR/driver.err" &
	DRIVER_PID=$!
	DRIVER_MOUNTS=()
}

# mark: the driver records the jobs and tasks in flight right now.
mark() {
	docker kill -s USR1 "$DRIVER_NAME" >/dev/null
	wait_for 5 "the driver's mark" grep -q '^mark ' "$DIR/driver.err"
}

driver_running() { kill -0 "$DRIVER_PID" 2>/dev/null; }
driver_done() { ! driver_running; }

wait_driver() {
	local rc=0
	# The driver gives up at its own --deadline; this bound is a backstop.
	if ! wait_for $((DEADLINE_S + 60)) "the driver to exit" driver_done; then
		docker rm -f "$DRIVER_NAME" >/dev/null 2>&1 || true
	fi
	wait "$DRIVER_PID" || rc=$?
	echo "$rc" >"$DIR/driver.rc"
	log "driver exited $rc: $(grep '^progress' "$DIR/driver.err" | tail -1)"
}

# gossip_marked NAME: some live member's gossip declared NAME dead.
gossip_marked() {
	local svc
	for svc in scheduler1 scheduler2 scheduler3 nm1 nm2 nm6; do
		[ "$svc" = "$2" ] && continue
		docker logs "$(cid $svc)" 2>&1 | grep -F "Marking $1 as failed" >/dev/null && return 0
	done
	return 1
}

fault() { # records what was done and when, for report.py
	echo "$1=$2" >>"$DIR/fault.env"
}

inject_baseline() {
	fault target none
	fault fault_at "$(now)"
	log "no fault (baseline)"
}

# driver_scheduler: the service the driver's frontend used at the mark
# taken just before the fault (scheduler1 unless it already failed over).
driver_scheduler() {
	local ip
	ip=$(grep '^mark ' "$DIR/driver.err" | grep -o 'scheduler=[0-9.]*' | tail -1 | cut -d= -f2 || true)
	case $ip in
	"$E2E_NET.12") echo scheduler2 ;;
	"$E2E_NET.13") echo scheduler3 ;;
	*) echo scheduler1 ;;
	esac
}

inject_scheduler_kill() {
	local s
	s=$(driver_scheduler)
	fault target "$s"
	fault fault_at "$(now)"
	docker kill "$(cid "$s")" >/dev/null
	fault fault_done_at "$(now)"
	fault died_at "$(docker inspect -f '{{.State.FinishedAt}}' "$(cid "$s")")"
	log "killed $s, the driver's scheduler"
}

inject_nm_kill() {
	fault target nm3
	fault fault_at "$(now)"
	docker kill "$(cid nm3)" >/dev/null
	fault fault_done_at "$(now)"
	fault died_at "$(docker inspect -f '{{.State.FinishedAt}}' "$(cid nm3)")"
	log "killed nm3 (its executor is cut off with its network namespace)"
}

inject_executor_kill() {
	fault target ex2
	fault fault_at "$(now)"
	docker kill "$(cid ex2)" >/dev/null
	fault fault_done_at "$(now)"
	fault died_at "$(docker inspect -f '{{.State.FinishedAt}}' "$(cid ex2)")"
	log "killed ex2 (nm2 lives on)"
}

inject_nm_pause() {
	local c
	c=$(cid nm4)
	fault target nm4
	fault fault_at "$(now)"
	docker pause "$c" >/dev/null
	fault fault_done_at "$(now)"
	log "paused nm4; waiting for gossip to declare it dead"
	wait_for 30 "gossip to declare nm4 dead" gossip_marked nm4 nm4 || true
	sleep 1 # the fault's length past detection, not synchronisation
	fault recover_at "$(now)"
	docker unpause "$c" >/dev/null
	log "unpaused nm4"
}

inject_nm_partition() {
	local c
	c=$(cid nm5)
	fault target nm5
	fault fault_at "$(now)"
	docker network disconnect -f "$NETWORK" "$c"
	fault fault_done_at "$(now)"
	log "disconnected nm5 from $NETWORK; waiting for gossip to declare it dead"
	wait_for 30 "gossip to declare nm5 dead" gossip_marked nm5 nm5 || true
	sleep 1 # the fault's length past detection, not synchronisation
	fault recover_at "$(now)"
	docker network connect --ip "$E2E_NET.25" "$NETWORK" "$c"
	log "reconnected nm5"
}

driver_failed_over() { grep -q 'scheduler failover' "$DIR/driver.err"; }

inject_scheduler_pause() {
	local s c
	s=$(driver_scheduler)
	c=$(cid "$s")
	fault target "$s"
	fault fault_at "$(now)"
	docker pause "$c" >/dev/null
	fault fault_done_at "$(now)"
	log "paused $s, the driver's scheduler; waiting for the driver to fail over"
	wait_for 30 "the driver to fail over" driver_failed_over || true
	sleep 1 # the fault's length past detection, not synchronisation
	fault recover_at "$(now)"
	docker unpause "$c" >/dev/null
	log "unpaused $s"
}

inject_scheduler_partition() {
	local s c ip hold=${E2E_SCHED_PARTITION_S:-5}
	s=$(driver_scheduler)
	c=$(cid "$s")
	ip=$E2E_NET.1${s#scheduler}
	fault target "$s"
	fault fault_at "$(now)"
	local t0=$SECONDS
	docker network disconnect -f "$NETWORK" "$c"
	fault fault_done_at "$(now)"
	log "disconnected $s, the driver's scheduler, for ${hold}s"
	wait_for 30 "the driver to fail over" driver_failed_over || true
	while ((SECONDS - t0 < hold)); do sleep 0.2; done # the fault's length
	fault recover_at "$(now)"
	docker network connect --ip "$ip" "$NETWORK" "$c"
	log "reconnected $s"
}

inject_nm_long_partition() {
	local c
	c=$(cid nm5)
	fault target nm5
	fault fault_at "$(now)"
	docker network disconnect -f "$NETWORK" "$c"
	fault fault_done_at "$(now)"
	log "disconnected nm5 for ${E2E_LONG_PARTITION_S:-20}s"
	sleep "${E2E_LONG_PARTITION_S:-20}" # the fault's length, not synchronisation
	fault recover_at "$(now)"
	docker network connect --ip "$E2E_NET.25" "$NETWORK" "$c"
	log "reconnected nm5"
}

inject_coordinator_kill() {
	fault target coord
	fault fault_at "$(now)"
	docker kill "$(cid coord)" >/dev/null
	fault fault_done_at "$(now)"
	fault died_at "$(docker inspect -f '{{.State.FinishedAt}}' "$(cid coord)")"
	log "killed coord, the fairness coordinator"
}

# rejoin_check: after the run, short probe runs until nm5 launches a task
# again (it rejoined the gossip cluster), for up to 30 s.
rejoin_check() {
	local before deadline=$((SECONDS + 30)) n=0
	before=$(launches_on 5)
	while ((SECONDS < deadline)); do
		n=$((n + 1))
		driver "${PROJECT}_probe" --listen=:50203 --run-id="probe$n" --jobs=10 --tasks=6 \
			--task-duration=20ms --rate=20 --deadline=20s --json >>"$DIR/probe.out" 2>>"$DIR/probe.err" || true
		if [ "$(launches_on 5)" -gt "$before" ]; then
			fault rejoined_at "$(now)"
			log "nm5 runs tasks again"
			return 0
		fi
	done
	fault rejoined_at never
	log "nm5 ran no task in 30 s after reconnecting: it did not rejoin"
}

collect_logs() {
	local svc c
	for svc in scheduler1 scheduler2 scheduler3 coord $(for i in $(seq 1 $NODES); do echo nm$i ex$i; done); do
		c=$(cid "$svc")
		[ -n "$c" ] || continue
		docker logs -t "$c" >"$DIR/$svc.log" 2>&1 || true
		case $svc in ex*) docker logs "$c" 2>/dev/null | grep '"launch"' >"$DIR/$svc.launches" || true ;; esac
	done
}

# run_scenario NAME: one fresh fleet, one driver run, one fault. Called
# as `run_scenario ... || ...`, where bash ignores set -e, so every step's
# failure is handled here explicitly.
run_scenario() {
	SCENARIO=$1
	DIR=$OUT/$SCENARIO
	rm -rf "$DIR"
	mkdir -p "$DIR"
	local t0=$SECONDS rc=0
	log "=== $SCENARIO"
	# The host's load matters: the frontend's 100 ms timeout and gossip's
	# probes misfire on a starved CPU.
	echo "loadavg_start=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')" >>"$DIR/fault.env"
	fault short_jobs "$SHORT_JOBS"
	fault coordinator "$COORDINATOR"
	if ((SHORT_JOBS)); then
		fault short_cutoff_s "$SHORT_CUTOFF_S"
		fault short_only "$SHORT_ONLY"
	fi
	if ! fleet_up || ! warm_up "$DIR"; then
		collect_logs
		fleet_down
		log "=== $SCENARIO: the fleet did not come up; logs in $DIR"
		return 1
	fi
	start_driver
	if wait_for 90 "$FAULT_AFTER jobs to complete before the fault" driver_completed "$FAULT_AFTER" && mark; then
		"inject_${SCENARIO//-/_}" || log "fault injection failed"
	else
		docker rm -f "$DRIVER_NAME" >/dev/null 2>&1 || true
	fi
	wait_driver
	if [ "$SCENARIO" = nm-long-partition ]; then rejoin_check; fi
	collect_logs
	fleet_down
	echo "scenario_s=$((SECONDS - t0))" >>"$DIR/fault.env"
	echo "loadavg_end=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')" >>"$DIR/fault.env"
	"$PY" scripts/e2e/report.py check "$DIR" || rc=$?
	log "=== $SCENARIO done in $((SECONDS - t0))s: $([ $rc = 0 ] && echo PASS || echo FAIL)"
	return $rc
}

docker image inspect "$E2E_IMAGE" >/dev/null 2>&1 || {
	echo "e2e: image $E2E_IMAGE not found; run make docker" >&2
	exit 1
}
case " $SCENARIOS " in
*" coordinator-kill "*)
	((COORDINATOR)) || {
		echo "e2e: coordinator-kill needs E2E_COORDINATOR=1" >&2
		exit 2
	}
	;;
esac
mkdir -p "$OUT"
start=$SECONDS
log "short-jobs policy $([ "$SHORT_JOBS" = 1 ] && echo on || echo off), coordinator $([ "$COORDINATOR" = 1 ] && echo on || echo off)"
DIR=$OUT
fleet_down # leftovers of an interrupted run
failed=()
for s in $SCENARIOS; do
	run_scenario "$s" || failed+=("$s")
done
{
	echo "short-jobs policy: $([ "$SHORT_JOBS" = 1 ] && echo on || echo off); coordinator: $([ "$COORDINATOR" = 1 ] && echo on || echo off)"
	echo
	"$PY" scripts/e2e/report.py table "$OUT" $SCENARIOS
} >"$OUT/results.md"
echo "total_s=$((SECONDS - start))" >>"$OUT/results.md"
cat "$OUT/results.md"
log "total $((SECONDS - start))s; results in $OUT/results.md"
if ((${#failed[@]})); then
	log "FAILED: ${failed[*]}"
	exit 1
fi
log "all scenarios passed"
