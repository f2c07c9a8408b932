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
}

impl MassBalance {
    /// The crate's promise: `|error| <= 1e-9 * sum(|before|)`.
    ///
    /// The bound holds after a million droplets: each droplet is credited with
    /// the height change actually applied to each cell (old minus new, in `f64`),
    /// so the only loss left is the rounding of the final deposit of a run onto one
    /// `f32` cell, below half a unit in the last place of the cell of smallest
    /// magnitude.
    pub const TOLERANCE: f64 = 1e-9;

    /// Measures the balance between two grids of the same size (sizes are not
    /// checked: a grid of another size simply does not balance).
    pub fn new<A: AsRef<[f32]>, B: AsRef<[f32]>>(before: &Grid<A>, after: &Grid<B>, outflow: f64) -> Self {
        Self { before: before.sum(), after: after.sum(), outflow, scale: before.sum_abs() }
    }

    /// `sum(before) - sum(after) - outflow`: mass unaccounted for (positive: lost).
    pub fn error(&self) -> f64 {
        self.before - self.after - self.outflow
    }

    /// `|error| / sum(|before|)` (the absolute error when the map is all zeros).
    pub fn relative_error(&self) -> f64 {
        if self.scale > 0.0 { self.error().abs() / self.scale } else { self.error().abs() }
    }

    /// Whether the error is within [`TOLERANCE`](Self::TOLERANCE).
    pub fn is_conserved(&self) -> bool {
        self.is_within(Self::TOLERANCE)
    }

    /// Whether `|error| <= relative * sum(|before|)`.
    pub fn is_within(&self, relative: f64) -> bool {
        self.error().abs() <= relative * self.scale
    }
}
