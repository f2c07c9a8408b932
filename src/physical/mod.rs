//! The `Physical` simulator: Newtonian droplets with mass transfer (seeds 000,
//! 003, 004), with the originals' conservation defects fixed.

use glam::Vec2;
use rand_core::Rng;

use crate::carry;
use crate::channels::Channels;
use crate::controls::{self, Extras, Gate, Starts};
use crate::droplet::{Droplet, Fate};
use crate::error::{Error, GridError, ParamError};
use crate::grid::{Grid, GridMut, GridRef, clamped_cell, try_copy};
use crate::layers::{self, Track};
use crate::math;
use crate::normal::{EightFacet, NormalSampler};
use crate::params::ErosionParams;
use crate::progress::{Progress, Silent, Ticker};
use crate::report::ErosionReport;
use crate::simulator::{Mode, RunOptions, Simulator};
use crate::tiles::{self, Turns};
use crate::transfer::{self, no_overshoot, pit_safe};
use drain::Rounds;
use simd::Isa;

mod drain;
mod landscape;
pub(crate) mod landscape_tiled;
mod lockstep;
mod pits;
mod pour;
pub(crate) mod simd;
#[cfg(feature = "parallel")]
pub(crate) mod tiled;

pub use lockstep::LOCKSTEP_LANES;

/// The `Physical` droplet simulator, generic over its [`NormalSampler`].
///
/// Each droplet starts at rest with one unit of water at a uniform random position,
/// then each step (seed 000's equations, forward Euler):
///
/// 1. `n` = the surface normal at the droplet's cell;
/// 2. `v += n.xz / (density * water) * dt`, `p += v * dt`, `v *= 1 - friction * dt`;
/// 3. capacity `C = max(0, water * |v| * (h_here - h_next))`, `h_next` the height of
///    the cell it moved into;
/// 4. the concentration `c = sediment / water` moves `dt * deposition_rate` of the
///    way to `C`: the terrain under the droplet changes by `water` times that change,
///    and the droplet is credited with exactly the change applied to the cell;
/// 5. `water *= 1 - dt * evaporation_rate`, keeping the sediment (its concentration
///    rises).
///
/// Fixed defects of the originals, each pinned by tests:
/// - sediment is conserved: a droplet that stops on the map (evaporated, step
///   limit, unstable) puts its load down where it stopped; one that leaves the map
///   carries its load out and the report counts it as outflow;
/// - **border rule**: droplets move and erode on the whole map, the 1-cell border
///   band included; there the 8-facet sampler falls back to central differences
///   with clamped indices (seed 000's fallback), so the border slopes like its
///   inner neighbour. A droplet stepping off the map sees beyond the edge a ghost
///   cell that continues the border's slope one cell outwards, never below the
///   **base level** (the map's lowest height when the run started): edge cells
///   erode like inner ones instead of standing as a rim, and an outlet cuts down
///   to the base level and no further;
/// - every droplet is bounded by `max_steps`, and a step that would produce a
///   non-finite value stops the droplet instead.
///
/// Maps under 3 cells on a side are valid and erode to themselves.
///
/// # Reproducibility
///
/// The same map, params, sampler and generator state give the same output bits,
/// with `std` or `libm`, on every platform: the droplet loop uses only exactly
/// rounded operations in a fixed order. A change of output for a fixed seed is
/// value-breaking and is announced in the changelog; `tests/value_stability.rs`
/// pins hashes of seeded runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Physical<S = EightFacet> {
    params: ErosionParams,
    sampler: S,
    k: Constants,
}

/// Per-run constants derived from validated params.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Constants {
    dt: f32,
    density: f32,
    /// `1 - friction * dt`.
    friction_keep: f32,
    /// `1 - dt * evaporation_rate`.
    evaporation_keep: f32,
    /// `1 / evaporation_keep`: how `dt / mass` grows per step.
    evaporation_gain: f32,
    /// `dt * deposition_rate`.
    dt_kd: f32,
    min_water: f32,
    height_scale: f32,
    max_steps: u32,
    pit_safe: bool,
    /// `dt` times friction μ and times evaporation K_e (the landscape kernel
    /// lowers them in channels; the products as its steps work them out).
    dt_friction: f32,
    dt_evaporation: f32,
}

impl Constants {
    fn new(p: &ErosionParams) -> Self {
        // A landscape step crosses one cell, `cell_size` of the params' unit
        // length: the time step and so every rate per step grow with it, the
        // height scale turns height per cell into height per unit length, and
        // the step limit counts unit lengths (1 keeps every bit).
        let length = p.channels.map_or(1.0, |c| c.cell_size);
        let dt = p.dt * length;
        Self {
            dt,
            density: p.density,
            friction_keep: 1.0 - p.friction * dt,
            evaporation_keep: 1.0 - dt * p.evaporation_rate,
            evaporation_gain: 1.0 / (1.0 - dt * p.evaporation_rate),
            dt_kd: dt * p.deposition_rate,
            min_water: p.min_water,
            height_scale: p.height_scale / length,
            max_steps: cell_steps(p.max_steps, length),
            pit_safe: p.pit_safe,
            dt_friction: dt * p.friction,
            dt_evaporation: dt * p.evaporation_rate,
        }
    }
}

/// A step limit of `max_steps` unit lengths in steps of `length` (rounded, at
/// least 1; validation keeps it within the params' largest limit).
fn cell_steps(max_steps: u32, length: f32) -> u32 {
    if length == 1.0 {
        return max_steps;
    }
    // Rounded half up (`f64::round` needs `std`).
    let steps = f64::from(max_steps) / f64::from(length) + 0.5;
    steps.clamp(1.0, f64::from(ErosionParams::MAX_STEPS_LIMIT)) as u32
}

impl Physical<EightFacet> {
    /// A simulator with the 8-facet sampler.
    ///
    /// # Errors
    /// A [`ParamError`] if `params` fails [`ErosionParams::validate`].
    pub fn new(params: ErosionParams) -> Result<Self, ParamError> {
        Self::with_sampler(params, EightFacet)
    }
}

impl<S: NormalSampler + Clone> Physical<S> {
    /// A simulator with the given sampler.
    ///
    /// # Errors
    /// A [`ParamError`] if `params` fails [`ErosionParams::validate`].
    pub fn with_sampler(params: ErosionParams, sampler: S) -> Result<Self, ParamError> {
        params.validate()?;
        Ok(Self { params, sampler, k: Constants::new(&params) })
    }

    /// The validated parameters.
    pub fn params(&self) -> &ErosionParams {
        &self.params
    }

    /// The sampler.
    pub fn sampler(&self) -> &S {
        &self.sampler
    }

    /// One droplet after another ([`Mode::Sequential`]): each draws its start
    /// `x` then `y` (one `next_u64` each, top 24 bits), then the sampler's
    /// per-droplet state.
    pub(crate) fn run_sequential<St, P>(
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
        if let Some(channels) = self.params.channels {
            return self.drive_landscape(map, progress, extras, channels, |eroder, flow, total, ticker| {
                landscape::run_sequential(Isa::detect(), eroder, flow, total, rng, ticker);
            });
        }
        let k = self.k;
        self.drive(map, progress, extras, |eroder, total, ticker| {
            for done in 0..total {
                if ticker.should_stop(done) {
                    eroder.report.cancelled = true;
                    break;
                }
                let Some(start) = eroder.draw_start(rng) else { break };
                eroder.sampler.spawn(rng);
                let mut droplet = Droplet::new(start);
                let mut walk = Walk::new(&k, eroder.cell_of(start));
                let fate = loop {
                    if let Some(fate) = eroder.step(&mut droplet, &mut walk) {
                        break fate;
                    }
                };
                eroder.settle(&mut droplet, fate);
            }
        })
    }

    /// [`Mode::Lockstep`]: the droplets draw their starts (and their sampler
    /// state) as they enter a lane. A sampler with a lane kernel (the only one
    /// is the 8-facet one) runs the SIMD kernel; any other, its own normals lane
    /// by lane.
    pub(crate) fn run_lockstep<St, P>(
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
        if let Some(channels) = self.params.channels {
            return self.drive_landscape(map, progress, extras, channels, |eroder, flow, total, ticker| {
                landscape::run_interleaved(Isa::detect(), eroder, flow, total, rng, ticker);
            });
        }
        if self.sampler.lane_kernel().is_some() {
            let lanes = self.as_eight_facet();
            lanes.drive(map, progress, extras, |eroder, total, ticker| {
                lockstep::run(eroder, total, rng, ticker)
            })
        } else {
            self.drive(map, progress, extras, |eroder, total, ticker| {
                lockstep::run_scalar(eroder, total, rng, ticker)
            })
        }
    }

    /// [`Mode::Fast`] for the landscape kernel with the 8-facet sampler: its
    /// tiles (of [`tiles::TILE`] cells, [`tiles::SWEEP`] droplets a sweep)
    /// one turn after another on the calling thread, the streams seeded by
    /// one `u64` drawn from `rng`: the bits `Parallel` with `ParallelParams::default()` gives on
    /// any number of threads. Each turn works on a copy of its zone, which
    /// stays in cache (27 % faster than one droplet after another on the
    /// whole map at 512², fBm, Zen 3), eight droplets at a time (0.76 of the
    /// time again; docs/performance.md).
    fn run_landscape_tiles<St, P>(
        &self,
        channels: Channels,
        map: &mut Grid<St>,
        rng: &mut dyn Rng,
        progress: &mut P,
        extras: Extras<'_>,
    ) -> Result<ErosionReport, GridError>
    where
        St: AsRef<[f32]> + AsMut<[f32]>,
        P: Progress + ?Sized,
    {
        let seed = rng.next_u64();
        map.check_finite()?;
        let mut ticker = Ticker::new(progress, u64::from(self.params.droplets));
        let eight_facet = self.as_eight_facet();
        let tiling = landscape_tiled::Tiling {
            tile: tiles::TILE as usize,
            sweep: u64::from(tiles::SWEEP),
            at: Turns::Here,
        };
        let report = landscape_tiled::run(&eight_facet, channels, map, tiling, &mut ticker, seed, extras)?;
        ticker.finish(report.droplets);
        Ok(report)
    }

    /// The frame of every run: checks the map, runs `body` on an eroder over it
    /// (unless the map is too small to simulate), flushes the rounding carry and
    /// sends the last progress report.
    fn drive<St, P>(
        &self,
        map: &mut Grid<St>,
        progress: &mut P,
        extras: Extras<'_>,
        body: impl FnOnce(&mut Eroder<'_, S>, u64, &mut Ticker<'_, P>),
    ) -> Result<ErosionReport, GridError>
    where
        St: AsRef<[f32]> + AsMut<[f32]>,
        P: Progress + ?Sized,
    {
        map.check_finite()?;
        let total = u64::from(self.params.droplets);
        let mut ticker = Ticker::new(progress, total);
        let mut eroder = Eroder::new(map.view_mut(), self.k, self.sampler.clone()).with_extras(extras);
        if eroder.simulable() {
            body(&mut eroder, total, &mut ticker);
            eroder.close_books();
        }
        ticker.finish(eroder.report.droplets);
        Ok(eroder.report)
    }

    /// [`drive`](Self::drive) for the landscape kernel, with its discharge and
    /// momentum maps.
    fn drive_landscape<St, P>(
        &self,
        map: &mut Grid<St>,
        progress: &mut P,
        extras: Extras<'_>,
        channels: Channels,
        mut body: impl FnMut(&mut Eroder<'_, S>, &mut landscape::FlowMaps, u64, &mut Ticker<'_, P>),
    ) -> Result<ErosionReport, GridError>
    where
        St: AsRef<[f32]> + AsMut<[f32]>,
        P: Progress + ?Sized,
    {
        // Allocated before the map changes; `drive` checks the map.
        let mut flow = landscape::FlowMaps::new(channels, map.width() * map.height())?;
        // The map as the run found it: pits it did not make stay.
        let before = if channels.settle_pits { try_copy(map.cells())? } else { alloc::vec::Vec::new() };
        let (width, height) = (map.width(), map.height());
        let mut rounds = Rounds::new(&channels, self.params.droplets);
        self.drive(map, progress, extras, |eroder, total, ticker| {
            body(eroder, &mut flow, total, ticker);
            while !eroder.report.cancelled {
                let steps = eroder.report.steps;
                let more = rounds.next(eroder.cells, width, height, &eroder.gate, steps);
                if more == 0 {
                    break;
                }
                ticker.extend(more);
                body(eroder, &mut flow, more, ticker);
            }
            if channels.settle_pits {
                eroder.settle_pits(&before);
            }
        })
    }

    /// Follows one droplet from `start`, step by step, eroding `map` as it goes:
    /// an iterator over the droplet's state after each step (the last may lie off
    /// the map). Draw its `position`s to show a droplet's path.
    ///
    /// The droplet takes seed 000's steps, whatever
    /// [`channels`](ErosionParams::channels) says (the landscape kernel's maps
    /// need a whole run). The sampler is used as configured: per-droplet state (an
    /// [`Offset`](crate::Offset)'s offset) is not redrawn. When the droplet stops,
    /// or when the trace is dropped early (fate [`Fate::Stopped`]), its load is put
    /// down where it stands, so the map stays balanced.
    ///
    /// ```
    /// use glam::Vec2;
    /// use hydraulic_erosion::{ErosionParams, Fate, Heightmap, Physical};
    ///
    /// let mut map = Heightmap::from_fn(64, 64, |x, y| (x + y) as f32 * 0.01).unwrap();
    /// let physical = Physical::new(ErosionParams::default()).unwrap();
    /// let mut trace = physical.trace(&mut map, Vec2::new(40.5, 40.5)).unwrap();
    /// let path: Vec<Vec2> = trace.by_ref().map(|d| d.position).collect();
    /// assert!(path[1].x < path[0].x); // downhill is towards the origin
    /// assert_eq!(trace.fate(), Some(Fate::LeftMap));
    /// ```
    ///
    /// # Errors
    /// [`GridError::NonFinite`] for a non-finite cell, [`GridError::OutsideMap`] if
    /// `start` is not finite or lies off the map.
    pub fn trace<'m, St>(&self, map: &'m mut Grid<St>, start: Vec2) -> Result<DropletTrace<'m, S>, GridError>
    where
        St: AsRef<[f32]> + AsMut<[f32]>,
    {
        map.check_finite()?;
        if !map.contains(start) {
            return Err(GridError::OutsideMap);
        }
        // Seed 000's step, in its own units: `channels` (and its cell size)
        // belong to the landscape kernel, whose maps need a whole run.
        let k = Constants::new(&ErosionParams { channels: None, ..self.params });
        let eroder = Eroder::new(map.view_mut(), k, self.sampler.clone());
        let done = !eroder.simulable();
        let walk = Walk::new(&k, eroder.cell_of(start));
        Ok(DropletTrace { eroder, droplet: Droplet::new(start), walk, fate: None, done })
    }
}

impl<S: NormalSampler + Clone> Simulator for Physical<S> {
    type Report = ErosionReport;

    /// Erodes `map` with `params.droplets` droplets drawn from `rng`, in
    /// `options.mode` (see [`Mode`]).
    ///
    /// A sampler with a lane kernel (the 8-facet one) runs as
    /// [`EightFacet`] itself (the same normals, bit for bit), through code
    /// compiled once, in this crate.
    fn run_with(
        &mut self,
        map: GridMut<'_>,
        rng: &mut dyn Rng,
        options: RunOptions<'_>,
    ) -> Result<ErosionReport, Error> {
        match self.sampler.lane_kernel() {
            Some(_) => self.as_eight_facet().run_eight_facet(map, rng, options),
            None => self.run_any(map, rng, options),
        }
    }
}

impl Physical<EightFacet> {
    /// [`Simulator::run_with`] for the 8-facet sampler, not generic, so that
    /// it is compiled here, once: a generic caller (`Physical<S>` for any
    /// `S`, in any crate) would otherwise compile the lockstep kernels, the
    /// tiles and the loops again, for each instruction set, in its own crate
    /// and on each of its rebuilds.
    #[inline(never)]
    fn run_eight_facet(
        &self,
        map: GridMut<'_>,
        rng: &mut dyn Rng,
        options: RunOptions<'_>,
    ) -> Result<ErosionReport, Error> {
        self.run_any(map, rng, options)
    }
}

impl<S: NormalSampler + Clone> Physical<S> {
    /// This model with the 8-facet sampler, which a sampler with a lane
    /// kernel runs as.
    pub(crate) fn as_eight_facet(&self) -> Physical<EightFacet> {
        Physical { params: self.params, sampler: EightFacet, k: self.k }
    }

    /// [`Simulator::run_with`]'s body, for any sampler.
    fn run_any(
        &self,
        mut map: GridMut<'_>,
        rng: &mut dyn Rng,
        options: RunOptions<'_>,
    ) -> Result<ErosionReport, Error> {
        let RunOptions { progress, mode, layers, controls } = options;
        let mut silent = Silent;
        let progress = progress.unwrap_or(&mut silent);
        controls.validate(map.width(), map.height())?;
        let starts = Starts::new(&controls, map.width(), map.height())?;
        layers::record(
            layers,
            &mut map,
            |r: &ErosionReport| r.droplets,
            |map, tracks| {
                let extras = Extras { tracks, gate: Gate::of(&controls), starts: Some(&starts) };
                Ok(match mode {
                    Mode::Sequential => self.run_sequential(map, rng, progress, extras),
                    Mode::Fast if self.params.channels.is_some() => match self.params.channels {
                        Some(channels) if self.sampler.lane_kernel().is_some() => {
                            self.run_landscape_tiles(channels, map, rng, progress, extras)
                        }
                        // The tiles carry no per-droplet sampler state; the
                        // interleaved order gains nothing (the kernel's maps,
                        // not its arithmetic, bound it).
                        _ => self.run_sequential(map, rng, progress, extras),
                    },
                    _ => self.run_lockstep(map, rng, progress, extras),
                }?)
            },
        )
    }
}

/// One droplet followed step by step; see [`Physical::trace`].
///
/// Iterating yields the droplet's state after each step. Dropping the trace before
/// it ends puts the droplet's load down where it stands.
#[derive(Debug)]
pub struct DropletTrace<'m, S: NormalSampler> {
    eroder: Eroder<'m, S>,
    droplet: Droplet,
    walk: Walk,
    fate: Option<Fate>,
    done: bool,
}

impl<S: NormalSampler> DropletTrace<'_, S> {
    /// The droplet as it is now.
    pub fn droplet(&self) -> &Droplet {
        &self.droplet
    }

    /// Why the droplet stopped, once it has (`None` while it runs, and on maps too
    /// small to simulate).
    pub fn fate(&self) -> Option<Fate> {
        self.fate
    }

    /// The map as the droplet has left it so far.
    pub fn heights(&self) -> GridRef<'_> {
        GridRef::new_unchecked(self.eroder.width, self.eroder.height, &*self.eroder.cells)
    }

    /// What the trace has done so far.
    pub fn report(&self) -> &ErosionReport {
        &self.eroder.report
    }

    /// Runs the droplet to its end and returns the report.
    pub fn finish(mut self) -> ErosionReport {
        self.by_ref().for_each(drop);
        self.eroder.report
    }

    fn end(&mut self, fate: Fate) {
        self.eroder.settle(&mut self.droplet, fate);
        let (x, y) = self.eroder.cell_of(self.droplet.position);
        self.eroder.flush_near(x, y);
        self.fate = Some(fate);
        self.done = true;
    }
}

impl<S: NormalSampler> Iterator for DropletTrace<'_, S> {
    type Item = Droplet;

    fn next(&mut self) -> Option<Droplet> {
        if self.done {
            return None;
        }
        match self.eroder.step(&mut self.droplet, &mut self.walk) {
            None => Some(self.droplet),
            Some(Fate::LeftMap) => {
                // The step happened: show where it went, with the load it carried out.
                let last = self.droplet;
                self.end(Fate::LeftMap);
                Some(last)
            }
            Some(fate) => {
                self.end(fate);
                None
            }
        }
    }
}

impl<S: NormalSampler> Drop for DropletTrace<'_, S> {
    fn drop(&mut self) {
        if !self.done {
            self.end(Fate::Stopped);
        }
    }
}

/// A droplet's step count, its `dt / mass` and its cell, kept beside it so the
/// step needs no division (water shrinks by a fixed factor per step, so `dt /
/// (density * water)` grows by its inverse) and finds its cell without
/// converting the position again.
#[derive(Clone, Copy, Debug)]
struct Walk {
    age: u32,
    /// `dt / (density * water)`, starting from one unit of water.
    accel: f32,
    /// The droplet's cell: `clamped_cell` of its position.
    cell: (usize, usize),
}

impl Walk {
    fn new(k: &Constants, cell: (usize, usize)) -> Self {
        Self { age: 0, accel: k.dt / k.density, cell }
    }
}

/// A step not taken: it would have moved the droplet where it may not go.
#[derive(Clone, Copy, Debug)]
struct Refused;

/// Where a step's Newton update takes a droplet, before friction.
#[derive(Clone, Copy, Debug)]
struct Motion {
    px: f32,
    py: f32,
    vx: f32,
    vy: f32,
    /// `|(vx, vy)|`.
    speed: f32,
}

impl Motion {
    /// Newton with forward Euler; friction comes after the move (seed 000's
    /// order). Written so the chain from the normal `(nx, nz)` to the next cell is
    /// short: the position moves by `v·dt` (known before the normal) plus
    /// `n·dt²/m`. The lockstep mode does these operations lane by lane, in this
    /// order.
    #[inline(always)]
    fn of(k: &Constants, d: &Droplet, walk: &Walk, nx: f32, nz: f32) -> Self {
        let accel = walk.accel;
        let shift = accel * k.dt;
        let vx = d.velocity.x + nx * accel;
        let vy = d.velocity.y + nz * accel;
        let px = (d.position.x + d.velocity.x * k.dt) + nx * shift;
        let py = (d.position.y + d.velocity.y * k.dt) + nz * shift;
        Motion { px, py, vx, vy, speed: math::sqrt(vx * vx + vy * vy) }
    }

    /// Whether the new position and velocity are finite (else the droplet is
    /// unstable).
    #[inline(always)]
    fn is_finite(&self) -> bool {
        self.px.is_finite() && self.py.is_finite() && self.vx.is_finite() && self.vy.is_finite()
    }
}

/// A step's mass-transfer terms that need no map read: the terrain under the
/// droplet changes by `water * dt·kd * (C - sediment / water)`, expanded: it gives
/// `rate * (h_here - h_next)` (the capacity, `dt·kd·water·C`, when positive) and
/// takes back `dt·kd·sediment`. `|v|` after friction is `friction_keep * |v
/// before|`.
#[derive(Clone, Copy, Debug)]
struct Trade {
    rate: f32,
    /// `h_here + dt·kd·sediment`.
    take_back: f32,
    off_map: bool,
}

impl Trade {
    #[inline(always)]
    fn of(k: &Constants, water: f32, sediment: f64, speed: f32, h_here: f32, off_map: bool) -> Self {
        let wk = water * k.dt_kd;
        let rate = (wk * water * k.friction_keep) * speed;
        Trade { rate, take_back: h_here + (k.dt_kd as f64 * sediment) as f32, off_map }
    }
}

/// The droplet loop's working state: the map, the constants, the sampler, and the
/// run's books.
#[derive(Debug)]
struct Eroder<'m, S> {
    cells: &'m mut [f32],
    width: usize,
    height: usize,
    k: Constants,
    sampler: S,
    report: ErosionReport,
    /// Sediment a final deposit could not place exactly (f32 rounding), put down
    /// with the next one.
    pub(super) carry: f64,
    /// The lowest height on the map when the run started: the level beyond the
    /// border that outlets erode down to and no further.
    base_level: f32,
    /// The output layers' tracks, when the run records them (see [`Layers`](crate::Layers)).
    tracks: Option<&'m mut [Track]>,
    /// The active mask and erodibility (see [`Controls`](crate::Controls)).
    gate: Gate<'m>,
    /// Where droplets start; `None`: uniformly.
    starts: Option<&'m Starts>,
    /// `width` and `height` as `f32`, for [`off_map`](Self::off_map) (a
    /// `usize` takes six instructions to convert, every step).
    extent: [f32; 2],
}

impl<'m, S: NormalSampler> Eroder<'m, S> {
    fn new(grid: Grid<&'m mut [f32]>, k: Constants, sampler: S) -> Self {
        let (width, height, cells) = grid.into_parts();
        let base_level = cells.iter().fold(f32::INFINITY, |lo, &h| lo.min(h));
        let report = ErosionReport::default();
        let (gate, starts) = (Gate::default(), None);
        Eroder {
            cells,
            width,
            height,
            k,
            sampler,
            report,
            carry: 0.0,
            base_level,
            tracks: None,
            gate,
            starts,
            extent: [width as f32, height as f32],
        }
    }

    /// This eroder, with a run's tracks, gate and starts.
    fn with_extras(self, Extras { tracks, gate, starts }: Extras<'m>) -> Self {
        Self { tracks, gate, starts, ..self }
    }

    /// A droplet's start drawn from `rng` (see [`Starts::draw`]); `None` when
    /// no droplet can start.
    #[inline]
    fn draw_start(&self, rng: &mut dyn Rng) -> Option<Vec2> {
        controls::draw_start(self.starts, rng, self.width, self.height)
    }

    /// The centre of cell `(x, y)`: where a droplet that would have entered a
    /// masked cell stops.
    fn centre(x: usize, y: usize) -> Vec2 {
        Vec2::new(x as f32 + 0.5, y as f32 + 0.5)
    }

    /// Records a step that began in cell `here` with `water`, carrying
    /// `sediment` after its trade, that `crossed` into another cell (or off
    /// the map), when the run records tracks.
    #[inline(always)]
    fn track(&mut self, here: usize, next: usize, water: f32, sediment: f64, crossed: bool) {
        if let Some(tracks) = self.tracks.as_deref_mut() {
            layers::pass(tracks, here, next, water, self.k.dt, sediment, crossed);
        }
    }

    fn simulable(&self) -> bool {
        self.width >= 3 && self.height >= 3
    }

    #[inline]
    fn cell_of(&self, position: Vec2) -> (usize, usize) {
        clamped_cell(position, self.width, self.height)
    }

    /// Whether a droplet ends before its next step: out of water, or out of steps.
    #[inline(always)]
    fn spent(&self, d: &Droplet, walk: &Walk) -> Option<Fate> {
        self.spent_water(d.water, walk.age)
    }

    /// Whether a droplet with `water` after `age` steps is spent (both
    /// kernels' test).
    #[inline(always)]
    fn spent_water(&self, water: f32, age: u32) -> Option<Fate> {
        if water <= self.k.min_water {
            Some(Fate::Evaporated)
        } else if age >= self.k.max_steps {
            Some(Fate::StepLimit)
        } else {
            None
        }
    }

    /// One step of seed 000's droplet; `None` while the droplet goes on.
    ///
    /// Invariant: on entry the droplet's position is on the map.
    #[inline(always)]
    fn step(&mut self, d: &mut Droplet, walk: &mut Walk) -> Option<Fate> {
        self.step_if(d, walk, |_, _| true).unwrap_or_else(|Refused| unreachable!("every move is allowed"))
    }

    /// [`step`](Self::step), unless the droplet would move (finitely) to a
    /// position `allowed` refuses: then `Err(Refused)`, with the droplet and the
    /// map as they were (the tiled runs stop droplets at their zone's edge).
    #[inline(always)]
    fn step_if(
        &mut self,
        d: &mut Droplet,
        walk: &mut Walk,
        allowed: impl Fn(f32, f32) -> bool,
    ) -> Result<Option<Fate>, Refused> {
        if let Some(fate) = self.spent(d, walk) {
            return Ok(Some(fate));
        }
        let k = self.k;
        let (x, y) = walk.cell;
        let here = y * self.width + x;
        let grid = GridRef::new_unchecked(self.width, self.height, &*self.cells);
        let n = self.sampler.normal_in_cell(&grid, d.position, x, y, k.height_scale);
        let h_here = self.cells[here];
        let moved = Motion::of(&k, d, walk, n.x, n.z);
        if moved.is_finite() && !allowed(moved.px, moved.py) {
            return Err(Refused);
        }
        self.report.steps += 1;
        Ok(self.transfer(d, walk, moved, (x, y), h_here))
    }

    /// The second half of a step, after the motion: moves the droplet, trades
    /// sediment with the cell `(x, y)` it came from (whose height was `h_here`
    /// when the step began), and evaporates.
    #[inline(always)]
    fn transfer(
        &mut self,
        d: &mut Droplet,
        walk: &mut Walk,
        moved: Motion,
        (x, y): (usize, usize),
        h_here: f32,
    ) -> Option<Fate> {
        let k = self.k;
        let Motion { px, py, vx, vy, speed } = moved;
        if !moved.is_finite() {
            return Some(Fate::Unstable);
        }
        let trade = Trade::of(&k, d.water, d.sediment, speed, h_here, self.off_map(px, py));
        d.velocity = Vec2::new(vx * k.friction_keep, vy * k.friction_keep);
        d.position = Vec2::new(px, py);
        let mut to = 0; // (the new cell's index: `after_trade` takes the cell)
        let fate = self.trade(d.position, (x, y), h_here, trade, &mut d.sediment, (&mut walk.cell, &mut to));
        if self.tracks.is_some() || !self.gate.is_open() {
            self.after_trade(d, walk.cell, (x, y), fate);
        }
        if fate.is_some() {
            return fate;
        }
        d.water *= k.evaporation_keep;
        walk.accel *= k.evaporation_gain;
        walk.age += 1;
        None
    }

    /// What a step does besides its trade when the run has controls or
    /// layers: a droplet stopped by the mask stands at the centre of its cell
    /// `(x, y)`, and the step is tracked (it crossed when it left the cell,
    /// now `cell`, or the map).
    ///
    /// Inlined: out of line (`#[cold]`) a step with layers took 68.6 more
    /// instructions than one without, inlined 40.6, the plain step 265 as
    /// before (the seeds' sequential mode, callgrind, 256²).
    #[inline(always)]
    fn after_trade(
        &mut self,
        d: &mut Droplet,
        cell: (usize, usize),
        (x, y): (usize, usize),
        fate: Option<Fate>,
    ) {
        if fate == Some(Fate::Masked) {
            d.position = Self::centre(x, y);
        }
        // Bitwise, not short-circuit: no branch to mispredict.
        let crossed = (fate == Some(Fate::LeftMap)) | (cell.0 != x) | (cell.1 != y);
        self.track(y * self.width + x, cell.1 * self.width + cell.0, d.water, d.sediment, crossed);
    }

    /// Whether `(px, py)` lies off the map.
    #[inline(always)]
    fn off_map(&self, px: f32, py: f32) -> bool {
        !(px >= 0.0 && py >= 0.0 && px < self.extent[0] && py < self.extent[1])
    }

    /// The map's side of a step's mass transfer towards the capacity, at the cell
    /// `(x, y)` the droplet came from, now that it stands at `p`: reads the next
    /// cell's height (its cell and the cell's index into `cell` when on the
    /// map and open; else the index of `(x, y)`), applies the change
    /// to the cell left and credits `sediment` with it. A droplet leaving the map
    /// sees the border's slope continued beyond it (the border rule), so edge
    /// cells erode like inner ones instead of standing as a rim.
    #[inline(always)]
    fn trade(
        &mut self,
        p: Vec2,
        here: (usize, usize),
        h_here: f32,
        trade: Trade,
        sediment: &mut f64,
        cell: (&mut (usize, usize), &mut usize),
    ) -> Option<Fate> {
        // Without controls the loop runs the ungated copy: one well-predicted
        // test a step (two per step cost a lockstep run 3 %).
        if self.gate.is_open() {
            self.trade_through::<false>(p, here, h_here, trade, sediment, cell)
        } else {
            self.trade_through::<true>(p, here, h_here, trade, sediment, cell)
        }
    }

    /// [`trade`](Self::trade), through the gate when `GATED`.
    #[inline(always)]
    fn trade_through<const GATED: bool>(
        &mut self,
        p: Vec2,
        (x, y): (usize, usize),
        h_here: f32,
        trade: Trade,
        sediment: &mut f64,
        (cell, to): (&mut (usize, usize), &mut usize),
    ) -> Option<Fate> {
        let mut masked = false;
        let here = y * self.width + x;
        // Where the droplet stands after the step, unless it moves below.
        *to = here;
        let h_next = if trade.off_map {
            self.height_beyond(p.x, p.y)
        } else {
            // On the map, so the conversions need no clamping (sides < 2^31).
            let next = (simd::truncate(p.x) as usize, simd::truncate(p.y) as usize);
            let index = next.1 * self.width + next.0;
            // A droplet never enters a masked cell: it stops where it is.
            masked = GATED && !self.gate.admits(index);
            if !masked {
                (*cell, *to) = (next, index);
            }
            self.cells[index]
        };
        let give = trade.rate * (h_here - h_next);
        let h_new = trade.take_back - math::larger(give, 0.0);
        let current = self.cells[here];
        // Another droplet of the same lockstep round may have changed the cell
        // since the step began: then apply this step's change to what is there,
        // and guard it against what is there.
        let h_new = if current == h_here { h_new } else { current + (h_new - h_here) };
        let h_new = if GATED { self.gate.apply(here, current, h_new) } else { h_new };
        let h_new = if self.k.pit_safe {
            let floor = h_next.max(self.lowest_neighbour(x, y));
            pit_safe(h_new, current, h_next, floor, *sediment)
        } else {
            no_overshoot(h_new, current, h_next)
        };
        if h_new.is_finite() {
            self.cells[here] = h_new;
            *sediment += self.report.book(current, h_new);
        } else if !trade.off_map {
            return Some(Fate::Unstable);
        }
        if masked {
            return Some(Fate::Masked);
        }
        trade.off_map.then_some(Fate::LeftMap)
    }

    /// Indices of the cells in the 3 x 3 block around `(x, y)`, clipped to the map.
    fn around(&self, x: usize, y: usize) -> impl Iterator<Item = usize> + use<S> {
        let w = self.width;
        let xs = x.saturating_sub(1)..(x + 2).min(w);
        let ys = y.saturating_sub(1)..(y + 2).min(self.height);
        ys.flat_map(move |y| xs.clone().map(move |x| y * w + x))
    }

    /// The lowest of the (up to 8) neighbours of cell `(x, y)`.
    fn lowest_neighbour(&self, x: usize, y: usize) -> f32 {
        transfer::lowest_neighbour(self.cells, self.width, self.height, x, y)
    }

    /// The ghost cell's height at `(px, py)` off the map (the border rule).
    fn height_beyond(&self, px: f32, py: f32) -> f32 {
        transfer::height_beyond(self.cells, self.width, self.height, self.base_level, px, py)
    }

    /// Ends a droplet: its load leaves the map or is put down where it stands.
    fn settle(&mut self, d: &mut Droplet, fate: Fate) {
        self.report.count(fate);
        let load = core::mem::take(&mut d.sediment);
        if fate == Fate::LeftMap {
            self.report.outflow += load;
        } else {
            let (x, y) = self.cell_of(d.position);
            self.deposit(y * self.width + x, load);
        }
    }

    /// Puts `load` plus any carried rounding remainder on cell `index`, keeping
    /// what `f32` could not represent for the next deposit.
    fn deposit(&mut self, index: usize, load: f64) {
        let total = load + self.carry;
        if self.gate.holds_back(index, total) {
            self.carry = total;
            return;
        }
        self.carry = match carry::add(self.cells, index, total) {
            Some((old, new)) => total + self.report.book(old, new),
            None => total,
        };
    }

    /// Places the carried remainder on the cell of smallest magnitude on the map,
    /// where `f32` resolves it best (end of a run); what that add rounded off
    /// goes to the next, as [`carry::add_all`] does.
    fn flush_anywhere(&mut self) {
        let (gate, report) = (self.gate, &mut self.report);
        let target = |cells: &[f32]| gate.flush_target(cells);
        self.carry = carry::add_all(self.cells, self.carry, target, |_, old, new| {
            report.book(old, new);
        });
    }

    /// [`flush_anywhere`](Self::flush_anywhere) at a run's end: what no cell
    /// could take is booked as the report's `unplaced`.
    fn close_books(&mut self) {
        self.flush_anywhere();
        self.report.unplaced += core::mem::take(&mut self.carry);
    }

    /// Places the carried remainder on the smallest-magnitude cell around `(x, y)`
    /// (end of a trace: no whole-map scan per droplet) that may take it (a
    /// negative one lowers its cell: not one the gate holds back); what
    /// none takes is booked as the report's `unplaced`.
    fn flush_near(&mut self, x: usize, y: usize) {
        if self.carry != 0.0 {
            let (gate, lower) = (self.gate, self.carry < 0.0);
            let may = move |i: &usize| gate.admits(*i) && (!lower || gate.weight(*i) >= 1.0);
            if self.around(x, y).any(|i| may(&i)) {
                let best = carry::smallest_magnitude(self.cells, self.around(x, y).filter(may));
                self.deposit(best, 0.0);
            }
        }
        self.report.unplaced += core::mem::take(&mut self.carry);
    }
}
