#!/usr/bin/env bash
# Screenshots of the fleet dashboard for the README: a loopback fleet of
# separate processes (a scheduler, node monitors with sleep executors, two
# users' drivers), with and without a fairness coordinator, photographed by
# `sparrow ui --screenshot` (needs Chromium). Usage: scripts/ui/screenshots.sh [OUTDIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-docs/img}
mkdir -p "$out" bin
CGO_ENABLED=0 go build -trimpath -o bin/sparrow ./cmd/sparrow
S=bin/sparrow
work=$(mktemp -d)
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

start() { "$S" "$@" --log-level warn >>"$work/log" 2>&1 & pids+=($!); }

fleet() { # $1: extra node monitor flags, $2: with a coordinator (yes/no), $3: net prefix
  local net=$3 seeds="$3.1:7946"
  start scheduler --name sched0 --gossip "$net.1:7946" --listen "$net.1:20503" --gettask-listen "$net.1:20507" --http-listen "$net.1:9100" --gossip-profile local
  for i in $(seq 1 12); do
    local host="$net.$((10 + i))"
    start nodemonitor --name "nm$i" --gossip "$host:7946" --join "$seeds" --slots 4 --listen "$host:20501" \
      --internal-listen "$host:20502" --http-listen "$host:9100" --gossip-profile local $1
    start executor --app sleep --node "nm$i" --node-monitor "$host:20501" --listen "$host:20101"
  done
  if [ "$2" = yes ]; then
    start coordinator --name coord0 --gossip "$net.2:7946" --join "$seeds" --http-listen "$net.2:9100" --gossip-profile local --period 1s
  fi
  sleep 3
  start drive --schedulers "$net.1:20503" --listen "$net.3:50201" --user alice --jobs 4000 --tasks 4 --task-duration 200ms --rate 30 --deadline 10m
  start drive --schedulers "$net.1:20503" --listen "$net.4:50201" --user bob --jobs 4000 --tasks 2 --task-duration 300ms --rate 20 --deadline 10m
}

fleet "" no 127.0.40
"$S" ui --join 127.0.40.1:7946 --gossip-profile local --listen 127.0.40.5:0 --screenshot "$out/dashboard.png" --screenshot-after 15 --interval 1s
cleanup; pids=(); work=$(mktemp -d)
fleet "--queue choosy" yes 127.0.41
"$S" ui --join 127.0.41.1:7946 --gossip-profile local --listen 127.0.41.5:0 --screenshot "$out/dashboard-coordinator.png" --screenshot-after 15 --interval 1s
