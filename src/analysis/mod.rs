//! Terrain analysis: what a landscape's drainage looks like, measured the way
//! geomorphologists measure real ones (feature-free, `no_std` + `alloc`).
//!
//! - [`fill_depressions`]: priority-flood depression filling (Barnes, Lehman &
//!   Mulla 2014), flat or with an epsilon gradient, and the depth of every
//!   closed depression;
//! - [`FlowField`]: D8 flow directions (steepest descent), drainage area
//!   (optionally weighted by a rain map), the longest flow path upstream, and
//!   the slope along the flow;
//! - [`PowerLawFit`]s: slope-area (Flint's law `S = k A^-θ`), the drainage-area
//!   exceedance exponent (`P(A >= a) ~ a^-β`) and Hack's law (`L ~ A^h`);
//! - [`count_pits`] and [`TerrainStats`], the one-call summary the crate's own
//!   benchmarks use to show what erosion does;
//! - [`LakeStats`]: a water surface's lakes told from its channels (the share
//!   under water, and the channel flats outside it).
//!
//! Real fluvial landscapes have θ of about 0.35 to 0.6 with a tight fit, β of
//! about 0.43, h of 0.5 to 0.6, closed depressions over a few percent of the
//! land and few single-cell pits; noise has none of that.
//!
//! The map border is the outlet everywhere: water reaching it leaves the map.
//! With a [`sea_level`](AnalysisOptions::sea_level) (an island in its sea) the
//! sea is an outlet too, base level as in real DEM analysis, and the figures
//! cover the land only ([`fill_depressions_to`] and [`FlowField::d8_to`] take
//! any such outlets).
//! Every function is linear in the cells, or `n log n` for the fill's priority
//! queue, and none recurses: a 4096 x 4096 map takes seconds.
//!
//! ```
//! use hydraulic_erosion::analysis::{AnalysisOptions, TerrainStats};
//! use hydraulic_erosion::fbm_terrain;
//!
//! let map = fbm_terrain(128, 128, 1)?;
//! let stats = TerrainStats::measure(&map, &AnalysisOptions::default())?;
//! assert!(stats.depression_fraction > 0.0 && stats.depression_fraction < 1.0);
//!
//! // An island in a flat sea at 0: measure the land, the sea as base level.
//! let island = hydraulic_erosion::island_terrain(128, 128, 4)?;
//! let options = AnalysisOptions { sea_level: Some(0.0), ..AnalysisOptions::default() };
//! let land = TerrainStats::measure(&island, &options)?;
//! assert!(land.land_cells > 0 && land.land_cells < 128 * 128);
//! # Ok::<(), hydraulic_erosion::Error>(())
//! ```

mod fill;
mod fit;
mod flow;
mod lakes;
mod stats;

pub use fill::{Fill, FilledSurface, fill_depressions, fill_depressions_to};
pub use fit::PowerLawFit;
pub use flow::{FlowField, NO_RECEIVER};
pub use lakes::LakeStats;
pub use stats::{AnalysisOptions, TerrainStats, count_pits};

use crate::error::GridError;
use crate::neighbours::for_each_neighbour;

/// Refuses a map with more cells than the analysis numbers: cells are
/// indexed in 32 bits (the queue's keys, the receivers), `u32::MAX` being
/// [`NO_RECEIVER`].
fn indexable(width: usize, height: usize) -> Result<(), GridError> {
    match width.checked_mul(height) {
        Some(n) if n <= u32::MAX as usize => Ok(()),
        _ => Err(GridError::TooLarge { width, height }),
    }
}

/// Whether cell `i` lies on the map's border (an outlet).
#[inline]
fn on_border(i: usize, width: usize, height: usize) -> bool {
    let (x, y) = (i % width, i / width);
    x == 0 || y == 0 || x + 1 == width || y + 1 == height
}

#[cfg(test)]
mod tests {
    use super::indexable;
    use crate::error::GridError;

    /// The analysis takes up to `u32::MAX` cells (65 535 x 65 537 is exactly
    /// that) and refuses more with a typed error, an overflowing count too.
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn more_cells_than_u32_indices_are_refused() {
        assert_eq!(indexable(65_535, 65_537), Ok(()));
        assert_eq!(indexable(1, u32::MAX as usize), Ok(()));
        for (w, h) in [(65_536, 65_536), (65_536, 65_537), (1, u32::MAX as usize + 1), (usize::MAX, 2)] {
            assert_eq!(indexable(w, h), Err(GridError::TooLarge { width: w, height: h }));
        }
    }
}
