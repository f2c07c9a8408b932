//! Parameters of the `Snowball` model.

use crate::error::{ParamError, check, check_above, check_range};
use crate::math;

/// Parameters of the [`Snowball`](crate::Snowball) model (seed 001).
///
/// Defaults are the original program's (Job Talle's island generator, which the
/// seed describes). Units: positions and speeds are in cells; heights and the
/// erosion rate in map height units, with `height_scale` relating the two.
///
/// The original works on a terrain whose heights are in world units and whose
/// cells are 0.1 world units wide; a slope there is `Δh / 0.1` per cell, hence the
/// default `height_scale` of 10. A map in those units erodes exactly as there; for
/// a map of heights in `[0, 1]`, either scale the heights to the relief you mean
/// (the examples raise [`island_terrain`](crate::island_terrain) to 10 units, an
/// island like the original's) or scale `height_scale` up and `erosion_rate` down
/// by the same factor, which gives the same run in other units (heights `k`
/// times larger with `height_scale / k` and `erosion_rate * k`: the same run,
/// `k` times larger, bit for bit for a power of two `k`; tested).
///
/// Plain data: validated once, by [`SnowballParams::validate`], when a simulator
/// is built, never mid-run.
///
/// ```
/// use hydraulic_erosion::SnowballParams;
///
/// let params = SnowballParams { snowballs: Some(50_000), ..SnowballParams::default() };
/// assert_eq!(params.count(354, 354), 50_000);
/// assert_eq!(SnowballParams::default().count(256, 256), 26_214); // 0.4 per cell
///
/// let bad = SnowballParams { friction: 1.5, ..SnowballParams::default() };
/// assert_eq!(bad.validate().unwrap_err().field(), "friction");
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default, deny_unknown_fields))]
pub struct SnowballParams {
    /// Snowballs per map cell, when `snowballs` is `None`: a run drops
    /// `drops_per_cell * width * height` of them, rounded to nearest (halves up). Default 0.4; range
    /// `[0, 1000]`.
    pub drops_per_cell: f32,
    /// An exact snowball count for a run, overriding `drops_per_cell` (the
    /// article's figures use 35 000, 50 000 and 100 000). Default `None`.
    pub snowballs: Option<u32>,
    /// Erosion per step on a vertical wall, in height units: a step takes
    /// `erosion_rate * (1 - n.y) * min(1, i * iteration_scale)`, whatever the
    /// snowball carries and however deep the cell already lies (the seed's
    /// model has no floor: large rates, or a large erodibility, dig deep, with
    /// finite heights and the books exact). Default 0.04;
    /// range `[0, 1e6]`.
    pub erosion_rate: f32,
    /// Fraction of the load put down per step on flat ground: a step deposits
    /// `load * deposition_rate * n.y`. Default 0.03; range `[0, 1]`.
    pub deposition_rate: f32,
    /// Acceleration along the slope, in cells per step per unit of `n.xz`:
    /// `v = friction * v + n.xz * speed`. Default 0.15; range `(0, 1000]`.
    pub speed: f32,
    /// Fraction of the velocity kept from one step to the next (the original's
    /// `friction`; 0 forgets it at once, 1 keeps all of it). Default 0.7; range
    /// `[0, 1]`.
    pub friction: f32,
    /// Radius of the per-snowball sampling offset, in unit lengths (cells at
    /// the default `cell_size` of 1): each snowball reads
    /// the slope at a fixed offset drawn in `[-radius, radius]²`, which keeps
    /// paths from all converging. Default 0.8; range `[0, 1e6]`.
    pub radius: f32,
    /// Step limit per snowball. Default 80; range `[1, 1 000 000]`.
    pub max_iterations: u32,
    /// Erosion ramp: step `i` (from 0) erodes `min(1, i * iteration_scale)` of
    /// the full rate, so fresh snowballs do not dig craters where they land.
    /// Default 0.04 (full strength from step 25); range `[0, 1]`.
    pub iteration_scale: f32,
    /// Vertical exaggeration: a rise of `Δh` from one cell to the next is a slope
    /// of `height_scale * Δh`. Default 10 (the original's cells are 0.1 height
    /// units wide); range `(0, 1e6]`.
    pub height_scale: f32,
    /// Blur the map after the run with seed 001's 3 x 3 Gaussian, in its
    /// mass-conserving form ([`blur`](crate::blur), one full pass). Default
    /// `true`, as the original.
    pub blur: bool,
    /// The side of a cell in the params' unit length (world units). Default
    /// 1: every length in cells, the original's params as they are. Slopes
    /// are height over `cell_size` (`height_scale` per unit length), and
    /// `speed` and `radius` are in unit lengths: a snowball moves `v /
    /// cell_size` cells a step and reads the slope up to `radius / cell_size`
    /// cells from where it is. Rates per step, friction and the step limit
    /// stay per step, and a snowball still writes to the 4 cells around it
    /// (its gullies are a few cells wide at any size). For the same landscape
    /// at another resolution: its extent over the map's side. Range `(0,
    /// 1e6]`, and the lengths it gives in cells must keep their own ranges
    /// (else a [`ParamError`] names `cell_size`).
    pub cell_size: f32,
}

impl Default for SnowballParams {
    fn default() -> Self {
        Self {
            drops_per_cell: 0.4,
            snowballs: None,
            erosion_rate: 0.04,
            deposition_rate: 0.03,
            speed: 0.15,
            friction: 0.7,
            radius: 0.8,
            max_iterations: 80,
            iteration_scale: 0.04,
            height_scale: 10.0,
            blur: true,
            cell_size: 1.0,
        }
    }
}

impl SnowballParams {
    /// The largest allowed `max_iterations`.
    pub const MAX_ITERATIONS_LIMIT: u32 = 1_000_000;

    /// Checks every field against its documented range.
    ///
    /// # Errors
    /// A [`ParamError`] naming the first field out of range and the range allowed.
    pub fn validate(&self) -> Result<(), ParamError> {
        check_range(self.drops_per_cell, 0.0, 1000.0, "drops_per_cell", "finite and in [0, 1000]")?;
        check_range(self.erosion_rate, 0.0, 1.0e6, "erosion_rate", "finite and in [0, 1e6]")?;
        check_range(self.deposition_rate, 0.0, 1.0, "deposition_rate", "finite and in [0, 1]")?;
        check_above(self.speed, 0.0, 1000.0, "speed", "finite and in (0, 1000]")?;
        check_range(self.friction, 0.0, 1.0, "friction", "finite and in [0, 1]")?;
        check_range(self.radius, 0.0, 1.0e6, "radius", "finite and in [0, 1e6] unit lengths")?;
        check(
            (1..=Self::MAX_ITERATIONS_LIMIT).contains(&self.max_iterations),
            "max_iterations",
            "in [1, 1000000]",
        )?;
        check_range(self.iteration_scale, 0.0, 1.0, "iteration_scale", "finite and in [0, 1]")?;
        check_above(self.height_scale, 0.0, 1.0e6, "height_scale", "finite and in (0, 1e6]")?;
        check_above(self.cell_size, 0.0, 1.0e6, "cell_size", "finite and in (0, 1e6]")?;
        let cells = self.in_cells();
        check(
            cells.speed > 0.0
                && cells.speed <= 1000.0
                && cells.height_scale > 0.0
                && cells.height_scale <= 1.0e6
                && cells.radius <= 1.0e6,
            "cell_size",
            "one that keeps speed / cell_size in (0, 1000], height_scale / cell_size in (0, 1e6] and radius / cell_size at most 1e6",
        )
    }

    /// These params with every length in cells (`cell_size` 1): `height_scale`,
    /// `speed` and `radius` over `cell_size`. The run takes its steps with
    /// these; with `cell_size` 1 they are the params themselves, bit for bit.
    pub fn in_cells(&self) -> Self {
        let c = self.cell_size;
        Self {
            height_scale: self.height_scale / c,
            speed: self.speed / c,
            radius: self.radius / c,
            cell_size: 1.0,
            ..*self
        }
    }

    /// Snowballs a run drops on a `width` x `height` map: `snowballs` if set,
    /// else `drops_per_cell * width * height` rounded to nearest (halves up).
    pub fn count(&self, width: usize, height: usize) -> u64 {
        match self.snowballs {
            Some(n) => u64::from(n),
            // Rounded half up; `as` saturates on absurd sizes.
            None => {
                math::floor_f64(f64::from(self.drops_per_cell) * width as f64 * height as f64 + 0.5) as u64
            }
        }
    }
}
