//! Settling the single-cell pits a run made, at its end (the landscape
//! preset's [`Channels::settle_pits`](crate::Channels::settle_pits) and
//! Hydrology's [`settle_pits`](crate::HydrologyParams::settle_pits)).

use crate::controls::Gate;
use crate::report::ErosionReport;
use crate::{carry, neighbours};

/// Settles every interior cell lower than all 8 of its neighbours that the
/// run made or left (the pit or its lowest neighbour no longer holds its
/// height in `before`, the map as the run found it: the input's own pits
/// stay), in row order: the pit and its lowest neighbour (the first in
/// [`neighbours::NEIGHBOURS`](crate::neighbours::NEIGHBOURS) order among equals) meet halfway, at one
/// height, the neighbour's cut booked as erosion and the pit's fill as a
/// deposit. A masked pit, or a neighbour that a mask or zero erodibility
/// holds, is left alone. Returns how many pits were settled.
///
/// One pass leaves no pit it can settle: the two cells end level (so
/// neither is lower than all its neighbours), the pit's other neighbours
/// stay at or above it, and lowering a cell makes none of its neighbours a
/// pit.
///
/// The books stay exact without making a pit: the caller puts the run's
/// rounding remainder down first (it may dig a pit of its own, settled
/// next); each meeting height is the halfway point rounded up, so what
/// rounding adds is a surplus put down, and that surplus is taken back
/// from the movable (admitted, erodible) border cell of smallest magnitude (lowering a border
/// cell makes no interior pit), rounded down: what the cell gives beyond
/// the surplus (under one of its rounding steps) is booked as outflow, sediment
/// washed over the border. With no such border cell, nothing is settled.
///
/// `cells` is the `width x height` map, `carry` what is left of the run's
/// rounding remainder once put down (under half a step of the finest cell:
/// paid with the rounding surplus, and taken),
/// `report` the books, and only cells for which `takes_part` holds take part
/// (pit, neighbour or border outlet): Hydrology's dry ones.
#[allow(clippy::too_many_arguments)]
pub(crate) fn settle_pits(
    cells: &mut [f32],
    width: usize,
    height: usize,
    before: &[f32],
    gate: Gate<'_>,
    report: &mut ErosionReport,
    carry: &mut f64,
    takes_part: impl Fn(usize) -> bool,
) -> u64 {
    let (w, h) = (width, height);
    let border = |i: usize| {
        let (x, y) = (i % w, i / w);
        x == 0 || y == 0 || x + 1 == w || y + 1 == h
    };
    // The outlet is lowered: a border cell the run may move (not bedrock).
    let movable = |i: usize| border(i) && gate.weight(i) > 0.0 && takes_part(i);
    let outlet = carry::smallest_magnitude(cells, (0..cells.len()).filter(|&i| movable(i)));
    if !movable(outlet) {
        // No border cell to pay the rounding: the pits stay.
        return 0;
    }
    let mut settled = 0;
    // The droplets' own remainder (under half a step of the finest cell)
    // goes the same way.
    let mut owed = core::mem::take(carry);
    for y in 1..h.saturating_sub(1) {
        for x in 1..w - 1 {
            let i = y * w + x;
            let (mut lowest, mut low) = (i, f32::INFINITY);
            neighbours::for_each_neighbour_of(x, y, w, h, |_, j, _| {
                if cells[j] < low {
                    (lowest, low) = (j, cells[j]);
                }
            });
            let pit = cells[i];
            if pit >= low
                || !gate.admits(i)
                || gate.weight(lowest) <= 0.0
                || !takes_part(i)
                || !takes_part(lowest)
            {
                continue;
            }
            let same = |j: usize| cells[j].to_bits() == before[j].to_bits();
            if same(i) && same(lowest) {
                continue;
            }
            let level = halfway_up(pit, low);
            cells[lowest] = level;
            owed += report.book(low, level);
            cells[i] = level;
            owed += report.book(pit, level);
            settled += 1;
        }
    }
    if owed != 0.0 {
        // `owed` is what rounding up put down (negative), with the
        // droplets' remainder (positive, under half a step of the finest
        // cell, so never enough to raise the outlet): the outlet is lowered
        // by at least that, to the `f32` at or below, and what it gave
        // beyond leaves the map over the border. Exact books, no pit made
        // (lowering a cell makes none of its neighbours a pit, and a border
        // cell is none), however coarse the outlet's resolution.
        let old = cells[outlet];
        let new = at_or_below(f64::from(old) + owed);
        if new.is_finite() {
            cells[outlet] = new;
            owed += report.book(old, new);
            report.outflow += owed;
        }
    }
    settled
}

/// The largest `f32` at or below `x`.
pub(crate) fn at_or_below(x: f64) -> f32 {
    let near = x as f32;
    if f64::from(near) <= x { near } else { -next_up(-near) }
}

/// The `f32` at or just above the exact halfway point of `low <= high`
/// (their sum and its half are exact in `f64`): never below it, never above
/// `high`.
pub(crate) fn halfway_up(low: f32, high: f32) -> f32 {
    let exact = (f64::from(low) + f64::from(high)) * 0.5;
    let near = exact as f32;
    if f64::from(near) >= exact { near } else { next_up(near) }
}

/// The next `f32` above a finite `x` (`f32::next_up`, stable since Rust 1.86,
/// past this crate's MSRV).
pub(crate) fn next_up(x: f32) -> f32 {
    let bits = x.to_bits();
    if x == 0.0 {
        f32::from_bits(1)
    } else if x > 0.0 {
        f32::from_bits(bits + 1)
    } else {
        f32::from_bits(bits - 1)
    }
}
