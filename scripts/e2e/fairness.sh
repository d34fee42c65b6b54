#!/usr/bin/env bash
# The fairness coordinator's fault tests against a containerised,
# constrained fleet (part of `make e2e`).
#
# One fleet (deploy/docker-compose.fairness.yml: 2 schedulers, coordinators
# coord-a and coord-b, 8 node monitors x 2 slots with Choosy queues, nm1-nm2
# mem=high, nm3-nm8 mem=low) serves every scenario in turn. In each, two
# users are backlogged: "spark" may run only on mem=high (its CMMF target is
# the 4 high-memory slots), "hadoop" anywhere (12). Once the coordinators'
# guidance shows spark at its target, one fault strikes coord-a, the
# publishing coordinator:
#   coordinator-kill       docker kill coord-a; coord-b, standing by, takes
#                          over (coord-a is restarted afterwards)
#   coordinator-pause      coord-a alone (coord-b stopped): docker pause it
#                          for FAIR_OUTAGE_S (default 8 s, longer than the
#                          node monitors' 3 s --guidance-stale, so they fall
#                          back to local weighted fair queues), unpause
#   coordinator-partition  coord-b standing by: docker network disconnect
#                          coord-a for FAIR_OUTAGE_S, reconnect; coord-b
#                          takes over meanwhile, coord-a takes back after
# Each scenario checks (scripts/e2e/fairness_report.py):
#   - both drivers exit 0: every job completed;
#   - no (request, task) was launched twice across the executors;
#   - spark ran at its CMMF target before the fault, and after the
#     coordinator's return (for a kill: the standby's first guidance) its
#     running tasks, summed over the node monitors and averaged per 1 s
#     period, are back within FAIR_TOL slots (default 1) of the target for
#     FAIR_K (3) consecutive periods starting within FAIR_RECOVER_WITHIN_S
#     (10 s: ten periods), then stay within it for FAIR_HOLD (80%) of the
#     FAIR_OBSERVE_S (10 s) watched; the time it took is reported;
#   - the pause's node monitors fell back; the kill's standby took over.
# A poller samples every coordinator's /status (its last guidance: each
# user's cluster-wide running count and CMMF target) and the node monitors'
# per-user counts four times a second, into $FAIR_OUT/timeline.jsonl.
# Results: a markdown table on stdout and in $FAIR_OUT/results.md (default
# bin/e2e-fairness), with every container's log. The fleet is always taken
# down on exit.
#
# Needs docker, docker-compose (v1), python3, the image $FAIR_IMAGE (make
# docker) and a host that reaches the bridge network's addresses (Linux
# docker). Uses project sparrowfair and 10.221.0.0/24 (FAIR_PROJECT,
# FAIR_NET), apart from run.sh's fleet.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD

PROJECT=${FAIR_PROJECT:-sparrowfair}
export FAIR_IMAGE=${FAIR_IMAGE:-${E2E_IMAGE:-sparrowfleet:dev}}
export FAIR_NET=${FAIR_NET:-10.221.0}
export FAIR_APP=fair FAIR_SLOTS=2 FAIR_PERIOD=1s
STALE_S=3
export FAIR_GUIDANCE_STALE=${STALE_S}s
export FAIR_TOL=${FAIR_TOL:-1} FAIR_K=${FAIR_K:-3} FAIR_RECOVER_WITHIN_S=${FAIR_RECOVER_WITHIN_S:-10}
export FAIR_OBSERVE_S=${FAIR_OBSERVE_S:-10} FAIR_HOLD=${FAIR_HOLD:-0.8}
# Scenarios expected to fail, for a known reason: reported XFAIL (or
# XPASS once fixed) without failing the run. None today; the partition
# was one until the coordinator resent its name table after a rejoin.
XFAIL=${FAIR_XFAIL-}
OUT=${FAIR_OUT:-$ROOT/bin/e2e-fairness}
SCENARIOS=${FAIR_SCENARIOS:-coordinator-kill coordinator-pause coordinator-partition}
OUTAGE_S=${FAIR_OUTAGE_S:-8}
ARRIVALS_S=${FAIR_ARRIVALS_S:-36} # how long jobs keep arriving
TASKS=4
TASK_DURATION=500ms
# Offered load, in tasks/s: spark 9 against its 4 slots' 8, hadoop 28
# against its 12 slots' 24, so both stay backlogged while jobs arrive
# (the whole fleet: 37 against 32) and queues drain within seconds after.
SPARK_RATE=2.25  # jobs/s
HADOOP_RATE=7    # jobs/s
DEADLINE_S=150
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3

COMPOSE=(docker-compose -p "$PROJECT" -f deploy/docker-compose.fairness.yml)
NETWORK=${PROJECT}_sparrow
SCHED1=$FAIR_NET.11:20503
SCHED2=$FAIR_NET.12:20503
POLLER_PID=

E2E_TAG=fairness
# shellcheck source=scripts/e2e/lib.sh
. scripts/e2e/lib.sh

ready() { "$PY" scripts/e2e/fairness_report.py ready "$OUT" "$@"; }

fleet_up() {
	log "fleet up (2 schedulers, 2 coordinators, 8 node monitors, 8 executors)"
	"${COMPOSE[@]}" up -d >"$OUT/compose-up.log" 2>&1 || {
		cat "$OUT/compose-up.log" >&2
		return 1
	}
	load_cids
	local targets=(coord-a=http://$FAIR_NET.31:9090/status coord-b=http://$FAIR_NET.32:9090/status)
	local i
	for i in $(seq 1 8); do targets+=("nm$i=http://$FAIR_NET.2$i:9090/status"); done
	"$PY" scripts/e2e/fairness_poll.py "$OUT/timeline.jsonl" 0.25 "${targets[@]}" &
	POLLER_PID=$!
	wait_for 90 "coord-a to publish from all 8 node monitors, coord-b to stand by" ready fleet coord-a coord-b
}

# coordinators SERVICE...: exactly these coordinators run, the others
# are stopped (gracefully: they leave the cluster at once).
coordinators() {
	local c want
	for c in coord-a coord-b; do
		want=0
		for w in "$@"; do [ "$w" = "$c" ] && want=1; done
		if ((want)); then
			if [ "$(docker inspect -f '{{.State.Running}}' "$(cid $c)")" != true ]; then
				log "starting $c"
				docker start "$(cid $c)" >/dev/null
			fi
		elif [ "$(docker inspect -f '{{.State.Running}}' "$(cid $c)")" = true ]; then
			log "stopping $c"
			docker stop -t 3 "$(cid $c)" >/dev/null
		fi
	done
}

fault() { echo "$1=$2" >>"$DIR/fault.env"; }

# start_driver USER RATE SCHEDULERS ARGS...
DRIVER_PIDS=()
start_driver() {
	local user=$1 rate=$2 scheds=$3
	shift 3
	local jobs
	jobs=$(awk -v r="$rate" -v s="$ARRIVALS_S" 'BEGIN { printf "%d", r * s }')
	docker run --rm --name "${PROJECT}_${SCENARIO}_$user" --label "$PROJECT.driver=1" --network "$NETWORK" \
		"$FAIR_IMAGE" drive --app="$FAIR_APP" --advertise-host=auto --schedulers="$scheds" \
		--run-id="$SCENARIO-$user" --user="$user" --jobs="$jobs" --tasks="$TASKS" \
		--task-duration="$TASK_DURATION" --rate="$rate" --deadline="${DEADLINE_S}s" --json "$@" \
		</dev/null >"$DIR/$user.json" 2>"$DIR/$user.err" &
	DRIVER_PIDS+=($!)
	log "driver $user: $jobs jobs x $TASKS tasks x $TASK_DURATION at $rate jobs/s $*"
}

wait_drivers() {
	local p i=0 rc users=(spark hadoop)
	for p in "${DRIVER_PIDS[@]}"; do
		rc=0
		wait "$p" || rc=$?
		echo "$rc" >"$DIR/${users[$i]}.rc"
		log "driver ${users[$i]} exited $rc: $(grep '^progress' "$DIR/${users[$i]}.err" | tail -1)"
		i=$((i + 1))
	done
	DRIVER_PIDS=()
}

inject_coordinator_kill() {
	fault fault "docker kill coord-a"
	fault back takeover
	fault expect_takeover 1
	fault fault_at "$(now)"
	docker kill "$(cid coord-a)" >/dev/null
	fault back_at "$(now)" # replaced by the standby's first guidance
	log "killed coord-a; coord-b should take over"
}

inject_coordinator_pause() {
	fault fault "docker pause coord-a ${OUTAGE_S}s"
	fault back unpause
	fault expect_fallback 1
	fault fault_at "$(now)"
	docker pause "$(cid coord-a)" >/dev/null
	log "paused coord-a, the only coordinator, for ${OUTAGE_S}s"
	sleep "$OUTAGE_S" # the fault's length, not synchronisation
	docker unpause "$(cid coord-a)" >/dev/null
	fault back_at "$(now)"
	log "unpaused coord-a"
}

inject_coordinator_partition() {
	fault fault "docker network disconnect coord-a ${OUTAGE_S}s"
	fault back reconnect
	fault fault_at "$(now)"
	docker network disconnect -f "$NETWORK" "$(cid coord-a)"
	log "disconnected coord-a for ${OUTAGE_S}s; coord-b stands by"
	sleep "$OUTAGE_S" # the fault's length, not synchronisation
	docker network connect --ip "$FAIR_NET.31" "$NETWORK" "$(cid coord-a)"
	fault back_at "$(now)"
	log "reconnected coord-a"
}

run_scenario() {
	SCENARIO=$1
	DIR=$OUT/$SCENARIO
	rm -rf "$DIR"
	mkdir -p "$DIR"
	local t0=$SECONDS
	log "=== $SCENARIO"
	fault loadavg_start "$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')"
	fault users "spark hadoop"
	fault stale_s "$STALE_S"
	fault active_before coord-a
	case $SCENARIO in
	coordinator-pause)
		coordinators coord-a
		fault coordinators "coord-a alone"
		wait_for 60 "coord-a to publish from all 8 node monitors" ready fleet coord-a || return 1
		;;
	*)
		coordinators coord-a coord-b
		fault coordinators "coord-a, coord-b standing by"
		wait_for 60 "coord-a to publish from all 8 node monitors, coord-b to stand by" ready fleet coord-a coord-b || return 1
		;;
	esac
	local start
	start=$(now)
	fault start_at "$start"
	start_driver spark "$SPARK_RATE" "$SCHED1,$SCHED2" --constraint=mem=high
	start_driver hadoop "$HADOOP_RATE" "$SCHED2,$SCHED1"
	if wait_for 30 "spark at its CMMF share before the fault" ready share "$start"; then
		"inject_${SCENARIO//-/_}" || log "fault injection failed"
	else
		log "no fault injected: spark never reached its share"
	fi
	wait_drivers
	fault end_at "$(now)"
	fault scenario_s "$((SECONDS - t0))"
	fault loadavg_end "$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')"
	log "=== $SCENARIO ran in $((SECONDS - t0))s"
}

log_services() {
	local i
	echo scheduler1 scheduler2 coord-a coord-b
	for i in $(seq 1 8); do echo nm$i ex$i; done
}

start=$SECONDS
run_scenarios "$FAIR_IMAGE"
failed=()
for s in $SCENARIOS; do
	rc=0
	"$PY" scripts/e2e/fairness_report.py check "$OUT" "$s" || rc=$?
	case " $XFAIL " in
	*" $s "*)
		if ((rc)); then
			echo "XFAIL" >"$OUT/$s/xfail"
			log "$s failed, as expected (FAIR_XFAIL)"
		else
			echo "XPASS" >"$OUT/$s/xfail"
			log "$s passed, though expected to fail: take it out of FAIR_XFAIL"
		fi
		;;
	*) ((rc == 0)) || failed+=("$s") ;;
	esac
done
"$PY" scripts/e2e/fairness_report.py table "$OUT" $SCENARIOS >"$OUT/results.md"
echo "total_s=$((SECONDS - start))" >>"$OUT/results.md"
cat "$OUT/results.md"
log "total $((SECONDS - start))s; results in $OUT/results.md"
if ((${#failed[@]})); then
	log "FAILED: ${failed[*]}"
	exit 1
fi
log "all scenarios passed"
