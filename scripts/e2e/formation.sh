#!/usr/bin/env bash
# Formation check against a containerised fleet: members started in any
# order must all be in every member's gossip view within FORM_BOUND_S
# (default 3) seconds of the last one starting.
#
# For each scenario it creates a fresh fleet (scripts/e2e/formation.compose.yml:
# 2 schedulers, 6 node monitors), starts the containers in the scenario's
# order, and watches with `sparrow status --watch --json`, joined through
# one member started first (so the observer links no members that have
# not found each other), until every member is listed and reports, in its
# /status view_size, all 8. The time is from the last container's start
# (docker's StartedAt) to the first complete sample, an upper bound:
# samples are 200 ms apart, and with all-at-once the observer itself starts
# after the fleet (the row says when the first sample was complete).
# Scenarios (FORM_SCENARIOS, default all):
#   nm-first          node monitors, then 2 s later the schedulers; every
#                     member joins the name "gossip" (all members, as a
#                     headless Service)
#   seed-last         every member's only seed is scheduler1's address;
#                     scheduler1 starts 2 s after the rest, which meanwhile
#                     retry with backoff
#   all-at-once       every container in one docker start
#   schedulers-first  the schedulers, then 2 s later the node monitors
#   mixed-versions    all at once, scheduler2 and nm4-nm6 from $FORM_OLD_IMAGE
#                     (an older build; the scenario runs only when it is set):
#                     every member must be in the new members' views, and
#                     status must flag mixed versions
# Results: a markdown table on stdout and in $FORM_OUT/results.md (default
# bin/e2e-formation), with every container's log per scenario.
#
# Needs docker, docker-compose (v1), python3 and the image $FORM_IMAGE
# (`make docker`). Talks to nothing but its own containers.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD

PROJECT=${FORM_PROJECT:-sparrowform}
export FORM_IMAGE=${FORM_IMAGE:-sparrowfleet:dev}
export FORM_NET=${FORM_NET:-10.219.0}
OUT=${FORM_OUT:-$ROOT/bin/e2e-formation}
SCENARIOS=${FORM_SCENARIOS:-nm-first seed-last all-at-once schedulers-first${FORM_OLD_IMAGE:+ mixed-versions}}
BOUND_S=${FORM_BOUND_S:-3}
MEMBERS=8
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3

COMPOSE=(docker-compose -p "$PROJECT" -f scripts/e2e/formation.compose.yml)
NETWORK=${PROJECT}_sparrow
SCHEDULERS=(scheduler1 scheduler2)
NODE_MONITORS=(nm1 nm2 nm3 nm4 nm5 nm6)
WATCHER=${PROJECT}-watch

POLLER_PID=
E2E_TAG=formation
# shellcheck source=scripts/e2e/lib.sh
. scripts/e2e/lib.sh

# start SERVICE...: start the services' containers together.
start() {
	local ids=() s
	for s in "$@"; do ids+=("$(cid "$s")"); done
	docker start "${ids[@]}" >/dev/null
}

# watch_from IP: a status observer joined through the member at IP alone,
# sampling every 200 ms. Started before the last group where a scenario has
# one, so that its first sample does not wait for docker run.
watch_from() {
	docker rm -f "$WATCHER" >/dev/null 2>&1 || true
	docker run -d --name "$WATCHER" --label "$PROJECT.driver=1" --network "$NETWORK" "$FORM_IMAGE" \
		status --join "$1:7946" --json --watch 200ms --timeout 5s >/dev/null
}

# started_at: every member container's start time, one per line.
started_at() {
	local s
	for s in "${SCHEDULERS[@]}" "${NODE_MONITORS[@]}"; do
		docker inspect -f '{{.State.StartedAt}}' "$(cid "$s")"
	done
}

# fleet_complete: whether the watcher has seen every member in every view.
fleet_complete() {
	$PY scripts/e2e/formation_check.py --members $MEMBERS --started "$STARTED" --quiet "${CHECK_ARGS[@]}" \
		<(docker logs "$WATCHER" 2>/dev/null)
}

run_scenario() {
	local name=$1 dir=$OUT/$1
	mkdir -p "$dir"
	fleet_down
	case $name in
	seed-last) export FORM_JOIN=$FORM_NET.11:7946 ;;
	*) export FORM_JOIN=gossip:7946 ;;
	esac
	export FORM_IMAGE_B=$FORM_IMAGE
	CHECK_ARGS=()
	if [ "$name" = mixed-versions ]; then
		export FORM_IMAGE_B=$FORM_OLD_IMAGE
		CHECK_ARGS=(--mixed)
	fi
	"${COMPOSE[@]}" up --no-start >/dev/null 2>&1
	load_cids
	log "$name: starting"
	case $name in
	nm-first)
		start "${NODE_MONITORS[@]}"
		watch_from "$FORM_NET.21"
		sleep 2 # the scenario's gap between the two groups
		start "${SCHEDULERS[@]}"
		;;
	seed-last)
		start scheduler2 "${NODE_MONITORS[@]}"
		watch_from "$FORM_NET.21"
		sleep 2 # the members retry their seed meanwhile
		start scheduler1
		;;
	all-at-once | mixed-versions)
		start "${SCHEDULERS[@]}" "${NODE_MONITORS[@]}"
		watch_from "$FORM_NET.21"
		;;
	schedulers-first)
		start "${SCHEDULERS[@]}"
		watch_from "$FORM_NET.12"
		sleep 2 # the scenario's gap between the two groups
		start "${NODE_MONITORS[@]}"
		;;
	*)
		log "unknown scenario $name"
		return 1
		;;
	esac
	started_at >"$dir/started"
	# Watch until the fleet is complete, or for the bound and 10 s more.
	STARTED=$dir/started
	wait_for $((BOUND_S + 10)) "$name: every member in every view" fleet_complete || true
	docker logs "$WATCHER" >"$dir/status.jsonl" 2>"$dir/status.err" || true
	docker rm -f "$WATCHER" >/dev/null 2>&1 || true
	collect_logs "${SCHEDULERS[@]}" "${NODE_MONITORS[@]}"
	local s
	for s in "${SCHEDULERS[@]}" "${NODE_MONITORS[@]}"; do
		[ -f "$OUT/$s.log" ] && mv "$OUT/$s.log" "$dir/$s.log"
	done
	$PY scripts/e2e/formation_check.py --members $MEMBERS --started "$dir/started" "${CHECK_ARGS[@]}" \
		--bound "$BOUND_S" --scenario "$name" "$dir/status.jsonl" >>"$OUT/rows.md"
}

for image in "$FORM_IMAGE" ${FORM_OLD_IMAGE:+"$FORM_OLD_IMAGE"}; do
	docker image inspect "$image" >/dev/null 2>&1 || {
		echo "formation: image $image not found; run make docker" >&2
		exit 1
	}
done
rm -rf "$OUT"
mkdir -p "$OUT"
: >"$OUT/rows.md"
for s in $SCENARIOS; do
	run_scenario "$s" || log "$s: not run to the end"
done
fleet_down
{
	echo "| scenario | last start to every member in every view | bound | result |"
	echo "| --- | --- | --- | --- |"
	cat "$OUT/rows.md"
} | tee "$OUT/results.md"
if grep -q "FAIL" "$OUT/rows.md" || [ "$(wc -l <"$OUT/rows.md")" -ne "$(wc -w <<<"$SCENARIOS")" ]; then
	echo "formation: FAILED (details in $OUT)" >&2
	exit 1
fi
echo "formation: every scenario formed within ${BOUND_S}s"
