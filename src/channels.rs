//! The channel-forming mechanisms of the landscape preset
//! ([`ErosionParams::landscape`](crate::ErosionParams::landscape)).

use crate::error::{ParamError, check, check_range};

/// What turns droplet erosion into graded, draining channel networks (SPEC.md
/// section 8): a discharge map that strengthens erosion and lengthens droplet
/// lives where water gathers, a momentum map that steers droplets along the mean
/// flow, an erosion brush, one-cell steps, and pits settled at the end. Set
/// [`ErosionParams::channels`](crate::ErosionParams::channels) to `Some` to use
/// them; `None` (the default) keeps the seeds' model as the articles wrote it.
///
/// A droplet that ends on the map (out of water or steps, stopped, or at a
/// mask) puts its load on its cell up to its highest neighbour and pours the
/// rest into the lowest cells of the 3 x 3 block around it, raising them to
/// one level, the way sediment settles into low ground: put down on its own
/// cell alone, the loads of droplets that circled on a plain until the step
/// limit stood as single-cell spikes (up to a third of the relief of a 512²
/// fBm map; docs/landscape.md).
///
/// Every mechanism is switchable on its own: a zero `discharge_gain`,
/// `channel_relief`, `momentum` or `brush_radius`, a `stride` of 1 (its
/// default), or a false `settle_pits`, turns it off.
///
/// **Discharge** is the water that crossed a cell, per droplet of rain per cell:
/// an exponential moving average, refreshed every `refresh` droplets, of the
/// water that crossed it, scaled by `cells / refresh` so that on a map with one
/// droplet of rain per cell it reads as the cell's upstream area in cells.
/// Times `cell_size` it is the upstream area per unit of the cell's width (the
/// specific catchment area of terrain analysis, a length in the params' unit):
/// water gathered in a valley crosses it on as many cells as the valley is
/// wide, so this measure, not the area through one cell, stays the same when
/// the same landscape is sampled finer. The crate uses it through `e =
/// erf(discharge * cell_size / channel_area)`, which runs from 0 on hillslopes
/// to 1 in channels.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default, deny_unknown_fields))]
pub struct Channels {
    /// Load a droplet can carry per unit of water per unit of height drop over
    /// its one-cell step, before the discharge gain: the capacity is `capacity *
    /// water * drop * (1 + discharge_gain * e * r)`. Default 4; range `[0, 1e6]`.
    pub capacity: f32,
    /// Capacity gain in channels: capacity is multiplied by `1 + discharge_gain *
    /// e * r`, `r` the river growth (see [`river_area`](Self::river_area)).
    /// Default 6; range `[0, 1000]`; 0 turns the coupling off.
    pub discharge_gain: f32,
    /// The upstream area per unit width (a length in the params' unit: the
    /// discharge, in cells, times `cell_size`; see above) at which `e`
    /// reaches `erf(1) = 0.84`. Default 200 (cells of size 1); range `(0,
    /// 1e30]`.
    pub channel_area: f32,
    /// The upstream area per unit width, in `channel_area`'s unit, up to
    /// which a channel's capacity gain keeps growing past `channel_area`: `r
    /// = sqrt(clamp(A / channel_area, 1, river_area / channel_area))`, `A` the
    /// discharge's area per unit width. With `e` alone the gain is all but
    /// full at twice `channel_area`, so channels stop grading there: slope
    /// falls too little with area (θ 0.28 on fBm 512²). The cap keeps closed
    /// basins, where water that cannot leave piles up discharge, from digging
    /// their floors (uncapped, 8-9 % of the map stays closed). Default 800
    /// (`r` up to 2); at or below `channel_area`, `r` is 1 (the gain of `e`
    /// alone); range `(0, 1e30]`.
    pub river_area: f32,
    /// Side of a cell in the params' unit length: one cell of the map the
    /// preset was tuned on (512 cells a side, heights 0 to 1), so that the same
    /// params hold for the same landscape at another resolution (`512 / side`
    /// for a square map of that extent: 2 at 256², 0.5 at 1024²). A landscape
    /// step crosses one cell, `cell_size` unit lengths: it takes `dt *
    /// cell_size` of time (so friction, evaporation and deposition per step
    /// and the acceleration grow with it), `height_scale` is per unit length
    /// (slopes are height over `cell_size`), the capacity is per unit slope
    /// (`capacity / cell_size` per unit drop), the steering per unit length
    /// (`momentum * cell_size` a step, the maps' water per unit width),
    /// `max_steps` counts unit lengths (`max_steps / cell_size` steps, rounded)
    /// and `channel_area` an upstream area per unit width (the discharge, in
    /// cells, times `cell_size`). The brush and the pit rules stay in cells. Default 1
    /// (every bit as before the unit existed); range `(0, 1e15]`, and with
    /// the params at most `1 / (dt * rate)` for each of friction, deposition
    /// and evaporation, at least `max_steps / 1e6`.
    pub cell_size: f32,
    /// How far each refresh moves the discharge and momentum maps towards the
    /// last `refresh` droplets' water: the moving average's rate (it remembers
    /// about `refresh / discharge_rate` droplets). Default 0.05;
    /// range `(0, 1]`.
    pub discharge_rate: f32,
    /// Droplets between refreshes of the discharge and momentum maps. Default
    /// 2 048; range `[1, 2^31]`.
    pub refresh: u32,
    /// How much friction and evaporation are lowered in channels: each is
    /// multiplied by `1 - channel_relief * e`, so water carries further where it
    /// gathers (at 1, none in channels: water gathered there runs on until
    /// it leaves the map or its step limit). Default 1; range `[0, 1]`.
    pub channel_relief: f32,
    /// Steering by the momentum map (the moving average of water times velocity
    /// per cell): each step adds `momentum * cos(angle) * flow / (water +
    /// discharge)`, the angle between the droplet's velocity and the mean flow.
    /// Default 0.3 (0 turns it off; it drains closed basins and tightens the
    /// slope-area law, see docs/landscape.md); range `[0, 100]`.
    pub momentum: f32,
    /// The channel factor `e` above which a droplet's turn may hold for two
    /// cells: where it stands on such a cell and its turn bent its path by
    /// less than 5 degrees (a straight reach), one normal and one turn (the
    /// acceleration, the steering) carry it across two cells, each crossed
    /// as a one-cell step of its own (its water counted, friction, the trade
    /// of sediment, evaporation, each with that cell's factors). The normal
    /// and the turn are half a step's cost. `max_steps` still counts cells:
    /// the second cell is taken only within the droplet's life. A trade of
    /// fit for speed, measured at 0.2 on ten 512² fBm terrains, eight draws
    /// each (docs/landscape.md): 15-20 % less time, at most 0.039 of the land
    /// closed (0.046 off), but looser slope-area fits, 56 of the 80 runs
    /// meeting every landscape target against 69 off. At 1024² on one
    /// terrain the first droplets drained it (13.5 s on two threads, 0.039
    /// closed, against 43.2 s and 0.052 after the rounds off); on another,
    /// whose basin holds, it took more rounds (53.7 s). Default 1 (off: `e`
    /// never exceeds 1); range `[0, 1]`.
    pub stride: f32,
    /// Radius of the erosion brush in cells: erosion is spread over the cells
    /// closer than this to the droplet's cell, weighted by `radius - distance`,
    /// and deposits are split bilinearly between the 4 cells around the droplet.
    /// Default 1.75 (the 3 x 3 block: the droplet's cell takes 29 %, each side
    /// neighbour 12 %, each corner 5.5 %; it was 2, with 24 %, 12 % and 7 %:
    /// the sharper brush drains large basins in more draws of the rain, see
    /// docs/landscape.md); range `[0, 8]`; below 1 erodes and deposits on the droplet's
    /// cell alone. No brush cell is cut below the droplet's cell, which, up to
    /// radius 2 (the 3 x 3 block), is every brush cell's neighbour: so the
    /// brush digs no pits there; wider brushes reach cells it does not guard.
    pub brush_radius: f32,
    /// Whether the run ends by settling the single-cell pits it made: each
    /// interior cell lower than all 8 neighbours, where the pit or its lowest
    /// neighbour changed during the run, meets that neighbour halfway, the two
    /// ending level (mass moved and booked, none lost), in row order. The
    /// droplets' deposits leave such pits beside them (0.3-0.9 % of the cells
    /// on fBm); water would fill them with the next rain. The input's own pits
    /// stay, and cells a mask or zero erodibility holds take no part. What the
    /// halfway heights' rounding adds is taken back from a border cell, rounded
    /// down, the excess (under one of that cell's rounding steps) booked as
    /// outflow; a map whose border is wholly masked or bedrock settles none. Default
    /// `true`.
    pub settle_pits: bool,
    /// Sea level, in the map's height unit: every cell at or below it is sea,
    /// an outlet like the map's border. A droplet standing on a sea cell ends
    /// there (counted as [`Fate::LeftMap`](crate::Fate::LeftMap)), its load
    /// carried off the map and booked as `outflow`, so rivers keep their
    /// slopes to the coast instead of spreading fans over the sea floor; rain
    /// on the sea ends at once. Deposits may still raise a sea cell (a
    /// droplet's last steps on the shore), up to the level and beyond, which
    /// makes it land. Put the level above a flat sea floor, as a shelf: 0.03
    /// over [`island_terrain`](crate::island_terrain)'s (relief 1) gives
    /// small deltas; at 0.002 rivers build long spits of deposit out over it,
    /// and at the floor itself the first deposits make land of it. Default
    /// `None` (no sea); a set level must be finite.
    pub sea_level: Option<f32>,
    /// Rain in rounds until the basins drain (see [`Drain`]): after the
    /// run's droplets, more rain while more than [`Drain::closed`] of the
    /// land lies in closed depressions. Default `None` (the run's droplets
    /// and no more);
    /// [`ErosionParams::landscape_for`](crate::ErosionParams::landscape_for)
    /// and [`landscape_world`](crate::ErosionParams::landscape_world) set
    /// [`Drain::default`].
    pub drain: Option<Drain>,
}

/// Rain in rounds until the basins drain: a run with
/// [`Channels::drain`] set measures, once its droplets have all ended, the
/// share of the land in closed depressions (a priority-flood fill of the map,
/// the sea and the border its outlets, as
/// [`TerrainStats`](crate::analysis::TerrainStats) counts it; with an active
/// mask, only the land it leaves above 0, since a basin the run may not
/// change never drains), and while that share is above `closed` it rains
/// `round` times the run's droplets more, up to `most` times them in all
/// (half a droplet a cell a round, and four in all, after the landscape
/// preset's 1.5; a run asked for few droplets takes few more). The rounds
/// start only where a basin holds after the run's droplets: connected closed
/// land of at least `basin` of the land.
///
/// The droplet models have no standing water: a closed basin fills only with
/// deposit, and drains once filled to its spill level, when the rivers that
/// cross it cut its outlet down. How much rain that takes depends on the
/// terrain, not on the basin's volume alone (on ten 512² fBm terrains the
/// landscape preset's 1.5 droplets a cell drain half of them; two need 4;
/// docs/landscape.md), so the rule looks at the result. Once the basins
/// have drained, it ends early where two rounds in a row have failed to bring
/// the room in the depressions (the fill's depth summed over the closed land) a
/// tenth below the least it has been, a fifth where a measure finds pools
/// alone (no basin): there the pools are the rain's own
/// (droplets that end mid-river at the step limit, on a map much longer than
/// their life), and more rain builds more of them. (The room, not the share:
/// a basin filling with deposit keeps its area closed until it is full; one
/// round without progress is allowed, as a sill built up may hold for a round
/// before a river cuts it.) While the basins the first droplets left hold (no
/// measure has yet found none), the rain goes on to the share or the budget,
/// progress or not: a basin filled to a shallow plain just below its sill
/// keeps a small, steady room for rounds before a river cuts the sill. A
/// basin that forms after they have drained is the rain's own pools grown
/// together, and the early end holds again. (On 512² fBm, eight draws of ten
/// terrains, the rounds had ended while a first basin held in 5 of the 80
/// runs, leaving up to 0.099 of the land closed; now every run ends with at
/// most 0.055 closed, and 65 of the 80 meet every landscape target, 64
/// before; 69, at most 0.046 closed, since a droplet's last load is poured
/// rather than left standing on its cell.) Where the first
/// droplets leave only pools, small patches strung along the rivers, the
/// rounds do not start: on a 1024² fBm run whose largest patch held 0.2 % of
/// the land, three rounds rebuilt its pools
/// (0.042 of the land closed, then 0.041) and loosened its slope-area fit,
/// at twice the time; the rounds did drain pools of 0.4-0.9 % on three other
/// runs (0.046-0.056 closed to 0.026-0.041), and basins the noise left hold
/// 2-24 % (docs/landscape.md). Extra rounds run like the first droplets (the
/// same streams continued, in every mode), the report counts every droplet,
/// and progress reports the total grown by each round. A run of no droplets
/// takes no round (it leaves the map as it is), nor does a map too large to
/// measure (the fill's buffers cannot be allocated).
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default, deny_unknown_fields))]
pub struct Drain {
    /// The share of the land in closed depressions at or below which the
    /// rain stops. Default 0.04; range `[0, 1]`.
    pub closed: f32,
    /// Droplets in each extra round, as a share of the run's droplets.
    /// Default 1/3 (half a droplet a cell after the landscape preset's 1.5);
    /// range `[0.01, 1e6]` (each round ends with a priority flood of the
    /// map, which costs about what a twentieth of a droplet a cell does at
    /// 512²).
    pub round: f32,
    /// The most extra droplets in all, as a multiple of the run's droplets:
    /// a run asked for few droplets takes few more. Default 8/3 (4 a cell
    /// after the preset's 1.5); range `[0, 1e6]`.
    pub most: f32,
    /// The least a basin holds, as a share of the land: connected closed
    /// land (through the eight neighbours) this large or larger is a basin,
    /// smaller patches are pools, and where the run's droplets leave no
    /// basin no round starts, whatever the share closed. Default 0.003
    /// (786 cells at 512²); range `[0, 1]` (0: any closed land is a basin, and
    /// the rain ends by `closed` or `most` alone).
    pub basin: f32,
}

impl Default for Drain {
    fn default() -> Self {
        Self { closed: 0.04, round: 1.0 / 3.0, most: 8.0 / 3.0, basin: 0.003 }
    }
}

impl Drain {
    /// Checks every field against its documented range.
    ///
    /// # Errors
    /// A [`ParamError`] naming the first field out of range.
    pub fn validate(&self) -> Result<(), ParamError> {
        check_range(self.closed, 0.0, 1.0, "channels.drain.closed", "finite and in [0, 1]")?;
        check_range(self.round, 0.01, 1e6, "channels.drain.round", "finite and in [0.01, 1e6]")?;
        check_range(self.most, 0.0, 1e6, "channels.drain.most", "finite and in [0, 1e6]")?;
        check_range(self.basin, 0.0, 1.0, "channels.drain.basin", "finite and in [0, 1]")
    }
}

impl Default for Channels {
    fn default() -> Self {
        Self {
            capacity: 4.0,
            discharge_gain: 6.0,
            channel_area: 200.0,
            river_area: 800.0,
            cell_size: 1.0,
            discharge_rate: 0.05,
            refresh: 2048,
            channel_relief: 1.0,
            momentum: 0.3,
            stride: 1.0,
            brush_radius: 1.75,
            settle_pits: true,
            sea_level: None,
            drain: None,
        }
    }
}

impl Channels {
    /// The largest `refresh`.
    pub const MAX_REFRESH: u32 = 1 << 31;

    /// Checks every field against its documented range.
    ///
    /// # Errors
    /// A [`ParamError`] naming the first field out of range.
    pub fn validate(&self) -> Result<(), ParamError> {
        check_range(self.capacity, 0.0, 1e6, "channels.capacity", "finite and in [0, 1e6]")?;
        check_range(self.discharge_gain, 0.0, 1000.0, "channels.discharge_gain", "finite and in [0, 1000]")?;
        check(self.channel_area > 0.0 && self.channel_area <= 1e30, "channels.channel_area", "in (0, 1e30]")?;
        check(self.river_area > 0.0 && self.river_area <= 1e30, "channels.river_area", "in (0, 1e30]")?;
        check(self.cell_size > 0.0 && self.cell_size <= 1e15, "channels.cell_size", "in (0, 1e15]")?;
        check(
            self.discharge_rate > 0.0 && self.discharge_rate <= 1.0,
            "channels.discharge_rate",
            "in (0, 1]",
        )?;
        check((1..=Self::MAX_REFRESH).contains(&self.refresh), "channels.refresh", "in [1, 2^31]")?;
        check_range(self.channel_relief, 0.0, 1.0, "channels.channel_relief", "finite and in [0, 1]")?;
        check_range(self.momentum, 0.0, 100.0, "channels.momentum", "finite and in [0, 100]")?;
        check_range(self.stride, 0.0, 1.0, "channels.stride", "finite and in [0, 1]")?;
        check_range(self.brush_radius, 0.0, 8.0, "channels.brush_radius", "finite and in [0, 8]")?;
        check(self.sea_level.is_none_or(f32::is_finite), "channels.sea_level", "finite when set")?;
        self.drain.as_ref().map_or(Ok(()), Drain::validate)
    }
}
