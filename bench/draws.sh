#!/usr/bin/env bash
# One draw of the rain is not a landscape: the landscape preset's figures on
# one terrain over several draws of its droplets (`bench --rain-seed`), each
# analysed, then their range and how many draws meet issue #17's targets
# (closed depressions <= 5 %, theta in [0.30, 0.60] with r2 >= 0.9, beta in
# [0.35, 0.55], channel flats <= 25 %, no more pits than the input).
#
# usage: bench/draws.sh [--size N] [--island] [--hydrology] [--per-cell P] [--draws K] [--from F] [--jobs J] SEED [bench args...]
#   SEED picks the terrain (fBm, or the island with --island); draws use rain
#   seeds F..F+K-1 (default 1..8), J at a time (default 1: one core each).
#   Extra args go to bench (e.g. --threads 1, --set channels.river_area=1000).
#   --hydrology runs Hydrology's defaults instead (P particles a cell, a
#   whole number, default 3), analysed at the water surface (lakes at their level);
#   each draw also prints the share of the land under water and the channel
#   flats outside it (`analyse --ground`), which the targets do not use.
set -euo pipefail
cd "$(dirname "$0")/.."
size=512; island=""; hydrology=""; per_cell=3; draws=8; from=1; jobs=1
while [ $# -gt 0 ]; do
    case "$1" in
        --size) size="$2"; shift 2 ;;
        --island) island="--island"; shift ;;
        --hydrology) hydrology=1; shift ;;
        --per-cell) per_cell="$2"; shift 2 ;;
        --draws) draws="$2"; shift 2 ;;
        --from) from="$2"; shift 2 ;;
        --jobs) jobs="$2"; shift 2 ;;
        *) break ;;
    esac
done
[ $# -ge 1 ] || { sed -n 8,15p "$0" >&2; exit 2; }
[[ "$per_cell" =~ ^[1-9][0-9]*$ ]] || { echo "--per-cell takes a whole number of particles, 1 or more" >&2; exit 2; }
seed="$1"; shift
# The island's land: above the sea `bench --island` gives the preset.
sea=""; [ -n "$island" ] && sea="--sea-level 0.03"
cargo build -q --release --features parallel --example bench --example analyse
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
bin=target/release/examples
# The input, for its pits.
"$bin/bench" --model physical --size "$size" --seed "$seed" $island --droplets 0 --out "$dir/input.r32" > /dev/null
"$bin/analyse" "$dir/input.r32" $sea > "$dir/input.json"
run() {
    local r=$1; shift
    if [ -n "$hydrology" ]; then
        "$bin/bench" --model hydrology --droplets $((per_cell * size * size)) --size "$size" --seed "$seed" $island \
            --rain-seed "$r" --out-surface "$dir/$r.r32" --out "$dir/$r.ground.r32" "$@" > "$dir/$r.bench.json"
        "$bin/analyse" "$dir/$r.r32" --ground "$dir/$r.ground.r32" $sea > "$dir/$r.json"
    else
        "$bin/bench" --model physical --preset landscape --size "$size" --seed "$seed" $island --rain-seed "$r" \
            --out "$dir/$r.r32" "$@" > "$dir/$r.bench.json"
        "$bin/analyse" "$dir/$r.r32" $sea > "$dir/$r.json"
    fi
}
for r in $(seq "$from" $((from + draws - 1))); do
    run "$r" "$@" &
    while [ "$(jobs -r | wc -l)" -ge "$jobs" ]; do wait -n; done
done
wait
python3 - "$dir" "$draws" "$seed" "$size" "$island" "$from" "$hydrology" <<'PY'
import json, sys
d, k, seed, size, island, first = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6])
model = "Hydrology, " if sys.argv[7] else ""
inp = json.load(open(f"{d}/input.json"))
f3 = lambda x: "none" if x is None else f"{x:.3f}"
rows = []
for r in range(first, first + k):
    a = json.load(open(f"{d}/{r}.json")); b = json.load(open(f"{d}/{r}.bench.json"))
    ok = (a["depressions"] <= 0.05 and a["theta"] is not None and a["beta"] is not None and 0.30 <= a["theta"] <= 0.60
          and a["theta_r2"] >= 0.9 and a["beta"] is not None and 0.35 <= a["beta"] <= 0.55
          and a["channel_flats"] <= 0.25 and a["pit_fraction"] <= inp["pit_fraction"] and b["conserved"])
    rows.append((r, a, b, ok))
    print(f"draw {r}: depressions {a['depressions']:.3f} pits {a['pit_fraction']:.4f} flats {a['channel_flats']:.3f} "
          f"theta {f3(a['theta'])} ({f3(a['theta_r2'])}) beta {f3(a['beta'])} | {b['seconds']:.2f} s "
          f"conserved {b['conserved']} | {'meets' if ok else 'misses'}"
          + (f" | under water {a['water']:.3f}, flats outside it {a['dry_channel_flats']:.3f}" if "water" in a else ""))
def span(key):
    v = [row[1][key] for row in rows if row[1][key] is not None]
    return f"{min(v):.3f}-{max(v):.3f}" if v else "none"
name = model + ("island " if island else "fBm ") + seed
print(f"{name} at {size}^2 over {k} draws: depressions {span('depressions')}, flats {span('channel_flats')}, "
      f"theta {span('theta')} (r2 {span('theta_r2')}), beta {span('beta')}; all targets met in "
      f"{sum(r[3] for r in rows)} of {k} (input: depressions {inp['depressions']:.3f}, pits {inp['pit_fraction']:.4f})")
PY
