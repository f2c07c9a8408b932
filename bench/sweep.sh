#!/usr/bin/env bash
# The landscape preset over many terrains at once: `bench/draws.sh` on each
# fBm terrain in turn, then how many of all the runs met every one of issue
# #17's targets, the most land any run left closed, and the wall time.
#
# usage: bench/sweep.sh [--terrains "1 2 ... 10"] [--draws K] [--from F] [--jobs J] [bench args...]
#   Terrains default to fBm 1-10, draws to 2 (rain seeds F..F+K-1, F
#   default 1), two runs at a time; extra args go to bench (e.g. --set
#   max_steps=250). Each terrain's lines are draws.sh's own.
set -euo pipefail
cd "$(dirname "$0")/.."
terrains="1 2 3 4 5 6 7 8 9 10"; draws=2; from=1; jobs=2
while [ $# -gt 0 ]; do
    case "$1" in
        --terrains) terrains="$2"; shift 2 ;;
        --draws) draws="$2"; shift 2 ;;
        --from) from="$2"; shift 2 ;;
        --jobs) jobs="$2"; shift 2 ;;
        -h|--help) sed -n 2,9p "$0"; exit 0 ;;
        *) break ;;
    esac
done
log=$(mktemp); trap 'rm -f "$log"' EXIT
start=$(date +%s)
for t in $terrains; do
    echo "== fBm $t" | tee -a "$log"
    bench/draws.sh --draws "$draws" --from "$from" --jobs "$jobs" "$t" "$@" | tee -a "$log"
done
runs=$(grep -c '^draw ' "$log" || true)
meets=$(grep -c '| meets$' "$log" || true)
closed=$(grep '^draw ' "$log" | awk '{print $4}' | sort -rn | head -1)
echo "sweep: $meets of $runs runs meet every target; most land closed $closed; $(( $(date +%s) - start )) s"
