#!/usr/bin/env bash
# The locality coordinator's fault tests against a containerised fleet
# (part of `make e2e`): when the coordinator dies, schedulers fall back to
# (a) strict or (b) Sparrow's delay relaxation after a bounded staleness,
# and no task is lost or launched twice.
#
# One fleet (deploy/docker-compose.locality.yml: 2 schedulers with
# --locality-stale 3s, coordinators coord-a and coord-b with --locality,
# 12 node monitors x 1 slot in racks r1-r3 of 4) serves every scenario in
# turn. In each, one driver (`sparrow drive --prefer-nodes`) submits jobs
# of 4 tasks of 200 ms whose tasks each prefer the 3 replica nodes of an
# input block (100 blocks placed as HDFS does, Zipf 1.1 popularity, 64 MiB
# inputs) and opt into relaxation with a 300 ms delayThreshold, as in
# docs/experiments/locality.md's live experiment. Once the prices are seen widening
# tasks (and after at least LOC_WARM_S, default 5 s, of load), one fault
# strikes coord-a, the pricing coordinator:
#   coordinator-kill       coord-a alone: docker kill it, docker start it
#                          again LOC_OUTAGE_S (default 8 s) later
#   coordinator-partition  coord-a alone: docker network disconnect it for
#                          LOC_OUTAGE_S, reconnect
#   standby-takeover       coord-b standing by: docker kill coord-a; coord-b
#                          takes over (whether the schedulers' prices went
#                          stale meanwhile is reported, not required)
# Each scenario checks (scripts/e2e/locality_report.py check):
#   - the driver exits 0: every job completed;
#   - no (request, task) was launched twice across the executors;
#   - before the fault every scheduler held fresh prices and they widened
#     tasks; after a kill or partition every scheduler stopped using them
#     at most 3 s + LOC_SLACK_S (1 s) after their last set was computed,
#     no task was widened by prices while they were stale and the delay
#     widened tasks instead; after the return (or takeover) every
#     scheduler held fresh prices again and they widened tasks again,
#     within LOC_RESUME_WITHIN_S (15 s). The times are reported.
# A poller samples both schedulers' /metrics (prices fresh and version,
# tasks widened by level and cause, launches by locality) and the
# coordinators' /status four times a second, into $LOC_OUT/timeline.jsonl.
# Results: a markdown table on stdout and in $LOC_OUT/results.md (default
# bin/e2e-locality), with every container's log. The fleet is always taken
# down on exit.
#
# Needs docker, docker-compose (v1), python3, the image $LOC_IMAGE (make
# docker) and a host that reaches the bridge network's addresses (Linux
# docker). Uses project sparrowloc and 10.222.0.0/24 (LOC_PROJECT,
# LOC_NET), apart from the other e2e fleets.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD

PROJECT=${LOC_PROJECT:-sparrowloc}
export LOC_IMAGE=${LOC_IMAGE:-${E2E_IMAGE:-sparrowfleet:dev}}
export LOC_NET=${LOC_NET:-10.222.0}
export LOC_APP=loc LOC_SLOTS=1 LOC_PERIOD=1s LOC_NODES=12
STALE_S=3
export LOC_STALE=${STALE_S}s LOC_STALE_S=$STALE_S LOC_PERIOD_S=1
export LOC_SLACK_S=${LOC_SLACK_S:-1} LOC_RESUME_WITHIN_S=${LOC_RESUME_WITHIN_S:-15}
OUT=${LOC_OUT:-$ROOT/bin/e2e-locality}
SCENARIOS=${LOC_SCENARIOS:-coordinator-kill coordinator-partition standby-takeover}
OUTAGE_S=${LOC_OUTAGE_S:-8}
WARM_S=${LOC_WARM_S:-5} # least load before the fault, once the prices widen tasks
ARRIVALS_S=${LOC_ARRIVALS_S:-28} # how long jobs keep arriving
TASKS=4
TASK_DURATION=200ms
# 12 slots at load 0.6 with 4 tasks of 200 ms: 9 jobs/s. The hottest
# block's replica nodes get far more than their share (the hottest block
# alone is about a quarter of the tasks), so their queues build and
# waiting there costs more than moving the input: the prices widen tasks.
RATE=${LOC_RATE:-9}
DEADLINE_S=120
NODE_NAMES=$(seq -s, -f 'nm%g' 1 "$LOC_NODES")
PREFER=(--prefer-nodes="$NODE_NAMES" --prefer-racks=3 --replicas=3 --blocks=100 --zipf=1.1
	--delay-threshold=300ms --input-bytes=67108864)
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3

COMPOSE=(docker-compose -p "$PROJECT" -f deploy/docker-compose.locality.yml)
NETWORK=${PROJECT}_sparrow
SCHED1=$LOC_NET.11:20503
SCHED2=$LOC_NET.12:20503
POLLER_PID=
DRIVER_PID=

E2E_TAG=locality
# shellcheck source=scripts/e2e/lib.sh
. scripts/e2e/lib.sh

ready() { "$PY" scripts/e2e/locality_report.py ready "$OUT" "$@"; }

fleet_up() {
	log "fleet up (2 schedulers, 2 coordinators, 12 node monitors in 3 racks, 12 executors)"
	"${COMPOSE[@]}" up -d >"$OUT/compose-up.log" 2>&1 || {
		cat "$OUT/compose-up.log" >&2
		return 1
	}
	load_cids
	local targets=(scheduler1=http://$LOC_NET.11:9090/metrics scheduler2=http://$LOC_NET.12:9090/metrics
		coord-a=http://$LOC_NET.41:9090/status coord-b=http://$LOC_NET.42:9090/status)
	"$PY" scripts/e2e/locality_report.py poll "$OUT/timeline.jsonl" 0.25 "${targets[@]}" &
	POLLER_PID=$!
}

# coordinators SERVICE...: exactly these coordinators run, the others
# are stopped (gracefully: they leave the cluster at once).
coordinators() {
	local c want w
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

start_driver() {
	local jobs
	jobs=$(awk -v r="$RATE" -v s="$ARRIVALS_S" 'BEGIN { printf "%d", r * s }')
	docker run --rm --name "${PROJECT}_${SCENARIO}" --label "$PROJECT.driver=1" --network "$NETWORK" \
		"$LOC_IMAGE" drive --app="$LOC_APP" --advertise-host=auto --schedulers="$SCHED1,$SCHED2" \
		--run-id="$SCENARIO" --user=loc --jobs="$jobs" --tasks="$TASKS" --task-duration="$TASK_DURATION" \
		--rate="$RATE" --poisson --seed=1 --deadline="${DEADLINE_S}s" --json "${PREFER[@]}" \
		</dev/null >"$DIR/driver.json" 2>"$DIR/driver.err" &
	DRIVER_PID=$!
	log "driver: $jobs jobs x $TASKS tasks x $TASK_DURATION at $RATE jobs/s, preferring 3 replicas of 100 blocks (Zipf 1.1), delayThreshold 300 ms"
}

wait_driver() {
	local rc=0
	wait "$DRIVER_PID" || rc=$?
	echo "$rc" >"$DIR/driver.rc"
	DRIVER_PID=
	log "driver exited $rc: $(grep '^progress' "$DIR/driver.err" | tail -1)"
}

outage() {
	sleep "$OUTAGE_S" # the fault's length, not synchronisation
}

inject_coordinator_kill() {
	fault fault "docker kill coord-a, start ${OUTAGE_S}s later"
	fault back restart
	fault expect_fallback 1
	fault fault_at "$(now)"
	docker kill "$(cid coord-a)" >/dev/null
	log "killed coord-a, the only coordinator"
	outage
	fault back_at "$(now)"
	docker start "$(cid coord-a)" >/dev/null
	log "started coord-a again"
}

inject_coordinator_partition() {
	fault fault "docker network disconnect coord-a ${OUTAGE_S}s"
	fault back reconnect
	fault expect_fallback 1
	fault fault_at "$(now)"
	docker network disconnect -f "$NETWORK" "$(cid coord-a)"
	log "disconnected coord-a, the only coordinator, for ${OUTAGE_S}s"
	outage
	docker network connect --ip "$LOC_NET.41" "$NETWORK" "$(cid coord-a)"
	fault back_at "$(now)"
	log "reconnected coord-a"
}

inject_standby_takeover() {
	fault fault "docker kill coord-a, coord-b standing by"
	fault back takeover
	fault standby coord-b
	fault fault_at "$(now)"
	docker kill "$(cid coord-a)" >/dev/null
	fault back_at "$(now)" # replaced by coord-b's first prices
	log "killed coord-a; coord-b should take over"
}

run_scenario() {
	SCENARIO=$1
	DIR=$OUT/$SCENARIO
	rm -rf "$DIR"
	mkdir -p "$DIR"
	local t0=$SECONDS
	log "=== $SCENARIO"
	fault loadavg_start "$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')"
	case $SCENARIO in
	standby-takeover)
		coordinators coord-a coord-b
		fault coordinators "coord-a, coord-b standing by"
		wait_for 60 "coord-a to price all 12 node monitors, coord-b to stand by, the schedulers to hold prices" \
			ready fleet coord-a coord-b || return 1
		;;
	*)
		coordinators coord-a
		fault coordinators "coord-a alone"
		wait_for 60 "coord-a to price all 12 node monitors, the schedulers to hold prices" ready fleet coord-a || return 1
		;;
	esac
	local start
	start=$(now)
	fault start_at "$start"
	start_driver
	if wait_for 25 "the prices to widen tasks, ${WARM_S}s of load" ready guided "$start" "$WARM_S"; then
		"inject_${SCENARIO//-/_}" || log "fault injection failed"
	else
		log "no fault injected: the prices never widened a task"
	fi
	wait_driver
	fault end_at "$(now)"
	fault scenario_s "$((SECONDS - t0))"
	fault loadavg_end "$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')"
	log "=== $SCENARIO ran in $((SECONDS - t0))s"
	if [ "$SCENARIO" != "${SCENARIOS##* }" ]; then
		coordinators coord-a # back for the next scenario (a killed coord-a is restarted)
	fi
}

log_services() {
	local i
	echo scheduler1 scheduler2 coord-a coord-b
	for i in $(seq 1 "$LOC_NODES"); do echo nm$i ex$i; done
}

start=$SECONDS
run_scenarios "$LOC_IMAGE"
failed=()
for s in $SCENARIOS; do
	"$PY" scripts/e2e/locality_report.py check "$OUT" "$s" || failed+=("$s")
done
"$PY" scripts/e2e/locality_report.py table "$OUT" $SCENARIOS >"$OUT/results.md"
echo "total_s=$((SECONDS - start))" >>"$OUT/results.md"
cat "$OUT/results.md"
log "total $((SECONDS - start))s; results in $OUT/results.md"
if ((${#failed[@]})); then
	log "FAILED: ${failed[*]}"
	exit 1
fi
log "all scenarios passed"
