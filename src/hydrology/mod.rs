//! The `Hydrology` simulator (seed 002): particles that erode, streams that
//! remember where they ran, pools that fill and drain, and trees.

mod descend;
mod erf;
mod exact_flood;
mod flood;
mod params;
mod report;
mod streams;
#[cfg(feature = "parallel")]
mod tiled;
mod timing;
mod trees;
mod world;

pub use params::HydrologyParams;
pub use report::HydrologyReport;
pub use timing::PhaseTimes;

use alloc::vec::Vec;

use glam::Vec2;
use rand_core::Rng;

use self::descend::Descent;
use self::flood::{Flood, FloodScratch};
use self::timing::Mark;
use self::world::{Constants, End, Particle, World};
use crate::controls::Extras;
use crate::controls::{self, Gate, Starts};
use crate::error::{Error, GridError};
use crate::grid::{Grid, GridMut, Heightmap, try_filled};
use crate::layers;
use crate::progress::{Progress, Silent, Ticker};
use crate::reach::Reach;
use crate::simulator::{RunOptions, Simulator};

/// The hydrology simulator of seed 002: particle erosion coupled to a stream map,
/// a pool map and a vegetation map, which it owns and keeps between runs.
///
/// Each particle rains at a uniform random cell (or where the
/// [`Controls`](crate::Controls)' rain falls) with one unit of water and runs
/// through up to `spill` rounds of:
///
/// 1. **descend**: the `Physical` droplet (seed 000's equations) with effective
///    parameters from the maps; it stops into a flood when it enters a pool,
///    stalls on a stream or stands in a hollow (`stall_in_pits`), and ends
///    when it evaporates or leaves the map;
/// 2. **flood**: the pool around it grows, lowest cell first
///    (`exact_flood`; the article's test planes by name), until its water is
///    placed at the level that holds it, or until the pool reaches its sill
///    with a lower cell beyond: then the pool fills to its sill, drains a
///    little (never below the sill), the spill wears the sill
///    (`outlet_erosion`), and the particle leaves over it to that cell and
///    descends again.
///
/// After every `batch` particles the stream map takes in the water that
/// crossed each cell, and trees (if on) spawn, spread and die.
///
/// # Layers
///
/// [`stream`](Self::stream) (time-averaged water through each cell, 1 where
/// `channel_area` cells drain; see [`HydrologyParams::channel_area`]),
/// [`pool`](Self::pool) (water depth, in height units; `volume_factor * depth`
/// of water per cell) and [`vegetation`](Self::vegetation) (root density) are
/// grids of the terrain's size, readable at any time and settable (with the tree
/// list) to resume a run. They start empty (all zeros, no trees).
///
/// # Beyond the article
///
/// - Sediment is conserved as in every simulator of this crate (SPEC 6): a
///   pool keeps 90 % of the load of a particle that passes through it (the
///   original destroys it at a drain) and all of one that ends in it, settled
///   evenly over the pool's bed, displacing water rather than raising the
///   pool's surface; what leaves the map is outflow.
/// - Basins fill and drain (`../shared/SPEC.md` section 9): a particle in a
///   dry hollow floods there; a flood fills a pool exactly, to the level
///   that holds its water or to its true sill (`exact_flood`; with the test
///   planes, one that reaches past a sill its water cannot fill lowers the
///   plane instead of jumping the particle to the drain beyond); a spilling
///   pool rests at its sill (drainage lowers it no further, so a full lake is
///   no closed depression); the spill wears the
///   sill and leaves it moving away from the pool (`spill_speed`; one that
///   spills to the same drain twice in a row first runs down the outlet, up to
///   8 cells); and the map border is open (`open_border`). Each is switchable
///   back to the article. A particle stalled on dry ground takes the first
///   outlet its flat offers (it holds no pool), so a flood on an island's
///   sea floor does not walk the whole sea.
/// - The stream map is the water through each cell, so channel grading grows
///   with the drainage area instead of saturating where a cell is visited
///   every batch.
/// - Water is accounted for: see [`HydrologyReport`].
/// - Flood fills use an explicit stack (and heap) and per-cell visit stamps
///   allocated once, so a flood costs in proportion to its pool, never to the
///   map, and a lake of any size cannot overflow the call stack.
/// - Channel grading (`entrainment`), pit-safe transfer (`pit_safe`), the
///   settling of the dry pits a run made (`settle_pits`) and a sea level
///   (`sea_level`: particles entering the sea leave there) are parameters.
/// - The normal and the height a step moves to are read on the water surface, so
///   a particle spilled at a drain runs away from its pool, not back into it.
///
/// # Controls
///
/// [`RunOptions::with_controls`](crate::RunOptions::with_controls) steers a
/// run (sequential or in `Parallel` tiles) as it does `Physical`'s:
///
/// - **rain** and **active**: particles start on cells drawn with the
///   weights `rain * (active > 0)`, at a uniform point inside; where no rain
///   falls on an open cell no particle starts (the report counts fewer).
/// - **active** and **erodibility**: each cut a descending particle makes is
///   scaled by the cell's `active * erodibility`; deposits land whole on any
///   cell above 0 and the particle is credited with what was applied, so the
///   books stay exact.
/// - **masked cells** (active 0) keep their terrain and pool bits: a particle
///   about to enter one stops at the centre of its cell and puts its load
///   down there (counted in `report.erosion.masked`, its water in
///   `dropped`); floods treat them as walls, so pools never cover them, no
///   pool deposit lands on them and no drain leads onto them; the rounding
///   remainder goes to an open cell.
///
/// Without controls a run draws and does exactly what it did before they
/// existed (the same bits).
///
/// # Threads
///
/// With the `parallel` feature, `Parallel::run` runs the particles in
/// coloured tiles on a rayon pool, with the same bits for any thread count
/// (not those of [`run`](Self::run)); the layers are the same and carry over
/// between runs of either kind.
///
/// # Reproducibility
///
/// Each particle draws its start `x` then `y` (one `next_u64` each, top 24 bits;
/// with a rain map or an active mask, first its cell, as
/// [`Controls`](crate::Controls) says);
/// each round of tree growth draws as documented on
/// [`HydrologyParams::trees`]'s rules (after the batch's particles). Only exactly
/// rounded operations are used (the channel grading's `erf` is a fixed rational
/// expression), so the same map, layers, params and generator state give the same
/// bits with `std` or `libm`.
///
/// ```
/// use hydraulic_erosion::{Hydrology, HydrologyParams, MassBalance, fbm_terrain, Simulator};
///
/// let mut map = fbm_terrain(64, 64, 1)?;
/// let before = map.clone();
/// let params = HydrologyParams { particles: 2_000, ..HydrologyParams::default() };
/// let mut hydrology = Hydrology::new(params, 64, 64)?;
/// let report = hydrology.run_seeded(&mut map, 7)?;
///
/// assert!(MassBalance::of_run(&before, &map, &report.erosion).is_conserved());
/// assert!(report.is_water_balanced());
/// let wet = hydrology.pool().cells().iter().filter(|&&d| d > 0.0).count();
/// println!("{wet} cells under water, {} trees", hydrology.trees().count());
/// # Ok::<(), hydraulic_erosion::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Hydrology {
    params: HydrologyParams,
    k: Constants,
    stream: Heightmap,
    pool: Heightmap,
    vegetation: Heightmap,
    trees: Vec<usize>,
    /// Terrain plus pool, rebuilt at the start of every run.
    surface: Vec<f32>,
    /// Water that crossed each cell in the current batch.
    track: Vec<f32>,
    scratch: FloodScratch,
    times: PhaseTimes,
}

impl Hydrology {
    /// A simulator for `width` x `height` terrains, with empty layers.
    ///
    /// # Errors
    /// [`Error::Param`] if `params` fails [`HydrologyParams::validate`],
    /// [`Error::Grid`] for a bad size (as [`Heightmap::new`]).
    pub fn new(params: HydrologyParams, width: usize, height: usize) -> Result<Self, Error> {
        params.validate()?;
        let stream = Heightmap::new(width, height)?;
        let cells = stream.len();
        // Every layer through the fallible allocator: a size too large for the
        // machine is a typed error, not an abort.
        let layer = || Heightmap::new(width, height);
        Ok(Self {
            params,
            k: Constants::new(&params),
            pool: layer()?,
            vegetation: layer()?,
            stream,
            trees: Vec::new(),
            surface: try_filled(cells, 0.0)?,
            track: try_filled(cells, 0.0)?,
            scratch: FloodScratch::new(try_filled(cells, 0)?),
            times: PhaseTimes::default(),
        })
    }

    /// The validated parameters.
    pub fn params(&self) -> &HydrologyParams {
        &self.params
    }

    /// Width of the terrains this simulator runs on, in cells.
    pub fn width(&self) -> usize {
        self.stream.width()
    }

    /// Height of the terrains this simulator runs on, in cells.
    pub fn height(&self) -> usize {
        self.stream.height()
    }

    /// The stream map: per cell, the time-averaged water that crossed it per
    /// batch, 1 where `channel_area` cells of rain drain through (at least 0,
    /// at most `f32::MAX`; see [`HydrologyParams::channel_area`]).
    pub fn stream(&self) -> &Heightmap {
        &self.stream
    }

    /// The pool map: water depth per cell, in height units (at least 0).
    pub fn pool(&self) -> &Heightmap {
        &self.pool
    }

    /// The vegetation map: root density per cell (each tree adds 1 at its cell,
    /// 0.6 and 0.4 around it). Mass transfer is scaled by `1 - density`, clamped
    /// to `[0, 1]`.
    pub fn vegetation(&self) -> &Heightmap {
        &self.vegetation
    }

    /// The trees, as `(x, y)` cells, oldest first.
    pub fn trees(&self) -> impl ExactSizeIterator<Item = (usize, usize)> + '_ {
        let w = self.width();
        self.trees.iter().map(move |&i| (i % w, i / w))
    }

    /// The water held in pools: `volume_factor * sum(pool)`, in `f64`.
    pub fn pool_volume(&self) -> f64 {
        self.pool.sum() * f64::from(self.params.volume_factor)
    }

    /// Wall-clock time the last run spent descending and flooding (zeros without
    /// the `std` feature).
    pub fn phase_times(&self) -> PhaseTimes {
        self.times
    }

    /// Replaces the stream map (to resume a run).
    ///
    /// # Errors
    /// [`GridError::SizeMismatch`] if `stream` is not the simulator's size,
    /// [`GridError::NonFinite`] for a non-finite cell; nothing changes on error.
    pub fn set_stream<S: AsRef<[f32]>>(&mut self, stream: &Grid<S>) -> Result<(), GridError> {
        stream.check_finite()?;
        self.stream.copy_from(stream)
    }

    /// Replaces the pool map (to resume a run, or to start with lakes). Negative
    /// depths are stored as 0.
    ///
    /// # Errors
    /// As [`set_stream`](Self::set_stream).
    pub fn set_pool<S: AsRef<[f32]>>(&mut self, pool: &Grid<S>) -> Result<(), GridError> {
        pool.check_finite()?;
        self.pool.copy_from(pool)?;
        for depth in self.pool.cells_mut() {
            // +0 for -0 too (`max` may keep either zero).
            *depth = crate::math::larger(*depth, 0.0);
        }
        Ok(())
    }

    /// Replaces the vegetation map. The tree list is kept as it is: set both to
    /// resume a run (a dying tree takes its roots away from whatever the map holds).
    ///
    /// # Errors
    /// As [`set_stream`](Self::set_stream).
    pub fn set_vegetation<S: AsRef<[f32]>>(&mut self, vegetation: &Grid<S>) -> Result<(), GridError> {
        vegetation.check_finite()?;
        self.vegetation.copy_from(vegetation)
    }

    /// Replaces the tree list with trees at the given `(x, y)` cells, leaving the
    /// vegetation map as it is.
    ///
    /// # Errors
    /// [`GridError::OutsideMap`] for a cell off the map,
    /// [`GridError::LengthMismatch`] for more trees than cells; nothing changes on
    /// error.
    pub fn set_trees(&mut self, trees: &[(usize, usize)]) -> Result<(), GridError> {
        let (w, h) = (self.width(), self.height());
        if trees.len() > w * h {
            return Err(GridError::LengthMismatch { expected: w * h, actual: trees.len() });
        }
        if trees.iter().any(|&(x, y)| x >= w || y >= h) {
            return Err(GridError::OutsideMap);
        }
        self.trees = trees.iter().map(|&(x, y)| y * w + x).collect();
        Ok(())
    }

    /// Whether `map` can be run on: the simulator's size, and finite.
    fn check<St: AsRef<[f32]>>(&self, map: &Grid<St>) -> Result<(), GridError> {
        self.stream.check_same_size(map)?;
        map.check_finite()
    }

    /// The run behind [`Simulator::run_with`], recording into `extras`'
    /// tracks and steered by its gate and starts (`None`: uniform).
    pub(crate) fn run_tracked<St, R, P>(
        &mut self,
        map: &mut Grid<St>,
        rng: &mut R,
        progress: &mut P,
        Extras { tracks, gate, starts }: Extras<'_>,
    ) -> Result<HydrologyReport, GridError>
    where
        St: AsRef<[f32]> + AsMut<[f32]>,
        R: Rng + ?Sized,
        P: Progress + ?Sized,
    {
        self.check(map)?;
        let total = u64::from(self.params.particles);
        let mut ticker = Ticker::new(progress, total);
        self.times = PhaseTimes::default();
        let (width, height) = (self.width(), self.height());
        if width < 3 || height < 3 {
            ticker.finish(0);
            return Ok(HydrologyReport::default());
        }
        let params = self.params;
        let heights = map.cells_mut();
        let before =
            if params.settle_pits { crate::grid::try_copy(heights)? } else { alloc::vec::Vec::new() };
        let base_level = heights.iter().fold(f32::INFINITY, |lo, &h| lo.min(h));
        self.rebuild_surface(heights);
        let (mut world, trees, times) = self.whole_map(heights, base_level, gate);
        world.outputs = tracks;
        let batch = u64::from(world.k.batch);
        let mut in_batch = 0;
        for done in 0..total {
            if ticker.should_stop(done) {
                world.report.erosion.cancelled = true;
                break;
            }
            // Uniform starts draw as a run without controls did.
            let Some(start) = controls::draw_start(starts, rng, width, height) else {
                break; // no particle can start: the rain falls nowhere
            };
            world.report.rain += 1.0;
            let mut journey = Journey::new(start, &world.k);
            let end = cycle(&mut world, &mut journey, times);
            world.end(&mut journey.particle, end);
            in_batch += 1;
            if in_batch == batch {
                end_batch(&mut world, in_batch, params.trees, trees, rng);
                in_batch = 0;
            }
        }
        if in_batch > 0 {
            end_batch(&mut world, in_batch, params.trees, trees, rng);
        }
        world.flush();
        if params.settle_pits {
            world.settle_pits(&before);
        }
        // What no cell could take (settling pits books it, leaving none).
        world.report.erosion.unplaced += core::mem::take(&mut world.carry);
        let report = world.report;
        ticker.finish(report.erosion.droplets);
        Ok(report)
    }

    /// Sets the water surface to terrain plus pool, cell by cell.
    fn rebuild_surface(&mut self, heights: &[f32]) {
        for ((s, &h), &d) in self.surface.iter_mut().zip(heights).zip(self.pool.cells()) {
            *s = h + d;
        }
    }

    /// The simulator split for work on the whole map `heights`: a world over
    /// it and the layers (with empty books, the batch stamp, the surface as
    /// last rebuilt, and the controls' `gate` over the map), the trees and the
    /// phase times. The caller keeps the world's stamp.
    fn whole_map<'a>(
        &'a mut self,
        heights: &'a mut [f32],
        base_level: f32,
        gate: Gate<'a>,
    ) -> (World<'a>, &'a mut Vec<usize>, &'a mut PhaseTimes) {
        let (width, height) = (self.width(), self.height());
        let Self { k, stream, pool, vegetation, trees, surface, track, scratch, times, params: _ } = self;
        let world = World {
            heights,
            pool: pool.cells_mut(),
            surface,
            stream: stream.cells_mut(),
            vegetation: vegetation.cells_mut(),
            track,
            outputs: None,
            scratch,
            width,
            height,
            k: *k,
            report: HydrologyReport::default(),
            carry: 0.0,
            base_level,
            origin: Vec2::ZERO,
            reach: Reach::WHOLE,
            high: Reach::far_bounds(width, height),
            undo: Vec::new(),
            gate,
        };
        (world, trees, times)
    }
}

impl Simulator for Hydrology {
    type Report = HydrologyReport;

    /// Runs `params.particles` particles over `map`, drawing from `rng`.
    ///
    /// Maps under 3 cells on a side are valid and erode to themselves (nothing
    /// runs, the layers are untouched). A run stopped through
    /// `options.progress` finishes its partial batch (stream update and trees)
    /// as a run of that many particles would, leaves the map and the water
    /// balanced, and sets `report.erosion.cancelled`. `options.mode` does not
    /// apply. `options.controls` steer the run as described on
    /// [`Hydrology`] (# Controls).
    ///
    /// # Errors
    /// [`GridError::SizeMismatch`] if `map`, or a map of `options.controls`,
    /// is not the simulator's size; [`GridError::NonFinite`] if a cell is NaN
    /// or infinite; a [`ParamError`](crate::ParamError) (fields
    /// `controls.active`, `controls.rain`, `controls.erodibility`) for a
    /// control cell out of its range (see
    /// [`Controls::validate`](crate::Controls::validate)). The map and the
    /// layers are untouched on error.
    fn run_with(
        &mut self,
        mut map: GridMut<'_>,
        rng: &mut dyn Rng,
        options: RunOptions<'_>,
    ) -> Result<HydrologyReport, Error> {
        let RunOptions { progress, layers, controls, .. } = options;
        // Checked and the start table built before anything changes.
        controls.validate(map.width(), map.height())?;
        let starts = Starts::new(&controls, map.width(), map.height())?;
        let mut silent = Silent;
        let progress = progress.unwrap_or(&mut silent);
        let droplets = |r: &HydrologyReport| r.erosion.droplets;
        layers::record(layers, &mut map, droplets, |map, tracks| {
            let extras = Extras { tracks, gate: Gate::of(&controls), starts: Some(&starts) };
            Ok(self.run_tracked(map, rng, progress, extras)?)
        })
    }
}

/// A particle on its way: its state, what is left of its step budget
/// (`max_steps` for its whole life) and of its spills, and what it does next.
#[derive(Clone, Copy, Debug)]
struct Journey {
    particle: Particle,
    steps_left: u32,
    spills: u32,
    /// The drain of its last spill, in map coordinates (the same in every
    /// tile's zone): a spill to the same drain again means it rolled back
    /// into the pool it left.
    last_spill: Option<Vec2>,
    next: Next,
}

/// What a particle does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Next {
    Descend,
    Flood,
}

/// What one descent or flood did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Act {
    /// The particle is done (it has not been booked yet).
    Ended(End),
    /// It goes on.
    Went,
    /// It would read beyond the world's cells (a tile's zone) and stands as it
    /// stood; see [`Descent::Refused`] and [`Flood::Refused`].
    Refused,
}

impl Journey {
    fn new(start: Vec2, k: &Constants) -> Self {
        Self {
            particle: Particle::new(start),
            steps_left: k.max_steps,
            spills: 0,
            last_spill: None,
            next: Next::Descend,
        }
    }

    /// Its next descent or flood. A particle ends when a descent ends it, when a
    /// flood places its water, fails or reaches the sea, after `spill` spills,
    /// or when its `max_steps` steps are used up (a hop off a dry stall takes
    /// one step). `clock` is when it began (the end of the act before, where
    /// acts follow each other), and becomes when it ended.
    fn act(&mut self, world: &mut World<'_>, times: &mut PhaseTimes, clock: &mut Mark) -> Act {
        let p = &mut self.particle;
        if self.next == Next::Descend {
            let descent = world.descend(p, &mut self.steps_left);
            times.descend_seconds += clock.lap();
            return match descent {
                Descent::End(end) => Act::Ended(end),
                Descent::Flood => {
                    self.next = Next::Flood;
                    Act::Went
                }
                Descent::Refused => Act::Refused,
            };
        }
        // A spill that reaches the spill limit ends the particle at the drain.
        let last = self.spills + 1 >= world.k.spill;
        let flood = world.flood(p, &mut self.last_spill, last);
        times.flood_seconds += clock.lap();
        match flood {
            Flood::Placed => Act::Ended(End::Pooled),
            Flood::Failed => Act::Ended(End::FloodFailed),
            Flood::Sea => Act::Ended(End::LeftMap),
            Flood::Refused => Act::Refused,
            Flood::Drain => {
                self.spills += 1;
                if self.spills >= world.k.spill {
                    return Act::Ended(End::SpillLimited);
                }
                self.next = Next::Descend;
                Act::Went
            }
            Flood::Hop => {
                if self.steps_left == 0 {
                    return Act::Ended(End::StepLimit);
                }
                self.steps_left -= 1;
                self.next = Next::Descend;
                Act::Went
            }
        }
    }
}

/// One particle's life on the whole map, where nothing is refused: descend and
/// flood until it ends.
fn cycle(world: &mut World<'_>, journey: &mut Journey, times: &mut PhaseTimes) -> End {
    let mut clock = Mark::now();
    loop {
        match journey.act(world, times, &mut clock) {
            Act::Ended(end) => return end,
            Act::Went => {}
            Act::Refused => unreachable!("the whole map holds every read"),
        }
    }
}

/// The end of a batch of `particles`: the stream map takes in the water that
/// crossed each cell, then trees grow.
fn end_batch<R: Rng + ?Sized>(
    world: &mut World<'_>,
    particles: u64,
    grow: bool,
    trees: &mut Vec<usize>,
    rng: &mut R,
) {
    world.update_streams(particles);
    if grow {
        world.grow_trees(trees, rng);
    }
}
