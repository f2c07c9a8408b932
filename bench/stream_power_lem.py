#!/usr/bin/env python3
"""A reference landscape for the terrain analysis: a stream-power landscape
evolution model at steady state, written as a raw little-endian f32 map.

    python3 bench/stream_power_lem.py SIDE ITERATIONS OUT.r32   (needs numpy)
    cargo run --release --example analyse -- OUT.r32

Braun and Willett's (2013) implicit scheme for dz/dt = U - K A^m S^n with
n = 1, m = 0.5 (so θ = m / n = 0.5), D8 steepest descent, all four borders
held at 0 (outlets), uplift U everywhere else, starting from 1e-3 of uniform
noise. 120-150 iterations reach steady state at 128-512 cells a side (the
relief stops changing); 512² takes a few minutes in pure Python. Used to
calibrate `AnalysisOptions`: θ measures 0.50 with r² 1.00, and β 0.50 at
512² over the default exceedance range (see docs/landscape.md).
"""
import sys

import numpy as np

side, iterations, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rng = np.random.default_rng(1)
z = rng.random((side, side)) * 1e-3
uplift, k, m, dt = 1e-3, 5e-4, 0.5, 2000.0
offsets = [(-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)]
index = np.arange(side * side).reshape(side, side)
border = np.zeros((side, side), bool)
border[0, :] = border[-1, :] = border[:, 0] = border[:, -1] = True
rows, cols = np.arange(side)[:, None], np.arange(side)[None, :]
for step in range(iterations):
    # D8 receivers: the steepest lower neighbour; border cells are outlets.
    padded = np.pad(z, 1, constant_values=np.inf)
    steepest = np.zeros((side, side))
    receiver = index.copy()
    length = np.ones((side, side))
    for dy, dx in offsets:
        d = np.hypot(dy, dx)
        slope = (z - padded[1 + dy:side + 1 + dy, 1 + dx:side + 1 + dx]) / d
        better = slope > steepest
        steepest = np.where(better, slope, steepest)
        neighbour = index[np.clip(rows + dy, 0, side - 1), np.clip(cols + dx, 0, side - 1)]
        receiver = np.where(better, neighbour, receiver)
        length = np.where(better, d, length)
    receiver, length = receiver.ravel(), length.ravel()
    receiver[border.ravel()] = index.ravel()[border.ravel()]
    # The stack: every cell after its receiver.
    donors = [[] for _ in range(side * side)]
    for i, r in enumerate(receiver):
        if r != i:
            donors[r].append(i)
    stack = []
    for i in np.flatnonzero(receiver == np.arange(side * side)):
        todo = [i]
        while todo:
            c = todo.pop()
            stack.append(c)
            todo.extend(donors[c])
    area = np.ones(side * side)
    for c in reversed(stack):
        if receiver[c] != c:
            area[receiver[c]] += area[c]
    flat = z.ravel().copy()
    flat[~border.ravel()] += uplift * dt
    for c in stack:
        r = receiver[c]
        if r != c:
            f = k * dt * area[c] ** m / length[c]
            flat[c] = (flat[c] + f * flat[r]) / (1 + f)
    z = flat.reshape(side, side)
    z[border] = 0.0
    if step % 20 == 0:
        print(f"iteration {step}: relief {z.max():.3f}", file=sys.stderr)
z.astype("<f4").tofile(out)
