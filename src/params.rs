//! Parameters of the `Physical` model.

use crate::channels::{Channels, Drain};
use crate::error::{ParamError, check, check_above, check_range};

/// Parameters of the [`Physical`](crate::Physical) droplet model (seeds 000 and
/// 004).
///
/// Defaults are SimpleErosion's, which erode a 256 x 256 map of heights in
/// `[0, 1]` convincingly with 200 000 droplets. Units: positions are in cells,
/// heights in map units, time in steps of `dt`. Rates are per unit of time, so
/// `dt` scales them all together.
///
/// Plain data: validated once, by [`ErosionParams::validate`], when a simulator is
/// built, never mid-run.
///
/// ```
/// use hydraulic_erosion::ErosionParams;
///
/// let params = ErosionParams { droplets: 50_000, friction: 0.1, ..ErosionParams::default() };
/// assert!(params.validate().is_ok());
///
/// let bad = ErosionParams { dt: -1.0, ..ErosionParams::default() };
/// assert_eq!(bad.validate().unwrap_err().field(), "dt");
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default, deny_unknown_fields))]
pub struct ErosionParams {
    /// Time step Δt, scaling every rate. Default 1.2; range `(0, 10]`. With
    /// [`channels`](Self::channels), per unit length: a step of one cell takes
    /// `dt * cell_size` (see [`Channels::cell_size`]).
    pub dt: f32,
    /// Water density ρ: a droplet's mass is `density * water`, so denser water
    /// accelerates more slowly. Default 1; range `(0, 1000]`.
    pub density: f32,
    /// Friction μ: velocity is multiplied by `1 - friction * dt` each step.
    /// Default 0.05; range `[0, 1/dt]`.
    pub friction: f32,
    /// Mass-transfer (deposition) rate K_d: each step moves the concentration a
    /// fraction `dt * deposition_rate` of the way to the capacity. Default 0.1;
    /// range `[0, 1/dt]`.
    pub deposition_rate: f32,
    /// Evaporation rate K_e: water is multiplied by `1 - dt * evaporation_rate` each
    /// step; the carried sediment is kept. Default 0.001; range `[0, 1/dt]`.
    pub evaporation_rate: f32,
    /// A droplet stops once its water is at most this. Default 0.01; range `(0, 1]`.
    pub min_water: f32,
    /// Vertical exaggeration applied to heights when the slope is taken (height
    /// units to cells; with [`channels`](Self::channels), to unit lengths).
    /// Default 60; range `[0, 1e6]`.
    ///
    /// Heights may be in any unit: a run is linear in height but for this
    /// slope, so heights `k` times larger (metres over a relief of `k`, say)
    /// with `height_scale / k` (and a [`Channels::sea_level`] `k` times
    /// higher) erode into the same landforms, with heights, load and books `k`
    /// times larger: bit for bit when `k` is a power of two (tested), and to
    /// the figures otherwise (a 256² landscape run in metres, relief 1 500:
    /// closed depressions 1.0 % against 0.8 %, θ 0.40 against 0.42).
    pub height_scale: f32,
    /// Droplets per run. Default 200 000; any `u32`.
    pub droplets: u32,
    /// Step limit per droplet, so that no droplet runs forever (for example with no
    /// evaporation in a pit). Default 10 000, above the ~3 840 steps the default
    /// evaporation allows, so it never binds with the defaults; range `[1, 1 000 000]`.
    /// With [`channels`](Self::channels), in unit lengths: `max_steps /
    /// cell_size` steps of one cell.
    pub max_steps: u32,
    /// Pit-safe mass transfer (off by default, to stay faithful to the seeds):
    /// erosion never lowers a cell below the cell the droplet moves to, and a
    /// droplet moving uphill fills the pit it leaves up to the next cell's height
    /// (as far as its load allows). Stops the single-cell pits the original digs.
    pub pit_safe: bool,
    /// The channel-forming mechanisms of the landscape preset (see [`Channels`]
    /// and [`ErosionParams::landscape`]). Default `None`: the seeds' model.
    pub channels: Option<Channels>,
}

impl Default for ErosionParams {
    fn default() -> Self {
        Self {
            dt: 1.2,
            density: 1.0,
            friction: 0.05,
            deposition_rate: 0.1,
            evaporation_rate: 0.001,
            min_water: 0.01,
            height_scale: 60.0,
            droplets: 200_000,
            max_steps: 10_000,
            pit_safe: false,
            channels: None,
        }
    }
}

impl ErosionParams {
    /// The largest allowed `max_steps`.
    pub const MAX_STEPS_LIMIT: u32 = 1_000_000;

    /// Droplets per cell of the landscape preset: `landscape_for` a map of `n`
    /// cells runs `n` times this many droplets.
    pub const LANDSCAPE_DROPLETS_PER_CELL: f32 = 1.5;

    /// Droplets per cell between refreshes of the discharge map in
    /// [`landscape_for`](Self::landscape_for): 1/128, `Channels::default()`'s
    /// 2 048 droplets on a 512 x 512 map. Measured on a 256 x 256 noise terrain
    /// (25.6 % closed depressions): refreshing every 2 048 droplets there left
    /// 14.7 %, every 512 (this rule) 2.9 %.
    pub const LANDSCAPE_REFRESH_PER_CELL: f32 = 1.0 / 128.0;

    /// The landscape preset: the seeds' droplet with the channel-forming
    /// mechanisms on ([`Channels::default`]), pit-safe transfer, and short lives
    /// (evaporation 0.02, at most 300 one-cell steps), which carve graded,
    /// draining valley networks out of noise (docs/landscape.md has the
    /// figures). `droplets` stays 200 000 and there is no extra rain;
    /// [`landscape_for`](Self::landscape_for) sets the droplets from the map's
    /// size and rains in rounds until the basins drain.
    pub fn landscape() -> Self {
        Self {
            evaporation_rate: 0.02,
            max_steps: 300,
            pit_safe: true,
            channels: Some(Channels::default()),
            ..Self::default()
        }
    }

    /// [`landscape`](Self::landscape) with
    /// [`LANDSCAPE_DROPLETS_PER_CELL`](Self::LANDSCAPE_DROPLETS_PER_CELL) droplets
    /// per cell of a `width` x `height` map (saturating at `u32::MAX`), and the
    /// discharge map refreshed every
    /// [`LANDSCAPE_REFRESH_PER_CELL`](Self::LANDSCAPE_REFRESH_PER_CELL) droplets
    /// per cell (2 048 at 512 x 512; at least 1): so the maps remember the same
    /// depth of rain at every map size, and rain in rounds until the basins drain
    /// ([`Drain::default`]: half a droplet a cell a round while more than 4 % of
    /// the land lies in closed depressions, at most 4 more a cell, ending early
    /// once the first basins have drained and two rounds in a row fail to shrink
    /// the room in the depressions by a tenth, by a fifth where pools alone are
    /// left; none where no basin of 0.3 % of the land holds after the first
    /// droplets).
    /// A terrain that drains with the first droplets takes no round and no more
    /// time; one whose basin holds takes rounds until it drains: on ten 512² fBm
    /// terrains, eight draws each, 69 of the 80 runs met every one of the landscape
    /// issue's targets with the rounds (the misses are slope-area fits),
    /// every run ending with at most 4.6 % of the land closed, the slowest terrain at
    /// about four times its time without; at 768² and 1024² a basin that held 16-19 % of the land
    /// closed (two thirds of the channel cells flat) ends at 3.4-4.4 %
    /// (docs/landscape.md). Set [`Channels::drain`] to `None` for the
    /// droplets alone, in a time known in advance, and where a run is one of many
    /// small ones (a few droplets a frame, or a [`Pipeline`](crate::Pipeline)'s
    /// rounds): every run with rounds rains on until its basins drain. Its lengths
    /// are in cells, so the landforms scale with the cells (on one fBm landscape θ
    /// is 0.34, 0.28 and 0.20 at 256², 512² and 1024²); for the same landforms at
    /// every size use [`landscape_world`](Self::landscape_world).
    pub fn landscape_for(width: usize, height: usize) -> Self {
        let landscape = Self::landscape();
        let refresh = droplets_per_cell(Self::LANDSCAPE_REFRESH_PER_CELL, width, height)
            .clamp(1, Channels::MAX_REFRESH);
        let channels = landscape.channels.map(|c| Channels { refresh, drain: Some(Drain::default()), ..c });
        Self {
            droplets: droplets_per_cell(Self::LANDSCAPE_DROPLETS_PER_CELL, width, height),
            channels,
            ..landscape
        }
    }

    /// The side, in unit lengths, of the world
    /// [`landscape_world`](Self::landscape_world) maps every map onto: the
    /// longer side of the map, at any number of cells. 512, the size the
    /// landscape preset's lengths were tuned at (one cell, one unit length).
    pub const LANDSCAPE_WORLD_SIDE: f32 = 512.0;

    /// The droplets' life in [`landscape_world`](Self::landscape_world), in
    /// unit lengths: 600 (600 one-cell steps at 512 cells a side, 1 200 at
    /// 1 024), twice the preset's 300 steps.
    pub const LANDSCAPE_WORLD_MAX_STEPS: u32 = 600;

    /// The landscape preset in world units, for the same landforms at every
    /// resolution: [`landscape_for`](Self::landscape_for) `width` x `height`
    /// (1.5 droplets a cell, the refresh per cell, rain in rounds until the
    /// basins drain), with the map's longer
    /// side spanning [`LANDSCAPE_WORLD_SIDE`](Self::LANDSCAPE_WORLD_SIDE)
    /// unit lengths ([`Channels::cell_size`] `512 / side`: 2 at 256 cells, 0.5
    /// at 1 024), droplets that live
    /// [`LANDSCAPE_WORLD_MAX_STEPS`](Self::LANDSCAPE_WORLD_MAX_STEPS) unit
    /// lengths. (Maps under 64 cells a side take cells of 8
    /// unit lengths, near the coarsest the preset's rates allow (8.3), and
    /// span less; maps over 2^19 cells a side take the cells of 2^19 cells
    /// and span more.)
    ///
    /// Why each: on a fine grid, droplets that end at the step limit in a
    /// river put their load down there and build pools (the longer life lets
    /// them carry it on); on a coarse one a basin may hold, which a round of
    /// rain cuts open. On three fBm terrains, two draws each, sampled at 256,
    /// 512 and 1 024 cells a side, 11 of the 12 pairs against 512² kept θ
    /// within 0.05 and closed depressions within 0.02 (7 of 12 with the
    /// preset's 300 steps, 10 with the longer life alone), and every run ended
    /// with at most 3.5 % of the land closed (docs/landscape.md). The longer
    /// life costs time: a quarter to two fifths more at 512², and a 1 024²
    /// map took 43-57 s on two threads of a Zen 3 EPYC.
    ///
    /// ```
    /// use hydraulic_erosion::{Drain, ErosionParams};
    ///
    /// let params = ErosionParams::landscape_world(1024, 512);
    /// let channels = params.channels.unwrap();
    /// assert_eq!(channels.cell_size, 0.5);
    /// assert_eq!(channels.drain, Some(Drain::default()));
    /// assert_eq!(params.max_steps, 600);
    /// assert_eq!(params.droplets, ErosionParams::landscape_for(1024, 512).droplets);
    /// ```
    pub fn landscape_world(width: usize, height: usize) -> Self {
        let sized = Self::landscape_for(width, height);
        // Cells coarser than 8 unit lengths would take more than one step's
        // worth of the preset's rates (`dt * deposition_rate * 8` is 0.96),
        // and finer than 2^-10 would need more than `MAX_STEPS_LIMIT` steps.
        let side = width.max(height).clamp(64, 1 << 19) as f32;
        let channels = sized.channels.map(|c| Channels { cell_size: Self::LANDSCAPE_WORLD_SIDE / side, ..c });
        Self { max_steps: Self::LANDSCAPE_WORLD_MAX_STEPS, channels, ..sized }
    }

    /// These params with `per_cell` droplets for each cell of a `width` x
    /// `height` map: rain given per area, so one setting holds at every map
    /// size. Rounded to nearest; a negative or NaN `per_cell` gives none, and
    /// the count saturates at `u32::MAX`.
    ///
    /// ```
    /// use hydraulic_erosion::ErosionParams;
    ///
    /// let params = ErosionParams::default().with_droplets_per_cell(3.0, 256, 256);
    /// assert_eq!(params.droplets, 196_608);
    /// let sized = ErosionParams::landscape_for(512, 512);
    /// assert_eq!(ErosionParams::landscape().with_droplets_per_cell(1.5, 512, 512).droplets, sized.droplets);
    /// ```
    #[must_use]
    pub fn with_droplets_per_cell(self, per_cell: f32, width: usize, height: usize) -> Self {
        Self { droplets: droplets_per_cell(per_cell, width, height), ..self }
    }

    /// Checks every field against its documented range.
    ///
    /// # Errors
    /// A [`ParamError`] naming the first field out of range and the range allowed.
    pub fn validate(&self) -> Result<(), ParamError> {
        check_above(self.dt, 0.0, 10.0, "dt", "finite and in (0, 10]")?;
        check_above(self.density, 0.0, 1000.0, "density", "finite and in (0, 1000]")?;
        let rate = |value: f32, field, allowed| {
            check_range(value, 0.0, f32::MAX, field, allowed)?;
            if value * self.dt <= 1.0 { Ok(()) } else { Err(ParamError::new(field, allowed)) }
        };
        rate(self.friction, "friction", "finite, >= 0 and at most 1/dt")?;
        rate(self.deposition_rate, "deposition_rate", "finite, >= 0 and at most 1/dt")?;
        rate(self.evaporation_rate, "evaporation_rate", "finite, >= 0 and at most 1/dt")?;
        check_above(self.min_water, 0.0, 1.0, "min_water", "finite and in (0, 1]")?;
        check_range(self.height_scale, 0.0, 1.0e6, "height_scale", "finite and in [0, 1e6]")?;
        check((1..=Self::MAX_STEPS_LIMIT).contains(&self.max_steps), "max_steps", "in [1, 1000000]")?;
        let Some(channels) = self.channels else { return Ok(()) };
        channels.validate()?;
        // A landscape step's rates are per `cell_size` of unit length, and its
        // step limit counts unit lengths: both must stay in range per cell.
        let length = channels.cell_size;
        let dt = self.dt * length;
        let per_cell = [self.friction, self.deposition_rate, self.evaporation_rate];
        check(
            length <= 1.0 || per_cell.iter().all(|&rate| rate * dt <= 1.0),
            "channels.cell_size",
            "at most 1 / (dt * each of friction, deposition_rate and evaporation_rate)",
        )?;
        check(
            f64::from(self.max_steps) / f64::from(length) <= f64::from(Self::MAX_STEPS_LIMIT),
            "channels.cell_size",
            "at least max_steps / 1000000",
        )
    }
}

/// `per_cell` droplets for each of `width * height` cells, rounded, saturating
/// (none for a negative or NaN `per_cell`).
pub(crate) fn droplets_per_cell(per_cell: f32, width: usize, height: usize) -> u32 {
    let cells = width as f64 * height as f64;
    let droplets = (f64::from(per_cell) * cells + 0.5) as u64;
    u32::try_from(droplets).unwrap_or(u32::MAX)
}
