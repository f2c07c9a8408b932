//! Flood: seed 002's test-plane algorithm, without recursion and without
//! map-sized work per flood, so its cost follows the pool's size; and what
//! it shares with the exact flood (`exact_flood.rs`): the scratch, the spill
//! to a drain, settling, filling the flood set.

use alloc::collections::BinaryHeap;
use alloc::vec::Vec;

use glam::Vec2;

use super::exact_flood::Frontier;
use super::world::{Particle, World};
use crate::reach::Reach;

/// Fraction of a particle's load a pool traps when the particle passes through
/// it to a drain: the 90 % the original destroys at a drain (lakes trap
/// sediment). It settles evenly over the pool's bed; a particle that ends in the
/// pool settles all of its load there. A particle that stalls on dry ground and
/// moves on keeps its load.
const POOL_TRAP: f64 = 0.9;

/// Attempts per flood, whatever happens: successful fills roughly halve the
/// volume left each time and failed ones are bounded by `max_fails`, so this only
/// guards against a plane that `f64` can no longer move.
pub(super) const FLOOD_ATTEMPTS: u32 = 64;

/// How far, relative to its depth, a pool cell's stored level (`f32` height
/// plus `f32` depth) may sit off the level it was set to: 4 `f32` ulps.
pub(super) const LEVEL_SLACK: f64 = 1.0 / 4_194_304.0;

/// The 8 neighbours, in the order the fill visits them.
pub(super) const NEIGHBOURS: [(isize, isize); 8] =
    [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, -1), (1, -1), (-1, 1)];

/// Buffers the flood fill reuses, allocated once per simulator: a visit stamp per
/// cell (a cell is visited in this fill when its stamp equals the fill's epoch, so
/// nothing is cleared between fills), the flood set, the fill's stack and the
/// exact flood's heap.
#[derive(Clone, Debug)]
pub(super) struct FloodScratch {
    pub(super) visited: Vec<u32>,
    pub(super) epoch: u32,
    pub(super) set: Vec<usize>,
    pub(super) stack: Vec<usize>,
    /// The exact flood's frontier ([`Frontier`]).
    pub(super) frontier: BinaryHeap<Frontier>,
    /// The pool cells a settling load goes to (see `World::settle`).
    pub(super) delta: Vec<usize>,
}

impl FloodScratch {
    pub(super) fn new(visited: Vec<u32>) -> Self {
        Self {
            visited,
            epoch: 0,
            set: Vec::new(),
            stack: Vec::new(),
            frontier: BinaryHeap::new(),
            delta: Vec::new(),
        }
    }

    /// A fresh epoch; on wrap-around (once in 2^32 fills) the stamps are cleared.
    fn next_epoch(&mut self) -> u32 {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.visited.fill(0);
            self.epoch = 1;
        }
        self.epoch
    }

    /// Two fresh epochs, the second the first plus one (the exact flood
    /// tests a stamp against both with one comparison).
    pub(super) fn next_epoch_pair(&mut self) -> (u32, u32) {
        if self.epoch >= u32::MAX - 2 {
            self.visited.fill(0);
            self.epoch = 0;
        }
        self.epoch += 2;
        (self.epoch - 1, self.epoch)
    }
}

/// How a flood ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Flood {
    /// All the particle's water is in the pool (what is left is at most
    /// `min_volume`).
    Placed,
    /// Out of attempts; the remaining water is dropped.
    Failed,
    /// The pool spilled: the particle now stands on the drain beyond its sill,
    /// moving away from it at `spill_speed`, to descend again.
    Drain,
    /// As `Drain`, but the particle stalled on dry ground and held no water there:
    /// it only moved to the lowest lower cell around it, which is no spill.
    Hop,
    /// The lowest drain was the sea beyond the map border; the particle leaves.
    Sea,
    /// The pool outgrew the cells the world holds (a tile's zone): everything
    /// the flood did is undone, and the particle stands as it stood.
    Refused,
}

/// A fill reached a cell whose neighbours the world does not hold.
struct OutOfReach;

/// What one flood fill found: the lowest drain (first found on a tie) with
/// its level, the sum of `plane - level` over the flood set, and whether the
/// set reaches the map border.
struct Fill {
    outlet: Option<(Outlet, f64)>,
    depth_sum: f64,
    at_border: bool,
}

/// Where the lowest drain of a fill is.
#[derive(Clone, Copy, Debug)]
pub(super) enum Outlet {
    Cell(usize),
    Sea,
}

impl World<'_> {
    /// Floods with particle `p` from the cell it stands on: exactly
    /// ([`flood_exact`](Self::flood_exact), `exact_flood`), or by seed 002's
    /// test planes, as follows.
    ///
    /// Seed 002: a test plane starts at the water level there; each attempt fills
    /// the set of cells connected (8-way) below the plane and at or above the water
    /// level, noting drains (cells of the fill below the water level; with a sea
    /// level at or below the water level, the sea beyond set cells on the border,
    /// and a pool open to the border never rises above the sea; with an open
    /// border, the border cells themselves; a cell the controls' mask closes is a
    /// wall at any height). If a drain is found and the water reaches the plane,
    /// the pool fills to its sill (the lowest set cell beside the lowest drain),
    /// its level moves `drainage` of the way towards the drain but not below the
    /// sill, the water this releases joins the particle, the pool keeps most of
    /// its load, the spill wears a dry sill, and the particle moves to the drain.
    /// Else if the volume under the plane fits in the particle, the set is filled
    /// to the plane and the plane rises by `approach` times the remaining volume
    /// spread over the set; otherwise (the plane past what the water fills, with
    /// or without a drain) the plane is lowered. Changes from the original, which
    /// can fail ten times in a row and drop the water, and moves a particle over a
    /// sill it cannot fill: once a plane has needed more water than the particle
    /// has, the plane is found between the level and it by regula falsi with the
    /// Illinois step (the volume under the plane is convex in its height, so the
    /// line from the water level always fits), where the original lowers it by
    /// `approach` times the excess (approaching from above without ever fitting);
    /// a drain beyond the water's reach is such a plane, not a spill; and the
    /// water level only rises on a fill that succeeded (the original also raises
    /// it after a failed attempt, which makes the pool's own cells look like
    /// drains).
    ///
    /// `last_spill` is the drain of the particle's last spill (map
    /// coordinates; a spill sets it). A spill to that drain again means it
    /// rolled back into the pool it left: this time it also runs down the
    /// outlet ([`run_out`](Self::run_out)) when `spill_speed > 0`, unless
    /// this spill is its `last` (it ends at the drain). In a zone, a run-out
    /// that would leave it refuses the whole flood, so a tile's run never cuts
    /// one short.
    pub(super) fn flood(&mut self, p: &mut Particle, last_spill: &mut Option<Vec2>, last: bool) -> Flood {
        if self.reach == Reach::WHOLE {
            let flood = self.flood_within(p);
            if flood == Flood::Drain && !last {
                self.spill_on(p, last_spill);
            }
            return flood;
        }
        // In a zone: keep what the flood changes, to undo it if the pool turns
        // out wider than the zone.
        let (particle, report, carry) = (*p, self.report, self.carry);
        self.undo.clear();
        let mut flood = self.flood_within(p);
        if flood == Flood::Drain && !last && !self.spill_on(p, last_spill) {
            flood = Flood::Refused;
        }
        if flood == Flood::Refused {
            while let Some((i, height, depth)) = self.undo.pop() {
                self.heights[i] = height;
                self.pool[i] = depth;
                self.surface[i] = height + depth;
            }
            (*p, self.report, self.carry) = (particle, report, carry);
        }
        flood
    }

    /// Notes cell `i` as it is, before a flood in a zone changes it.
    #[inline]
    pub(super) fn remember(&mut self, i: usize) {
        if self.reach != Reach::WHOLE {
            self.undo.push((i, self.heights[i], self.pool[i]));
        }
    }

    /// [`flood`](Self::flood), which returns [`Flood::Refused`] with its
    /// changes still in place: exact ([`flood_exact`](Self::flood_exact)) or
    /// the article's test planes.
    fn flood_within(&mut self, p: &mut Particle) -> Flood {
        if self.k.exact_flood { self.flood_exact(p) } else { self.flood_test_planes(p) }
    }

    /// Seed 002's flood by test planes (see [`flood`](Self::flood)).
    fn flood_test_planes(&mut self, p: &mut Particle) -> Flood {
        let k = self.k;
        self.report.floods += 1;
        let start = self.index_of(p.position);
        if self.is_sea(start) {
            return Flood::Sea;
        }
        let wet = self.pool[start] > 0.0;
        let mut filled = false;

        let vf = k.volume_factor;
        let start_level = self.level(start);
        // The start's stored level may sit off its pool's set level as any
        // cell's may: compare others with it allowing for both.
        let start_slack = f64::from(self.pool[start]) * LEVEL_SLACK;
        let mut level = start_level;
        let mut plane = level;
        let mut fails = 0;
        // The lowest plane tried that needs more water than the particle has,
        // and how much more (`V(hi) - water`, the regula falsi's value there):
        // the plane the water fills to lies between the level and it.
        let mut hi = f64::INFINITY;
        let mut excess = 0.0;
        // Fills in a row since `hi` last moved (Illinois: past one, the
        // excess is halved, so the bracket closes from above as well).
        let mut stale = 0;
        for _ in 0..FLOOD_ATTEMPTS {
            if p.water <= k.min_volume {
                if filled {
                    p.sediment = self.settle(p.sediment, level, start, &mut p.water);
                }
                return Flood::Placed;
            }
            // Once the water level is a plane this flood has set, it is exact.
            let level_slack = if level == start_level { start_slack } else { 0.0 };
            // A particle stalled on dry ground tests its own level first: any
            // outlet of that flat will do (it holds no pool to lower or to settle
            // in), so the fill stops there, not after walking the whole flat (an
            // island's sea floor: a walk of the whole sea for every particle).
            let dry_flat = !wet && plane == start_level;
            // (A pool at that level is lowered only where this fill walked it:
            // walking all of it instead, on 512² fBm 2, left 7.8 % of the map
            // in closed depressions, not 0.6 %.)
            let Ok(fill) = self.fill(start, plane, level, level_slack, dry_flat) else {
                return Flood::Refused;
            };
            let spill = fill.outlet.map(|(outlet, at)| self.sill_of(outlet, at, plane, level, level_slack));
            let Fill { outlet, depth_sum, at_border } = fill;
            filled = true;
            let n = self.scratch.set.len() as f64;
            // The pool drains towards the drain, but never below its sill.
            if let (Some((outlet, outlet_level)), Some((sill_cell, sill))) = (outlet, spill) {
                let volume = depth_sum * vf;
                if plane > level {
                    if volume > p.water {
                        // The drain lies beyond a sill this water cannot reach:
                        // the plane it fills to lies below this one.
                        (hi, excess, stale) = (plane, volume - p.water, 0);
                        plane = level + (hi - level) * (p.water / (p.water + excess));
                        continue;
                    }
                    // The water fills the pool to its sill; the rest spills.
                    let top = plane.min(sill);
                    if top > level {
                        let placed = self.fill_set_to(top);
                        p.water -= placed;
                        level = top;
                    }
                }
                let spilled = wet || level != start_level;
                return self.drain_to(p, (outlet, outlet_level), (sill_cell, sill), level, spilled, start);
            }
            if n == 0.0 {
                return Flood::Failed;
            }
            if let Some(sea) = k.sea_level {
                if at_border && plane > sea {
                    // A pool open to the sea rises to sea level and no further.
                    plane = sea;
                    continue;
                }
            }
            let volume = depth_sum * vf;
            if plane > level && volume <= p.water {
                let placed = self.fill_set_to(plane);
                p.water -= placed;
                if placed != 0.0 {
                    level = plane;
                }
                plane = if hi.is_finite() {
                    // Between the new level and `hi`: what `hi` needs beyond
                    // the water left is what it needed before (both fell by
                    // `placed`), so the regula falsi's line keeps its value there.
                    stale += 1;
                    if stale > 1 {
                        excess *= 0.5;
                    }
                    level + (hi - level) * (p.water / (p.water + excess))
                } else {
                    plane + k.approach * p.water / (n * vf)
                };
            } else if plane > level {
                fails += 1;
                if fails >= k.max_fails {
                    return Flood::Failed;
                }
                // The volume under the plane grows at least as fast as the line from
                // the water level to this attempt, so where that line meets the
                // particle's volume the next attempt fits; the bracket closes.
                (hi, excess, stale) = (plane, volume - p.water, 0);
                plane = level + (hi - level) * (p.water / (p.water + excess));
            } else {
                plane += k.approach * (p.water - volume) / (n * vf);
            }
        }
        Flood::Failed
    }

    /// The flood set's pool at `level` spills to `outlet` (at its level) over
    /// `sill` (its cell, if a cell, and its height): the level moves
    /// `drainage` of the way down to the drain but not below the sill, the
    /// water this releases joins the particle, and if the particle `spilled`
    /// (it held water here: not a dry stall that moves on to a lower
    /// neighbour) the pool keeps most of its load (settled from `start`, where
    /// it came in), the spill wears a dry sill, and the particle moves out
    /// over it, away from the pool.
    pub(super) fn drain_to(
        &mut self,
        p: &mut Particle,
        (outlet, outlet_level): (Outlet, f64),
        (sill_cell, sill): (Option<usize>, f64),
        level: f64,
        spilled: bool,
        start: usize,
    ) -> Flood {
        let k = self.k;
        self.report.drains += 1;
        let lowered = (level - k.drainage * (level - outlet_level)).max(sill);
        for s in 0..self.scratch.set.len() {
            let i = self.scratch.set[s];
            let depth = self.depth_reaching(i, lowered);
            if depth < self.pool[i] {
                self.remember(i);
                p.water -= self.set_pool(i, depth);
            }
        }
        if spilled {
            // The pool keeps most of the particle's load.
            let trapped = p.sediment * POOL_TRAP;
            p.sediment += self.settle(trapped, lowered, start, &mut p.water) - trapped;
            if let (Some(i), Outlet::Cell(_)) = (sill_cell, outlet) {
                self.cut_sill(i, outlet_level, p);
            }
        }
        match outlet {
            Outlet::Cell(j) => {
                let (x, y) = (j % self.width, j / self.width);
                p.position = Vec2::new(x as f32 + 0.5, y as f32 + 0.5);
                p.velocity = Vec2::ZERO;
                if let (true, Some(i)) = (spilled, sill_cell) {
                    // Out over the sill, away from the pool.
                    let (sx, sy) = (i % self.width, i / self.width);
                    let away = Vec2::new(x as f32 - sx as f32, y as f32 - sy as f32);
                    p.velocity = away.normalize_or_zero() * k.spill_speed;
                }
                if spilled { Flood::Drain } else { Flood::Hop }
            }
            Outlet::Sea => Flood::Sea,
        }
    }

    /// Particle `p` just spilled to the drain it stands on: it runs out from
    /// there if that was also its `last_spill`'s drain, which becomes this
    /// one. Returns `false` (`last_spill` unchanged) if the run-out would go
    /// beyond what the world holds.
    fn spill_on(&mut self, p: &mut Particle, last_spill: &mut Option<Vec2>) -> bool {
        let drain = p.position + self.origin;
        if self.k.spill_speed > 0.0 && *last_spill == Some(drain) && !self.run_out(p) {
            return false;
        }
        *last_spill = Some(drain);
        true
    }

    /// Moves a particle that spilled to a drain for the second time in a row
    /// down the steepest descent from it (the lowest lower neighbour on the
    /// water surface), up to 8 cells (8 unit lengths with a `cell_size`),
    /// stopping at a pool, a hollow or a masked cell; it moves on at
    /// `spill_speed` along its last move.
    /// Nothing is eroded on the way. Returns `false`, the particle part way,
    /// if the run would go on beyond what the world holds (a tile's zone).
    fn run_out(&mut self, p: &mut Particle) -> bool {
        let (w, h) = (self.width, self.height);
        let mut at = self.index_of(p.position);
        for _ in 0..self.k.run_out {
            let (x, y) = (at % w, at / w);
            if !self.reach.holds_cell(w, h, x, y) {
                // Its lowest neighbour may lie beyond the zone (a drain at
                // the zone's edge): picked among the zone's alone, the run
                // would stop short or turn where the whole map's does not.
                return false;
            }
            let mut lowest = (self.surface[at], at, (0, 0));
            for (dx, dy) in NEIGHBOURS {
                let (nx, ny) = (x.wrapping_add_signed(dx), y.wrapping_add_signed(dy));
                if nx < w && ny < h {
                    let n = ny * w + nx;
                    if self.surface[n] < lowest.0 && self.gate.admits(n) {
                        lowest = (self.surface[n], n, (dx, dy));
                    }
                }
            }
            let (_, next, (dx, dy)) = lowest;
            let position = Vec2::new((next % w) as f32 + 0.5, (next / w) as f32 + 0.5);
            if next == at || self.pool[next] > 0.0 {
                break;
            }
            if !self.holds(position) {
                return false;
            }
            at = next;
            p.position = position;
            p.velocity = Vec2::new(dx as f32, dy as f32).normalize_or_zero() * self.k.spill_speed;
        }
        true
    }

    /// Puts `load` down evenly over the cells of the flood set that hold this
    /// pool's water at `level` and lie within the delta's reach (8 cells on
    /// each axis at `cell_size` 1) of `entry`, where the particle came in: a
    /// delta whose bed fills flat, not a spike where the water entered
    /// (shores, sill and any other pool in the set stay as they are). Lakes
    /// fill from their inflows, in deltas up to 17 cells across, and settling
    /// costs at most 289 deposits whatever the lake's size. The water it displaces joins `water`. Returns what is
    /// left: all of `load` if no such cell holds the pool.
    pub(super) fn settle(&mut self, load: f64, level: f64, entry: usize, water: &mut f64) -> f64 {
        if load == 0.0 {
            return load;
        }
        let (w, reach) = (self.width, self.k.delta_radius);
        let (ex, ey) = (entry % w, entry / w);
        // The window's rows as a range of indices: no division and no read
        // of the maps for the lake's cells outside them (a lake's set can be
        // all of a basin).
        let rows = ey.saturating_sub(reach) * w..ey.saturating_add(reach).saturating_add(1).saturating_mul(w);
        // One pass over the set picks the cells; a deposit changes its own
        // cell only, so picking them all first picks the same cells as
        // testing each before its deposit.
        let mut delta = core::mem::take(&mut self.scratch.delta);
        delta.clear();
        for &i in &self.scratch.set {
            if rows.contains(&i) && (i % w).abs_diff(ex) <= reach {
                let depth = f64::from(self.pool[i]);
                if depth > 0.0 && (self.level(i) - level).abs() <= depth * LEVEL_SLACK {
                    delta.push(i);
                }
            }
        }
        if !delta.is_empty() {
            let share = load / delta.len() as f64;
            for &i in &delta {
                self.remember(i);
                self.deposit_under(i, share, level, water);
            }
        }
        let settled = if delta.is_empty() { load } else { 0.0 };
        self.scratch.delta = delta;
        settled
    }

    /// Raises every cell of the flood set to `plane`; returns the water placed.
    pub(super) fn fill_set_to(&mut self, plane: f64) -> f64 {
        let mut placed = 0.0;
        for s in 0..self.scratch.set.len() {
            let i = self.scratch.set[s];
            let depth = self.depth_reaching(i, plane);
            if depth > self.pool[i] {
                self.remember(i);
                placed += self.set_pool(i, depth);
            }
        }
        placed
    }

    /// The sill (its cell, if a cell, and its height) over which the last
    /// fill's pool spills to `outlet` at `outlet_level`: see [`sill`](Self::sill);
    /// at the sea, the sea itself. Never below the outlet.
    fn sill_of(
        &self,
        outlet: Outlet,
        outlet_level: f64,
        plane: f64,
        level: f64,
        level_slack: f64,
    ) -> (Option<usize>, f64) {
        match outlet {
            Outlet::Cell(j) => {
                let (cell, sill) = self.sill(j, plane, level, level_slack);
                (cell, sill.max(outlet_level))
            }
            Outlet::Sea => (None, outlet_level),
        }
    }

    /// The sill over which the last fill's pool spills into drain `j`: the
    /// lowest ground among the flood-set cells beside `j` (a pool drains down
    /// to it and no lower).
    fn sill(&self, j: usize, plane: f64, level: f64, level_slack: f64) -> (Option<usize>, f64) {
        let (w, h) = (self.width, self.height);
        let (x, y) = (j % w, j / w);
        let epoch = self.scratch.epoch;
        let mut sill = (None, f64::INFINITY);
        for (dx, dy) in NEIGHBOURS {
            let (nx, ny) = (x.wrapping_add_signed(dx), y.wrapping_add_signed(dy));
            if nx < w && ny < h {
                let i = ny * w + nx;
                let height = f64::from(self.heights[i]);
                if height < sill.1
                    && self.scratch.visited[i] == epoch
                    && self.in_set(i, plane, level, level_slack)
                {
                    sill = (Some(i), height);
                }
            }
        }
        sill
    }

    /// The water spilling over dry sill cell `i` to a drain whose surface is
    /// `drain` cuts the sill: `outlet_erosion` of the drop from the sill to the
    /// drain per unit of the particle's water (at most the whole drop), through
    /// the controls' gate, never below the drain. The particle carries the cut
    /// away, so a lake's outlet incises and the lake drains over time.
    fn cut_sill(&mut self, i: usize, drain: f64, p: &mut Particle) {
        let height = self.heights[i];
        let drop = f64::from(height) - drain;
        // A sill under water wears as the pool above it drains: cutting its
        // bed would sink its surface and open a drain inside the pool.
        if self.k.outlet_erosion <= 0.0 || drop.is_nan() || drop <= 0.0 || self.pool[i] > 0.0 {
            return;
        }
        let share = (self.k.outlet_erosion * p.water).min(1.0);
        let proposed = (f64::from(height) - share * drop) as f32;
        let new = self.gate.apply(i, height, proposed).max(drain as f32).min(height);
        if new < height {
            self.remember(i);
            p.sediment += self.set_height(i, new);
        }
    }

    /// Whether visited cell `i` belongs to the flood set of a fill under
    /// `plane` at water level `level` (the test [`fill`](Self::fill) makes).
    fn in_set(&self, i: usize, plane: f64, level: f64, level_slack: f64) -> bool {
        if !self.gate.admits(i) {
            return false;
        }
        let depth = f64::from(self.pool[i]);
        let s = f64::from(self.heights[i]) + depth;
        let slack = depth * LEVEL_SLACK + level_slack;
        s - slack <= plane && s + slack >= level
    }

    /// One flood fill from `start` under `plane` (an explicit stack, 8-way): leaves
    /// the flood set in the scratch and returns what it found ([`Fill`]), or
    /// [`OutOfReach`] if the set reaches a side of a zone that is not the map's.
    /// `level_slack` is how far the water level itself may sit off its pool's
    /// set level. With `first_outlet` it stops at the first outlet it finds
    /// (its set and sums then partial).
    fn fill(
        &mut self,
        start: usize,
        plane: f64,
        level: f64,
        level_slack: f64,
        first_outlet: bool,
    ) -> Result<Fill, OutOfReach> {
        let (w, h) = (self.width, self.height);
        let reach = self.reach;
        // A pool at sea level and open to it sends any more water into the sea.
        let sea = self.k.sea_level.filter(|&sea| sea <= level);
        let open_border = self.k.open_border && self.k.sea_level.is_none();
        let scratch = &mut *self.scratch;
        let epoch = scratch.next_epoch();
        scratch.set.clear();
        scratch.stack.clear();
        scratch.stack.push(start);
        scratch.visited[start] = epoch;
        let mut outlet: Option<(Outlet, f64)> = None;
        let lower = |outlet: &mut Option<(Outlet, f64)>, candidate: Outlet, at: f64| {
            if outlet.is_none_or(|(_, lowest)| at < lowest) {
                *outlet = Some((candidate, at));
            }
        };
        let mut depth_sum = 0.0;
        let mut visits = 0;
        let mut at_border = false;
        while let Some(i) = scratch.stack.pop() {
            if first_outlet && outlet.is_some() {
                break;
            }
            visits += 1;
            if !self.gate.admits(i) {
                continue; // a masked cell is a wall: never pooled, never a drain
            }
            if let Some(sea_level) = self.k.sea_level.filter(|&sea| f64::from(self.heights[i]) <= sea) {
                // The sea: the outlet of a pool at or above its level, else a
                // wall (a pool below sea level never spreads into it).
                if sea.is_some() {
                    lower(&mut outlet, Outlet::Sea, sea_level);
                }
                continue;
            }
            let depth = f64::from(self.pool[i]);
            let s = f64::from(self.heights[i]) + depth;
            // The stored level of a pool cell may sit a few f32 ulps off its set
            // level, and so may the water level's: within both, the cell is in
            // the pool, neither a wall nor a drain.
            let slack = depth * LEVEL_SLACK + level_slack;
            if s - slack > plane {
                continue; // a wall
            }
            if s + slack < level {
                lower(&mut outlet, Outlet::Cell(i), s);
                continue; // a drain: no need to flood beyond it
            }
            scratch.set.push(i);
            depth_sum += plane - s;
            let (x, y) = (i % w, i / w);
            if x > 0 && y > 0 && x + 1 < w && y + 1 < h {
                // Inside the border: every neighbour is on the map (the
                // order of `NEIGHBOURS`, without their bounds checks: a
                // sixth off a flood).
                for j in [i + 1, i - 1, i + w, i - w, i + w + 1, i - w - 1, i + 1 - w, i + w - 1] {
                    if scratch.visited[j] != epoch {
                        scratch.visited[j] = epoch;
                        scratch.stack.push(j);
                    }
                }
                continue;
            }
            // On the border of the map, or of a zone.
            if !reach.holds_cell(w, h, x, y) {
                return Err(OutOfReach);
            }
            at_border = true;
            if let Some(sea) = sea {
                lower(&mut outlet, Outlet::Sea, sea);
            } else if open_border {
                // Water at the border runs off the map over this cell.
                lower(&mut outlet, Outlet::Sea, f64::from(self.heights[i]));
            }
            for (dx, dy) in NEIGHBOURS {
                let (nx, ny) = (x.wrapping_add_signed(dx), y.wrapping_add_signed(dy));
                if nx < w && ny < h {
                    let j = ny * w + nx;
                    if scratch.visited[j] != epoch {
                        scratch.visited[j] = epoch;
                        scratch.stack.push(j);
                    }
                }
            }
        }
        self.report.flood_cells += visits;
        Ok(Fill { outlet, depth_sum, at_border })
    }
}
