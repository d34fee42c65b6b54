#!/usr/bin/env bash
# Re-run the policy experiments recorded in docs/experiments/policies.md.
#
# Builds sparrow, then runs each `sparrow bench` policy scenario with its
# default (documented) settings, one after another, each waiting (bounded)
# for the host's 1-minute load average to drop below $MAX_LOAD first. The
# plots go to docs/img/, the tables and JSON to $RESULTS.
#
#   scripts/policy/run.sh                 # everything, about 7 minutes
#   scripts/policy/run.sh priority        # just some: fairness-1-1 fairness-1-3
#                                         # fairness-3-1 priority constraints
set -euo pipefail
cd "$(dirname "$0")/../.."

MAX_LOAD=${MAX_LOAD:-1.0}
MAX_LOAD_WAIT=${MAX_LOAD_WAIT:-10m}
RESULTS=${RESULTS:-/tmp/sparrow-policy-results}
IMG=docs/img
mkdir -p "$RESULTS" "$IMG"

bin=$(mktemp -d)/sparrow
go build -o "$bin" ./cmd/sparrow

run() {
	local name=$1
	shift
	echo "== $name: sparrow bench $* --plot $IMG/$name.svg" >&2
	"$bin" bench "$@" --plot "$IMG/$name.svg" --json --max-load "$MAX_LOAD" --max-load-wait "$MAX_LOAD_WAIT" \
		>"$RESULTS/$name.txt" 2>"$RESULTS/$name.log"
	# Everything but the JSON line.
	sed '$d' "$RESULTS/$name.txt"
	tail -n 1 "$RESULTS/$name.txt" >"$RESULTS/$name.json"
}

want() { [ $# -eq 0 ] || [[ " $* " == *" $name "* ]]; }

for name in fairness-1-1 fairness-1-3 fairness-3-1 priority constraints; do
	want "$@" || continue
	case $name in
	fairness-1-1) run "$name" fairness --weights 1:1 ;;
	fairness-1-3) run "$name" fairness --weights 1:3 ;;
	fairness-3-1) run "$name" fairness --weights 3:1 ;;
	priority) run "$name" priority ;;
	constraints) run "$name" constraints ;;
	esac
done
