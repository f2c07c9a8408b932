#!/usr/bin/env bash
# Two commits' speed on the same run, alternated: on a shared machine whose
# speed wanders by a third within minutes, separate runs cannot tell 5 %
# apart, while pairs run back to back see the same machine.
#
#   bench/ab.sh [--pairs N] REV_A REV_B [bench args...]
#
# Builds the bench example (plain `cargo build --release --features
# parallel`, what a dependent gets) of each revision in a worktree of its own
# under target/ab/ (the first build of each takes a minute; later ones reuse
# it), then runs `bench ARGS` N times (default 5) for each, A then B, and
# prints each one's CPU seconds (min, median, all runs), the ratio of the
# medians and the median of the pairs' own ratios (B / A: below 1, B is
# faster), and whether both gave the same hash. Default args: the landscape
# preset on 512² fBm 1, one thread.
#
#   bench/ab.sh HEAD~1 HEAD
#   bench/ab.sh --pairs 3 main HEAD --model physical --size 256 --seed 1 --droplets 50000
set -euo pipefail

pairs=5
if [[ "${1:-}" == "--pairs" ]]; then
    pairs=$2
    shift 2
fi
if [[ $# -lt 2 ]]; then
    sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
rev_a=$1
rev_b=$2
shift 2
args=("$@")
if [[ ${#args[@]} -eq 0 ]]; then
    args=(--model physical --preset landscape --size 512 --seed 1 --rain-seed 1 --threads 1)
fi

root=$(git rev-parse --show-toplevel)
out="$root/target/ab"
mkdir -p "$out"

# The bench binary of revision $1, built in its own worktree; prints its path.
build() {
    local rev sha tree
    rev=$1
    sha=$(git -C "$root" rev-parse --verify "$rev^{commit}")
    tree="$out/$sha"
    if [[ ! -x "$tree.bench" ]]; then
        if [[ ! -d "$tree" ]]; then
            git -C "$root" worktree add --detach -q "$tree" "$sha"
        fi
        (cd "$tree" && cargo build -q --release --features parallel --example bench --target-dir "$out/target-$sha")
        cp "$out/target-$sha/release/examples/bench" "$tree.bench"
    fi
    echo "$tree.bench"
}

bench_a=$(build "$rev_a")
bench_b=$(build "$rev_b")

python3 - "$pairs" "$rev_a" "$bench_a" "$rev_b" "$bench_b" "${args[@]}" <<'EOF'
import json, statistics, subprocess, sys

pairs = int(sys.argv[1])
(rev_a, bench_a, rev_b, bench_b), args = sys.argv[2:6], sys.argv[6:]

def run(binary):
    out = subprocess.run([binary, *args], check=True, capture_output=True, text=True).stdout
    report = json.loads(out.strip().splitlines()[-1])
    return report["cpu_seconds"], report["hash"]

times = {rev_a: [], rev_b: []}
hashes = {rev_a: set(), rev_b: set()}
for _ in range(pairs):
    for rev, binary in ((rev_a, bench_a), (rev_b, bench_b)):
        seconds, digest = run(binary)
        times[rev].append(seconds)
        hashes[rev].add(digest)
for rev in (rev_a, rev_b):
    t = times[rev]
    runs = " ".join(f"{x:.2f}" for x in t)
    print(f"{rev:>12}  min {min(t):.3f} s  median {statistics.median(t):.3f} s  ({runs})  hash {' '.join(sorted(hashes[rev]))}")
ratio = statistics.median(times[rev_b]) / statistics.median(times[rev_a])
paired = statistics.median(b / a for a, b in zip(times[rev_a], times[rev_b]))
same = "same hash" if hashes[rev_a] == hashes[rev_b] else "DIFFERENT hashes"
print(f"B / A: medians {ratio:.3f}, paired {paired:.3f}; {same}")
EOF
