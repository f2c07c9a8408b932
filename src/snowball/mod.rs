//! The `Snowball` simulator (seed 001): fast, coarse erosion for islands.

mod params;
#[cfg(feature = "parallel")]
mod tiled;

pub use params::SnowballParams;

use glam::Vec2;
use rand_core::Rng;

use crate::blur::{BlurParams, blur_cells, blur_scratch};
use crate::controls::Extras;
use crate::controls::{Gate, Starts, draw_start};
use crate::droplet::Fate;
use crate::error::{Error, GridError, ParamError};
use crate::grid::{Grid, GridMut, GridRef, clamped_cell};
use crate::layers::{self, Track};
use crate::math;
use crate::normal::{CentralDifference, NormalSampler, Offset};
use crate::physical::simd::{self, Isa};
use crate::progress::{Progress, Silent, Ticker};
use crate::report::ErosionReport;
use crate::simulator::{RunOptions, Simulator};

/// Seed 001's snowballs: each one rolls downhill from a random cell, eroding
/// the ground behind it as it gathers material and shedding a share of its load
/// as it goes; after the run the map is blurred.
///
/// Per snowball, with `i` counting its steps from 0:
///
/// 1. `n` = the surface normal at its position plus its offset (an [`Offset`]
///    over the inner sampler, bilinear; the offset is drawn once per snowball);
/// 2. it stops if `n.y == 1` exactly (flat ground);
/// 3. `deposit = load * deposition_rate * n.y` and
///    `erosion = erosion_rate * (1 - n.y) * min(1, i * iteration_scale)`;
///    the height at its **previous** position changes by `deposit - erosion`,
///    spread over the 4 cells around it with the bilinear weights the sampler
///    reads with (cell `(x, y)` sits at the point `(x, y)`), so erosion happens
///    behind the snowball and it cannot dig itself in;
/// 4. `v = friction * v + n.xz * speed`, and it moves by `v`.
///
/// It ends on flat ground, off the map, or after `max_iterations` steps. The
/// default inner sampler is [`CentralDifference`]: bilinear sampling of
/// central differences is the original's normal (central differences of
/// bilinearly sampled heights), except that each cell's normal is normalised
/// before blending.
///
/// Fixed defects of the original, each pinned by tests:
/// - mass is conserved: the load is credited with the height change actually
///   applied to each cell (in `f64`); a snowball that stops on the map (flat
///   ground, step limit, unstable) puts its load down bilinearly where it stands;
///   one that leaves the map carries its load out as the report's outflow. (The
///   original drops the load of a snowball that stops and of writes off the map,
///   and clamps heights at 0.)
/// - the bilinear write uses the sampling weights; the original mirrors them
///   (the cell nearest the snowball gets the weight of the farthest), which digs
///   single-cell pits;
/// - the blur conserves mass and covers the border ([`blur`](crate::blur)).
///
/// **Border rule**: beyond the map edge the snowball reads the normal of the
/// nearest border cell, and the inner samplers give a border cell the slope of
/// its inner neighbour: the terrain seems to go on at the slope it has at the
/// edge. On an island in a flat sea (the original's setting) that is flat sea,
/// where snowballs come to rest as in the original; on other terrains, slopes
/// that run off the map carry snowballs and their load out, and edge cells erode
/// like inner ones. A snowball is off the map once its position leaves
/// `[0, width) x [0, height)`; the step that takes it there still writes at the
/// previous position, which is on the map.
///
/// Maps under 3 cells on a side are valid and erode to themselves.
///
/// # Threads
///
/// With the `parallel` feature, `Parallel::run` rolls the snowballs
/// in coloured tiles (or fixed batches) on a rayon pool, with the same bits
/// for any thread count (not those of [`run`](Self::run)).
///
/// # Reproducibility
///
/// Exactly rounded operations in a fixed order: the same map, params, sampler
/// and generator state give the same bits with `std` or `libm`.
/// `tests/snowball.rs` pins hashes of seeded runs.
///
/// ```
/// use hydraulic_erosion::{MassBalance, Snowball, SnowballParams, island_terrain, Simulator};
///
/// let mut map = island_terrain(128, 128, 3)?;
/// for h in map.cells_mut() {
///     *h *= 10.0; // an island 10 height units high, like the original's
/// }
/// let before = map.clone();
/// let report = Snowball::new(SnowballParams::default())?.run_seeded(&mut map, 1)?;
/// assert_eq!(report.droplets, 6_554); // 0.4 per cell
/// assert!(MassBalance::of_run(&before, &map, &report).is_conserved());
/// # Ok::<(), hydraulic_erosion::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Snowball<S = CentralDifference> {
    params: SnowballParams,
    /// `params` with every length in cells ([`SnowballParams::in_cells`]):
    /// what the steps use.
    steps: SnowballParams,
    sampler: Offset<S>,
}

impl Snowball<CentralDifference> {
    /// A simulator with the original's sampler: [`CentralDifference`] read
    /// bilinearly at each snowball's offset.
    ///
    /// # Errors
    /// A [`ParamError`] if `params` fails [`SnowballParams::validate`].
    pub fn new(params: SnowballParams) -> Result<Self, ParamError> {
        Self::with_sampler(params, CentralDifference)
    }
}

impl<S: NormalSampler + Clone> Snowball<S> {
    /// A simulator reading the cell normals of `inner` (wrapped in an
    /// [`Offset`] of `params.radius / params.cell_size` cells).
    ///
    /// # Errors
    /// A [`ParamError`] if `params` fails [`SnowballParams::validate`].
    pub fn with_sampler(params: SnowballParams, inner: S) -> Result<Self, ParamError> {
        params.validate()?;
        let steps = params.in_cells();
        Ok(Self { params, steps, sampler: Offset::new(inner, steps.radius)? })
    }

    /// The validated parameters.
    pub fn params(&self) -> &SnowballParams {
        &self.params
    }

    /// The sampler: the inner sampler in an [`Offset`].
    pub fn sampler(&self) -> &Offset<S> {
        &self.sampler
    }

    /// The run behind [`Simulator::run_with`] (and `Parallel`'s batches, which
    /// blur after merging: `blur` is off in their params).
    pub(crate) fn run_tracked<St, P>(
        &self,
        map: &mut Grid<St>,
        rng: &mut dyn Rng,
        progress: &mut P,
        extras: Extras<'_>,
    ) -> Result<ErosionReport, GridError>
    where
        St: AsRef<[f32]> + AsMut<[f32]>,
        P: Progress + ?Sized,
    {
        map.check_finite()?;
        let (width, height) = (map.width(), map.height());
        let total = self.params.count(width, height);
        let mut ticker = Ticker::new(progress, total);
        if width < 3 || height < 3 {
            ticker.finish(0);
            return Ok(ErosionReport::default());
        }
        // The blur's buffer before the map changes, so a failed allocation leaves
        // it untouched.
        let mut scratch = if self.params.blur { blur_scratch(map.len())? } else { alloc::vec::Vec::new() };
        let mut sampler = self.sampler.clone();
        let Extras { tracks, gate, starts } = extras;
        let mut roller = Roller::new(map.cells_mut(), width, height, gate);
        roller.tracks = tracks;
        for done in 0..total {
            if ticker.should_stop(done) {
                roller.report.cancelled = true;
                break;
            }
            let Some(start) = draw_start(starts, rng, width, height) else { break };
            sampler.spawn(rng);
            roller.roll(&self.steps, &sampler, start);
        }
        let Roller { cells, mut report, remainder, .. } = roller;
        close_books(cells, (width, height), self.params.blur, remainder, &mut scratch, &gate, &mut report);
        ticker.finish(report.droplets);
        Ok(report)
    }
}

/// A snowball run's end (sequential or `Parallel`): the blur, when `blur`
/// asks for it and snowballs ran, or else the gate's flush, places the
/// rounding `remainder`; what neither can place is the report's `unplaced`.
pub(crate) fn close_books(
    cells: &mut [f32],
    (width, height): (usize, usize),
    blur: bool,
    remainder: f64,
    scratch: &mut alloc::vec::Vec<f32>,
    gate: &Gate<'_>,
    report: &mut ErosionReport,
) {
    // No snowballs, no change: "0 droplets: map unchanged" holds for the blur too.
    if blur && !report.cancelled && report.droplets > 0 {
        // The blur carries the run's rounding remainder with its own, so the
        // two leave a single sub-ulp error.
        report.unplaced +=
            blur_cells(cells, width, height, &BlurParams::default(), remainder, scratch, gate).unplaced;
    } else {
        report.unplaced += gate.flush(cells, remainder, |old, new| {
            report.book(old, new);
        });
    }
}

impl<S: NormalSampler + Clone> Simulator for Snowball<S> {
    type Report = ErosionReport;

    /// Erodes `map` with [`SnowballParams::count`] snowballs drawn from `rng`,
    /// then blurs it if `params.blur`.
    ///
    /// Each snowball draws its start `x` then `y` (one `next_u64` each, top 24
    /// bits, uniform over `[0, width) x [0, height)`), then its offset `x` then
    /// `y` (the [`Offset`] sampler's draw), then whatever the inner sampler draws.
    ///
    /// The report counts the snowballs (`droplets`), their steps (every step that
    /// read a normal, the last one included), the mass they moved and the
    /// outflow; snowballs that stop on flat ground count as `flat`. The blur's
    /// exchanges between neighbours are not counted: it conserves mass on its own
    /// (it also places the run's last sub-ulp rounding remainder).
    ///
    /// A stopped run leaves the map balanced, skips the blur, and its report
    /// counts the snowballs done, with `cancelled` set. `options.mode` does not
    /// apply.
    fn run_with(
        &mut self,
        mut map: GridMut<'_>,
        rng: &mut dyn Rng,
        options: RunOptions<'_>,
    ) -> Result<ErosionReport, Error> {
        let RunOptions { progress, layers, controls, .. } = options;
        controls.validate(map.width(), map.height())?;
        let starts = Starts::new(&controls, map.width(), map.height())?;
        let mut silent = Silent;
        let progress = progress.unwrap_or(&mut silent);
        layers::record(
            layers,
            &mut map,
            |r: &ErosionReport| r.droplets,
            |map, tracks| {
                let extras = Extras { tracks, gate: Gate::of(&controls), starts: Some(&starts) };
                Ok(self.run_tracked(map, rng, progress, extras)?)
            },
        )
    }
}

/// A snowball on its way: where it is, where it was (it writes there), its
/// velocity, its load (exactly the sum of the height changes it made, in
/// `f64`) and the steps it has taken.
#[derive(Clone, Copy, Debug)]
struct Rolling {
    position: Vec2,
    previous: Vec2,
    velocity: Vec2,
    load: f64,
    i: u32,
}

impl Rolling {
    fn new(start: Vec2) -> Self {
        Self { position: start, previous: start, velocity: Vec2::ZERO, load: 0.0, i: 0 }
    }
}

/// A step (or a final deposit) whose reads were not allowed: it was not taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Refused;

/// The snowball loop's working state: the map and the run's books.
struct Roller<'m> {
    cells: &'m mut [f32],
    width: usize,
    height: usize,
    report: ErosionReport,
    /// What a final deposit could not place exactly (`f32` rounding), put down
    /// with the next one.
    remainder: f64,
    /// The output layers' tracks, when the run records them.
    tracks: Option<&'m mut [Track]>,
    /// The controls' active mask and erodibility over these cells.
    gate: Gate<'m>,
}

impl<'m> Roller<'m> {
    /// A roller over `cells` (`width` x `height`) behind `gate`, with empty
    /// books.
    fn new(cells: &'m mut [f32], width: usize, height: usize, gate: Gate<'m>) -> Self {
        Self { cells, width, height, report: ErosionReport::default(), remainder: 0.0, tracks: None, gate }
    }

    /// Whether the snowball at `position` stands on a cell it may not enter
    /// (its active value is 0): it then stops, before its step.
    #[inline]
    fn masked(&self, position: Vec2) -> bool {
        if !self.contains(position) {
            return false;
        }
        let (x, y) = clamped_cell(position, self.width, self.height);
        !self.gate.admits(y * self.width + x)
    }

    #[inline]
    fn contains(&self, p: Vec2) -> bool {
        p.x >= 0.0 && p.y >= 0.0 && p.x < self.width as f32 && p.y < self.height as f32
    }

    /// Rolls one snowball from `start` (on the map) to its end, and settles it.
    fn roll<S: NormalSampler>(&mut self, k: &SnowballParams, sampler: &Offset<S>, start: Vec2) {
        let mut ball = Rolling::new(start);
        match self.advance(k, sampler, &mut ball, |_, _| true) {
            Ok(fate) => self.settle(&ball, fate),
            Err(Refused) => unreachable!("every read is allowed"),
        }
    }

    /// Rolls `ball` on until it stops, and returns how (not yet settled); or
    /// stops it, as it stands, before a step whose reads `allowed(position,
    /// previous)` refuses, or before its final deposit (`allowed(position,
    /// position)`) once its steps are used up.
    ///
    /// Each step reads the normal at `position` and writes behind the
    /// snowball, at `previous`; seed 001's loop, split so it can be resumed.
    /// A snowball that has rolled onto a masked cell stops there (fate
    /// [`Fate::Masked`], once `allowed(position, previous)`): it settles in
    /// the cell it came from.
    fn advance<S: NormalSampler>(
        &mut self,
        k: &SnowballParams,
        sampler: &Offset<S>,
        ball: &mut Rolling,
        allowed: impl FnMut(Vec2, Vec2) -> bool,
    ) -> Result<Fate, Refused> {
        // Compiled for the widest vectors (3 % fewer instructions with AVX2:
        // the samplers' normals it calls are not inlined); without a gate
        // the loop makes no test of it (3 % of a step).
        simd::widest(
            Isa::detect(),
            #[inline(always)]
            || match self.gate.is_open() {
                true => self.advance_through::<false, S>(k, sampler, ball, allowed),
                false => self.advance_through::<true, S>(k, sampler, ball, allowed),
            },
        )
    }

    /// [`advance`](Self::advance), with the gate's tests when `GATED`.
    #[inline(always)]
    fn advance_through<const GATED: bool, S: NormalSampler>(
        &mut self,
        k: &SnowballParams,
        sampler: &Offset<S>,
        ball: &mut Rolling,
        mut allowed: impl FnMut(Vec2, Vec2) -> bool,
    ) -> Result<Fate, Refused> {
        loop {
            if GATED && self.masked(ball.position) {
                return if allowed(ball.position, ball.previous) { Ok(Fate::Masked) } else { Err(Refused) };
            }
            if ball.i >= k.max_iterations {
                return if allowed(ball.position, ball.position) {
                    Ok(Fate::StepLimit)
                } else {
                    Err(Refused)
                };
            }
            if !allowed(ball.position, ball.previous) {
                return Err(Refused);
            }
            let grid = GridRef::new_unchecked(self.width, self.height, &*self.cells);
            let n = unit(sampler.normal(&grid, ball.position, k.height_scale));
            self.report.steps += 1;
            if !(n.x.is_finite() && n.y.is_finite() && n.z.is_finite()) {
                return Ok(Fate::Unstable);
            }
            if n.y == 1.0 {
                return Ok(Fate::Flat);
            }
            // Seed 001: deposit and erosion, written behind the snowball.
            let deposit = ball.load as f32 * k.deposition_rate * n.y;
            let erosion = k.erosion_rate * (1.0 - n.y) * (ball.i as f32 * k.iteration_scale).min(1.0);
            let change = deposit - erosion;
            if change != 0.0 {
                ball.load -= self.spread::<GATED>(ball.previous, f64::from(change));
            }
            if !self.contains(ball.position) {
                return Ok(Fate::LeftMap);
            }
            let v = ball.velocity;
            ball.velocity = Vec2::new(k.friction * v.x + n.x * k.speed, k.friction * v.y + n.z * k.speed);
            ball.previous = ball.position;
            ball.position += ball.velocity;
            ball.i += 1;
            if self.tracks.is_some() {
                self.track(ball);
            }
        }
    }

    /// Books a stopped snowball: off the map its load is outflow, else it goes
    /// down bilinearly where the snowball stands.
    /// Records the step `ball` just took from its previous position (on the
    /// map): one unit of "water" a snowball, one unit of time a step, and its
    /// load.
    fn track(&mut self, ball: &Rolling) {
        let (w, h) = (self.width, self.height);
        let (from, to) = (clamped_cell(ball.previous, w, h), clamped_cell(ball.position, w, h));
        let crossed = !self.contains(ball.position) || to != from;
        if let Some(tracks) = self.tracks.as_deref_mut() {
            layers::pass(tracks, from.1 * w + from.0, to.1 * w + to.0, 1.0, 1.0, ball.load, crossed);
        }
    }

    fn settle(&mut self, ball: &Rolling, fate: Fate) {
        let fate = if self.contains(ball.position) { fate } else { Fate::LeftMap };
        self.report.count(fate);
        if fate == Fate::LeftMap {
            self.report.outflow += ball.load;
        } else if ball.load != 0.0 {
            // A masked snowball's load goes whole to the cell it came from (a
            // cell's point has all the bilinear weight).
            let at = match fate {
                Fate::Masked => Vec2::new(math::floor(ball.previous.x), math::floor(ball.previous.y)),
                _ => ball.position,
            };
            // The rounding remainder of earlier deposits goes with this one (never
            // alone: a stray ulp on flat sea would make it not flat).
            self.remainder += ball.load;
            self.remainder -= self.spread::<true>(at, self.remainder);
        }
    }

    /// Adds `amount` at `p` (on the map), spread over the 4 cells around it with
    /// bilinear weights (the sampler's, clamped at the border), each share
    /// through the gate; returns the height change actually applied, summed in
    /// `f64`, and books it. Inlined, so it runs in the roll's widest vectors
    /// (out of line it was compiled for the baseline: 2.4 % more
    /// instructions a run, 256², the same bits).
    #[inline(always)]
    fn spread<const GATED: bool>(&mut self, p: Vec2, amount: f64) -> f64 {
        let (fx, fy) = (math::floor(p.x), math::floor(p.y));
        // The products of 24-bit fractions are exact in f64: the weights sum to 1.
        let (tx, ty) = (f64::from(p.x - fx), f64::from(p.y - fy));
        let (x0, y0) = (fx as usize, fy as usize);
        let (x1, y1) = ((x0 + 1).min(self.width - 1), (y0 + 1).min(self.height - 1));
        let corners = [
            (y0 * self.width + x0, (1.0 - tx) * (1.0 - ty)),
            (y0 * self.width + x1, tx * (1.0 - ty)),
            (y1 * self.width + x0, (1.0 - tx) * ty),
            (y1 * self.width + x1, tx * ty),
        ];
        let mut applied = 0.0;
        for (index, weight) in corners {
            if weight == 0.0 {
                continue;
            }
            let old = self.cells[index];
            let proposed = (f64::from(old) + amount * weight) as f32;
            let new = if GATED { self.gate.apply(index, old, proposed) } else { proposed };
            if new.is_finite() {
                self.cells[index] = new;
                applied -= self.report.book(old, new);
            }
        }
        applied
    }
}

/// `n` scaled to unit length.
///
/// The [`Offset`] sampler blends unit normals, and a blend of unit normals is
/// shorter than 1: at the bottom of a V-shaped gully the walls' normals cancel
/// sideways and leave `(0, b, 0)` with `b < 1`, so a snowball at rest there
/// would erode `erosion_rate * (1 - b)` every step and dig a single-cell pit. The
/// original takes the normal of the blended slope, which is exactly up there;
/// rescaling to unit length restores that (and leaves flat ground exactly up).
#[inline]
fn unit(n: glam::Vec3) -> glam::Vec3 {
    n * (1.0 / math::sqrt(n.x * n.x + n.y * n.y + n.z * n.z))
}
