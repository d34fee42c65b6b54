#!/usr/bin/env bash
# The retry-storm reproduction (docs/RELIABILITY.md, "Resubmission
# without a retry storm"): 1 scheduler, 2 node monitors of 1 slot that refuse
# reservations past 200 queued, 2 executors, all separate processes on
# loopback, and `sparrow drive` offering about 1,000 times what the two slots
# can run for 25 s. Extra arguments go to the driver, e.g. the old behaviour:
#   scripts/bench/retry-storm.sh OUT --retry-base 1ns --retry-max 1ns \
#       --retry-budget 100 --retry-budget-min 100000000
# Needs bin/sparrow (make build) and python3. Writes OUT/drive.json (the
# driver's summary on its last line) and every member's log.
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${SPARROW:-bin/sparrow}
OUT=${1:?usage: retry-storm.sh OUT [drive flags...]}; shift
mkdir -p "$OUT"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait' EXIT
$B scheduler --log-level warn --gossip-profile local --gossip 127.0.0.1:17946 --listen 127.0.0.1:21503 \
  --gettask-listen 127.0.0.1:21507 --http-listen 127.0.0.1:21590 >"$OUT/scheduler.log" 2>&1 & pids+=($!)
for i in 1 2; do
  $B nodemonitor --log-level warn --gossip-profile local --gossip 127.0.0.1:1794$((6 + i)) --join 127.0.0.1:17946 \
    --listen 127.0.0.1:215${i}1 --internal-listen 127.0.0.1:215${i}2 --slots 1 --max-queued 200 >"$OUT/nm$i.log" 2>&1 & pids+=($!)
  $B executor --log-level warn --app sleep --listen 127.0.0.1:2110$i --node-monitor 127.0.0.1:215${i}1 >"$OUT/ex$i.log" 2>&1 & pids+=($!)
done
# Wait (at most 60 s) until the scheduler sees both node monitors, each with its executor.
python3 - <<'PY'
import json, sys, time, urllib.request
deadline = time.time() + 60
while time.time() < deadline:
    try:
        st = json.load(urllib.request.urlopen("http://127.0.0.1:21590/status", timeout=1))
        if st.get("scheduler", {}).get("node_monitors", 0) >= 2:
            sys.exit(0)
    except OSError:
        pass
    time.sleep(0.2)
sys.exit("the scheduler did not see both node monitors within 60 s")
PY
/usr/bin/time -v $B drive --schedulers 127.0.0.1:21503 --listen 127.0.0.1:51201 --app sleep --rate 200 --tasks 10 \
  --task-duration 1s --jobs 4000 --deadline 25s --progress-every 5s --json "$@" >"$OUT/drive.json" 2>"$OUT/drive.err" || true
tail -1 "$OUT/drive.json" | python3 -c 'import json,sys; s=json.load(sys.stdin); print("tasks", s["tasks_submitted"], "attempts", s["attempt_tasks_submitted"], "completed", s["tasks_completed"], "failed by budget", s.get("jobs_failed_by_budget"), "failovers", len(s["failovers"]))'
grep "Maximum resident" "$OUT/drive.err" || true
