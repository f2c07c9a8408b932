//! Lakes apart from channels on a water surface ([`LakeStats`]).

use alloc::vec::Vec;

use super::stats::{AnalysisOptions, Drainage, sea_of};
use crate::error::Error;
use crate::grid::Grid;

/// How much of a water surface (ground plus standing water, as `Hydrology`
/// leaves it) is lake, and how flat its channels are outside the lakes.
///
/// [`TerrainStats`](super::TerrainStats) measured on a water surface counts
/// a lake's cells as channel flats: its surface is flat and water crosses
/// it. A lake is a landform of its own, so these figures tell the two apart.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct LakeStats {
    /// Share of the land cells whose surface lies above their ground (under
    /// standing water), in `[0, 1]` (0 without land). Sea cells (at or below
    /// [`AnalysisOptions::sea_level`]) are not land.
    pub water_fraction: f64,
    /// Channel cells (as [`TerrainStats`](super::TerrainStats) finds them on
    /// the surface) whose surface is their ground.
    pub dry_channel_cells: u64,
    /// Share of the dry channel cells that are flat (slope at most
    /// [`AnalysisOptions::flat_slope`] on the flat-filled surface), in
    /// `[0, 1]` (0 without dry channel cells).
    pub dry_channel_flat_fraction: f64,
}

impl LakeStats {
    /// Measures `surface` (ground plus standing water) against `ground`, with
    /// the same channels, slopes and sea as
    /// [`TerrainStats::measure`](super::TerrainStats::measure) on `surface`.
    ///
    /// # Errors
    /// [`Error::Param`] for options out of range
    /// ([`AnalysisOptions::validate`]); as [`Error::Grid`]:
    /// [`SizeMismatch`](crate::GridError::SizeMismatch) if the maps' sizes
    /// differ, [`NonFinite`](crate::GridError::NonFinite) for the first NaN
    /// or infinite cell of `surface`, then of `ground`,
    /// [`OutOfMemory`](crate::GridError::OutOfMemory) if the working buffers
    /// cannot be allocated, [`TooLarge`](crate::GridError::TooLarge) if the
    /// map has more than `u32::MAX` cells.
    pub fn measure<S: AsRef<[f32]>, T: AsRef<[f32]>>(
        surface: &Grid<S>,
        ground: &Grid<T>,
        options: &AnalysisOptions,
    ) -> Result<Self, Error> {
        options.validate()?;
        surface.check_same_size(ground)?;
        surface.check_finite()?;
        ground.check_finite()?;
        let sea = sea_of(surface, options);
        let (z, g) = (surface.cells(), ground.cells());
        let wet = |i: usize| z[i] > g[i];
        let land = (0..surface.len()).filter(|&i| !sea(i)).count();
        let water = (0..surface.len()).filter(|&i| !sea(i) && wet(i)).count();
        let drainage = Drainage::of(surface, options, &sea)?;
        let dry: Vec<usize> = drainage.channels.into_iter().filter(|&i| !wet(i)).collect();
        let flats = dry.iter().filter(|&&i| drainage.slope.cells()[i] <= options.flat_slope).count();
        let share = |part: usize, whole: usize| if whole > 0 { part as f64 / whole as f64 } else { 0.0 };
        Ok(Self {
            water_fraction: share(water, land),
            dry_channel_cells: dry.len() as u64,
            dry_channel_flat_fraction: share(flats, dry.len()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::TerrainStats;
    use crate::error::GridError;
    use crate::grid::Heightmap;

    /// Every cell with a receiver is a channel.
    fn options() -> AnalysisOptions {
        AnalysisOptions { channel_area: 1.0, ..AnalysisOptions::default() }
    }

    /// A 9 x 9 plane falling to the left border (0.25 a cell in `x`, heights
    /// `f32` holds exactly) with a hollow of three cells dug 1.0 deep in the
    /// middle row; the same with the hollow full of water to its spill level
    /// (the plane's height at its rim); and the hollow's cell count.
    fn plane_with_lake() -> (Heightmap, Heightmap, usize) {
        let w = 9;
        let plane = |x: usize| 0.25 * x as f32;
        let hollow = |x: usize, y: usize| y == 4 && (3..=5).contains(&x);
        let ground: Vec<f32> =
            (0..w * w).map(|i| plane(i % w) - if hollow(i % w, i / w) { 1.0 } else { 0.0 }).collect();
        // The lake spills over its lowest rim cell, (2, 4) at 0.5.
        let surface: Vec<f32> =
            (0..w * w).map(|i| if hollow(i % w, i / w) { plane(2) } else { ground[i] }).collect();
        (Heightmap::from_cells(w, w, surface).unwrap(), Heightmap::from_cells(w, w, ground).unwrap(), 3)
    }

    #[test]
    fn a_lake_is_water_and_the_channels_beside_it_are_graded() {
        let (surface, ground, lake) = plane_with_lake();
        let stats = LakeStats::measure(&surface, &ground, &options()).unwrap();
        assert_eq!(stats.water_fraction, lake as f64 / 81.0);
        // The plane's cells all fall 0.25 a cell to the border: none is flat,
        // and the lake's three are left out.
        assert_eq!(stats.dry_channel_flat_fraction, 0.0);
        let all = TerrainStats::measure(&surface, &options()).unwrap();
        assert_eq!(stats.dry_channel_cells, all.channel_cells - lake as u64);
        // On the surface alone the lake's three cells are flat channel cells
        // (level with each other and with the rim they drain over).
        assert_eq!(all.channel_flat_fraction, lake as f64 / all.channel_cells as f64);
    }

    #[test]
    fn without_water_the_figures_are_the_terrain_stats() {
        for seed in 1..=3 {
            let map = crate::fbm_terrain(64, 64, seed).unwrap();
            let stats = LakeStats::measure(&map, &map, &AnalysisOptions::default()).unwrap();
            let all = TerrainStats::measure(&map, &AnalysisOptions::default()).unwrap();
            assert_eq!(stats.water_fraction, 0.0);
            assert_eq!(stats.dry_channel_cells, all.channel_cells);
            assert_eq!(stats.dry_channel_flat_fraction, all.channel_flat_fraction);
        }
    }

    #[test]
    fn the_sea_is_not_land_nor_lake() {
        let (surface, ground, lake) = plane_with_lake();
        // Water over the two columns at the left border, under a sea at 0.25:
        // sea, not lake.
        let mut flooded = surface.clone();
        for y in 0..9 {
            for x in 0..2 {
                flooded.cells_mut()[y * 9 + x] = 0.25;
            }
        }
        let options = AnalysisOptions { sea_level: Some(0.25), ..options() };
        let stats = LakeStats::measure(&flooded, &ground, &options).unwrap();
        assert_eq!(stats.water_fraction, lake as f64 / 63.0);
    }

    /// A non-finite cell in either map (one the caller built by hand) is
    /// refused by name, the surface's first.
    #[test]
    fn non_finite_cells_are_refused() {
        let (surface, ground, _) = plane_with_lake();
        for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            let mut s = surface.clone();
            s.cells_mut()[4 * 9 + 5] = bad;
            let mut g = ground.clone();
            g.cells_mut()[2 * 9 + 3] = bad;
            let err = |s: &Heightmap, g: &Heightmap| LakeStats::measure(s, g, &options()).unwrap_err();
            assert_eq!(err(&s, &ground), Error::Grid(GridError::NonFinite { x: 5, y: 4 }));
            assert_eq!(err(&surface, &g), Error::Grid(GridError::NonFinite { x: 3, y: 2 }));
            assert_eq!(err(&s, &g), Error::Grid(GridError::NonFinite { x: 5, y: 4 }));
        }
    }

    #[test]
    fn maps_of_two_sizes_are_refused() {
        let a = Heightmap::new(8, 8).unwrap();
        let b = Heightmap::new(8, 9).unwrap();
        assert!(matches!(
            LakeStats::measure(&a, &b, &AnalysisOptions::default()),
            Err(Error::Grid(GridError::SizeMismatch { .. }))
        ));
    }
}
