//! Lockstep mode: [`LOCKSTEP_LANES`] droplets advance together, one step each per
//! round, their 8-facet normals and motion computed as arrays across the lanes
//! (SIMD lanes where the target has them).

// Lane-indexed loops over several parallel arrays read best as index loops, and
// are the shape the vectoriser wants.
#![allow(clippy::needless_range_loop)]

use glam::Vec2;
use rand_core::Rng;

use super::simd::{self, FacetKernel, Isa};
use super::{Eroder, Motion, Trade, Walk};
use crate::droplet::{Droplet, Fate};
use crate::grid::GridRef;
use crate::layers::{self, Track};
use crate::math;
use crate::normal::eight_facet::{SLOPE, SQUARES, WEIGHT};
use crate::normal::{CentralDifference, EightFacet, NormalSampler};
use crate::progress::{Progress, Ticker};
use crate::transfer::no_overshoot;

/// How many droplets [`Mode::Lockstep`](crate::Mode::Lockstep)
/// advances together. The result of a lockstep run depends on this width and on
/// nothing else (not on the CPU's features, nor on the thread count).
pub const LOCKSTEP_LANES: usize = 32;

const L: usize = LOCKSTEP_LANES;

/// The lanes' droplets as a structure of arrays (one droplet a lane, or none,
/// `live` false, once the run is draining), so the per-round arithmetic runs
/// across lanes.
pub(super) struct Lanes {
    px: [f32; L],
    py: [f32; L],
    vx: [f32; L],
    vy: [f32; L],
    water: [f32; L],
    sediment: [f64; L],
    /// [`Walk`]'s fields.
    accel: [f32; L],
    age: [u32; L],
    /// [`Walk`]'s cell.
    cx: [i32; L],
    cy: [i32; L],
    live: [bool; L],
}

impl Lanes {
    fn new() -> Self {
        Lanes {
            px: [0.0; L],
            py: [0.0; L],
            vx: [0.0; L],
            vy: [0.0; L],
            water: [0.0; L],
            sediment: [0.0; L],
            accel: [0.0; L],
            age: [0; L],
            cx: [0; L],
            cy: [0; L],
            live: [false; L],
        }
    }

    /// The droplet in lane `l` and its walk.
    #[inline(always)]
    fn droplet(&self, l: usize) -> (Droplet, Walk) {
        let droplet = Droplet {
            position: Vec2::new(self.px[l], self.py[l]),
            velocity: Vec2::new(self.vx[l], self.vy[l]),
            water: self.water[l],
            sediment: self.sediment[l],
        };
        let cell = (self.cx[l] as usize, self.cy[l] as usize);
        (droplet, Walk { age: self.age[l], accel: self.accel[l], cell })
    }

    /// Puts a droplet and its walk in lane `l`.
    #[inline(always)]
    fn set(&mut self, l: usize, d: &Droplet, walk: &Walk) {
        (self.cx[l], self.cy[l]) = (walk.cell.0 as i32, walk.cell.1 as i32);
        (self.px[l], self.py[l]) = (d.position.x, d.position.y);
        (self.vx[l], self.vy[l]) = (d.velocity.x, d.velocity.y);
        (self.water[l], self.sediment[l]) = (d.water, d.sediment);
        (self.accel[l], self.age[l]) = (walk.accel, walk.age);
    }
}

/// One round's per-lane working arrays (structure of arrays, so the compiler
/// vectorises across lanes).
pub(super) struct Round {
    /// Heights of the 8 neighbours, facet-major: `around[k][lane]`.
    pub(super) around: [[f32; L]; 8],
    pub(super) centre: [f32; L],
    /// Per-facet weighted horizontal components.
    t: [[f32; L]; 8],
    nx: [f32; L],
    nz: [f32; L],
    /// Lanes on the 1-cell border band (central-difference normal).
    border: [bool; L],
}

impl Round {
    fn new() -> Self {
        Round {
            around: [[0.0; L]; 8],
            centre: [0.0; L],
            t: [[0.0; L]; 8],
            nx: [0.0; L],
            nz: [0.0; L],
            border: [false; L],
        }
    }
}

/// Where the lanes take their droplets from, and where droplets go that may not
/// take their next step here.
pub(crate) trait Feed<S> {
    /// The next droplet and its walk, if any are left; `sampler` is the lane's,
    /// for the droplet's per-droplet state.
    fn next(&mut self, eroder: &Eroder<'_, S>, sampler: &mut S) -> Option<(Droplet, Walk)>;

    /// Whether a droplet may move to `(px, py)` (finite) on this map: always,
    /// unless the map is one tile's zone of a larger one.
    #[inline(always)]
    fn holds(&self, px: f32, py: f32) -> bool {
        let _ = (px, py);
        true
    }

    /// Takes a droplet whose next step `holds` refused, as it stood before that
    /// step; `moved` tells whether it took any step in this run.
    fn pass(&mut self, droplet: Droplet, walk: Walk, moved: bool) {
        let _ = (droplet, walk, moved);
    }

    /// Whether the run may stop with `live` lanes still running and nothing
    /// left to feed them: those droplets are then passed back as they stand
    /// (moved), to go on in a later run with fuller lanes. Never, by default.
    #[inline(always)]
    fn park(&self, live: usize) -> bool {
        let _ = live;
        false
    }
}

/// New droplets from `rng` at uniform random starts (start `x` then `y`, as the
/// sequential mode draws them), `total` in all.
struct Spawner<'r> {
    rng: &'r mut dyn Rng,
    total: u64,
    spawned: u64,
}

impl<S: NormalSampler> Feed<S> for Spawner<'_> {
    /// Draws the start `x` then `y`, then the sampler's per-droplet state (as
    /// the sequential mode does).
    #[inline]
    fn next(&mut self, eroder: &Eroder<'_, S>, sampler: &mut S) -> Option<(Droplet, Walk)> {
        if self.spawned == self.total {
            return None;
        }
        let Some(start) = eroder.draw_start(self.rng) else {
            // No droplet can start (the controls' rain falls nowhere).
            self.spawned = self.total;
            return None;
        };
        self.spawned += 1;
        sampler.spawn(self.rng);
        Some((Droplet::new(start), Walk::new(&eroder.k, eroder.cell_of(start))))
    }
}

/// Runs `total` droplets in lockstep on `eroder` (an 8-facet Physical run),
/// drawing their starts from `rng`; see [`run_fed`].
pub(super) fn run(
    eroder: &mut Eroder<'_, EightFacet>,
    total: u64,
    rng: &mut dyn Rng,
    ticker: &mut Ticker<'_, impl Progress + ?Sized>,
) {
    run_fed(eroder, &mut Spawner { rng, total, spawned: 0 }, ticker);
}

/// Runs `total` droplets in lockstep on `eroder` for a sampler without a lane
/// kernel: each lane keeps its own copy of the sampler (its per-droplet state)
/// and asks it for the lane's normal, one lane after another; the motion and
/// the trades run as for the 8-facet lanes.
pub(super) fn run_scalar<S: NormalSampler + Clone>(
    eroder: &mut Eroder<'_, S>,
    total: u64,
    rng: &mut dyn Rng,
    ticker: &mut Ticker<'_, impl Progress + ?Sized>,
) {
    run_fed_with(eroder, &mut Spawner { rng, total, spawned: 0 }, ticker, scalar_normals);
}

/// Runs the droplets of `feed` in lockstep on `eroder`, with the widest
/// vectors this CPU has (chosen at run time, see [`Isa`]; the bits are the same
/// on every path).
pub(super) fn run_fed<F, P>(eroder: &mut Eroder<'_, EightFacet>, feed: &mut F, ticker: &mut Ticker<'_, P>)
where
    F: Feed<EightFacet> + ?Sized,
    P: Progress + ?Sized,
{
    simd::run_fed(Isa::detect(), eroder, feed, ticker);
}

/// Each live lane's normal from its own sampler, and its cell's height.
#[inline(always)]
fn scalar_normals<S: NormalSampler>(
    eroder: &Eroder<'_, S>,
    lanes: &Lanes,
    samplers: &[S],
    round: &mut Round,
) {
    let (w, h) = (eroder.width, eroder.height);
    let grid = GridRef::new_unchecked(w, h, &*eroder.cells);
    let scale = eroder.k.height_scale;
    for l in 0..L {
        if !lanes.live[l] {
            continue;
        }
        let (x, y) = (lanes.cx[l] as usize, lanes.cy[l] as usize);
        let position = Vec2::new(lanes.px[l], lanes.py[l]);
        let n = samplers[l].normal_in_cell(&grid, position, x, y, scale);
        (round.nx[l], round.nz[l], round.centre[l]) = (n.x, n.z, eroder.cells[y * w + x]);
    }
}

/// The lockstep loop, with `normals` filling each round's normals and cell
/// heights: the 8-facet kernel of an instruction set (inlined into each
/// [`simd`] entry point, so it is compiled for that set), or the lanes' own
/// samplers ([`run_scalar`]).
///
/// Each round: first, in lane order, every lane whose droplet is spent (out of
/// water or steps) puts its load down and takes the next droplet from `feed`;
/// then every live lane reads the map and computes its normal and motion; then,
/// in lane order, each lane trades sediment with the live map (applying its
/// change to what is there, so two lanes on one cell both count) and moves on,
/// or, if `feed` does not hold where it would move, is passed back to `feed` as
/// it stood.
#[inline(always)]
pub(super) fn run_fed_with<S, F, P, N>(
    eroder: &mut Eroder<'_, S>,
    feed: &mut F,
    ticker: &mut Ticker<'_, P>,
    normals: N,
) where
    S: NormalSampler + Clone,
    F: Feed<S> + ?Sized,
    P: Progress + ?Sized,
    N: Fn(&Eroder<'_, S>, &Lanes, &[S], &mut Round),
{
    let k = eroder.k;
    // One sampler a lane: per-droplet state (an `Offset`'s offset) stays with
    // the lane's droplet. The 8-facet sampler has none (and no size).
    let mut samplers: alloc::vec::Vec<S> = (0..L).map(|_| eroder.sampler.clone()).collect();
    let mut lanes = Lanes::new();
    let mut round = Round::new();
    // Written whole by every round before it is read (made once: zeroing it
    // each round cost a step 2 instructions).
    let mut stage = Stage::new();
    // Whether each lane's droplet has stepped since it entered.
    let mut moved = [false; L];
    // The output layers' tracks, out of the eroder for the run so their
    // slice stays in registers (put back at the end).
    let mut tracks = eroder.tracks.take();
    // The trades run across the lanes only without controls and with the
    // seeds' clamp (`pit_safe` reads eight neighbours a lane), on maps whose
    // cells `u32` counts.
    let across =
        eroder.gate.is_open() && !k.pit_safe && u32::try_from(eroder.cells.len()).is_ok() && !lane_by_lane();
    let mut seen = Seen::new();
    let mut ahead = Ahead::new();
    loop {
        if ticker.should_stop(eroder.report.droplets) {
            eroder.report.cancelled = true;
            for l in 0..L {
                if lanes.live[l] {
                    lanes.live[l] = false;
                    eroder.settle(&mut lanes.droplet(l).0, Fate::Stopped);
                }
            }
            break;
        }
        // Retire spent droplets and refill, in lane order; most rounds have none
        // (the test is `Eroder::spent` across the lanes).
        let mut ending = false;
        for l in 0..L {
            ending |= !lanes.live[l] | (lanes.water[l] <= k.min_water) | (lanes.age[l] >= k.max_steps);
        }
        let mut any = !ending;
        for l in (0..L).filter(|_| ending) {
            if lanes.live[l] {
                let (mut droplet, walk) = lanes.droplet(l);
                if let Some(fate) = eroder.spent(&droplet, &walk) {
                    lanes.live[l] = false;
                    eroder.settle(&mut droplet, fate);
                }
            }
            if !lanes.live[l] {
                if let Some((droplet, walk)) = feed.next(eroder, &mut samplers[l]) {
                    lanes.set(l, &droplet, &walk);
                    lanes.live[l] = true;
                    moved[l] = false;
                }
            }
            any |= lanes.live[l];
        }
        if !any {
            break;
        }
        if ending {
            let live = lanes.live.iter().filter(|&&live| live).count();
            if feed.park(live) {
                for l in 0..L {
                    if !lanes.live[l] {
                        continue;
                    }
                    lanes.live[l] = false;
                    let (droplet, walk) = lanes.droplet(l);
                    feed.pass(droplet, walk, true);
                }
                break;
            }
        }
        normals(eroder, &lanes, &samplers, &mut round);

        // Motion and the trade terms across the lanes, with the sequential mode's
        // operations. A lane that goes on keeps its new state; one that ends is
        // settled below from its position, kept as it was if unstable, and its
        // load.
        for l in 0..L {
            let (droplet, walk) = lanes.droplet(l);
            let m = Motion::of(&k, &droplet, &walk, round.nx[l], round.nz[l]);
            (stage.px[l], stage.py[l], stage.vx[l], stage.vy[l], stage.speed[l]) =
                (m.px, m.py, m.vx, m.vy, m.speed);
        }
        // The lanes' state as the round found it: each lane's new state is
        // picked from this copy or the step, and stored whole (written as
        // "keep what is there", the compiler makes masked stores, a tenth of
        // a step on Zen 2).
        let (old_px, old_py, old_vx, old_vy) = (lanes.px, lanes.py, lanes.vx, lanes.vy);
        let (old_water, old_accel, old_age) = (lanes.water, lanes.accel, lanes.age);
        // Whether every lane is live and steps on the map: then the trades
        // may run across the lanes (see `trades_across_lanes`).
        let mut ordinary = across;
        for l in 0..L {
            let (px, py, vx, vy) = (stage.px[l], stage.py[l], stage.vx[l], stage.vy[l]);
            // `Motion::is_finite` without branches: `x * 0` is 0 for finite `x`, NaN else.
            let ok = ((px * 0.0 + py * 0.0) + (vx * 0.0 + vy * 0.0)) == 0.0;
            // A lane that may not move there keeps its state and is passed on.
            let stay = ok & !feed.holds(px, py);
            let go = ok & !stay;
            let off_map = eroder.off_map(px, py);
            let trade =
                Trade::of(&k, lanes.water[l], lanes.sediment[l], stage.speed[l], round.centre[l], off_map);
            (stage.ok[l], stage.stay[l], stage.off_map[l], stage.rate[l], stage.take_back[l]) =
                (ok, stay, off_map, trade.rate, trade.take_back);
            stage.water[l] = lanes.water[l];
            lanes.px[l] = if go { px } else { old_px[l] };
            lanes.py[l] = if go { py } else { old_py[l] };
            lanes.vx[l] = if go { vx * k.friction_keep } else { old_vx[l] };
            lanes.vy[l] = if go { vy * k.friction_keep } else { old_vy[l] };
            lanes.water[l] = if stay { old_water[l] } else { old_water[l] * k.evaporation_keep };
            lanes.accel[l] = if stay { old_accel[l] } else { old_accel[l] * k.evaporation_gain };
            lanes.age[l] = if stay { old_age[l] } else { old_age[l].wrapping_add(1) };
            ordinary &= lanes.live[l] & go & !off_map;
        }

        // Transfers against the live map, in lane order. In an ordinary round
        // (most) the trades are computed ahead across the lanes, and a lane
        // whose reads no earlier lane changes only writes its result (see
        // [`Ahead`]). Once a lane ends in such a round (its height not
        // finite), its load goes down where no stamp says: the rest go
        // through the trade.
        let mut fast = ordinary && ahead.compute(eroder, &lanes, &stage, &round, &mut seen);
        // In an ordinary round with layers every lane's passage is recorded
        // after the loop, in lane order, from the lanes' loads after the
        // trades (a lane that ends is settled in the loop, but keeps its load
        // for the record: the lane is empty, and its next droplet sets it).
        // Copying each lane's load aside instead cost 5 instructions a step,
        // with layers or without.
        let deferred = fast && tracks.is_some();
        // The steps of the lanes traded ahead, booked after the loop.
        let mut committed = 0;
        for l in 0..L {
            if fast && ahead.fast[l] {
                ahead.commit(l, eroder, &mut lanes);
                committed += 1;
                moved[l] = true;
                continue;
            }
            if !lanes.live[l] {
                continue;
            }
            if stage.stay[l] {
                lanes.live[l] = false;
                let (droplet, walk) = lanes.droplet(l);
                feed.pass(droplet, walk, moved[l]);
                continue;
            }
            moved[l] = true;
            eroder.report.steps += 1;
            let here = (lanes.cx[l] as usize, lanes.cy[l] as usize);
            let fate = if stage.ok[l] {
                let trade =
                    Trade { rate: stage.rate[l], take_back: stage.take_back[l], off_map: stage.off_map[l] };
                let p = Vec2::new(lanes.px[l], lanes.py[l]);
                let w = eroder.width;
                // The lane's cell after the step, and its index (set by the trade).
                let (mut cell, mut to) = (here, 0);
                let fate = eroder.trade(
                    p,
                    here,
                    round.centre[l],
                    trade,
                    &mut lanes.sediment[l],
                    (&mut cell, &mut to),
                );
                (lanes.cx[l], lanes.cy[l]) = (cell.0 as i32, cell.1 as i32);
                // The next round's normal reads the rows above and below the
                // new cell (the trade has just read its own): ask for them now.
                let at = eroder.cells.as_ptr().wrapping_add(to);
                simd::prefetch(at.wrapping_sub(w));
                simd::prefetch(at.wrapping_add(w));
                if fate == Some(Fate::Masked) {
                    let centre = Eroder::<S>::centre(here.0, here.1);
                    (lanes.px[l], lanes.py[l]) = (centre.x, centre.y);
                }
                if let (false, Some(tracks)) = (deferred, tracks.as_deref_mut()) {
                    // Bitwise, not short-circuit: no branch to mispredict. (A lane
                    // that left the map kept its cell; one the mask stopped too.)
                    let from = here.1 * w + here.0;
                    let crossed = stage.off_map[l] | (to != from);
                    layers::pass(tracks, from, to, stage.water[l], k.dt, lanes.sediment[l], crossed);
                }
                fate
            } else {
                Some(Fate::Unstable)
            };
            if let Some(fate) = fate {
                fast = false;
                lanes.live[l] = false;
                let (mut droplet, _) = lanes.droplet(l);
                eroder.settle(&mut droplet, fate);
                if !deferred {
                    lanes.sediment[l] = droplet.sediment;
                }
            }
        }
        eroder.report.steps += committed;
        if let (true, Some(tracks)) = (deferred, tracks.as_deref_mut()) {
            ahead.record(tracks, &stage.water, k.dt, &lanes.sediment);
        }
    }
    eroder.tracks = tracks;
}

/// Which cells the lanes of a round have changed so far, hashed: a table of
/// round stamps. A cell whose slot holds this round's stamp may have been
/// changed (another cell may share the slot); one whose slot holds another
/// stamp has not.
struct Seen {
    stamps: alloc::vec::Vec<u8>,
    stamp: u8,
}

/// Slots in [`Seen`]: 8 192 bytes, in the first level cache. A round's 32
/// changed cells take at most 32 of them, so a lane's two reads meet a slot
/// another cell took less than once in a hundred lanes; the seeds' model at
/// 256² (the lockstep benchmark's map) traded 95 % of the lanes of its
/// ordinary rounds ahead, the rest being lanes that share a cell with an
/// earlier one.
const SEEN_SLOTS: usize = 8192;

impl Seen {
    fn new() -> Self {
        Seen { stamps: alloc::vec![0; SEEN_SLOTS], stamp: 0 }
    }

    /// A fresh stamp for a round (the table cleared when the stamps wrap).
    fn next_round(&mut self) -> u8 {
        if self.stamp == u8::MAX {
            self.stamps.fill(0);
            self.stamp = 0;
        }
        self.stamp += 1;
        self.stamp
    }
}

/// A round's trades computed across the lanes before the lane-order loop
/// (vectors), from the heights as the round found them: right for every lane
/// that reads no cell an earlier lane of the round changes (its own, `here`,
/// and the one it moves to, `next`), which the loop then only writes, books
/// and records ([`commit`](Self::commit)), with the lane-order loop's results
/// bit for bit. The other lanes (two droplets of a round in one cell or next
/// to each other: three rounds in four have one) go through the trade.
///
/// Only for ordinary rounds: every lane live and stepping on the map (`go`,
/// not `off_map`), no controls and no `pit_safe` (see `across` in
/// [`run_fed_with`]). Each lane's operations are [`Eroder::trade`]'s in the
/// same order.
struct Ahead {
    here: [u32; L],
    next: [u32; L],
    next_x: [i32; L],
    next_y: [i32; L],
    current: [f32; L],
    h_new: [f32; L],
    /// Lanes whose trade here is the lane-order loop's.
    fast: [bool; L],
}

impl Ahead {
    fn new() -> Self {
        Ahead {
            here: [0; L],
            next: [0; L],
            next_x: [0; L],
            next_y: [0; L],
            current: [0.0; L],
            h_new: [0.0; L],
            fast: [false; L],
        }
    }

    /// Computes the round's trades; false where a new height is not finite
    /// (a lane would end there: the round goes lane by lane), or a cell lies
    /// off the map (never: every lane steps on it).
    #[inline(always)]
    fn compute<S: NormalSampler>(
        &mut self,
        eroder: &Eroder<'_, S>,
        lanes: &Lanes,
        stage: &Stage,
        round: &Round,
        seen: &mut Seen,
    ) -> bool {
        // Cells are at most `u32::MAX` here (`across`).
        let w = eroder.width as u32;
        for l in 0..L {
            // On the map, so the conversions need no clamping (sides < 2^31).
            (self.next_x[l], self.next_y[l]) = (simd::truncate(lanes.px[l]), simd::truncate(lanes.py[l]));
        }
        // A loop of its own, which vectors compute.
        for l in 0..L {
            self.here[l] = lanes.cy[l] as u32 * w + lanes.cx[l] as u32;
            self.next[l] = self.next_y[l] as u32 * w + self.next_x[l] as u32;
        }
        // Which lanes read a cell an earlier lane changes (or whose slot says
        // it might).
        let stamp = seen.next_round();
        for l in 0..L {
            let (h, n) = (self.here[l] as usize % SEEN_SLOTS, self.next[l] as usize % SEEN_SLOTS);
            self.fast[l] = (seen.stamps[h] != stamp) & (seen.stamps[n] != stamp);
            seen.stamps[h] = stamp;
        }
        let mut h_next = [0.0f32; L];
        // The cells are on the map (the lanes step on it); if not, lane by lane.
        if !(simd::read_cells(eroder.cells, &self.next, &mut h_next)
            && simd::read_cells(eroder.cells, &self.here, &mut self.current))
        {
            return false;
        }
        // `Eroder::trade`'s arithmetic, across the lanes.
        let mut finite = true;
        for l in 0..L {
            let (h_here, current) = (round.centre[l], self.current[l]);
            let give = stage.rate[l] * (h_here - h_next[l]);
            let new = stage.take_back[l] - math::larger(give, 0.0);
            let new = if current == h_here { new } else { current + (new - h_here) };
            self.h_new[l] = no_overshoot(new, current, h_next[l]);
            finite &= self.h_new[l].is_finite();
        }
        finite
    }

    /// Lane `l`'s trade, computed ahead: the new height written and booked,
    /// the lane moved to its next cell (its passage is recorded with the
    /// round's, by [`record`](Self::record)).
    #[inline(always)]
    fn commit<S: NormalSampler>(&self, l: usize, eroder: &mut Eroder<'_, S>, lanes: &mut Lanes) {
        let (here, next) = (self.here[l] as usize, self.next[l] as usize);
        eroder.cells[here] = self.h_new[l];
        lanes.sediment[l] += eroder.report.book(self.current[l], self.h_new[l]);
        (lanes.cx[l], lanes.cy[l]) = (self.next_x[l], self.next_y[l]);
        // The next round's normal reads the rows above and below the new cell.
        let (at, w) = (eroder.cells.as_ptr().wrapping_add(next), eroder.width);
        simd::prefetch(at.wrapping_sub(w));
        simd::prefetch(at.wrapping_add(w));
    }

    /// Records every lane's passage of an ordinary round, in lane order, as
    /// the lane-order loop does ([`layers::pass`]): from `here` to `next`,
    /// with its `water` before the step's evaporation and its load after the
    /// trade (`loads`, before any settling). The addends across the lanes
    /// first (vectors), then the additions (the tracks' fourth field, 0).
    #[inline(always)]
    fn record(&self, tracks: &mut [Track], water: &[f32; L], dt: f32, loads: &[f64; L]) {
        // A structure of arrays, for the vectors.
        let mut passages = [[0.0f32; L]; 3];
        for l in 0..L {
            let passage = layers::passage(water[l], dt, loads[l], self.next[l] != self.here[l]);
            (passages[0][l], passages[1][l], passages[2][l]) = (passage[0], passage[1], passage[2]);
        }
        for l in 0..L {
            let passage = [passages[0][l], passages[1][l], passages[2][l], 0.0];
            layers::add_passage(&mut tracks[self.here[l] as usize], passage);
            simd::prefetch(tracks.as_ptr().wrapping_add(self.next[l] as usize));
        }
    }
}

/// One round's motion and trade terms across the lanes (see [`Motion`] and
/// [`Trade`]), and whether each lane's motion stayed finite.
struct Stage {
    px: [f32; L],
    py: [f32; L],
    vx: [f32; L],
    vy: [f32; L],
    speed: [f32; L],
    ok: [bool; L],
    /// Lanes whose droplet may not take this step here (see [`Feed::holds`]).
    stay: [bool; L],
    off_map: [bool; L],
    rate: [f32; L],
    take_back: [f32; L],
    /// Each lane's water before this step's evaporation (for the output layers).
    water: [f32; L],
}

impl Stage {
    fn new() -> Self {
        let zero = [0.0; L];
        Stage {
            px: zero,
            py: zero,
            vx: zero,
            vy: zero,
            speed: zero,
            ok: [false; L],
            stay: [false; L],
            off_map: [false; L],
            rate: zero,
            take_back: zero,
            water: zero,
        }
    }
}

/// One facet's weighted horizontal component across the lanes (see
/// [`EightFacet::from_neighbours`]). Each [`FacetKernel`] calls it from a
/// function of its own that is not inlined, so the compiler vectorises it across
/// the lanes rather than across the facets (which would need transposes).
#[inline(always)]
pub(super) fn facet_lanes(
    t: &mut [f32; L],
    centre: &[f32; L],
    around: &[f32; L],
    slope: f32,
    slope_squares: f32,
    weight: f32,
) {
    for l in 0..L {
        let e = slope * (centre[l] - around[l]);
        let e_squares = slope_squares * (centre[l] - around[l]);
        let len = math::sqrt(e * e_squares + 1.0);
        t[l] = (weight * e) / len;
    }
}

/// Reads the 3 x 3 block of cells starting at `start[l]` (its upper-left
/// cell, on a map `w` cells wide) into `centre[l]` and `around[k][l]`, the
/// neighbours in [`EightFacet::from_neighbours`]'s lane order: one lane after
/// another, nine loads and nine stores each (the baseline's way; see
/// [`FacetKernel::blocks`]).
///
/// # Panics
/// If a block reaches past `cells` (the callers clamp to the inner cells).
#[inline(always)]
pub(super) fn blocks_by_lane(
    cells: &[f32],
    w: usize,
    start: &[usize; L],
    centre: &mut [f32; L],
    around: &mut [[f32; L]; 8],
) {
    for l in 0..L {
        let block = &cells[start[l]..start[l] + 2 * w + 3];
        // Names: `p`/`n`/`o` for +1/-1/0 along x, then along y.
        let (nn, on, pn) = (block[0], block[1], block[2]);
        let (no, c, po) = (block[w], block[w + 1], block[w + 2]);
        let (np, op, pp) = (block[2 * w], block[2 * w + 1], block[2 * w + 2]);
        centre[l] = c;
        for (k, value) in [po, no, op, on, pp, pn, np, nn].into_iter().enumerate() {
            around[k][l] = value;
        }
    }
}

/// Reads every lane's neighbourhood, then computes its normal
/// into `round.nx` and `round.nz`: the 8 facets as arrays across the lanes, with
/// [`EightFacet::from_neighbours`]'s operations in the same order, so each lane
/// gets the bits the sequential mode would.
#[inline(always)]
pub(super) fn normals<K: FacetKernel>(eroder: &Eroder<'_, EightFacet>, lanes: &Lanes, round: &mut Round) {
    let (w, h) = (eroder.width, eroder.height);
    let cells = &*eroder.cells;
    // Every lane reads an inner 3 x 3 block (maps are at least 3 x 3): a border
    // lane the nearest one, its normal replaced below.
    let (wi, hi) = (w as i32, h as i32);
    // Each lane's block starts at its upper-left neighbour. In 32-bit factors
    // (sides are at most `MAX_SIDE`, 2^24), which vectors multiply to 64 bits.
    let w32 = w as u32;
    let mut start = [0usize; L];
    for l in 0..L {
        let (gx, gy) = (lanes.cx[l].clamp(1, wi - 2), lanes.cy[l].clamp(1, hi - 2));
        round.border[l] = (gx != lanes.cx[l]) | (gy != lanes.cy[l]);
        start[l] = (u64::from((gy - 1) as u32) * u64::from(w32) + u64::from((gx - 1) as u32)) as usize;
    }
    K::blocks(cells, w, &start, round);
    let scale = eroder.k.height_scale;
    for k in 0..8 {
        K::facet_lanes(
            &mut round.t[k],
            &round.centre,
            &round.around[k],
            scale * SLOPE[k],
            scale * (SLOPE[k] * SQUARES[k]),
            WEIGHT[k],
        );
    }
    let t = &round.t;
    for l in 0..L {
        round.nx[l] = (t[0][l] - t[1][l]) + ((t[4][l] + t[5][l]) - (t[6][l] + t[7][l]));
        round.nz[l] = (t[2][l] - t[3][l]) + ((t[4][l] - t[5][l]) + (t[6][l] - t[7][l]));
    }
    // Most rounds have no lane on the border band: one test for the round.
    if !round.border.iter().fold(false, |any, &border| any | border) {
        return;
    }
    for l in 0..L {
        if round.border[l] {
            let (x, y) = (lanes.cx[l] as usize, lanes.cy[l] as usize);
            round.centre[l] = cells[y * w + x];
            let grid = GridRef::new_unchecked(w, h, cells);
            let n = CentralDifference::at(&grid, x, y, scale);
            (round.nx[l], round.nz[l]) = (n.x, n.z);
        }
    }
}

/// Whether lockstep runs skip [`Ahead`] and trade lane by lane: never,
/// outside the test that compares the two.
#[cfg(not(test))]
#[inline(always)]
fn lane_by_lane() -> bool {
    false
}

#[cfg(test)]
fn lane_by_lane() -> bool {
    tests::lane_by_lane()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether lockstep runs skip [`Ahead`] (to compare; the results are the
    /// same either way, so other tests running meanwhile are not affected).
    static LANE_BY_LANE: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);

    pub(super) fn lane_by_lane() -> bool {
        LANE_BY_LANE.load(core::sync::atomic::Ordering::Relaxed)
    }

    /// A round whose new height would not be finite (a load past `f32`'s
    /// range makes `take_back` infinite) is not computed ahead: the lane by
    /// lane loop ends that lane as unstable. Every other round is.
    #[test]
    fn trades_ahead_refuse_a_height_that_is_not_finite() {
        let mut map = Heightmap::from_fn(40, 40, |x, y| (x * 3 + y * 5) as f32 * 0.01).unwrap();
        let params = ErosionParams::default();
        let eroder = Eroder::new(map.view_mut(), Constants::new(&params), EightFacet);
        let mut lanes = Lanes::new();
        let mut stage = Stage::new();
        let mut round = Round::new();
        for l in 0..L {
            let p = Vec2::new(2.5 + l as f32, 3.5 + (l % 5) as f32 * 7.0);
            lanes.set(l, &Droplet::new(p), &Walk::new(&eroder.k, eroder.cell_of(p)));
            lanes.live[l] = true;
            let (x, y) = eroder.cell_of(p);
            round.centre[l] = eroder.cells[y * 40 + x];
            (stage.rate[l], stage.take_back[l]) = (0.5, round.centre[l] + 0.01);
        }
        let mut seen = Seen::new();
        let mut ahead = Ahead::new();
        assert!(ahead.compute(&eroder, &lanes, &stage, &round, &mut seen));
        assert!(ahead.fast.iter().all(|&fast| fast), "no two lanes share a cell here");
        stage.take_back[7] = f32::INFINITY;
        assert!(!ahead.compute(&eroder, &lanes, &stage, &round, &mut seen));
    }

    /// Trades computed ahead across the lanes give the lane-by-lane loop's
    /// map, report and layers bit for bit, on every instruction set, on a
    /// rough terrain where three rounds in four have two lanes on one cell
    /// or next to each other, on a small map where most do, and with heights
    /// near `f32::MAX` whose new heights overflow (those rounds go lane by
    /// lane).
    #[test]
    fn trades_ahead_are_the_lane_loops() {
        use rand_core::SeedableRng;
        let rough = crate::terrain::fbm_terrain(96, 80, 3).unwrap();
        let small = crate::terrain::fbm_terrain(12, 9, 5).unwrap();
        let mut huge = crate::terrain::fbm_terrain(40, 40, 2).unwrap();
        for (i, h) in huge.cells_mut().iter_mut().enumerate() {
            if i % 61 == 0 {
                *h = f32::MAX * 0.999;
            }
        }
        // Relief 1e37 on heights near f32's top, seen through a height scale
        // that makes it ordinary slopes: the droplets move and erode, and
        // new heights overflow.
        let mut top = crate::terrain::fbm_terrain(40, 40, 4).unwrap();
        for h in top.cells_mut() {
            *h = f32::MAX * 0.97 + *h * 1e37;
        }
        for (terrain, droplets, steps) in
            [(&rough, 3_000, 100_000), (&small, 400, 5_000), (&huge, 500, 2_000), (&top, 500, 2_000)]
        {
            for isa in Isa::available() {
                let mut results = alloc::vec::Vec::new();
                for lane_by_lane in [false, true] {
                    LANE_BY_LANE.store(lane_by_lane, core::sync::atomic::Ordering::Relaxed);
                    let mut map = terrain.clone();
                    let mut tracks = alloc::vec![layers::NO_TRACK; map.len()];
                    let height_scale = if core::ptr::eq(terrain, &top) { 1e-36 } else { 1.0 };
                    let params = ErosionParams { droplets, height_scale, ..ErosionParams::default() };
                    let mut eroder = Eroder::new(map.view_mut(), Constants::new(&params), EightFacet);
                    eroder.tracks = Some(&mut tracks);
                    let mut rng = rand_xoshiro::Xoshiro256StarStar::seed_from_u64(11);
                    let mut spawner = Spawner { rng: &mut rng, total: u64::from(droplets), spawned: 0 };
                    let mut silent = crate::progress::Silent;
                    simd::run_fed(
                        isa,
                        &mut eroder,
                        &mut spawner,
                        &mut Ticker::new(&mut silent, u64::from(droplets)),
                    );
                    let report = eroder.report;
                    let bits: alloc::vec::Vec<u32> = map.cells().iter().map(|h| h.to_bits()).collect();
                    let track_bits: alloc::vec::Vec<[u32; 4]> =
                        tracks.iter().map(|t| t.map(f32::to_bits)).collect();
                    results.push((bits, report, track_bits));
                }
                LANE_BY_LANE.store(false, core::sync::atomic::Ordering::Relaxed);
                assert!(results[0].1.steps > steps, "{:?}", results[0].1);
                assert!(results[0] == results[1], "{isa:?}: ahead and lane by lane differ");
            }
        }
    }
    use crate::grid::Heightmap;
    use crate::params::ErosionParams;
    use crate::physical::Constants;

    /// Every instruction set this CPU has gives the same bits: a lockstep run
    /// on a rough terrain (border lanes, pits, leaving droplets) with each.
    #[test]
    fn every_instruction_set_gives_the_same_bits() {
        use rand_core::SeedableRng;
        let isas = Isa::available();
        let terrain = crate::terrain::fbm_terrain(96, 80, 3).unwrap();
        let mut results = alloc::vec::Vec::new();
        for &isa in &isas {
            let mut map = terrain.clone();
            let params = ErosionParams { droplets: 3_000, pit_safe: true, ..ErosionParams::default() };
            let mut eroder = Eroder::new(map.view_mut(), Constants::new(&params), EightFacet);
            let mut rng = rand_xoshiro::Xoshiro256StarStar::seed_from_u64(7);
            let mut spawner = Spawner { rng: &mut rng, total: 3_000, spawned: 0 };
            let mut silent = crate::progress::Silent;
            simd::run_fed(isa, &mut eroder, &mut spawner, &mut Ticker::new(&mut silent, 3_000));
            let report = eroder.report;
            let bits: alloc::vec::Vec<u32> = map.cells().iter().map(|h| h.to_bits()).collect();
            results.push((isa, bits, report));
        }
        let (_, first_bits, first_report) = &results[0];
        assert!(first_report.steps > 100_000, "{first_report:?}");
        for (isa, bits, report) in &results[1..] {
            assert!(bits == first_bits, "{isa:?} differs from the baseline");
            assert_eq!(report, first_report, "{isa:?}");
        }
        #[cfg(all(feature = "std", target_arch = "x86_64"))]
        if std::is_x86_feature_detected!("avx2") {
            assert!(isas.len() >= 2, "{isas:?}");
        }
    }

    /// The lanes' array code gives each lane exactly the sequential normal and
    /// the height of its cell.
    #[test]
    fn lane_normals_are_bit_equal_to_the_scalar_sampler() {
        let mut next = crate::random::test_stream(0x1234_5678_u64);
        let mut map = Heightmap::from_fn(23, 17, |_, _| 0.0).unwrap();
        for cell in map.cells_mut() {
            *cell = next() * 3.0 - 1.0;
        }
        let reference = map.clone();
        let params = ErosionParams::default();
        let eroder = Eroder::new(map.view_mut(), Constants::new(&params), EightFacet);
        for _ in 0..50 {
            let mut lanes = Lanes::new();
            for l in 0..L {
                // Border cells included.
                let p = Vec2::new(next() * 23.0, next() * 17.0);
                lanes.set(l, &Droplet::new(p), &Walk::new(&eroder.k, eroder.cell_of(p)));
            }
            let mut round = Round::new();
            normals::<simd::Baseline>(&eroder, &lanes, &mut round);
            for l in 0..L {
                let (x, y) = reference.cell_at(Vec2::new(lanes.px[l], lanes.py[l]));
                assert_eq!(round.centre[l], reference.view().cells()[y * 23 + x]);
                let n = EightFacet::at(&reference.view(), x, y, params.height_scale);
                assert_eq!((round.nx[l].to_bits(), round.nz[l].to_bits()), (n.x.to_bits(), n.z.to_bits()));
            }
        }
    }
}
