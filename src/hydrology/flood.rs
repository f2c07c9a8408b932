//! Flood: seed 002's test-plane algorithm, without recursion and without
//! map-sized work per flood, so its cost follows the pool's size.

use alloc::vec::Vec;

use glam::Vec2;

use super::world::{Particle, World};
use crate::reach::Reach;

/// Fraction of a flooding particle's load put down where it enters a pool: the
/// 90 % the original destroys at a drain (lakes trap sediment). The particle keeps
/// the rest; if it ends in the pool, that goes down there too. A particle that
/// stalls on dry ground keeps its load.
const POOL_TRAP: f64 = 0.9;

/// Attempts per flood, whatever happens: successful fills roughly halve the
/// volume left each time and failed ones are bounded by `max_fails`, so this only
/// guards against a plane that `f64` can no longer move.
pub(super) const FLOOD_ATTEMPTS: u32 = 64;

/// How far, relative to its depth, a pool cell's stored level (`f32` height
/// plus `f32` depth) may sit off the level it was set to: 4 `f32` ulps.
const LEVEL_SLACK: f64 = 1.0 / 4_194_304.0;

/// The 8 neighbours, in the order the fill visits them.
const NEIGHBOURS: [(isize, isize); 8] =
    [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, -1), (1, -1), (-1, 1)];

/// Buffers the flood fill reuses, allocated once per simulator: a visit stamp per
/// cell (a cell is visited in this fill when its stamp equals the fill's epoch, so
/// nothing is cleared between fills), the flood set and the fill's stack.
#[derive(Clone, Debug)]
pub(super) struct FloodScratch {
    visited: Vec<u32>,
    epoch: u32,
    set: Vec<usize>,
    stack: Vec<usize>,
}

impl FloodScratch {
    pub(super) fn new(visited: Vec<u32>) -> Self {
        Self { visited, epoch: 0, set: Vec::new(), stack: Vec::new() }
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
}

/// How a flood ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Flood {
    /// All the particle's water is in the pool (what is left is at most
    /// `min_volume`).
    Placed,
    /// Out of attempts; the remaining water is dropped.
    Failed,
    /// A drain was found; the particle now stands on it, at rest, to descend again.
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
enum Outlet {
    Cell(usize),
    Sea,
}

impl World<'_> {
    /// Floods with particle `p` from the cell it stands on.
    ///
    /// Seed 002: a test plane starts at the water level there; each attempt fills
    /// the set of cells connected (8-way) below the plane and at or above the water
    /// level, noting drains (cells of the fill below the water level; with a sea
    /// level at or below the water level, the sea beyond set cells on the border,
    /// and a pool open to the border never rises above the sea; a cell the
    /// controls' mask closes is a wall at any height). If a drain is found, the
    /// water level moves `drainage` of the way towards the lowest one, the water
    /// this releases joins the particle, and the particle moves to the drain. Else
    /// if the volume under the plane fits in the particle, the set is filled to the
    /// plane and the plane rises by `approach` times the remaining volume spread
    /// over the set; otherwise the attempt fails and the plane is lowered. Two
    /// changes from the original, which can fail ten times in a row and drop the
    /// water: a failed attempt lowers the plane to where the line from the water
    /// level to the failed plane meets the particle's volume (the volume under the
    /// plane is convex in its height, so the next attempt fits), where the original
    /// lowers it by `approach` times the excess (approaching from above without ever
    /// fitting); and the water level only rises on a fill that succeeded (the
    /// original also raises it after a failed attempt, which makes the pool's own
    /// cells look like drains).
    pub(super) fn flood(&mut self, p: &mut Particle) -> Flood {
        if self.reach == Reach::WHOLE {
            return self.flood_within(p);
        }
        // In a zone: keep what the flood changes, to undo it if the pool turns
        // out wider than the zone.
        let (particle, report, carry) = (*p, self.report, self.carry);
        self.undo.clear();
        let flood = self.flood_within(p);
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
    fn remember(&mut self, i: usize) {
        if self.reach != Reach::WHOLE {
            self.undo.push((i, self.heights[i], self.pool[i]));
        }
    }

    /// [`flood`](Self::flood), which returns [`Flood::Refused`] with its
    /// changes still in place.
    fn flood_within(&mut self, p: &mut Particle) -> Flood {
        let k = self.k;
        self.report.floods += 1;
        let start = self.index_of(p.position);
        let wet = self.pool[start] > 0.0;
        if wet {
            let load = p.sediment * POOL_TRAP;
            p.sediment -= load;
            self.remember(start);
            self.deposit(start, load, &mut p.water);
        }

        let vf = k.volume_factor;
        let start_level = self.level(start);
        // The start's stored level may sit off its pool's set level as any
        // cell's may: compare others with it allowing for both.
        let start_slack = f64::from(self.pool[start]) * LEVEL_SLACK;
        let mut level = start_level;
        let mut plane = level;
        let mut fails = 0;
        for _ in 0..FLOOD_ATTEMPTS {
            if p.water <= k.min_volume {
                return Flood::Placed;
            }
            // Once the water level is a plane this flood has set, it is exact.
            let level_slack = if level == start_level { start_slack } else { 0.0 };
            let Ok(Fill { outlet, depth_sum, at_border }) = self.fill(start, plane, level, level_slack)
            else {
                return Flood::Refused;
            };
            let n = self.scratch.set.len() as f64;
            if let Some((outlet, outlet_level)) = outlet {
                self.report.drains += 1;
                let lowered = level - k.drainage * (level - outlet_level);
                for s in 0..self.scratch.set.len() {
                    let i = self.scratch.set[s];
                    let depth = ((lowered - f64::from(self.heights[i])) as f32).max(0.0);
                    if depth < self.pool[i] {
                        self.remember(i);
                        p.water -= self.set_pool(i, depth);
                    }
                }
                return match outlet {
                    Outlet::Cell(j) => {
                        let (x, y) = (j % self.width, j / self.width);
                        p.position = Vec2::new(x as f32 + 0.5, y as f32 + 0.5);
                        p.velocity = Vec2::ZERO;
                        if wet || level != start_level { Flood::Drain } else { Flood::Hop }
                    }
                    Outlet::Sea => Flood::Sea,
                };
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
                let mut placed = 0.0;
                for s in 0..self.scratch.set.len() {
                    let i = self.scratch.set[s];
                    let depth = (plane - f64::from(self.heights[i])) as f32;
                    if depth > self.pool[i] {
                        self.remember(i);
                        placed += self.set_pool(i, depth);
                    }
                }
                p.water -= placed;
                if placed != 0.0 {
                    level = plane;
                }
                plane += k.approach * p.water / (n * vf);
            } else if plane > level {
                fails += 1;
                if fails >= k.max_fails {
                    return Flood::Failed;
                }
                // The volume under the plane grows at least as fast as the line from
                // the water level to this attempt, so where that line meets the
                // particle's volume the next attempt fits.
                plane = level + (plane - level) * (p.water / volume);
            } else {
                plane += k.approach * (p.water - volume) / (n * vf);
            }
        }
        Flood::Failed
    }

    /// One flood fill from `start` under `plane` (an explicit stack, 8-way): leaves
    /// the flood set in the scratch and returns what it found ([`Fill`]), or
    /// [`OutOfReach`] if the set reaches a side of a zone that is not the map's. `level_slack` is how far the water
    /// level itself may sit off its pool's set level.
    fn fill(&mut self, start: usize, plane: f64, level: f64, level_slack: f64) -> Result<Fill, OutOfReach> {
        let (w, h) = (self.width, self.height);
        let reach = self.reach;
        // A pool at sea level and open to it sends any more water into the sea.
        let sea = self.k.sea_level.filter(|&sea| sea <= level);
        let scratch = &mut *self.scratch;
        let epoch = scratch.next_epoch();
        scratch.set.clear();
        scratch.stack.clear();
        scratch.stack.push(start);
        scratch.visited[start] = epoch;
        let mut outlet: Option<(Outlet, f64)> = None;
        let mut lower = |candidate: Outlet, at: f64| {
            if outlet.is_none_or(|(_, lowest)| at < lowest) {
                outlet = Some((candidate, at));
            }
        };
        let mut depth_sum = 0.0;
        let mut visits = 0;
        let mut at_border = false;
        while let Some(i) = scratch.stack.pop() {
            visits += 1;
            if !self.gate.admits(i) {
                continue; // a masked cell is a wall: never pooled, never a drain
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
                lower(Outlet::Cell(i), s);
                continue; // a drain: no need to flood beyond it
            }
            scratch.set.push(i);
            depth_sum += plane - s;
            let (x, y) = (i % w, i / w);
            if x == 0 || y == 0 || x + 1 == w || y + 1 == h {
                if !reach.holds_cell(w, h, x, y) {
                    return Err(OutOfReach);
                }
                at_border = true;
                if let Some(sea) = sea {
                    lower(Outlet::Sea, sea);
                }
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
