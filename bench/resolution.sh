#!/usr/bin/env bash
# The resolution study of issue #17: the landscape preset in world units
# (`channels.cell_size` = 512 / side) on one fBm terrain sampled at 256, 512
# and 1024 cells a side, each run analysed twice: with the default fit
# (drainage areas from 50 cells) and over the same world areas (from 50 unit
# areas: `analyse --channel-area` 12.5, 50, 200). Prints one line a run, then
# each size's θ and closed depressions against 512²'s (#17 asks for θ within
# ±0.05 and depressions within ±0.02).
#
# usage: bench/resolution.sh [--draws "R ..."] [--per-cell P] SEED [bench args...]
#   SEED picks the terrain; draws (rain seeds, default "1") are run in turn,
#   two threads each (tiles). --per-cell P runs P droplets a cell (rounded)
#   at every size instead of the preset's 1.5. Extra args go to bench (e.g.
#   --set max_steps=600). A 1024² run takes half a minute to a minute on two
#   threads.
set -euo pipefail
cd "$(dirname "$0")/.."
draws="1"; per_cell=""
while [ $# -gt 0 ]; do
    case "$1" in
        --draws) draws="$2"; shift 2 ;;
        --per-cell) per_cell="$2"; shift 2 ;;
        *) break ;;
    esac
done
[ $# -ge 1 ] || { sed -n 9,15p "$0" >&2; exit 2; }
seed="$1"; shift
cargo build -q --release --features parallel --example bench --example analyse
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
bin=target/release/examples
for r in $draws; do
    for spec in "256 2 12.5" "512 1 50" "1024 0.5 200"; do
        set -- $spec "$@"
        n=$1; cell=$2; area=$3; shift 3
        f="$dir/$r.$n"
        count=()
        [ -z "$per_cell" ] || count=(--droplets "$(python3 -c "print(round($per_cell * $n * $n))")")
        "$bin/bench" --model physical --preset landscape --size "$n" --seed "$seed" --rain-seed "$r" --threads 2 \
            --set channels.cell_size="$cell" "${count[@]}" --out "$f.r32" "$@" > "$f.bench.json"
        "$bin/analyse" "$f.r32" > "$f.json"
        "$bin/analyse" "$f.r32" --channel-area "$area" > "$f.world.json"
    done
done
python3 - "$dir" "$seed" $draws <<'PY'
import json, sys
d, seed, draws = sys.argv[1], sys.argv[2], sys.argv[3:]
f3 = lambda x: "none" if x is None else f"{x:.3f}"
for r in draws:
    runs = {}
    for n, cell in ((256, 2.0), (512, 1.0), (1024, 0.5)):
        b = json.load(open(f"{d}/{r}.{n}.bench.json"))
        a = json.load(open(f"{d}/{r}.{n}.json")); w = json.load(open(f"{d}/{r}.{n}.world.json"))
        runs[n] = (a, w)
        f = b["fates"]; k = b["droplets"]
        print(f"fBm {seed} draw {r} {n}^2: depressions {a['depressions']:.3f} flats {a['channel_flats']:.3f} "
              f"theta {f3(a['theta'])} ({f3(a['theta_r2'])}) beta {f3(a['beta'])} pits {a['pit_fraction']:.4f} | "
              f"world fit theta {f3(w['theta'])} ({f3(w['theta_r2'])}) | outflow x area "
              f"{b['outflow'] * cell * cell:.0f}, left {f['left_map'] / k:.3f}, evaporated {f['evaporated'] / k:.3f} | "
              f"{b['seconds']:.1f} s conserved {b['conserved']}")
    base_w, base_a = runs[512][1], runs[512][0]
    for n in (256, 1024):
        a, w = runs[n]
        dt = None if w["theta"] is None or base_w["theta"] is None else w["theta"] - base_w["theta"]
        dd = a["depressions"] - base_a["depressions"]
        ok = dt is not None and abs(dt) <= 0.05 and abs(dd) <= 0.02
        print(f"  {n}^2 against 512^2: theta (world fit) {'none' if dt is None else f'{dt:+.3f}'}, "
              f"depressions {dd:+.3f}: {'within' if ok else 'outside'} the targets")
PY
