#!/usr/bin/env bash
# Compares the crate's droplet loop with ../shared/refbench on the same map.
#
#   bench/compare.sh [--sizes "256 512"] [--droplets K] [--runs R] [--modes "sequential lockstep"]
#                    [--builds "plain native"] [--landscape "512 1024"]
#
# Builds the reference (gcc -O3 -march=native) and the bench example twice: a
# plain `cargo build --release` (what a dependent crate gets; the lockstep
# kernel picks AVX-512, AVX2 or the baseline at run time) in target/plain, and
# one with -C target-cpu=native like the reference in target/native. The
# crate's output is bit-identical in both, only the instructions differ. It
# writes one map per size with the reference's --write-map, then runs the
# reference and each crate mode alternately R times on it. Prints the median CPU
# ns per droplet step of each (the loop's CPU time: steadier than wall time on a
# shared machine) and the ratio reference / crate (> 1: the crate is faster),
# of the medians and, "paired", the median of each run's ratio to the
# reference run just before it.
# `--landscape SIZES` then times the landscape preset (`bench --preset
# landscape`, its own droplet count) on each size's fBm map, plain build with
# `parallel`: seconds to erode, ns/step and steps/droplet in `Parallel` tiles
# on 1 and 2 threads (same bits) and in `Mode::Fast` on one ("" skips it).
set -euo pipefail
cd "$(dirname "$0")/.."

sizes="256 512"
droplets=100000
runs=5
modes="sequential lockstep"
builds="plain native"
landscape=""
while [ $# -gt 0 ]; do
    case "$1" in
        --sizes) sizes="$2"; shift 2 ;;
        --droplets) droplets="$2"; shift 2 ;;
        --runs) runs="$2"; shift 2 ;;
        --modes) modes="$2"; shift 2 ;;
        --builds) builds="$2"; shift 2 ;;
        --landscape) landscape="$2"; shift 2 ;;
        *) echo "usage: $0 [--sizes \"256 512\"] [--droplets K] [--runs R] [--modes \"sequential lockstep\"] [--builds \"plain native\"] [--landscape \"512 1024\"]" >&2; exit 2 ;;
    esac
done

ref_src=../shared/refbench
work=target/compare
mkdir -p "$work"
make -s -C "$ref_src" OUT="$PWD/$work" >/dev/null
for b in $builds; do
    case "$b" in
        plain) RUSTFLAGS="" cargo build -q --release --example bench --target-dir target/plain ;;
        native) RUSTFLAGS="-C target-cpu=native" cargo build -q --release --example bench --target-dir target/native ;;
        *) echo "unknown build $b (plain, native)" >&2; exit 2 ;;
    esac
done

isa=baseline
grep -qw avx2 /proc/cpuinfo && isa=AVX2
grep -qw avx512f /proc/cpuinfo && isa=AVX-512
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, widest vectors: $isa"
echo "droplets: $droplets, runs: $runs (alternated), seed 1, SimpleErosion defaults"
for n in $sizes; do
    map="$work/map$n.f32"
    "$work/ref_physical" "$n" 0 1 --write-map "$map" >/dev/null
    : >"$work/ref$n.txt"
    for b in $builds; do for m in $modes; do : >"$work/$b-$m$n.txt"; done; done
    for _ in $(seq "$runs"); do
        "$work/ref_physical" "$n" "$droplets" 1 --in "$map" | awk '/^cpu_ns\/step/ {print $2}' >>"$work/ref$n.txt"
        for b in $builds; do
            for m in $modes; do
                "target/$b/release/examples/bench" --model physical --mode "$m" --size "$n" --droplets "$droplets" --seed 1 --in "$map" \
                    | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["cpu_ns_per_step"], d["steps_per_droplet"], d["conserved"], d["hash"])' \
                    >>"$work/$b-$m$n.txt"
            done
        done
    done
    python3 - "$n" "$work" "$builds" $modes <<'PY'
import statistics, sys
n, work, builds, modes = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4:]
ref = [float(l.split()[0]) for l in open(f"{work}/ref{n}.txt")]
r = statistics.median(ref)
print(f"{n}x{n}  reference        median {r:7.3f} ns/step  (runs: {', '.join(f'{x:.2f}' for x in ref)})")
for m in modes:
    hashes = set()
    for b in builds:
        rows = [l.split() for l in open(f"{work}/{b}-{m}{n}.txt")]
        ns = [float(x[0]) for x in rows]
        c = statistics.median(ns)
        ok = all(x[2] == "True" for x in rows)
        hashes |= {x[3] for x in rows}
        # Each crate run follows its reference run: the machine's speed
        # wanders over minutes, so the median of the pairs' ratios is the
        # steadier figure.
        paired = statistics.median(x / y for x, y in zip(ref, ns))
        print(f"{n}x{n}  {b:<6} {m:<10} median {c:7.3f} ns/step  ratio {r / c:5.2f}x  paired {paired:5.2f}x  "
              f"({rows[0][1]} steps/droplet, conserved: {ok}; runs: {', '.join(f'{x:.2f}' for x in ns)})")
    print(f"{n}x{n}  {m}: {'same bits in every build' if len(hashes) == 1 else 'BITS DIFFER: ' + ' '.join(sorted(hashes))}")
PY
done

[ -n "$landscape" ] && RUSTFLAGS="" cargo build -q --release --features parallel --example bench --target-dir target/plain-parallel
for n in $landscape; do
    for t in 1 2; do
        target/plain-parallel/release/examples/bench --model physical --preset landscape --size "$n" --seed 1 --threads "$t" \
            | python3 -c 'import json,sys; d=json.load(sys.stdin); print("%dx%d  landscape preset, tiles, %s thread(s): %.2f s to erode (%d droplets, %s steps/droplet, %.1f ns/step, conserved: %s, hash %s)" % (d["width"], d["height"], sys.argv[1], d["seconds"], d["droplets"], d["steps_per_droplet"], d["ns_per_step"], d["conserved"], d["hash"]))' "$t"
    done
    target/plain-parallel/release/examples/bench --model physical --preset landscape --size "$n" --seed 1 \
        | python3 -c 'import json,sys; d=json.load(sys.stdin); print("%dx%d  landscape preset, one thread (Mode::Fast): %.2f s to erode (%s steps/droplet, %.1f ns/step)" % (d["width"], d["height"], d["seconds"], d["steps_per_droplet"], d["ns_per_step"]))'
done
