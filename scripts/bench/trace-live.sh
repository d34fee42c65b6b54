#!/usr/bin/env bash
# Replays a slice of a job trace on a loopback fleet of separate processes
# (one scheduler, NODES node monitors each with an executor), with plain
# Sparrow or the long-task-aware policy, and prints sparrow drive's JSON
# summary; each job's outcome (sparrow drive --jobs-out) and the members'
# /metrics are saved in OUTDIR. Usage:
#   scripts/bench/trace-live.sh sparrow|aware OUTDIR
# Environment: BIN (sparrow binary), TRACE, JOBS, SCALE (--time-scale),
# NODES, SLOTS (per node monitor), CUTOFF (trace seconds), NET (first two
# octets of the members' loopback addresses), PULL (with aware: pulls after
# PULL, e.g. 1s, i.e. --short-pull-after; off: --short-pull=false; unset:
# the daemons' default, pulls after 1 s), SHARE (with aware:
# the scheduler's --short-share, e.g. 0.65; unset: its default), DEADLINE
# (sparrow drive's --deadline, default 10m), SCHED_ARGS (more scheduler
# flags, split on spaces, e.g. "--offers=false"), NM_ARGS (more node
# monitor flags, likewise, e.g. "--starve-limit 32"), ESTIMATES (with
# aware: unset, the driver sends each job's mean task duration as its
# estimate; none, it sends none, and the scheduler's rule for jobs without
# one decides).
set -euo pipefail
policy=${1:?policy: sparrow or aware}
out=${2:?output directory}
BIN=${BIN:-sparrow}
TRACE=${TRACE:-../shared/traces/YH1_sub.tr}
JOBS=${JOBS:-200}
SCALE=${SCALE:-100}
NODES=${NODES:-10}
SLOTS=${SLOTS:-300}
CUTOFF=${CUTOFF:-90.5811}
NET=${NET:-127.61}
DEADLINE=${DEADLINE:-10m}
mkdir -p "$out"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

policy_args=()
share_args=()
drive_args=()
if [ "$policy" = aware ]; then
	cut=$(awk -v c="$CUTOFF" -v k="$SCALE" 'BEGIN { printf "%.6fs", c / k }')
	policy_args=(--short-jobs --short-cutoff "$cut")
	case "${PULL:-}" in
	"") ;;
	off) policy_args+=(--short-pull=false) ;;
	*) policy_args+=(--short-pull --short-pull-after "$PULL") ;;
	esac
	case "${ESTIMATES:-}" in
	"") drive_args=(--send-estimates) ;;
	none) ;;
	*)
		echo "ESTIMATES must be unset or none, got $ESTIMATES" >&2
		exit 2
		;;
	esac
	# The short-only share is the schedulers' to apply: node monitors
	# have no such flag.
	if [ -n "${SHARE:-}" ]; then
		share_args=(--short-share "$SHARE")
	fi
fi
s=$NET.1.1
read -r -a sched_args <<<"${SCHED_ARGS:-}"
read -r -a nm_args <<<"${NM_ARGS:-}"
"$BIN" scheduler --listen $s:20503 --gettask-listen $s:20507 --gossip $s:7946 --name sched --http-listen $s:8080 \
	"${policy_args[@]}" "${share_args[@]}" "${sched_args[@]}" >"$out/scheduler.log" 2>&1 &
pids+=($!)
for i in $(seq 1 "$NODES"); do
	h=$NET.2.$i
	"$BIN" nodemonitor --listen $h:20501 --internal-listen $h:20502 --gossip $h:7946 --join $s:7946 \
		--name nm-$i --slots "$SLOTS" --http-listen $h:8080 "${policy_args[@]}" "${nm_args[@]}" >"$out/nm-$i.log" 2>&1 &
	pids+=($!)
	"$BIN" executor --app sleep --listen $h:20101 --node-monitor $h:20501 --node nm-$i \
		--report-launch-time >"$out/ex-$i.log" 2>&1 &
	pids+=($!)
done
# Wait until every node monitor is ready: joined, with its executor
# registered.
for i in $(seq 1 "$NODES"); do
	for _ in $(seq 1 300); do
		curl -sf "http://$NET.2.$i:8080/readyz" >/dev/null && break
		sleep 0.2
	done
done
sleep 5 # gossip spreads the node monitors' app lists to the scheduler
"$BIN" drive --schedulers $s:20503 --listen $NET.3.1:50201 --app sleep --job-trace "$TRACE" --jobs "$JOBS" --time-scale "$SCALE" \
	--cutoff "$CUTOFF" --slots $((NODES * SLOTS)) --deadline "$DEADLINE" --timeout 2s --json --jobs-out "$out/jobs.csv" "${drive_args[@]}" \
	>"$out/drive.out" 2>"$out/drive.log"
# The scheduler's and node monitors' counters, for the record.
curl -sf "http://$s:8080/metrics" >"$out/scheduler.metrics" || true
for i in $(seq 1 "$NODES"); do
	curl -sf "http://$NET.2.$i:8080/metrics" >"$out/nm-$i.metrics" || true
done
tail -n 1 "$out/drive.out"
