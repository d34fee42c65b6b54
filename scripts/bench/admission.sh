#!/usr/bin/env bash
# Admission by expected queue wait (docs/RELIABILITY.md):
# 1 scheduler, 2 node monitors of 1 slot that refuse reservations past 200
# queued (so holding is on in every run), 2 executors, all separate
# processes on loopback, and `sparrow drive` offering one-task jobs of
# 100 ms (capacity: 20 tasks/s) at 2x and 10x capacity for 30 s, each with
# and without --max-queue-wait (default 1s). Usage:
#   [DRIVE_FLAGS="--max-in-flight -1"] scripts/bench/admission.sh OUT [MAX_QUEUE_WAIT]
# The driver's response time runs from a job's submit call to its last task;
# by default the driver keeps at most 64 calls in flight and an arrival past
# them waits, uncounted, for one to return ("waits for a submit slot");
# DRIVE_FLAGS="--max-in-flight -1" submits every arrival on time instead.
# SCHED_FLAGS adds flags to every scheduler (e.g. "--max-hold 5s"); ONLY
# (a regular expression) picks runs by name (2x-off 2x-mqw 10x-off 10x-mqw).
# Needs $SPARROW (default bin/sparrow) and python3. Writes OUT/<run>/drive.json
# (the driver's summary on its last line), every member's log, and
# OUT/table.md (one row per run).
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${SPARROW:-bin/sparrow}
OUT=${1:?usage: admission.sh OUT [MAX_QUEUE_WAIT]}
MQW=${2:-1s}
mkdir -p "$OUT"
pids=()
stop() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; pids=(); }
trap stop EXIT

run() { # name rate [scheduler flags...]
  local name=$1 rate=$2; shift 2
  [[ $name =~ ${ONLY:-.} ]] || return 0
  local dir="$OUT/$name"
  mkdir -p "$dir"
  nice $B scheduler --log-level warn --gossip-profile local --gossip 127.0.0.1:18946 --listen 127.0.0.1:22503 \
    --gettask-listen 127.0.0.1:22507 --http-listen 127.0.0.1:22590 ${SCHED_FLAGS:-} "$@" >"$dir/scheduler.log" 2>&1 & pids+=($!)
  for i in 1 2; do
    nice $B nodemonitor --log-level warn --gossip-profile local --gossip 127.0.0.1:1894$((6 + i)) --join 127.0.0.1:18946 \
      --listen 127.0.0.1:225${i}1 --internal-listen 127.0.0.1:225${i}2 --slots 1 --max-queued 200 >"$dir/nm$i.log" 2>&1 & pids+=($!)
    nice $B executor --log-level warn --app sleep --listen 127.0.0.1:2210$i --node-monitor 127.0.0.1:225${i}1 >"$dir/ex$i.log" 2>&1 & pids+=($!)
  done
  python3 - <<'PY'
import json, sys, time, urllib.request
deadline = time.time() + 60
while time.time() < deadline:
    try:
        st = json.load(urllib.request.urlopen("http://127.0.0.1:22590/status", timeout=1))
        if st.get("scheduler", {}).get("node_monitors", 0) >= 2:
            sys.exit(0)
    except OSError:
        pass
    time.sleep(0.2)
sys.exit("the scheduler did not see both node monitors within 60 s")
PY
  local load0
  load0=$(cut -d' ' -f1 /proc/loadavg)
  nice $B drive --schedulers 127.0.0.1:22503 --listen 127.0.0.1:52201 --app sleep --rate "$rate" --tasks 1 \
    --task-duration 100ms --jobs $((rate * 30)) --deadline 40s --progress-every 10s --json ${DRIVE_FLAGS:-} \
    >"$dir/drive.json" 2>"$dir/drive.err" || true
  curl -s http://127.0.0.1:22590/metrics | grep -E '^sparrow_scheduler_(admission|saturation|holds|load_reports)' >"$dir/metrics.txt" || true
  stop
  python3 - "$name" "$rate" "$dir/drive.json" "$dir/metrics.txt" "$load0" "$(cut -d' ' -f1 /proc/loadavg)" <<'PY' | tee -a "$OUT/table.md"
import json, sys
name, rate, path, mpath, l0, l1 = sys.argv[1:]
s = json.loads(open(path).read().strip().splitlines()[-1])
m = {}
for line in open(mpath):
    k, v = line.split()
    m[k] = float(v)
r, a = s["response_ms"], s["affected_response_ms"]
print(f"| {name} | {rate} | {s['tasks_completed']}/{s['tasks_submitted']} | {s['tasks_completed'] / s['elapsed_s']:.1f} | "
      f"{r.get('p50', 0):.0f} / {r.get('p99', 0):.0f} | {s.get('backpressure_waits', 0)} ({s.get('backpressure_wait_s', 0):.0f} s) | "
      f"{s['resubmitted_jobs']} | {a.get('n', 0)} | {s['jobs_failed_by_budget']} | "
      f"{m.get('sparrow_scheduler_saturation_refusals_total', 0):.0f} | {m.get('sparrow_scheduler_admission_holds_total', 0):.0f} / "
      f"{m.get('sparrow_scheduler_admission_refusals_total', 0):.0f} | {l0} → {l1} |")
PY
}

echo "| run | jobs/s | tasks done/offered | done/s | response p50 / p99 ms | waits for a submit slot (total) | resubmitted jobs | completed after a resubmit | failed by budget | scheduler refusals | admission holds / refusals | load avg |" | tee "$OUT/table.md"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|" | tee -a "$OUT/table.md"
run 2x-off 40
run 2x-mqw 40 --max-queue-wait "$MQW"
run 10x-off 200
run 10x-mqw 200 --max-queue-wait "$MQW"
