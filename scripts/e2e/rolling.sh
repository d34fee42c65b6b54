#!/usr/bin/env bash
# Rolling upgrade of a containerised sparrowfleet under steady load
# (`make e2e`). The fleet (deploy/docker-compose.rolling.yml): 3
# schedulers, 4 node monitors x 2 slots with an executor sidecar each, and
# 2 fairness coordinators (coord-a active, coord-b standby).
#
#   1. before: `sparrow drive` at ROLL_RATE jobs/s for ROLL_BEFORE_S
#      seconds, no restart: the reference scheduling delay.
#   2. during: the same workload, started again, and while it runs every
#      member is restarted one at a time: each node monitor (docker stop:
#      SIGTERM, it drains and leaves; its executor is stopped after it, as
#      they share a network namespace; both started again, then /readyz
#      waited for), then each scheduler (SIGTERM: it drains, leaves; started
#      again, /readyz waited for), then the active coordinator (SIGTERM: it
#      leaves gossip and the standby takes over; started again, it takes
#      its role back). The "new version" is the same image: the test is
#      of the drain and restart path, which a new image takes the same way.
#
# Checks (scripts/e2e/rolling_report.py): both driver runs complete every
# job; no (request, task) launched twice across the executors' launch
# logs; a submit in doubt at a failover (a scheduler closed its connections
# as the call arrived: the driver resubmits it under a new id) never
# launched under its first id; no task reported lost (status 1001); every
# node monitor's drain
# finished its running tasks and every scheduler's drain left nothing
# unlaunched or running; the driver ran through the whole roll; the
# standby coordinator took over within the node monitors' guidance
# fallback delay. Reported: scheduling delay and job response time p50
# and p99 before vs during, and each member's restart time.
# Results: $ROLL_OUT/results.md (default bin/e2e-rolling), with every
# container's log and both driver summaries.
#
# Needs docker, docker-compose (v1), curl, python3 and the image
# $ROLL_IMAGE (`make docker`). Talks to nothing but its own containers.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD

PROJECT=${ROLL_PROJECT:-sparrowroll}
export ROLL_IMAGE=${ROLL_IMAGE:-sparrowfleet:dev}
export ROLL_NET=${ROLL_NET:-10.223.0}
export ROLL_APP=${ROLL_APP:-roll}
export ROLL_SLOTS=${ROLL_SLOTS:-2}
OUT=${ROLL_OUT:-$ROOT/bin/e2e-rolling}
RATE=${ROLL_RATE:-7}                   # jobs/s: with 4 tasks of 200 ms, 70% of the 8 slots
TASKS=${ROLL_TASKS:-4}
TASK_DURATION=${ROLL_TASK_DURATION:-200ms}
BEFORE_S=${ROLL_BEFORE_S:-15}
DURING_S=${ROLL_DURING_S:-40}          # the second run's length; the roll must end within it
# The frontend's failure detection: 1 s rather than the paper's 100 ms, so
# that a host shared with other work does not fail over spuriously (a
# stopped scheduler closes its connections, which is detected at once).
TIMEOUT=${ROLL_TIMEOUT:-1s}
FALLBACK_S=${ROLL_FALLBACK_S:-5}       # node monitors' --guidance-stale (its default)
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3

COMPOSE=(docker-compose -p "$PROJECT" -f deploy/docker-compose.rolling.yml)
NETWORK=${PROJECT}_sparrow
NODE_MONITORS=(nm1 nm2 nm3 nm4)
SCHEDULERS=(scheduler1 scheduler2 scheduler3)
declare -A IP=(
	[scheduler1]=$ROLL_NET.11 [scheduler2]=$ROLL_NET.12 [scheduler3]=$ROLL_NET.13
	[nm1]=$ROLL_NET.21 [nm2]=$ROLL_NET.22 [nm3]=$ROLL_NET.23 [nm4]=$ROLL_NET.24
	[coord-a]=$ROLL_NET.31 [coord-b]=$ROLL_NET.32
)

POLLER_PID=
E2E_TAG=rolling
# shellcheck source=scripts/e2e/lib.sh
. scripts/e2e/lib.sh
now() { date -u +%Y-%m-%dT%H:%M:%S.%NZ; }

event() { echo "$1=$2" >>"$OUT/events.env"; }

ready() { curl -fsS -m 1 "http://${IP[$1]}:9090/readyz" >/dev/null 2>&1; }

all_ready() {
	local s
	for s in "${SCHEDULERS[@]}" "${NODE_MONITORS[@]}" coord-a coord-b; do
		ready "$s" || return 1
	done
}

# driver NAME ARGS...: `sparrow drive` in a container on the fleet's network.
driver() {
	local name=$1
	shift
	docker rm -f "$name" >/dev/null 2>&1 || true
	docker run --rm --name "$name" --label "$PROJECT.driver=1" --network "$NETWORK" \
		"$ROLL_IMAGE" drive --app="$ROLL_APP" --advertise-host=auto \
		--schedulers="$ROLL_NET.11:20503,$ROLL_NET.12:20503,$ROLL_NET.13:20503" "$@" </dev/null
}

workload() { # RUN_ID SECONDS: the steady workload's flags
	echo --run-id="$1" --jobs=$((RATE * $2)) --tasks="$TASKS" --task-duration="$TASK_DURATION" \
		--rate="$RATE" --timeout="$TIMEOUT" --deadline=$(($2 + 120))s --json
}

# warm_up: a few jobs through each scheduler at once, so that each has
# seen every node monitor's app before the measured runs.
warm_up() {
	local s pids=() ok=1 p
	for s in 1 2 3; do
		driver "${PROJECT}_warm$s" --schedulers="$ROLL_NET.1$s:20503" --listen=:50202 \
			--run-id="warm$s" --jobs=10 --tasks="$TASKS" --task-duration=20ms --rate=20 \
			--deadline=30s --json >>"$OUT/warmup.out" 2>>"$OUT/warmup.err" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || ok=0; done
	((ok))
}

# stopped SERVICE: docker stop (SIGTERM, SIGKILL after 60 s), recording
# when it began and ended.
stop_member() {
	event "$1.stop" "$(now)"
	docker stop -t 60 "$(cid "$1")" >/dev/null
	event "$1.stopped" "$(now)"
}

start_member() {
	docker start "$(cid "$1")" >/dev/null
	event "$1.started" "$(now)"
}

roll_node_monitor() {
	local nm=$1 ex=ex${1#nm}
	log "$nm: SIGTERM (drain)"
	stop_member "$nm" || return 1
	docker stop -t 10 "$(cid "$ex")" >/dev/null || return 1
	start_member "$nm" || return 1
	docker start "$(cid "$ex")" >/dev/null || return 1
	wait_for 60 "$nm to be ready again" ready "$nm" || return 1
	event "$nm.ready" "$(now)"
}

roll_scheduler() {
	log "$1: SIGTERM (drain)"
	stop_member "$1" || return 1
	start_member "$1" || return 1
	wait_for 60 "$1 to be ready again" ready "$1" || return 1
	event "$1.ready" "$(now)"
}

# active_coordinator NAME: NAME's /status says it publishes.
active_coordinator() {
	curl -fsS -m 1 "http://${IP[$1]}:9090/status" 2>/dev/null | grep -q '"active": *true'
}

roll_coordinator() {
	log "coord-a: SIGTERM (hand over to coord-b)"
	stop_member coord-a || return 1
	wait_for 30 "coord-b to take over" active_coordinator coord-b || return 1
	event coord-b.active "$(now)"
	start_member coord-a || return 1
	wait_for 60 "coord-a to be ready again" ready coord-a || return 1
	wait_for 30 "coord-a to take its role back" active_coordinator coord-a || return 1
	event coord-a.ready "$(now)"
}

driver_completed() { # at least $1 jobs of the running driver completed
	local n
	n=$(grep -o 'completed=[0-9]*' "$OUT/during.err" 2>/dev/null | tail -1 | cut -d= -f2 || true)
	[ -n "$n" ] && [ "$n" -ge "$1" ]
}

fleet_up() {
	log "fleet up"
	"${COMPOSE[@]}" up -d >"$OUT/compose-up.log" 2>&1 || {
		cat "$OUT/compose-up.log" >&2
		return 1
	}
	load_cids
	wait_for 60 "every member to be ready" all_ready || return 1
	wait_for 30 "coord-a to publish" active_coordinator coord-a || return 1
	warm_up || {
		log "warm-up failed; see $OUT/warmup.err"
		return 1
	}
}

# roll: every node monitor, then every scheduler, then the coordinator.
roll() {
	local m
	event roll.start "$(now)"
	for m in "${NODE_MONITORS[@]}"; do roll_node_monitor "$m" || return 1; done
	for m in "${SCHEDULERS[@]}"; do roll_scheduler "$m" || return 1; done
	roll_coordinator || return 1
	event roll.end "$(now)"
}

log_services() { echo "${SCHEDULERS[@]}" "${NODE_MONITORS[@]}" ex1 ex2 ex3 ex4 coord-a coord-b; }

docker image inspect "$ROLL_IMAGE" >/dev/null 2>&1 || {
	echo "rolling: image $ROLL_IMAGE not found; run make docker" >&2
	exit 1
}
start=$SECONDS
rm -rf "$OUT"
mkdir -p "$OUT"
fleet_down # leftovers of an interrupted run
rc=0
if fleet_up; then
	log "before: $RATE jobs/s x $TASKS tasks x $TASK_DURATION for ${BEFORE_S}s"
	# shellcheck disable=SC2046 # one word per flag
	driver "${PROJECT}_before" $(workload before "$BEFORE_S") >"$OUT/before.json" 2>"$OUT/before.err" || rc=$?
	echo "$rc" >"$OUT/before.rc"
	log "during: the same workload for ${DURING_S}s, rolling every member"
	# shellcheck disable=SC2046
	driver "${PROJECT}_during" $(workload during "$DURING_S") >"$OUT/during.json" 2>"$OUT/during.err" &
	DRIVER_PID=$!
	wait_for 30 "the driver's first jobs" driver_completed $((RATE * 2))
	roll || rc=1
	log "roll done (rc $rc); waiting for the driver"
	drc=0
	wait "$DRIVER_PID" || drc=$?
	echo "$drc" >"$OUT/during.rc"
	log "driver exited $drc: $(grep '^progress' "$OUT/during.err" | tail -1)"
else
	log "the fleet did not come up; logs in $OUT"
	rc=1
fi
# shellcheck disable=SC2046 # one word per service
collect_logs $(log_services)
fleet_down
if ((rc == 0)); then
	"$PY" scripts/e2e/rolling_report.py "$OUT" "$FALLBACK_S" >"$OUT/results.md" || rc=$?
	echo "total_s=$((SECONDS - start))" >>"$OUT/results.md"
	cat "$OUT/results.md"
fi
log "total $((SECONDS - start))s; results in $OUT/results.md"
exit "$rc"
