# Shared helpers of the compose-based e2e scripts (fairness.sh,
# locality.sh). Source it after setting:
#   E2E_TAG   the name log lines carry ("fairness", "locality")
#   PROJECT   the docker-compose project
#   COMPOSE   the docker-compose command, as an array
#   POLLER_PID  empty, or the pid of a background poller to stop on exit
#   OUT       the results directory
# It installs an EXIT trap that stops the poller and takes the fleet down.
# run_scenarios also needs the caller's fleet_up, run_scenario NAME,
# log_services (the compose services whose logs to keep) and SCENARIOS.

log() { printf '%s %s: %s\n' "$(date -u +%H:%M:%S.%3N)" "$E2E_TAG" "$*" >&2; }
now() { date +%s.%N; }

# load_cids fills CID[service] with every service container's id; cid
# SERVICE prints one.
declare -A CID
load_cids() {
	CID=()
	local svc id
	while read -r svc id; do
		CID[$svc]=$id
	done < <(docker ps -a --filter "label=com.docker.compose.project=$PROJECT" \
		--filter "label=com.docker.compose.oneoff=False" \
		--format '{{.Label "com.docker.compose.service"}} {{.ID}}')
}
cid() { echo "${CID[$1]:-}"; }

stop_poller() {
	if [ -n "$POLLER_PID" ]; then
		kill "$POLLER_PID" 2>/dev/null || true
		wait "$POLLER_PID" 2>/dev/null || true
		POLLER_PID=
	fi
}

# fleet_down removes the project's containers (paused ones unpaused
# first, drivers labelled $PROJECT.driver=1 included) and its network.
fleet_down() {
	local c
	for c in $(docker ps -q --filter "label=com.docker.compose.project=$PROJECT" --filter status=paused); do
		docker unpause "$c" >/dev/null 2>&1 || true
	done
	docker ps -aq --filter "label=$PROJECT.driver=1" | xargs -r docker rm -f >/dev/null 2>&1 || true
	docker ps -aq --filter "label=com.docker.compose.project=$PROJECT" | xargs -r docker rm -f >/dev/null 2>&1 || true
	"${COMPOSE[@]}" down -v -t 1 --remove-orphans >/dev/null 2>&1 || true
}

cleanup() {
	local rc=$?
	set +e
	stop_poller
	fleet_down
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# wait_for SECONDS WHAT COMMAND...: poll COMMAND every 0.25 s until it
# succeeds; fail after SECONDS.
wait_for() {
	local limit=$1 what=$2
	shift 2
	local deadline=$((SECONDS + limit))
	until "$@"; do
		if ((SECONDS >= deadline)); then
			log "timed out after ${limit}s waiting for $what"
			return 1
		fi
		sleep 0.25
	done
}

# collect_logs SERVICE...: each service container's log into $OUT, and
# beside an executor's (ex*) its launch lines, for the exactly-once check.
collect_logs() {
	local svc c
	for svc in "$@"; do
		c=$(cid "$svc")
		[ -n "$c" ] || continue
		docker logs -t "$c" >"$OUT/$svc.log" 2>&1 || true
		case $svc in ex*) grep -o '{"launch".*' "$OUT/$svc.log" >"$OUT/$svc.launches" || true ;; esac
	done
}

# run_scenarios IMAGE: with IMAGE present, bring the fleet up in a fresh
# $OUT, run every scenario of $SCENARIOS in turn, then stop the poller,
# keep the logs and take the fleet down. Checking is the caller's.
run_scenarios() {
	local image=$1 s
	docker image inspect "$image" >/dev/null 2>&1 || {
		echo "$E2E_TAG: image $image not found; run make docker" >&2
		exit 1
	}
	rm -rf "$OUT"
	mkdir -p "$OUT"
	fleet_down # leftovers of an interrupted run
	if fleet_up; then
		for s in $SCENARIOS; do
			run_scenario "$s" || log "$s: not run to the end"
		done
	else
		log "the fleet did not come up; logs in $OUT"
	fi
	stop_poller
	# shellcheck disable=SC2046 # one word per service
	collect_logs $(log_services)
	fleet_down
}
