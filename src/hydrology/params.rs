//! Parameters of the `Hydrology` simulator.

use crate::error::{ParamError, check, check_above, check_range};

/// Parameters of the [`Hydrology`](crate::Hydrology) simulator (seed 002).
///
/// Defaults are the original program's (dt 1.2, density 1, evaporation 0.001,
/// deposition 0.08, min volume 0.01, friction 0.1, drainage 0.001, lrate 0.01,
/// height scale 40, 250 particles between stream-map updates), except a volume
/// factor of 10 (the original's 100 leaves basins a tenth full) and 100 spills
/// (the original's 5 drops the water of chains of lakes), plus additions, each
/// on by default and each switchable back to the article's plain behaviour:
/// `entrainment` (set 0 for the article's capacity) and `pit_safe` (set
/// `false`) from `../shared/SPEC.md` section 5; `exact_flood` (`false`: the
/// article's test planes, with `spill` 20), which fills pools to their exact
/// level or true sill in a fraction of the test planes' walk; `stall_in_pits`,
/// `outlet_erosion` (0), `spill_speed` (0) and `open_border` (`false`), which
/// let basins fill and drain; `settle_pits` (`false`), which settles the dry
/// pits a run made; and the stream map's `channel_area` (the article's visit
/// map saturates; no setting restores it).
/// Units as for [`ErosionParams`](crate::ErosionParams): positions in cells, heights
/// in map units, time in steps of `dt`; water in particle volumes (a new particle
/// holds 1: the rain on one cell). With a `cell_size` other than 1 lengths,
/// speeds and times are in the params' unit length instead (world units;
/// `channel_area` stays in cells; see [`HydrologyParams::cell_size`]).
///
/// Validated once, by [`HydrologyParams::validate`], when the simulator is built.
///
/// ```
/// use hydraulic_erosion::HydrologyParams;
///
/// let params = HydrologyParams { particles: 10_000, sea_level: Some(0.1), ..Default::default() };
/// assert!(params.validate().is_ok());
///
/// let bad = HydrologyParams { drainage: 2.0, ..Default::default() };
/// assert_eq!(bad.validate().unwrap_err().field(), "drainage");
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default, deny_unknown_fields))]
pub struct HydrologyParams {
    /// Time step Δt, scaling every rate. Default 1.2; range `(0, 10]`.
    pub dt: f32,
    /// Water density: a particle's mass is `density * volume`. Default 1; range
    /// `(0, 1000]`.
    pub density: f32,
    /// Friction: velocity is multiplied by `1 - dt * friction * (1 - 0.5 * stream)`
    /// each step, so established streams slow particles less (seed 002). Default
    /// 0.1; range `[0, 1/dt]`.
    pub friction: f32,
    /// Mass-transfer rate K_d, lowered by root density: the effective rate is
    /// `deposition_rate * (1 - vegetation)`. Default 0.08; range `[0, 1/dt]`.
    pub deposition_rate: f32,
    /// Evaporation rate: volume is multiplied by
    /// `1 - dt * evaporation_rate * (1 - 0.2 * stream)` each step; the carried
    /// sediment is kept. Default 0.001; range `[0, 1/dt]`.
    pub evaporation_rate: f32,
    /// A particle ends once its volume is at most this; the rest is booked as
    /// evaporated. Default 0.01; range `(0, 1]`.
    pub min_volume: f32,
    /// Vertical exaggeration applied to heights when the slope is taken. Default
    /// 40; range `[0, 1e6]`.
    ///
    /// Heights may be in any unit: heights `k` times larger with
    /// `height_scale / k`, [`volume_factor`](Self::volume_factor)` / k` and a
    /// [`sea_level`](Self::sea_level) `k` times higher give the same run, with
    /// heights, pools and load `k` times larger and the same water books (bit
    /// for bit when `k` is a power of two: tested).
    pub height_scale: f32,
    /// Particles per run. Default 100 000; any `u32`.
    pub particles: u32,
    /// Particles between two stream-map updates (and two rounds of tree growth):
    /// the original's 250 particles per frame. Default 250; range `[1, u32::MAX]`.
    pub batch: u32,
    /// Stream-map adaptation rate: after each batch,
    /// `stream = (1 - lrate) * stream + lrate * flow`, where `flow` is the water
    /// that crossed the cell in the batch over what a catchment of
    /// `channel_area` cells sends (see `channel_area`). Default 0.01; range
    /// `[0, 1]`.
    pub lrate: f32,
    /// Catchment, in cells, of a cell whose stream map settles at 1: the
    /// stream map is the water that crossed a cell (one particle volume a step)
    /// per batch, times `cells / (particles in the batch * channel_area)`, so it
    /// grows with the drainage area instead of saturating at "visited". The
    /// friction and evaporation rules read it clamped to `[0, 1]`; channel
    /// grading, the stall rule (`stall_stream`) and the trees' thresholds read
    /// it as it is. Default 200; range
    /// `[1e-3, 1e9]`.
    pub channel_area: f32,
    /// Outlet erosion: water spilling from a pool cuts the pool's sill (the
    /// lowest pool cell beside the drain) by this share of the drop from the
    /// sill to the drain per particle volume (at most the whole drop, never
    /// below the drain), and carries the cut away, so lakes incise their
    /// outlets and drain over time. Default 0.1; range `[0, 1e6]` (0: the
    /// article, whose sills never wear).
    pub outlet_erosion: f32,
    /// Speed, in cells per unit time, at which a particle spilling from a pool
    /// leaves it: it starts on the drain moving away from the sill, so that
    /// it runs on downstream rather than rolling back into the pool it left;
    /// one that spills to the same drain twice in a row first runs down the
    /// outlet's steepest descent, up to 8 cells. Default 1; range `[0, 100]`
    /// (0: at rest and no run-out, the article).
    pub spill_speed: f32,
    /// Volume factor: how flooding turns volume into water level. A pool depth of
    /// `d` over one cell holds `volume_factor * d` of water. Default 10 (the
    /// article: 100); range
    /// `[1e-3, 1e9]` (below it one particle's water would stand more than 1000
    /// height units deep on a cell, and a subnormal factor overflows the depth).
    pub volume_factor: f32,
    /// Drainage: when a flood finds a drain, the water level moves this fraction
    /// of the way down to the drain (slowly, to keep levels stable), but never
    /// below the pool's sill (the lowest pool cell beside the drain), so a
    /// spilling lake rests at its outlet. Default 0.001;
    /// range `[0, 1]`.
    pub drainage: f32,
    /// Exact floods: a flood grows the pool from where the particle stalled
    /// one cell at a time, lowest water surface first (a priority flood), so
    /// it finds the level that holds the particle's water, or the sill the
    /// pool spills over, in one walk of the pool and its rim, and a pool
    /// fills to its true sill (the highest ground on its lowest way out).
    /// The article's test planes (`approach`, `max_fails`) walk every cell
    /// under each plane they try (most floods fill a small hollow and spill,
    /// yet walk hundreds of cells beyond its sill), and fill a spilling pool
    /// only to the ground beside the drain they find. Exact floods spill
    /// once per hollow on the way down, so they take a larger `spill` (100;
    /// at 20 fBm's slope-area fit loosened). Default `true`; `false` is the
    /// article's test planes (with `spill` 20, their default before).
    pub exact_flood: bool,
    /// Approach factor of the flood's test plane (`exact_flood` off): each
    /// attempt raises (or lowers) the plane by this fraction of the volume
    /// difference spread over the pool. Default 0.5; range `(0, 1]`.
    pub approach: f32,
    /// Failed flood attempts (test plane too high; `exact_flood` off) before a
    /// particle's remaining volume is dropped. Default 10; range `[1, 1000]`.
    pub max_fails: u32,
    /// How many times a particle may flood and spill out of a pool to a drain
    /// before it is stopped (its remaining volume dropped). A particle that stalls
    /// on dry ground and moves on to a lower neighbour holds no pool and does not
    /// spill. Default 100 (exact floods spill once per hollow on the way
    /// down; the test planes took 20; the article: 5); range `[1, 1000]`.
    pub spill: u32,
    /// Step limit per particle (all its descents, plus one per move off a dry
    /// stall), so that no particle runs forever. Default 10 000, above the ~3 840
    /// steps the default evaporation allows; range `[1, 1 000 000]`.
    pub max_steps: u32,
    /// A particle stalls into a flood when the stream map at its cell is at least
    /// this and its acceleration is below `stall_acceleration` (seed 002: "slow on
    /// a stream"). Default 0.5; range `[0, 1e6]` (0: stall anywhere).
    pub stall_stream: f32,
    /// See `stall_stream`: acceleration (force over mass) below which a particle
    /// on a stream stalls. Default 0.01; range `[0, 1e6]`.
    pub stall_acceleration: f32,
    /// A particle standing on a local minimum of the water surface (no neighbour
    /// lower) stalls into a flood there, wherever the stream map is: without it
    /// a particle rocks in a dry hollow until it evaporates, and closed basins
    /// never fill. Default `true`; `false` is the article (stall only on streams).
    pub stall_in_pits: bool,
    /// Channel grading (SPEC 5, the author's later versions): the capacity is
    /// multiplied by `1 + entrainment * erf(0.4 * stream)`, so established channels
    /// carry more and grade their slope as their catchment grows. Default 10;
    /// range `[0, 1000]` (0: the article's capacity).
    pub entrainment: f32,
    /// Pit-safe mass transfer: erosion never lowers a cell below the cell the
    /// particle moves to (nor its lowest neighbour), and a particle moving uphill
    /// fills the pit it leaves. Default `true` (SPEC 5); `false` is the article.
    pub pit_safe: bool,
    /// Trees: spawn, spread and die, writing root density to the vegetation map,
    /// which lowers mass transfer. Default `true`; `false` leaves the vegetation
    /// map as it is.
    pub trees: bool,
    /// Whether the run ends by settling the single-cell pits it made on dry
    /// ground: each interior dry cell lower than all 8 neighbours, where it
    /// or its lowest neighbour (also dry) changed during the run, meets that
    /// neighbour halfway, the two ending level (mass moved and booked, none
    /// lost), in row order, as the landscape preset's
    /// [`Channels::settle_pits`](crate::Channels::settle_pits) does. The
    /// particles' deposits leave such pits (0.25 % of an island's land, more
    /// than its noise had); the input's own pits and every pool stay.
    /// Default `true`; `false` is the article.
    pub settle_pits: bool,
    /// Open border: a pool that reaches the map border spills off the map there,
    /// as water running off the edge does, so a lake never rises above the lowest
    /// border cell it touches. Default `true`; `false` is the article's walls
    /// (pools rise against the border). A `sea_level` takes precedence.
    pub open_border: bool,
    /// Sea level: when set, every cell whose ground is at or below it is sea, and
    /// the map border drains at this level. A particle that enters the sea (or
    /// rains on it) leaves the map there with its water and load (booked as
    /// outflow), less what it puts down as a delta
    /// ([`sea_deltas`](Self::sea_deltas)); a flood that reaches the sea drains
    /// into it, and a pool open to the border rises no higher than the level. No
    /// water stands in the sea, so floods never walk it. Default `None` (the
    /// border as `open_border` says); a set level must be finite.
    pub sea_level: Option<f32>,
    /// Deltas at the coast, with a `sea_level`: the sea counts at its level for
    /// the step into it (a shore is not cut below the water, as beside a pool),
    /// and a particle entering the sea puts down on the sea cell what one step in
    /// still water deposits, `dt * deposition_rate` of its load, raising the cell
    /// no higher than the one it came from; the rest leaves with its water. River
    /// mouths build land out into the sea, the rivers grow across it and join.
    /// Default `true`; `false`: the sea floor counts, and the whole load leaves
    /// (before 2026-11-26). No effect without a sea.
    pub sea_deltas: bool,
    /// The side of a cell in the params' unit length (world units), so that the
    /// same params give the same landforms on the same landscape sampled at
    /// any resolution (give the rain per cell, with
    /// [`with_particles_per_cell`](Self::with_particles_per_cell): a particle
    /// is the rain on one cell). Default 1: every length in cells, the params
    /// as they are, bit for bit. Otherwise a step still moves a particle about
    /// one cell and takes `dt * cell_size` of time (friction, evaporation and
    /// mass transfer per step scale with it); slopes are height over
    /// `cell_size` (`height_scale` per unit length); speeds (`spill_speed`)
    /// and accelerations (`stall_acceleration`) are per unit length;
    /// `max_steps`, the run-out and a delta's reach (8 cells at 1) count unit
    /// lengths; and the stream map takes in `batch` particles per
    /// `cell_size²` of area, so it adapts at the same rate per rainfall. Kept
    /// per cell and per particle, as measured (docs/landscape.md): the
    /// channels a particle cuts are a few cells wide at any resolution, and
    /// `channel_area` stays in cells (as an area, Flint's θ fell by 0.08-0.12
    /// at 256² and 1024²); `drainage` and `outlet_erosion` stay per particle
    /// (a lake's outlet is a cell); trees stay a cell's size, one seeded per
    /// batch (the article's). [`HydrologyParams::in_cells`] gives the params
    /// a run steps with. Range `(0, 1e6]`, and the params in cells must keep
    /// their own ranges (else a [`ParamError`] names `cell_size`).
    pub cell_size: f32,
}

impl Default for HydrologyParams {
    fn default() -> Self {
        Self {
            dt: 1.2,
            density: 1.0,
            friction: 0.1,
            deposition_rate: 0.08,
            evaporation_rate: 0.001,
            min_volume: 0.01,
            height_scale: 40.0,
            particles: 100_000,
            batch: 250,
            lrate: 0.01,
            channel_area: 200.0,
            outlet_erosion: 0.1,
            spill_speed: 1.0,
            volume_factor: 10.0,
            drainage: 0.001,
            exact_flood: true,
            approach: 0.5,
            max_fails: 10,
            spill: 100,
            max_steps: 10_000,
            stall_stream: 0.5,
            stall_acceleration: 0.01,
            stall_in_pits: true,
            entrainment: 10.0,
            pit_safe: true,
            settle_pits: true,
            trees: true,
            open_border: true,
            sea_level: None,
            sea_deltas: true,
            cell_size: 1.0,
        }
    }
}

impl HydrologyParams {
    /// The largest allowed `max_steps`.
    pub const MAX_STEPS_LIMIT: u32 = 1_000_000;

    /// These params with `per_cell` particles for each cell of a `width` x
    /// `height` map: rain given per area, so one setting holds at every map
    /// size. Rounded to nearest; a negative or NaN `per_cell` gives none, and
    /// the count saturates at `u32::MAX`.
    ///
    /// ```
    /// use hydraulic_erosion::HydrologyParams;
    ///
    /// let params = HydrologyParams::default().with_particles_per_cell(3.0, 512, 512);
    /// assert_eq!(params.particles, 786_432);
    /// ```
    #[must_use]
    pub fn with_particles_per_cell(self, per_cell: f32, width: usize, height: usize) -> Self {
        Self { particles: crate::params::droplets_per_cell(per_cell, width, height), ..self }
    }

    /// Checks every field against its documented range.
    ///
    /// # Errors
    /// A [`ParamError`] naming the first field out of range and the range allowed.
    pub fn validate(&self) -> Result<(), ParamError> {
        self.validate_fields()?;
        check_above(self.cell_size, 0.0, 1.0e6, "cell_size", "finite and in (0, 1e6]")?;
        let cells = self.in_cells();
        check(
            cells.validate_fields().is_ok(),
            "cell_size",
            "one whose params in cells keep their ranges (rates times dt * cell_size at most 1, \
             height_scale / cell_size at most 1e6, spill_speed / cell_size at most 100, \
             max_steps / cell_size at most 1000000)",
        )
    }

    /// These params with every length in cells (`cell_size` 1), the ones a run
    /// steps with: `dt` times `cell_size`; `density` times it (a force per
    /// unit length is `1 / cell_size` of it per cell); `height_scale`,
    /// `spill_speed` and `stall_acceleration` over it; `max_steps` over it
    /// (rounded, at least 1 and at most [`MAX_STEPS_LIMIT`](Self::MAX_STEPS_LIMIT));
    /// `batch` over its square (rounded, at least 1). With `cell_size` 1 they
    /// are the params themselves, bit for bit.
    #[must_use]
    pub fn in_cells(&self) -> Self {
        let c = self.cell_size;
        if c == 1.0 {
            return *self;
        }
        let area = c * c;
        let count = |n: u32, per: f32, max: u32| -> u32 {
            rounded_count(f64::from(n) / f64::from(per), u64::from(max)) as u32
        };
        Self {
            dt: self.dt * c,
            density: self.density * c,
            height_scale: self.height_scale / c,
            spill_speed: self.spill_speed / c,
            stall_acceleration: self.stall_acceleration / c,
            max_steps: count(self.max_steps, c, Self::MAX_STEPS_LIMIT),
            batch: count(self.batch, area, u32::MAX),
            cell_size: 1.0,
            ..*self
        }
    }

    /// Every field but `cell_size` against its range.
    fn validate_fields(&self) -> Result<(), ParamError> {
        check_above(self.dt, 0.0, 10.0, "dt", "finite and in (0, 10]")?;
        check_above(self.density, 0.0, 1000.0, "density", "finite and in (0, 1000]")?;
        let rate = |value: f32, field, allowed| {
            check_range(value, 0.0, f32::MAX, field, allowed)?;
            check(value * self.dt <= 1.0, field, allowed)
        };
        rate(self.friction, "friction", "finite, >= 0 and at most 1/dt")?;
        rate(self.deposition_rate, "deposition_rate", "finite, >= 0 and at most 1/dt")?;
        rate(self.evaporation_rate, "evaporation_rate", "finite, >= 0 and at most 1/dt")?;
        check_above(self.min_volume, 0.0, 1.0, "min_volume", "finite and in (0, 1]")?;
        check_range(self.height_scale, 0.0, 1.0e6, "height_scale", "finite and in [0, 1e6]")?;
        check(self.batch >= 1, "batch", "at least 1")?;
        check_range(self.lrate, 0.0, 1.0, "lrate", "finite and in [0, 1]")?;
        check_range(self.outlet_erosion, 0.0, 1.0e6, "outlet_erosion", "finite and in [0, 1e6]")?;
        check_range(self.spill_speed, 0.0, 100.0, "spill_speed", "finite and in [0, 100]")?;
        check_range(self.channel_area, 1.0e-3, 1.0e9, "channel_area", "finite and in [1e-3, 1e9]")?;
        // Below 1e-3 one particle's water is a depth past 1e3 a cell, and a
        // subnormal factor overflows the depth to infinity.
        check_range(self.volume_factor, 1.0e-3, 1.0e9, "volume_factor", "finite and in [1e-3, 1e9]")?;
        check_range(self.drainage, 0.0, 1.0, "drainage", "finite and in [0, 1]")?;
        check_above(self.approach, 0.0, 1.0, "approach", "finite and in (0, 1]")?;
        check((1..=1000).contains(&self.max_fails), "max_fails", "in [1, 1000]")?;
        check((1..=1000).contains(&self.spill), "spill", "in [1, 1000]")?;
        check((1..=Self::MAX_STEPS_LIMIT).contains(&self.max_steps), "max_steps", "in [1, 1000000]")?;
        check_range(self.stall_stream, 0.0, 1.0e6, "stall_stream", "finite and in [0, 1e6]")?;
        check_range(self.stall_acceleration, 0.0, 1.0e6, "stall_acceleration", "finite and in [0, 1e6]")?;
        check_range(self.entrainment, 0.0, 1000.0, "entrainment", "finite and in [0, 1000]")?;
        check(self.sea_level.is_none_or(f32::is_finite), "sea_level", "finite when set")
    }

    /// Whole cells in `length` unit lengths (rounded, at least 1): the run-out
    /// (8) and a delta's reach (8) at this `cell_size`.
    pub(super) fn cells_in(&self, length: f32) -> usize {
        // The cap bounds a run-out's walk.
        rounded_count(f64::from(length) / f64::from(self.cell_size), 1 << 16) as usize
    }
}

/// `x` rounded to nearest, clamped to `[1, max]` (`as` saturates and maps
/// NaN to 0, so any `x` gives a count in range).
fn rounded_count(x: f64, max: u64) -> u64 {
    (crate::math::floor_f64(x + 0.5) as u64).clamp(1, max)
}
