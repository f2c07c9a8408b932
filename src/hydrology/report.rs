//! What a hydrology run did: the sediment books plus the water books.

use crate::report::ErosionReport;

/// What a [`Hydrology`](crate::Hydrology) run did.
///
/// `erosion` holds the sediment books, exactly as for the other simulators: the
/// terrain's mass balance is `MassBalance::of_run(&before, &after,
/// &report.erosion)`. Pool water is a separate layer and never counts as
/// terrain mass.
///
/// The water books (in particle volumes; a new particle holds 1) balance:
/// `rain == pooled + evaporated + water_outflow + dropped` within
/// [`WATER_TOLERANCE`](Self::WATER_TOLERANCE) relative to the rain, or to
/// the water the books moved ([`water_moved`](Self::water_moved)) where that
/// is larger ([`water_error`](Self::water_error),
/// [`is_water_balanced`](Self::is_water_balanced)). Every term is summed in
/// `f64` from the changes actually applied.
///
/// In `erosion`, `droplets` counts particles and `steps` descent steps; the fate
/// counts cover particles that evaporated, left the map (off the edge or into the
/// sea), hit the step limit or became unstable, (`masked`) those the controls'
/// active mask stopped, and (`stopped`) those a stopped tiled run ended where
/// they stood. Particles that ended in a pool, or
/// were stopped by a flood or spill limit, are counted here instead.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
// Fields added later read as their default from older files.
#[cfg_attr(feature = "serde", serde(default))]
#[non_exhaustive]
pub struct HydrologyReport {
    /// The sediment books: particles, steps, eroded, deposited, outflow, fates.
    pub erosion: ErosionReport,
    /// Water rained: one volume per particle.
    pub rain: f64,
    /// Net change of the water held in pools: `volume_factor` times the change of
    /// the pool map's sum. Negative when pools drained more than they gained.
    pub pooled: f64,
    /// Water evaporated by descending particles, including the last bit (at most
    /// `min_volume`) of particles that ended on the map.
    pub evaporated: f64,
    /// Water that left the map: off the edge, or through the border at sea level.
    pub water_outflow: f64,
    /// Water dropped by limits: the step limit, an unstable step, a flood that ran
    /// out of attempts, or a particle out of spills; and the water of particles
    /// the active mask stopped or a stopped tiled run ended where they stood.
    pub dropped: f64,
    /// Flood calls.
    pub floods: u64,
    /// Cells visited by flood fills, all attempts together: the flood's cost,
    /// which follows the size of the pools, not of the map.
    pub flood_cells: u64,
    /// Floods that found a drain and sent their particle on (to a lower cell or
    /// into the sea).
    pub drains: u64,
    /// Particles that ended in a pool with all their water placed.
    pub ended_in_pool: u64,
    /// Particles whose flood ran out of attempts (`max_fails`, or the internal
    /// bound of 64 attempts); their remaining water is in `dropped`.
    pub flood_failed: u64,
    /// Particles stopped after `spill` floods; their remaining water is in
    /// `dropped`.
    pub spill_limited: u64,
    /// The water the books moved: the sum of the magnitudes of every volume
    /// booked in `pooled`, `evaporated`, `water_outflow` and `dropped`, each
    /// pool change on its own. Sums of volumes that large round at their
    /// scale, so the water promise is relative to this where it exceeds the
    /// rain (sediment displacing a deep pool's water, on extreme heights, can
    /// move far more water than rained; in ordinary runs it is a few times
    /// the rain).
    pub water_moved: f64,
}

impl AsRef<ErosionReport> for HydrologyReport {
    /// The sediment books.
    fn as_ref(&self) -> &ErosionReport {
        &self.erosion
    }
}

impl HydrologyReport {
    /// The water promise: `|water_error()| <= 1e-9 * max(rain, water_moved)`.
    pub const WATER_TOLERANCE: f64 = 1e-9;

    /// `rain - pooled - evaporated - water_outflow - dropped`: water unaccounted
    /// for (positive: lost).
    pub fn water_error(&self) -> f64 {
        self.rain - self.pooled - self.evaporated - self.water_outflow - self.dropped
    }

    /// `|water_error| / max(rain, water_moved)` (the absolute error when
    /// both are 0).
    pub fn water_relative_error(&self) -> f64 {
        let scale = self.rain.max(self.water_moved);
        if scale > 0.0 { self.water_error().abs() / scale } else { self.water_error().abs() }
    }

    /// Whether the water books balance within [`WATER_TOLERANCE`](Self::WATER_TOLERANCE).
    /// False where the rain or the water moved is not finite: an infinite
    /// scale would pass any error.
    pub fn is_water_balanced(&self) -> bool {
        self.rain.is_finite()
            && self.water_moved.is_finite()
            && self.water_relative_error() <= Self::WATER_TOLERANCE
    }

    /// Adds another report's counts and volumes to this one.
    pub fn merge(&mut self, other: &HydrologyReport) {
        self.erosion.merge(&other.erosion);
        self.rain += other.rain;
        self.pooled += other.pooled;
        self.evaporated += other.evaporated;
        self.water_outflow += other.water_outflow;
        self.dropped += other.dropped;
        self.floods += other.floods;
        self.flood_cells += other.flood_cells;
        self.drains += other.drains;
        self.ended_in_pool += other.ended_in_pool;
        self.flood_failed += other.flood_failed;
        self.spill_limited += other.spill_limited;
        self.water_moved += other.water_moved;
    }
}

#[cfg(test)]
mod tests {
    use super::HydrologyReport;

    /// The books of `tests/hardening.rs`' 3 x 100 map at heights 1e30: sediment
    /// displaced 1.7e10 volumes of pool water for 10 of rain, and the `f64`
    /// sums are off by 5.1e-5, a rounding at that scale.
    #[test]
    fn the_water_promise_scales_with_the_water_moved() {
        let books = HydrologyReport {
            rain: 10.0,
            pooled: 32_212_254_721.736_076,
            evaporated: -15_032_385_531.854_864,
            water_outflow: 2.037_425_472_930_472,
            dropped: -17_179_869_181.918_69,
            ..HydrologyReport::default()
        };
        let error = books.water_error();
        assert!((error - 5.15e-5).abs() < 1e-7, "{error}");
        assert!(!books.is_water_balanced());
        let moved = HydrologyReport { water_moved: 6.4e10, ..books };
        assert_eq!(moved.water_relative_error(), error.abs() / 6.4e10);
        assert!(moved.is_water_balanced());
        // Below the rain, the rain is the scale.
        let little = HydrologyReport { water_moved: 1.0, ..books };
        assert_eq!(little.water_relative_error(), error.abs() / 10.0);
        // Nothing rained or moved: the error itself.
        let none = HydrologyReport { dropped: -1e-12, ..HydrologyReport::default() };
        assert_eq!(none.water_relative_error(), 1e-12);
        // An infinite scale passes nothing.
        assert!(!HydrologyReport { water_moved: f64::INFINITY, ..books }.is_water_balanced());
        assert!(!HydrologyReport { rain: f64::INFINITY, ..books }.is_water_balanced());
    }
}
