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
use crate::layers;
use crate::math;
use crate::normal::eight_facet::{SLOPE, SQUARES, WEIGHT};
use crate::normal::{CentralDifference, EightFacet, NormalSampler};
use crate::progress::{Progress, Ticker};

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
        }

        // Transfers against the live map, in lane order.
        for l in 0..L {
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
                if let Some(tracks) = tracks.as_deref_mut() {
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
                lanes.live[l] = false;
                let (mut droplet, _) = lanes.droplet(l);
                eroder.settle(&mut droplet, fate);
                lanes.sediment[l] = droplet.sediment;
            }
        }
    }
    eroder.tracks = tracks;
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

#[cfg(test)]
mod tests {
    use super::*;
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
