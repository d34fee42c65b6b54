#!/usr/bin/env bash
# A sparrowfleet on Docker Swarm (`make e2e`): the stack of
# deploy/swarm/sparrowfleet.yml (2 scheduler replicas behind an haproxy L4
# balancer, 3 node monitors with a sleep executor each, no coordinator),
# deployed from an OLDER build of the project and upgraded under load.
#
#   1. roll: `sparrow drive` (the Go client library) submits through the
#      balancer's one address while every service is updated to the
#      current image with `docker service update --image`: each node
#      monitor in turn is drained (POST /drain; see roll_node) and scaled
#      to 0, its executor updated while idle, then the node monitor
#      updated and scaled back to 1; then the
#      schedulers service (Swarm replaces one task at a time, stopping the
#      old first: it drains, the balancer's /readyz check takes it out).
#   2. balanced: on the upgraded fleet, every task's messages must reach
#      the driver through the balancer.
#   3. drain: under load of 5 s tasks, as soon as nm3 launches one, nm3
#      is scaled to 0: Swarm sends SIGTERM and waits its grace period; its running
#      tasks must finish and be reported to the driver. On a one-machine swarm `docker node update
#      --availability drain` would stop the whole fleet, so one service
#      per node monitor, scaled down, stands in for draining one node.
#
# Service VIPs are not used: they need IPVS in the kernel, which this
# test does not assume (the services use DNS round robin). The balancer is
# Debian's haproxy copied with its libraries into an empty image, found by
# `command -v haproxy`; the old build is `git archive SWARM_OLD_COMMIT`,
# built like `make docker` (so the clone needs that commit).
#
# Checks and report (scripts/e2e/swarm_report.py): a JSON object; exit 1
# if any task's messages were not delivered, a task was lost or run twice
# during the roll, or the drained node monitor left a task unfinished or
# unreported. Results in $SWARM_OUT (default bin/e2e-swarm).
#
# The test creates its own single-node swarm (advertised on 127.0.0.1) and
# always leaves it on exit; it refuses to run if this docker daemon is
# already part of a swarm. Needs docker, go, git, haproxy, curl, python3 and the
# image $SWARM_IMAGE (`make docker`).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD

export SWARM_STACK=${SWARM_STACK:-sparrowswarm}
export SWARM_APP=${SWARM_APP:-swarm}
export SWARM_DRAIN=${SWARM_DRAIN:-20s}  # every daemon's drain bound
export SWARM_GRACE=${SWARM_GRACE:-40s}  # Swarm's stop grace period: longer than the drain
export SWARM_BALANCER_IMAGE=${SWARM_BALANCER_IMAGE:-sparrowfleet-balancer:e2e}
IMAGE=${SWARM_IMAGE:-sparrowfleet:dev}  # the current build
OLD_COMMIT=${SWARM_OLD_COMMIT:-5c33d22}
OLD_IMAGE=${SWARM_OLD_IMAGE:-sparrowfleet:e2e-old}
OUT=${SWARM_OUT:-$ROOT/bin/e2e-swarm}
RATE=${SWARM_RATE:-5}                   # jobs/s: with 4 tasks of 200 ms, 67% of the 6 slots
TASKS=${SWARM_TASKS:-4}
TASK_DURATION=${SWARM_TASK_DURATION:-200ms}
ROLL_S=${SWARM_ROLL_S:-130}             # the roll's driver run; the roll must end within it
BALANCED_S=${SWARM_BALANCED_S:-15}
DRAIN_S=${SWARM_DRAIN_S:-25}
# The drain run: longer tasks, at 83% of the slots (one task a second),
# so that nm3 is drained while it runs tasks. The task nm3 has just
# launched must outlast the time from then to its SIGTERM: `docker
# service scale`, then Swarm's removal of the task's DNS name a second or
# more before the signal.
DRAIN_RATE=${SWARM_DRAIN_RATE:-1}
DRAIN_TASKS=${SWARM_DRAIN_TASKS:-1}
DRAIN_TASK_DURATION=${SWARM_DRAIN_TASK_DURATION:-5s}
TIMEOUT=${SWARM_TIMEOUT:-1s}            # the driver's failure detection
NET=${SWARM_STACK}_sparrow
BALANCER=${SWARM_STACK}_balancer:20503
NODE_MONITORS=(nm1 nm2 nm3)
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3

POLLER_PID=
E2E_TAG=swarm
OWN_SWARM=0
# shellcheck source=scripts/e2e/lib.sh
. scripts/e2e/lib.sh
now() { date -u +%Y-%m-%dT%H:%M:%S.%NZ; }
event() { echo "$1=$2" >>"$OUT/events.env"; }
svc() { echo "${SWARM_STACK}_$1"; }

# Container logs are followed from the moment a container is seen, as
# Swarm removes a scaled-down service's containers: follow_new starts a
# `docker logs -f` for every container of the stack not yet followed,
# into $OUT/logs/SERVICE.CONTAINER.log.
declare -A FOLLOWED
FOLLOWERS=()
follow_new() {
	local id name
	mkdir -p "$OUT/logs"
	while read -r id name; do
		[ -n "${FOLLOWED[$id]:-}" ] && continue
		FOLLOWED[$id]=1
		docker logs -f -t "$id" >"$OUT/logs/$name.$id.log" 2>&1 &
		FOLLOWERS+=($!)
	done < <(docker ps --filter "label=com.docker.stack.namespace=$SWARM_STACK" \
		--format '{{.ID}} {{.Label "com.docker.swarm.service.name"}}')
}

stop_followers() {
	local p
	for p in "${FOLLOWERS[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${FOLLOWERS[@]}"; do wait "$p" 2>/dev/null || true; done
	FOLLOWERS=()
}

# collect: each service's log, every container of it merged in time order
# ($OUT/SERVICE.log, without the stack prefix), and beside an executor's
# its launch records.
collect() {
	local s
	follow_new
	sleep 1 # the followers' last lines
	stop_followers
	for s in scheduler balancer nm1 nm2 nm3 ex1 ex2 ex3; do
		cat "$OUT/logs/$(svc "$s")".*.log 2>/dev/null | sort -s -k1,1 >"$OUT/$s.log" || true
		case $s in ex*) grep -o '{"launch".*' "$OUT/$s.log" >"$OUT/$s.launches" || true ;; esac
	done
}

# fleet_down (lib.sh's cleanup calls it on every exit): the log followers,
# the drivers, the stack, then the swarm, if this run created it.
fleet_down() {
	stop_followers
	docker ps -aq --filter "label=$SWARM_STACK.driver=1" | xargs -r docker rm -f >/dev/null 2>&1 || true
	((OWN_SWARM)) || return 0
	docker stack rm "$SWARM_STACK" >/dev/null 2>&1 || true
	docker swarm leave --force >/dev/null 2>&1 || true
	OWN_SWARM=0
	log "left the swarm"
}

swarm_state() { docker info --format '{{.Swarm.LocalNodeState}}'; }

# build_old_image: the static binary of $OLD_COMMIT, in the image its own
# Dockerfile describes.
build_old_image() {
	local tmp rc=0
	tmp=$(mktemp -d)
	git archive "$OLD_COMMIT" | tar -x -C "$tmp" &&
		(cd "$tmp" && CGO_ENABLED=0 go build -trimpath -o bin/sparrow ./cmd/sparrow) &&
		docker build -q -t "$OLD_IMAGE" "$tmp" >"$OUT/build-old.log" 2>&1 || rc=1
	rm -rf "$tmp"
	return $rc
}

# build_balancer_image: this machine's haproxy and every library it links,
# with deploy/swarm/haproxy.cfg, on an empty base.
build_balancer_image() {
	local tmp haproxy lib rc=0
	haproxy=$(command -v haproxy) || {
		log "haproxy not found (apt-get install haproxy)"
		return 1
	}
	tmp=$(mktemp -d)
	mkdir -p "$tmp/root/etc/haproxy" "$tmp/root$(dirname "$haproxy")"
	cp "$haproxy" "$tmp/root$haproxy"
	cp deploy/swarm/haproxy.cfg "$tmp/root/etc/haproxy/haproxy.cfg"
	for lib in $(ldd "$haproxy" | grep -o '/[^ ]*'); do
		mkdir -p "$tmp/root$(dirname "$lib")"
		cp -L "$lib" "$tmp/root$lib"
	done
	printf 'FROM scratch\nCOPY root/ /\nENTRYPOINT ["%s", "-db", "-f", "/etc/haproxy/haproxy.cfg"]\n' "$haproxy" >"$tmp/Dockerfile"
	docker build -q -t "$SWARM_BALANCER_IMAGE" "$tmp" >"$OUT/build-balancer.log" 2>&1 || rc=1
	rm -rf "$tmp"
	return $rc
}

# fleet_status: `sparrow status --json`, observed from inside the network.
fleet_status() {
	docker run --rm --label "$SWARM_STACK.driver=1" --network "$NET" "$IMAGE" status \
		--join="tasks.$(svc scheduler):7946" --json --timeout=3s 2>/dev/null
}

# fleet_ready SCHEDULERS NODE_MONITORS: gossip shows that many ready
# schedulers, and that many ready node monitors offering the app.
fleet_ready() {
	fleet_status | "$PY" scripts/e2e/swarm_report.py ready "$1" "$2" "$SWARM_APP"
}

# driver NAME ARGS...: `sparrow drive` (the current build) in a container
# on the stack's network, submitting through the balancer only.
driver() {
	local name=${SWARM_STACK}_$1
	shift
	docker rm -f "$name" >/dev/null 2>&1 || true
	docker run --rm --name "$name" --label "$SWARM_STACK.driver=1" --network "$NET" \
		"$IMAGE" drive --app="$SWARM_APP" --schedulers="$BALANCER" --listen=:50201 \
		--advertise-host="$name" "$@" </dev/null
}

workload() { # RUN_ID SECONDS [RATE TASKS TASK_DURATION]
	local rate=${3:-$RATE}
	echo --run-id="$1" --jobs=$((rate * $2)) --tasks="${4:-$TASKS}" --task-duration="${5:-$TASK_DURATION}" \
		--rate="$rate" --timeout="$TIMEOUT" --deadline=$(($2 + 30))s --json
}

# nm_launches IP: sparrow_nodemonitor_launches_total on the /metrics of
# the node monitor whose HTTP listener is at IP.
nm_launches() {
	curl -fsS -m 2 "http://$1:9090/metrics" 2>/dev/null |
		awk '$1 == "sparrow_nodemonitor_launches_total" { print $2; found = 1 } END { exit !found }'
}

# nm_launched IP N: the node monitor at IP launched a task since its
# launch count was N and runs one (sparrow_nodemonitor_tasks_running).
nm_launched() {
	curl -fsS -m 2 "http://$1:9090/metrics" 2>/dev/null |
		awk -v n="$2" '$1 == "sparrow_nodemonitor_launches_total" { l = $2 }
			$1 == "sparrow_nodemonitor_tasks_running" { r = $2 }
			END { exit !(l > n && r > 0) }'
}

driver_completed() { # FILE N: at least N jobs of the driver writing FILE completed
	local n
	n=$(grep -o 'completed=[0-9]*' "$1" 2>/dev/null | tail -1 | cut -d= -f2 || true)
	[ -n "$n" ] && [ "$n" -ge "$2" ]
}

# service_container SERVICE: the id of the service's running container.
service_container() {
	docker ps -q --no-trunc --filter "label=com.docker.swarm.service.name=$(svc "$1")" | head -1
}

# gwbridge_ip SERVICE: the running task's address on docker_gwbridge, the
# bridge Swarm attaches every task to, which the host reaches.
gwbridge_ip() {
	local id
	id=$(service_container "$1")
	[ -n "$id" ] || return 1
	docker network inspect docker_gwbridge \
		--format "{{range \$k, \$v := .Containers}}{{if eq \$k \"$id\"}}{{\$v.IPv4Address}}{{end}}{{end}}" | cut -d/ -f1
}

stopped() { [ -z "$(service_container "$1")" ]; }

# roll_node: drain the node monitor (POST /drain: it finishes its running
# tasks, leaves and exits, still reachable by name meanwhile), scale it to
# 0, update its idle executor, then bring the node monitor back on the
# current image. Scaling it to 0 straight away is Swarm's SIGTERM path,
# which the drain phase takes: Swarm drops a task from its DNS when it
# decides to stop it, a second or more before the SIGTERM, and peers then
# reach the node monitor only at the addresses its name last resolved to.
roll_node() {
	local nm=$1 ex=ex${1#nm} ip
	log "$nm: drain, scale to 0, update $ex, $nm back on $IMAGE"
	follow_new
	event "$nm.stop" "$(now)"
	ip=$(gwbridge_ip "$nm") || return 1
	curl -fsS -m 2 -X POST "http://$ip:9090/drain" >/dev/null || return 1
	wait_for 40 "$nm to drain and exit" stopped "$nm" || return 1
	event "$nm.stopped" "$(now)"
	docker service scale --detach=false "$(svc "$nm")=0" >/dev/null 2>&1 || return 1
	docker service update --detach=false --quiet --no-resolve-image --image "$IMAGE" "$(svc "$ex")" >/dev/null 2>&1 || return 1
	docker service update --detach=false --quiet --no-resolve-image --image "$IMAGE" --replicas 1 "$(svc "$nm")" >/dev/null 2>&1 || return 1
	wait_for 60 "$nm to be back" fleet_ready 2 3 || return 1
	event "$nm.ready" "$(now)"
}

roll_schedulers() {
	log "scheduler: update both replicas, one at a time"
	follow_new
	event scheduler.stop "$(now)"
	docker service update --detach=false --quiet --no-resolve-image --image "$IMAGE" "$(svc scheduler)" >/dev/null 2>&1 || return 1
	event scheduler.stopped "$(now)"
	wait_for 60 "both schedulers to be ready" fleet_ready 2 3 || return 1
	event scheduler.ready "$(now)"
}

roll() {
	local nm
	event roll.start "$(now)"
	for nm in "${NODE_MONITORS[@]}"; do roll_node "$nm" || return 1; done
	roll_schedulers || return 1
	event roll.end "$(now)"
}

# run NAME SECONDS: one driver run in the foreground.
run() {
	local rc=0
	# shellcheck disable=SC2046 # one word per flag
	driver "$1" $(workload "$1" "$2") >"$OUT/$1.json" 2>"$OUT/$1.err" || rc=$?
	echo "$rc" >"$OUT/$1.rc"
	log "$1: driver exited $rc: $(grep '^progress' "$OUT/$1.err" | tail -1)"
}

fleet_up() {
	log "swarm init; stack up on $OLD_IMAGE"
	docker swarm init --advertise-addr 127.0.0.1 >/dev/null
	OWN_SWARM=1
	SWARM_IMAGE=$OLD_IMAGE docker stack deploy --resolve-image never \
		-c deploy/swarm/sparrowfleet.yml "$SWARM_STACK" >"$OUT/stack-deploy.log" 2>&1 || {
		cat "$OUT/stack-deploy.log" >&2
		return 1
	}
	wait_for 90 "2 schedulers and 3 node monitors with executors" fleet_ready 2 3 || return 1
	follow_new
}

start=$SECONDS
state=$(swarm_state)
if [ "$state" != inactive ]; then
	echo "swarm: this docker daemon's swarm state is '$state'; this test creates and leaves its own swarm, so it runs only outside one" >&2
	exit 1
fi
docker image inspect "$IMAGE" >/dev/null 2>&1 || {
	echo "swarm: image $IMAGE not found; run make docker" >&2
	exit 1
}
rm -rf "$OUT"
mkdir -p "$OUT"
git cat-file -e "$OLD_COMMIT^{commit}" 2>/dev/null || {
	echo "swarm: commit $OLD_COMMIT (the older build) is not in this clone; fetch the history (git fetch --unshallow)" >&2
	exit 1
}
log "building $OLD_IMAGE from $OLD_COMMIT and the balancer image"
build_old_image || {
	log "could not build $OLD_COMMIT"
	exit 1
}
build_balancer_image || exit 1
event images.built "$(now)"
echo "old=$(git rev-parse --short "$OLD_COMMIT") new=$(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo +changes)" >"$OUT/versions"

rc=0
up=0
if fleet_up; then
	up=1
	log "roll: $RATE jobs/s x $TASKS tasks x $TASK_DURATION for ${ROLL_S}s, every service updated to $IMAGE"
	# shellcheck disable=SC2046
	driver roll $(workload roll "$ROLL_S") >"$OUT/roll.json" 2>"$OUT/roll.err" &
	pid=$!
	wait_for 20 "the roll driver's first jobs" driver_completed "$OUT/roll.err" $((RATE * 2)) || true
	roll || {
		log "the roll did not run to its end"
		rc=1
	}
	drc=0
	wait "$pid" || drc=$?
	echo "$drc" >"$OUT/roll.rc"
	log "roll: driver exited $drc: $(grep '^progress' "$OUT/roll.err" | tail -1)"

	log "balanced: ${BALANCED_S}s through the balancer on the upgraded fleet"
	run balanced "$BALANCED_S"

	log "drain: ${DRAIN_S}s of $DRAIN_RATE jobs/s x $DRAIN_TASKS tasks x $DRAIN_TASK_DURATION, nm3 scaled to 0 after a third of it, while it runs a task"
	# shellcheck disable=SC2046
	driver drain $(workload drain "$DRAIN_S" "$DRAIN_RATE" "$DRAIN_TASKS" "$DRAIN_TASK_DURATION") \
		>"$OUT/drain.json" 2>"$OUT/drain.err" &
	pid=$!
	wait_for 20 "the drain driver's first jobs" driver_completed "$OUT/drain.err" $((DRAIN_RATE * DRAIN_S / 3)) || true
	nm3_ip=$(gwbridge_ip nm3) || nm3_ip=
	launched=$(nm_launches "$nm3_ip") || launched=0
	wait_for 30 "nm3 to launch a task" nm_launched "$nm3_ip" "$launched" ||
		log "nm3 launched no task; scaling it to 0 anyway"
	follow_new
	event nm3.drain "$(now)"
	docker service scale --detach=false "$(svc nm3)=0" >/dev/null 2>&1 || rc=1
	event nm3.drained "$(now)"
	drc=0
	wait "$pid" || drc=$?
	echo "$drc" >"$OUT/drain.rc"
	log "drain: driver exited $drc: $(grep '^progress' "$OUT/drain.err" | tail -1)"
	collect
else
	log "the fleet did not come up; logs in $OUT"
	collect
	rc=1
fi
fleet_down
event total_s $((SECONDS - start))
if ((up)); then
	"$PY" scripts/e2e/swarm_report.py report "$OUT" "$DRAIN_TASK_DURATION" >"$OUT/report.json" || rc=1
	cat "$OUT/report.json"
fi
log "total $((SECONDS - start))s; results in $OUT"
exit "$rc"
