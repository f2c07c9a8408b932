//! Deterministic multi-threaded runs: fixed batches on a frozen map, their
//! changes applied in a fixed order (the `parallel` feature).

use alloc::vec::Vec;

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256StarStar;
use rayon::prelude::*;

use crate::blur::blur_scratch;
use crate::channels::Channels;
use crate::controls::{Extras, Gate, Starts};
use crate::error::{Error, GridError, ParamError, check};
use crate::grid::{Grid, GridMut, Heightmap, try_copy, try_filled};
use crate::hydrology::{Hydrology, HydrologyReport};
use crate::layers::{self, NO_TRACK, Track};
use crate::normal::{EightFacet, NormalSampler};
use crate::params::ErosionParams;
use crate::physical::{Physical, landscape_tiled, tiled};
use crate::progress::{Progress, Silent, Ticker};
use crate::random::stream_seed;
use crate::report::ErosionReport;
use crate::simulator::{Mode, RunOptions, Simulator};
use crate::snowball::{Snowball, SnowballParams};
use crate::tiles::{self, Turns};

/// How a [`Parallel`] run shares a [`Physical`] run's droplets between threads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Layout {
    /// Coloured tiles (default): droplets run in the tile of the map they stand
    /// in, on the live map, tiles that do not overlap side by side (see
    /// [`Parallel`]). Uses `tile_size`, `sweep_size` and the run's [`Mode`]. [`Hydrology`]
    /// runs always use tiles; [`Snowball`] runs use them when their sampler's
    /// reach is known and at most half a tile, and batches otherwise.
    #[default]
    #[cfg_attr(feature = "serde", serde(alias = "Tiles"))]
    Tiles,
    /// Fixed batches on a frozen map, their changes added in batch order (see
    /// [`Parallel`]). Uses `batch_size`, `batches_per_round` and the run's [`Mode`].
    #[cfg_attr(feature = "serde", serde(alias = "Batches"))]
    Batches,
}

/// Parameters of a [`Parallel`] run.
///
/// The result depends on these fields (and on the seed), never on the number
/// of threads.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default, deny_unknown_fields)
)]
pub struct ParallelParams {
    /// How [`Physical`] runs share their droplets; default [`Layout::Tiles`].
    pub layout: Layout,
    /// Side of a tile in cells, in `[8, 2^24]`; default 64. Tiles run side by
    /// side, so a map needs several tiles per thread and colour (4 colours):
    /// 64 suits maps of 512 x 512 (16 tiles a colour); use 32 for 256 x 256.
    /// Larger tiles let droplets run further before they wait for their next
    /// tile's turn, and hold wider lakes. Used by [`Layout::Tiles`] and every
    /// [`Hydrology`] run.
    pub tile_size: u32,
    /// Droplets (or snowballs) started per sweep (every sweep gives each tile one turn), in
    /// `[1, 2^24]`; default 32 768. Larger sweeps keep the lockstep lanes of each
    /// tile fuller. Used by [`Layout::Tiles`]; a [`Hydrology`] sweep starts one
    /// batch of its own (`HydrologyParams::batch`); the landscape kernel's
    /// sweeps take at most a thirty-second of a droplet per cell (at least its
    /// `refresh`), since its maps refresh between sweeps only.
    pub sweep_size: u32,
    /// Droplets (or snowballs) per batch, in `[1, 2^24]`; default 4096. A batch
    /// sees only its own droplets' changes and the map as it was at the start of
    /// its round.
    pub batch_size: u32,
    /// Batches run side by side in a round, 1 or 2; default 2. The threads
    /// that can be kept busy, and one map copy each in memory. Larger values
    /// would make the erosion unstable (see [`Parallel`]), so they are rejected
    /// until a merge that stays stable exists.
    pub batches_per_round: u32,
}

impl Default for ParallelParams {
    fn default() -> Self {
        Self {
            layout: Layout::Tiles,
            tile_size: tiles::TILE,
            sweep_size: tiles::SWEEP,
            batch_size: 4096,
            batches_per_round: 2,
        }
    }
}

impl ParallelParams {
    /// Checks every field against its documented range.
    ///
    /// # Errors
    /// A [`ParamError`] naming the first field out of range.
    pub fn validate(&self) -> Result<(), ParamError> {
        check((8..=1 << 24).contains(&self.tile_size), "tile_size", "8 to 2^24")?;
        check((1..=1 << 24).contains(&self.sweep_size), "sweep_size", "1 to 2^24")?;
        check((1..=1 << 24).contains(&self.batch_size), "batch_size", "1 to 2^24")?;
        check((1..=2).contains(&self.batches_per_round), "batches_per_round", "1 or 2")
    }
}

/// Runs a simulator's droplets (or particles) on the caller's rayon pool, with
/// the same bits for any number of threads.
///
/// Droplets that share a map interact, so threads that erode one map at the same
/// time give a result that depends on their timing. Two layouts avoid that.
///
/// # Tiles ([`Layout::Tiles`], the default)
///
/// The map is cut into square tiles of [`tile_size`](ParallelParams::tile_size)
/// cells, coloured by the parity of their column and row (4 colours). A tile's
/// **zone** is the tile grown by half a tile on every side, so the zones of two
/// tiles of one colour never overlap. The run goes in **sweeps**: each sweep
/// starts [`sweep_size`](ParallelParams::sweep_size) new droplets (drawn from a
/// `Xoshiro256StarStar` seeded with a SplitMix64 mix of `(seed, sweep)`), each
/// waiting in the tile it stands in, then gives every tile one **turn**, colour
/// by colour: the tile runs its waiting droplets in order
/// (the run's [`Mode`]: one after another, or in lockstep) on a
/// copy of its zone, which is then written back. A droplet runs until it ends
/// or until its next step would read beyond the zone; it then waits, as it
/// stands, for the next turn of the tile it stands in. Only a tile's 8
/// neighbours overlap its zone, so its turn starts on the pool as soon as its
/// neighbours of lower colours have had theirs (there is no wait for a whole
/// colour), and turns that run at once never share a cell. A step longer than
/// half a tile (from extreme parameters) is taken alone on the whole map at the
/// end of the sweep. Sweeps go on, without new droplets at the end, until every
/// droplet has ended.
///
/// Droplets here run on the live map and see every change made before their
/// turn, as in a single-core run: concurrency only reorders them, tile by tile,
/// so the terrain erodes like a sequential run's at any thread count. On the
/// 512 x 512 reference map with 200 000 droplets (defaults, lockstep) the
/// eroded and deposited totals are within 1.1% of a sequential run's, and the
/// mean absolute height difference to it (4.4e-3) is about that between two
/// sequential runs with different seeds (4.3e-3). Turns are
/// independent, so the result depends on the tile and sweep sizes, the mode and
/// the seed, never on which thread ran which tile. Mass is conserved as in the
/// single-core runs: each turn's books are exact and it places what it can of
/// its rounding remainder within its zone, handing the rest (below half a unit
/// in the last place) back to be summed and placed on the whole map; droplets
/// waiting between turns carry their load
/// with them; a stopped run puts the load of every waiting droplet down where
/// it stands.
///
/// Choosing the tile size: the tiles of one colour are the work that can run at
/// once, so a map needs several per thread (512 x 512 with tiles of 64 has 16 a
/// colour; use 32 on 256 x 256). Larger tiles let droplets run longer before
/// they wait, and in lockstep keep each tile's 32 lanes fuller; so do larger
/// sweeps, at the cost of more droplets in flight. Tiles of at least 8 cells.
///
/// [`Snowball`] runs use tiles the same way, sweeps of `sweep_size` snowballs,
/// when their sampler's [`reach`](NormalSampler::reach) is known and at most
/// half a tile (the built-in samplers: 2, plus the [`Offset`](crate::Offset)
/// radius rounded up, plus 1; 4 with the defaults): a snowball waits at its
/// zone's edge when its next normal would read, or its next write behind it
/// would land, beyond the zone, and a step longer than half a tile is taken
/// on the whole map at the end of the sweep. Each snowball's sampler is a
/// fresh clone, spawned (its offset drawn) from the sweep's stream after the
/// snowball's start. The blur, if any, runs once at the end, as with batches.
/// A sampler of unknown reach (the trait's default) or a wider one runs in
/// batches. On the 512 x 512 reference map with 0.4 snowballs per cell the
/// eroded total came within 0.1% of a sequential run's, and the mean absolute
/// height difference to it (7.7e-4) is that between two sequential runs with
/// different seeds (7.8e-4); on a 128 x 128 island, within 1%.
///
/// # Batches ([`Layout::Batches`], and [`Snowball`] runs that cannot use tiles)
///
/// The droplets are cut into fixed **batches** of
/// [`batch_size`](ParallelParams::batch_size), and the batches into **rounds**
/// of [`batches_per_round`](ParallelParams::batches_per_round) (the last round
/// splits the droplets left evenly between its batches). In a round every
/// batch copies the map as it was when the round began (the frozen map), runs
/// its droplets on its copy with the simulator's own single-core loop and its own
/// random stream, and the batches' changes (copy minus frozen map, in `f64`) are
/// then added to the map in batch order (chunk by chunk of the map on the pool,
/// each chunk in batch order). Which thread runs which batch changes
/// nothing; batch `j` (counted over the whole run) draws from a
/// `Xoshiro256StarStar` seeded with a SplitMix64 mix of `(seed, j)`.
///
/// Mass is conserved as by the simulators themselves: each batch's books are
/// exact, the sub-ulp remainder of adding its changes to the map in `f32` is
/// carried to the next change of its chunk, the chunks' remainders are summed in
/// chunk order and placed at the end on the cell of smallest magnitude, and the
/// outflow is the sum of the batches' outflows. The report is the batches'
/// reports merged in batch order.
///
/// A droplet sees the changes of the droplets before it in its own batch and of
/// all earlier rounds, but not those of the other batches of its round. Where
/// two batches of a round cut the same channel, both cuts are added: each batch
/// may cut a cell down to its floor (pit-safe transfer), so the sum can cut below
/// it. With two batches a round the overshoot at most mirrors a cut and the
/// terrain stays like a sequential run's: on the 512 x 512 reference map with
/// 200 000 droplets (batches of 4096) the eroded and deposited totals are within
/// 3% of a sequential run's and the mean height difference to it (4.3e-3) is of
/// the order of that between two sequential runs with different droplet streams
/// (2.9e-3). With **three or more batches a round the overshoots grow from round
/// to round** (pits, then spikes, then erosion many times the sequential
/// amount), whatever the batch size, so `batches_per_round` is limited to 1
/// or 2, and so are the threads a batched run keeps busy. Larger batches cost
/// less per droplet (each batch copies the map, and its changes are added to it
/// cell by cell, about `2 * cells` work per batch) but let the two batches of a
/// round drift further apart: keep `2 * batch_size` to a few percent of the
/// map's cells (the default 4096 suits maps of 512 x 512 and up; on a 128 x 128
/// map use about 256). Batch sizes that are multiples of
/// [`LOCKSTEP_LANES`](crate::LOCKSTEP_LANES) keep the lockstep lanes full.
///
/// # Either way
///
/// Each [`Physical`] run's base level (the floor of its outlets) is the lowest
/// height of the map it starts from, and the random streams are not the
/// sequential run's, so the bits differ from [`Physical::run_seeded`] (and
/// [`Hydrology::run_seeded`]) even on one thread. To compare results across
/// machines, fix all the params.
///
/// # The landscape kernel
///
/// [`Physical`] with [`Channels`] (the landscape preset) runs in tiles only,
/// with the 8-facet sampler: each turn copies its zone of the terrain and of
/// the discharge and momentum maps, the maps refresh between sweeps, and the
/// pits are settled on the whole map at the end. Batches are refused: merged
/// copies would add up the cuts each copy's pit-safe guard clamped.
///
/// # Hydrology
///
/// [`Hydrology`] runs in tiles too, on copies of each zone's terrain, pool,
/// stream, vegetation and visit layers. Each sweep starts one batch of
/// particles ([`HydrologyParams::batch`](crate::HydrologyParams::batch), drawn
/// from the sweep's stream) and ends as a sequential batch does: the stream map
/// takes in the cells visited during the sweep and trees grow (drawing from the
/// same stream), on the whole map. A particle goes on in its tile's turn until
/// its next step would read beyond the zone, or until a flood fills beyond it:
/// the flood is then undone, and the particle waits, as it stands, for the next
/// turn of the tile it is in. A particle that cannot move at all in a turn (a
/// pool wider than the zone, a jump longer than half a tile) takes its next
/// descent or flood alone on the whole map at the end of the sweep. So lakes of
/// any size fill and drain as in a sequential run; on maps whose lakes span
/// many tiles, more of the work is done one particle at a time (on the 512 x
/// 512 reference map with 100 000 particles and tiles of 64, 705 to 780
/// descents or floods were taken on the whole map, against about 125 000
/// waits at a zone's edge). A particle runs
/// through several batches when it waits, and its visits count in the batch
/// of the sweep they happen in. `sweep_size`, `layout` and the mode do not
/// apply; the layers carry over between runs as with [`Hydrology::run`].
///
/// On the 512 x 512 reference map with 100 000 particles (tiles of 64, 2
/// threads) the eroded and deposited totals came within 0.5% of a sequential
/// run's (two sequential seeds differ by 1.4%), and the mean absolute height
/// difference to it (1.94e-3) is that between two sequential runs with
/// different seeds (1.90e-3). Which lakes
/// keep their water is chaotic in either kind of run: the water held in pools
/// after the run ranged from 5 800 to 9 100 volumes over 4 sequential seeds,
/// and from 1 700 to 10 900 over 5 tiled ones.
///
/// ```
/// use hydraulic_erosion::{ErosionParams, MassBalance, Parallel, ParallelParams, Physical, fbm_terrain};
///
/// let mut map = fbm_terrain(128, 128, 1)?;
/// let before = map.clone();
/// let mut physical = Physical::new(ErosionParams { droplets: 20_000, ..ErosionParams::default() })?;
/// let parallel = Parallel::new(ParallelParams::default())?;
/// // On the current rayon pool (the global one here; `ThreadPool::install` picks another).
/// let report = parallel.run_seeded(&mut physical, &mut map, 42)?;
/// assert!(MassBalance::of_run(&before, &map, &report).is_conserved());
/// # Ok::<(), hydraulic_erosion::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Parallel {
    params: ParallelParams,
}

impl Parallel {
    /// A runner with the given batching.
    ///
    /// # Errors
    /// A [`ParamError`] if `params` fails [`ParallelParams::validate`].
    pub fn new(params: ParallelParams) -> Result<Self, ParamError> {
        params.validate()?;
        Ok(Self { params })
    }

    /// The validated parameters.
    pub fn params(&self) -> &ParallelParams {
        &self.params
    }

    /// Runs `model` over `map` on the current rayon pool (see [`Parallel`]),
    /// as [`Simulator::run_with`] would one thread: the same params, the same
    /// conservation, a report of the same kind, and the same bits for any
    /// number of threads. The droplet streams are seeded by one `u64` drawn from
    /// `rng`. `options.progress` is told once per sweep or round (from the
    /// calling thread) and may stop the run there: the map is left balanced,
    /// no droplet starts after it (in tiles those under way finish their
    /// walks first; in batches they end where they stand), and the report
    /// says `cancelled`. `options.mode` sets how a tile's or a batch's `Physical`
    /// droplets move ([`Mode::Sequential`] one after another, else in lockstep).
    ///
    /// # Errors
    /// As [`Simulator::run_with`]; the map (and a `Hydrology`'s layers) are
    /// untouched on error.
    pub fn run_with<M: Tiled + ?Sized>(
        &self,
        model: &mut M,
        mut map: GridMut<'_>,
        rng: &mut dyn Rng,
        options: RunOptions<'_>,
    ) -> Result<M::Report, Error> {
        let RunOptions { progress, mode, layers, controls } = options;
        // Drawn before any check, as before layers and controls existed.
        let seed = rng.next_u64();
        let mut silent = Silent;
        let progress = progress.unwrap_or(&mut silent);
        controls.validate(map.width(), map.height())?;
        let starts = Starts::new(&controls, map.width(), map.height())?;
        let droplets = |r: &M::Report| r.as_ref().droplets;
        layers::record(layers, &mut map, droplets, |map, tracks| {
            let extras = Extras { tracks, gate: Gate::of(&controls), starts: Some(&starts) };
            model.run_parallel(self, map, seed, progress, mode, extras)
        })
    }

    /// [`run_with`](Self::run_with) with the default options.
    ///
    /// # Errors
    /// As [`run_with`](Self::run_with).
    pub fn run<M, S, R>(&self, model: &mut M, map: &mut Grid<S>, rng: &mut R) -> Result<M::Report, Error>
    where
        M: Tiled + ?Sized,
        S: AsRef<[f32]> + AsMut<[f32]>,
        R: Rng + ?Sized,
    {
        let mut rng = rng;
        self.run_with(model, map.view_mut(), &mut rng, RunOptions::default())
    }

    /// [`run`](Self::run) with a `Xoshiro256StarStar` seeded by `seed`, as
    /// [`Simulator::run_seeded`].
    ///
    /// # Errors
    /// As [`run_with`](Self::run_with).
    pub fn run_seeded<M, S>(&self, model: &mut M, map: &mut Grid<S>, seed: u64) -> Result<M::Report, Error>
    where
        M: Tiled + ?Sized,
        S: AsRef<[f32]> + AsMut<[f32]>,
    {
        self.run(model, map, &mut Xoshiro256StarStar::seed_from_u64(seed))
    }

    /// Physical's run on the pool for the 8-facet sampler, not generic:
    /// compiled once, here (see `Physical::run_with`).
    #[inline(never)]
    fn physical_eight_facet(
        &self,
        physical: &Physical<EightFacet>,
        map: &mut GridMut<'_>,
        seed: u64,
        progress: &mut dyn Progress,
        mode: Mode,
        extras: Extras<'_>,
    ) -> Result<ErosionReport, Error> {
        if let Some(channels) = physical.params().channels {
            return self.physical_landscape(physical, channels, map, seed, progress, extras);
        }
        Ok(self.physical(physical, map, seed, progress, mode != Mode::Sequential, extras)?)
    }

    /// Physical's droplets on the pool: in tiles when asked and the sampler has
    /// a lane kernel (the tiles carry no per-droplet sampler state), in batches
    /// otherwise (see [`Parallel`]).
    fn physical<S, St, P>(
        &self,
        physical: &Physical<S>,
        map: &mut Grid<St>,
        seed: u64,
        progress: &mut P,
        lockstep: bool,
        extras: Extras<'_>,
    ) -> Result<ErosionReport, GridError>
    where
        S: NormalSampler + Clone + Send + Sync,
        St: AsRef<[f32]> + AsMut<[f32]>,
        P: Progress + ?Sized,
    {
        map.check_finite()?;
        let total = u64::from(physical.params().droplets);
        let base = *physical.params();
        if self.params.layout == Layout::Tiles && physical.sampler().lane_kernel().is_some() {
            let mut ticker = Ticker::new(progress, total);
            let p = &self.params;
            let tiling =
                tiled::Tiling { tile: p.tile_size as usize, sweep: u64::from(p.sweep_size), lockstep };
            let eight_facet = Physical::new(base).expect("validated params");
            let report = tiled::run(&eight_facet, map, seed, tiling, &mut ticker, stream_seed, extras);
            ticker.finish(report.droplets);
            return Ok(report);
        }
        let Extras { tracks, gate, starts } = extras;
        let (mut report, remainder) =
            self.drive(map, total, seed, progress, tracks, |copy, count, rng, tracks| {
                let droplets = u32::try_from(count).unwrap_or(u32::MAX);
                let batch =
                    Physical::with_sampler(ErosionParams { droplets, ..base }, physical.sampler().clone())
                        .expect("a batch's params are the validated params with fewer droplets");
                // Each copy is the whole map: the gate reads it as it is.
                let extras = Extras { tracks, gate, starts };
                // Through the types the plain runs use (a view, a `dyn`
                // progress), so callers compile one copy of the loops, not two.
                let (copy, silent): (_, &mut dyn Progress) = (&mut copy.view_mut(), &mut Silent);
                let result = if lockstep {
                    batch.run_lockstep(copy, rng, silent, extras)
                } else {
                    batch.run_sequential(copy, rng, silent, extras)
                };
                result.expect("the frozen map is finite")
            })?;
        let rest = gate.flush(map.cells_mut(), remainder, |old, new| {
            report.book(old, new);
        });
        report.unplaced += rest;
        Ok(report)
    }

    /// Physical's landscape kernel ([`Channels`]) on the pool, in tiles only:
    /// batches merged on a frozen map would add up the cuts each copy's
    /// pit-safe guard clamped (measured on fBm 512 x 512: pits 0.4 % -> 2.2 %,
    /// θ 0.26 -> -0.2). The tiles carry no per-droplet sampler state, so
    /// other samplers are refused.
    fn physical_landscape<S, P>(
        &self,
        physical: &Physical<S>,
        channels: Channels,
        map: &mut GridMut<'_>,
        seed: u64,
        progress: &mut P,
        extras: Extras<'_>,
    ) -> Result<ErosionReport, Error>
    where
        S: NormalSampler + Clone + Send + Sync,
        P: Progress + ?Sized,
    {
        let refuse = |allowed| Err(Error::from(ParamError::new("channels", allowed)));
        if self.params.layout != Layout::Tiles {
            return refuse("None with Layout::Batches: the landscape kernel runs in tiles");
        }
        if physical.sampler().lane_kernel().is_none() {
            return refuse("None with this sampler in a Parallel run: its tiles take the 8-facet sampler");
        }
        map.check_finite()?;
        let base = *physical.params();
        let mut ticker = Ticker::new(progress, u64::from(base.droplets));
        let eight_facet = Physical::new(base)?;
        let tiling = landscape_tiled::Tiling {
            tile: self.params.tile_size as usize,
            sweep: u64::from(self.params.sweep_size),
            at: Turns::Pool,
        };
        let report = landscape_tiled::run(&eight_facet, channels, map, tiling, &mut ticker, seed, extras)?;
        ticker.finish(report.droplets);
        Ok(report)
    }

    /// Snowball's snowballs on the pool, in tiles or batches (see [`Parallel`]).
    fn snowball<S, St, P>(
        &self,
        snowball: &Snowball<S>,
        map: &mut Grid<St>,
        seed: u64,
        progress: &mut P,
        extras: Extras<'_>,
    ) -> Result<ErosionReport, GridError>
    where
        S: NormalSampler + Clone + Send + Sync,
        St: AsRef<[f32]> + AsMut<[f32]>,
        P: Progress + ?Sized,
    {
        map.check_finite()?;
        let Extras { tracks, gate, starts } = extras;
        let params = *snowball.params();
        let total = params.count(map.width(), map.height());
        // The blur's buffer before the map changes (see `Snowball::run`).
        let mut scratch = if params.blur { blur_scratch(map.len())? } else { Vec::new() };
        let inner = snowball.sampler().inner();
        let (mut report, remainder) = match self.snowball_tiling(snowball) {
            Some(tiling) => {
                let mut ticker = Ticker::new(progress, total);
                let extras = Extras { tracks, gate, starts };
                let done = snowball.run_tiled(map, seed, tiling, &mut ticker, stream_seed, extras);
                ticker.finish(done.0.droplets);
                done
            }
            None => self.drive(map, total, seed, progress, tracks, |copy, count, rng, tracks| {
                let snowballs = Some(u32::try_from(count).unwrap_or(u32::MAX));
                let batch_params = SnowballParams { snowballs, blur: false, ..params };
                let batch = Snowball::with_sampler(batch_params, inner.clone())
                    .expect("a batch's params are the validated params with fewer snowballs");
                let extras = Extras { tracks, gate, starts };
                // As Physical's batches: the plain runs' types, one copy.
                let (copy, silent): (_, &mut dyn Progress) = (&mut copy.view_mut(), &mut Silent);
                batch.run_tracked(copy, rng, silent, extras).expect("the frozen map is finite")
            })?,
        };
        let size = (map.width(), map.height());
        crate::snowball::close_books(
            map.cells_mut(),
            size,
            params.blur,
            remainder,
            &mut scratch,
            &gate,
            &mut report,
        );
        Ok(report)
    }

    /// How a [`Snowball`] run is tiled, `(tile, sweep, reach)`: with
    /// [`Layout::Tiles`] when its sampler's reach is known and at most half a
    /// tile; `None` (batches) otherwise.
    fn snowball_tiling<S: NormalSampler + Clone>(&self, snowball: &Snowball<S>) -> Option<(usize, u64, u32)> {
        let tile = self.params.tile_size as usize;
        let reach = snowball.sampler().reach().filter(|&r| r as usize <= tile / 2)?;
        (self.params.layout == Layout::Tiles).then_some((tile, u64::from(self.params.sweep_size), reach))
    }

    /// The rounds: `total` droplets in batches of `batch_size` (the last round's
    /// droplets split evenly between its batches), each run by
    /// `batch(copy of the frozen map, droplets, its rng)` on the current rayon
    /// pool, the changes added to `map` in batch order. Returns the merged report
    /// and the sub-ulp remainder still to place.
    fn drive<St, P, B>(
        &self,
        map: &mut Grid<St>,
        total: u64,
        seed: u64,
        progress: &mut P,
        mut tracks: Option<&mut [Track]>,
        batch: B,
    ) -> Result<(ErosionReport, f64), GridError>
    where
        St: AsRef<[f32]> + AsMut<[f32]>,
        P: Progress + ?Sized,
        B: Fn(&mut Heightmap, u64, &mut Xoshiro256StarStar, Option<&mut [Track]>) -> ErosionReport + Sync,
    {
        let mut ticker = Ticker::new(progress, total);
        let mut report = ErosionReport::default();
        let mut remainder = 0.0_f64;
        if map.width() < 3 || map.height() < 3 {
            ticker.finish(0);
            return Ok((report, remainder));
        }
        let size = u64::from(self.params.batch_size);
        let per_round = u64::from(self.params.batches_per_round);
        // One working copy per batch of a round (no more than the run has
        // batches), reused from round to round; `batches_per_round` map copies can
        // be more than the machine holds, so they are allocated fallibly, before
        // the map changes.
        let copy = || {
            Ok::<_, GridError>(Heightmap::new_unchecked(map.width(), map.height(), try_copy(map.cells())?))
        };
        let mut frozen = copy()?;
        let mut copies: Vec<Heightmap> = Vec::new();
        // Each batch's tracks, when the run records them (else empty), added
        // to the run's in batch order after each round.
        let mut batch_tracks: Vec<Vec<Track>> = Vec::new();
        for _ in 0..per_round.min(total) {
            copies.push(copy()?);
            batch_tracks.push(if tracks.is_some() { try_filled(map.len(), NO_TRACK)? } else { Vec::new() });
        }
        // Batch `first` is the first of the round, counted over the whole run.
        let (mut first, mut done) = (0u64, 0u64);
        while done < total {
            // Progress and cancellation between rounds only: the map is whole there.
            if ticker.should_stop(report.droplets) {
                report.cancelled = true;
                break;
            }
            // Full rounds hold `per_round` batches of `size`; the last round splits
            // what is left evenly, so no thread idles through it.
            let left = total - done;
            let (batches, count) = if left >= size * per_round {
                (per_round, size)
            } else {
                let batches = per_round.min(left);
                (batches, left.div_ceil(batches))
            };
            let copies = &mut copies[..batches as usize];
            let batch_tracks = &mut batch_tracks[..batches as usize];
            let reports: Vec<ErosionReport> = copies
                .par_iter_mut()
                .zip(batch_tracks.par_iter_mut())
                .enumerate()
                .map(|(k, (copy, own_tracks))| {
                    let k = k as u64;
                    let count = count.min(left - k * count);
                    copy.cells_mut().copy_from_slice(frozen.cells());
                    own_tracks.fill(NO_TRACK);
                    let mut rng = Xoshiro256StarStar::seed_from_u64(stream_seed(seed, first + k));
                    batch(copy, count, &mut rng, tiles::zone_tracks(own_tracks))
                })
                .collect();
            remainder += merge(map.cells_mut(), frozen.cells_mut(), copies);
            if let Some(tracks) = tracks.as_deref_mut() {
                merge_tracks(tracks, batch_tracks);
            }
            for batch_report in &reports {
                // What a batch's copy could not place, the whole map may.
                remainder += batch_report.unplaced;
                report.merge(&ErosionReport { unplaced: 0.0, ..*batch_report });
            }
            first += batches;
            done += (count * batches).min(left);
        }
        ticker.finish(report.droplets);
        Ok((report, remainder))
    }
}

/// A [`Simulator`] that [`Parallel`] runs on several threads with the same bits
/// for any thread count: [`Physical`] with any sampler (in tiles with a sampler
/// that has a lane kernel, in batches otherwise), [`Snowball`] with any sampler
/// (in tiles when its reach is known, in batches otherwise) and [`Hydrology`]. Sealed: the tiles need each model's own resumable droplet.
pub trait Tiled: Simulator + sealed::Sealed {}

impl<T: sealed::Sealed + ?Sized> Tiled for T {}

mod sealed {
    use super::*;

    /// How a simulator runs on a [`Parallel`]'s pool.
    pub trait Sealed: Simulator {
        fn run_parallel(
            &mut self,
            parallel: &Parallel,
            map: &mut GridMut<'_>,
            seed: u64,
            progress: &mut dyn Progress,
            mode: Mode,
            extras: Extras<'_>,
        ) -> Result<Self::Report, Error>;
    }

    impl<S: NormalSampler + Clone + Send + Sync> Sealed for Physical<S> {
        fn run_parallel(
            &mut self,
            parallel: &Parallel,
            map: &mut GridMut<'_>,
            seed: u64,
            progress: &mut dyn Progress,
            mode: Mode,
            extras: Extras<'_>,
        ) -> Result<ErosionReport, Error> {
            // A sampler with a lane kernel runs as the 8-facet one, compiled
            // once, here (see `Physical::run_with`).
            if self.sampler().lane_kernel().is_some() {
                return parallel.physical_eight_facet(
                    &self.as_eight_facet(),
                    map,
                    seed,
                    progress,
                    mode,
                    extras,
                );
            }
            if let Some(channels) = self.params().channels {
                // Refused: the landscape tiles take the 8-facet sampler.
                return parallel.physical_landscape(self, channels, map, seed, progress, extras);
            }
            Ok(parallel.physical(self, map, seed, progress, mode != Mode::Sequential, extras)?)
        }
    }

    impl<S: NormalSampler + Clone + Send + Sync> Sealed for Snowball<S> {
        fn run_parallel(
            &mut self,
            parallel: &Parallel,
            map: &mut GridMut<'_>,
            seed: u64,
            progress: &mut dyn Progress,
            _: Mode,
            extras: Extras<'_>,
        ) -> Result<ErosionReport, Error> {
            Ok(parallel.snowball(self, map, seed, progress, extras)?)
        }
    }

    impl Sealed for Hydrology {
        fn run_parallel(
            &mut self,
            parallel: &Parallel,
            map: &mut GridMut<'_>,
            seed: u64,
            progress: &mut dyn Progress,
            _: Mode,
            extras: Extras<'_>,
        ) -> Result<HydrologyReport, Error> {
            let tile = parallel.params.tile_size as usize;
            Ok(self.run_tiled(map, seed, tile, progress, stream_seed, extras)?)
        }
    }
}

/// Cells per chunk of the merge, its unit of work on the pool: fixed, so the
/// result never depends on the threads.
const MERGE_CHUNK: usize = 1 << 14;

/// Adds each copy's changes (`copy - frozen`) to `cells`, copies in batch order,
/// chunk by chunk of [`MERGE_CHUNK`] cells on the pool, then sets `frozen` to the
/// result. Returns the sum, in chunk order, of what `f32` could not hold.
fn merge(cells: &mut [f32], frozen: &mut [f32], copies: &[Heightmap]) -> f64 {
    let remainders: Vec<f64> = cells
        .par_chunks_mut(MERGE_CHUNK)
        .zip(frozen.par_chunks_mut(MERGE_CHUNK))
        .enumerate()
        .map(|(c, (cells, frozen))| {
            let start = c * MERGE_CHUNK;
            let mut remainder = 0.0;
            for copy in copies {
                let copy = &copy.cells()[start..start + cells.len()];
                remainder = add_changes(cells, frozen, copy, remainder);
            }
            frozen.copy_from_slice(cells);
            remainder
        })
        .collect();
    remainders.iter().sum()
}

/// Adds each batch's tracks to the run's, in batch order, chunk by chunk of
/// [`MERGE_CHUNK`] cells on the pool (each cell's sum in batch order: the same
/// bits for any thread count).
fn merge_tracks(tracks: &mut [Track], batches: &[Vec<Track>]) {
    tracks.par_chunks_mut(MERGE_CHUNK).enumerate().for_each(|(c, tracks)| {
        let start = c * MERGE_CHUNK;
        for batch in batches {
            let own_tracks = &batch[start..start + tracks.len()];
            for (track, own) in tracks.iter_mut().zip(own_tracks) {
                for (total, part) in track.iter_mut().zip(own) {
                    *total += part;
                }
            }
        }
    });
}

/// Adds `copy - frozen` (in `f64`) to `cells`, cell by cell in index order,
/// carrying what `f32` cannot hold to the next change; returns the carry.
fn add_changes(cells: &mut [f32], frozen: &[f32], copy: &[f32], mut remainder: f64) -> f64 {
    for ((cell, &was), &now) in cells.iter_mut().zip(frozen).zip(copy) {
        if was == now {
            continue;
        }
        let change = f64::from(now) - f64::from(was) + remainder;
        let old = *cell;
        let new = (f64::from(old) + change) as f32;
        if new.is_finite() {
            *cell = new;
            remainder = change - (f64::from(new) - f64::from(old));
        } else {
            remainder = change;
        }
    }
    remainder
}
