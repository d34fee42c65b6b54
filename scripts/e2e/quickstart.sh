#!/usr/bin/env bash
# Runs the README's containerised quick start (deploy/docker-compose.yml)
# once, as a newcomer would, and fails unless its driver completes every job.
# Needs docker, docker-compose and the image $SPARROW_IMAGE (make docker).
# The fleet is always taken down on exit.
set -euo pipefail
cd "$(dirname "$0")/../.."
PROJECT=sparrowquickstart
COMPOSE=(docker-compose -p "$PROJECT" -f deploy/docker-compose.yml)
LOG=$(mktemp)
trap '"${COMPOSE[@]}" down -v --remove-orphans >/dev/null 2>&1 || true; rm -f "$LOG"' EXIT

echo "quickstart: docker-compose up (2 schedulers, 4 node monitors, 4 executors, a driver)"
status=0
timeout 300 "${COMPOSE[@]}" up --abort-on-container-exit --exit-code-from driver >"$LOG" 2>&1 || status=$?
grep -E 'driver_1' "$LOG" | sed 's/\x1b\[[0-9;]*m//g' | tail -8
if [ "$status" -ne 0 ] || ! grep -q 'jobs completed *300 of 300' "$LOG"; then
  echo "quickstart: FAILED (exit $status); last lines:"
  tail -40 "$LOG"
  exit 1
fi
echo "quickstart: ok"
