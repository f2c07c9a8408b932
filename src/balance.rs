//! The sediment balance of a run, for tests and for downstream property tests.

use crate::grid::Grid;

/// The sediment balance of a run: `sum(before) - sum(after)` against the outflow.
///
/// Every simulator in this crate conserves sediment: what the terrain lost equals
/// what left the map. Sums are taken in `f64` in index order, and the error is
/// measured against `sum(|before|)`, so the check is scale-free:
///
/// ```
/// use hydraulic_erosion::{ErosionParams, Heightmap, MassBalance, erode_seeded};
///
/// let before = Heightmap::from_fn(64, 64, |x, y| ((x * 7 + y * 3) % 11) as f32 * 0.1).unwrap();
/// let mut after = before.clone();
/// let params = ErosionParams { droplets: 2_000, ..ErosionParams::default() };
/// let report = erode_seeded(&mut after, &params, 42).unwrap();
///
/// let balance = MassBalance::new(&before, &after, report.outflow);
/// assert!(balance.is_conserved(), "{balance:?}");
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct MassBalance {
    /// `sum(before)`.
    pub before: f64,
    /// `sum(after)`.
    pub after: f64,
    /// Mass that left the map, from the run's report.
    pub outflow: f64,
    /// `sum(|before|)`, the scale errors are measured against.
    pub scale: f64,
    /// Half a unit in the last place of the smallest-magnitude cell of `after`:
    /// the finest amount an `f32` map can hold, and so the floor of any balance.
    /// It matters only on small maps whose cells are all far from zero, where it
    /// can exceed `TOLERANCE * scale`.
    pub resolution: f64,
}

impl MassBalance {
    /// The crate's promise: `|error| <= 1e-9 * sum(|before|)`.
    ///
    /// The bound holds after a million droplets: each droplet is credited with
    /// the height change actually applied to each cell (old minus new, in `f64`),
    /// so the only loss left is the rounding of the final deposit of a run onto one
    /// `f32` cell, below half a unit in the last place of the cell of smallest
    /// magnitude ([`resolution`](Self::resolution), which
    /// [`is_conserved`](Self::is_conserved) also accepts: on a tiny map of cells far
    /// from zero no `f32` map can balance more finely).
    pub const TOLERANCE: f64 = 1e-9;

    /// Measures the balance between two grids of the same size (sizes are not
    /// checked: a grid of another size simply does not balance).
    pub fn new<A: AsRef<[f32]>, B: AsRef<[f32]>>(before: &Grid<A>, after: &Grid<B>, outflow: f64) -> Self {
        let finest = after.cells().iter().fold(f32::INFINITY, |m, h| m.min(h.abs()));
        Self {
            before: before.sum(),
            after: after.sum(),
            outflow,
            scale: before.sum_abs(),
            resolution: half_ulp(finest),
        }
    }

    /// `sum(before) - sum(after) - outflow`: mass unaccounted for (positive: lost).
    pub fn error(&self) -> f64 {
        self.before - self.after - self.outflow
    }

    /// `|error| / sum(|before|)` (the absolute error when the map is all zeros).
    pub fn relative_error(&self) -> f64 {
        if self.scale > 0.0 { self.error().abs() / self.scale } else { self.error().abs() }
    }

    /// Whether the error is within [`TOLERANCE`](Self::TOLERANCE) of the scale,
    /// or within the map's [`resolution`](Self::resolution) where that is coarser.
    pub fn is_conserved(&self) -> bool {
        self.is_within(Self::TOLERANCE)
    }

    /// Whether `|error| <= max(relative * sum(|before|), resolution)`.
    pub fn is_within(&self, relative: f64) -> bool {
        self.error().abs() <= (relative * self.scale).max(self.resolution)
    }
}

/// Half a unit in the last place of `value` (non-negative), in `f64`; 0 for
/// non-finite values and for empty maps.
fn half_ulp(value: f32) -> f64 {
    if !value.is_finite() {
        return 0.0;
    }
    let next = f32::from_bits(value.to_bits() + 1);
    // Past the largest finite value, one ulp is 2^-23 of it (2^-24 is half of it).
    let step = if next.is_finite() {
        f64::from(next) - f64::from(value)
    } else {
        f64::from(value) * 5.960_464_477_539_063e-8
    };
    step * 0.5
}
