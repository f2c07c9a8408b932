//! The exact flood: a priority flood from where the particle stalled, which
//! finds the level its water fills a pool to, or the sill it spills over, in
//! one walk of the pool and its rim (`HydrologyParams::exact_flood`).

use core::cmp::Ordering;

use super::flood::{Flood, LEVEL_SLACK, NEIGHBOURS, Outlet};
use super::world::{Particle, World, level_of};

/// A frontier entry standing for the sea or the ground beyond the map border.
const BEYOND: usize = usize::MAX;

/// A cell on the flood's frontier (or [`BEYOND`]), keyed by its water surface;
/// the heap pops the lowest first, the earliest pushed on a tie, so the walk is
/// the same on every machine.
///
/// The surface is kept as [`order_key`]'s integer, which orders as
/// `f64::total_cmp` orders the surfaces: a heap's sifting compares integers
/// (callgrind, 128² Hydrology on fBm 2: pops took 247 instructions each with
/// `total_cmp` on every comparison).
#[derive(Clone, Copy, Debug)]
pub(super) struct Frontier {
    key: u64,
    order: usize,
    cell: usize,
}

impl Frontier {
    /// Cell `cell` (or [`BEYOND`]) at water surface `surface`, the `order`th
    /// pushed in its flood.
    #[inline]
    fn new(surface: f64, order: usize, cell: usize) -> Self {
        Self { key: order_key(surface), order, cell }
    }

    /// The water surface it was pushed with, exactly.
    #[inline]
    fn surface(&self) -> f64 {
        from_order_key(self.key)
    }
}

/// `x`'s bits as an integer that orders as [`f64::total_cmp`] orders `x`:
/// negatives (sign set) with every bit flipped, the others with the sign set.
#[inline]
fn order_key(x: f64) -> u64 {
    let bits = x.to_bits();
    if bits >> 63 == 1 { !bits } else { bits | 1 << 63 }
}

/// The inverse of [`order_key`].
#[inline]
fn from_order_key(key: u64) -> f64 {
    f64::from_bits(if key >> 63 == 1 { key & !(1 << 63) } else { !key })
}

impl PartialEq for Frontier {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Frontier {}

impl PartialOrd for Frontier {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Frontier {
    // Reversed: `BinaryHeap` is a max-heap.
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        (other.key, other.order).cmp(&(self.key, self.order))
    }
}

impl World<'_> {
    /// Floods with particle `p` from the cell it stands on, exactly: the pool
    /// grows from there one cell at a time, lowest water surface first (a
    /// priority flood), so its level only rises. Before a cell higher than the
    /// level joins, the water is tested against the volume up to that cell: if
    /// it fits, the pool (the cells taken so far) fills to the level that holds
    /// it exactly, and the particle ends there. A cell lower than the level
    /// (beyond the stored levels' few ulps of slack) is a drain: the pool fills
    /// to the level (its sill's, the highest surface on the lowest way out) and
    /// spills there, as the test planes' pool does ([`drain_to`](Self::drain_to));
    /// a particle stalled on dry ground beside a lower cell holds no pool and
    /// only moves there ([`Flood::Hop`]). Cells of a pool at the level join
    /// before the rim is looked at (a stack; the rim is a heap), so a lake is
    /// walked once, at a plain fill's cost. With a sea level, sea cells (and, beyond the map border, the sea) stand
    /// at the sea level and drain whatever reaches them; with an open border,
    /// the ground beyond a border cell stands at the cell's ground; a cell the
    /// controls' mask closes is a wall at any height. A pool with no way out
    /// rises over all it holds. In a zone, a pool that reaches the zone's edge
    /// is [`Flood::Refused`].
    ///
    /// The walk's cost follows the pool and its rim, where the test planes
    /// walk every cell under each plane they try (on 512² fBm, hundreds of
    /// cells a flood, most of them beyond the sill of a small hollow).
    pub(super) fn flood_exact(&mut self, p: &mut Particle) -> Flood {
        let k = self.k;
        self.report.floods += 1;
        let start = self.index_of(p.position);
        if self.is_sea(start) {
            return Flood::Sea;
        }
        if p.water <= k.min_volume {
            return Flood::Placed;
        }
        if !self.gate.admits(start) {
            return Flood::Failed;
        }
        let (w, h) = (self.width, self.height);
        let vf = k.volume_factor;
        let wet = self.pool[start] > 0.0;
        let start_level = self.level(start);
        // The start's stored level may sit off its pool's set level as any
        // cell's may: compare others with it allowing for both.
        let start_slack = f64::from(self.pool[start]) * LEVEL_SLACK;
        let sea = k.sea_level;
        let open_border = k.open_border && sea.is_none();

        // Stamps: `seen` when pushed, `taken` when in the pool.
        let (seen, taken) = self.scratch.next_epoch_pair();
        self.scratch.set.clear();
        self.scratch.stack.clear();
        self.scratch.frontier.clear();
        self.scratch.visited[start] = seen;
        self.scratch.frontier.push(Frontier::new(start_level, 0, start));
        let mut order = 1;
        // The pool so far: its level (and how far the stored level of the
        // cell that set it may sit off it), cells, and their surfaces' sum
        // relative to the start's (small numbers, so the volume keeps its
        // digits).
        let mut level = start_level;
        let mut level_slack = start_slack;
        let mut sum = 0.0;
        let mut visits = 0;
        let water = |p: &Particle| p.water / vf;

        let outcome = loop {
            // Cells of a pool at the level first: they join as they are, in
            // the order a plain fill takes them (a lake is walked at a
            // stack's cost, not a heap's).
            let (surface, cell) = if let Some(cell) = self.scratch.stack.pop() {
                (self.level(cell), cell)
            } else if let Some(entry) = self.scratch.frontier.pop() {
                (entry.surface(), entry.cell)
            } else {
                // Walled in: the pool rises over everything it holds.
                break self.fill_exact(p, start, start_level, sum);
            };
            visits += 1;
            let sea_like = cell == BEYOND || sea.is_some_and(|sea| f64::from(self.heights[cell]) <= sea);
            // Stored levels sit a few ulps of their depth off the level
            // they were set to: within both slacks a cell is at the level.
            let depth = if sea_like { 0.0 } else { f64::from(self.pool[cell]) };
            let slack = depth * LEVEL_SLACK + level_slack;
            // The sea drains whatever reaches it; a cell below the level is
            // a drain beyond the pool's sill.
            let outlet = if sea_like {
                Some(Outlet::Sea)
            } else if surface + slack < level {
                Some(Outlet::Cell(cell))
            } else {
                None
            };
            if surface - slack > level {
                // The pool rises to this cell (the sea's level), if the water
                // does not fit below it.
                let n = self.scratch.set.len() as f64;
                if n * (surface - start_level) - sum >= water(p) {
                    break self.fill_exact(p, start, start_level, sum);
                }
                level = surface;
                level_slack = depth * LEVEL_SLACK;
            }
            if let Some(outlet) = outlet {
                if level > start_level {
                    p.water -= self.fill_set_to(level);
                }
                let sill = match outlet {
                    Outlet::Sea => (None, surface),
                    Outlet::Cell(_) => {
                        // Over the lowest pool cell beside the drain.
                        let sill_cell = self.lowest_taken_beside(cell, taken);
                        let ground = sill_cell.map_or(f64::NEG_INFINITY, |i| f64::from(self.heights[i]));
                        (sill_cell, ground.max(surface))
                    }
                };
                let spilled = wet || level != start_level;
                break self.drain_to(p, (outlet, surface), sill, level, spilled, start);
            }
            // The cell joins the pool.
            self.scratch.visited[cell] = taken;
            self.scratch.set.push(cell);
            sum += surface - start_level;
            let (x, y) = (cell % w, cell / w);
            let interior = x > 0 && y > 0 && x + 1 < w && y + 1 < h;
            if !interior {
                if !self.reach.holds_cell(w, h, x, y) {
                    break Flood::Refused;
                }
                if let Some(sea) = sea {
                    self.scratch.frontier.push(Frontier::new(sea, order, BEYOND));
                    order += 1;
                } else if open_border {
                    // Water at the border runs off the map over this cell.
                    let ground = f64::from(self.heights[cell]);
                    self.scratch.frontier.push(Frontier::new(ground, order, BEYOND));
                    order += 1;
                }
            }
            // The 8 neighbours on the map, in the order of `NEIGHBOURS`
            // (inside the border without bounds checks: a lake's walk is
            // mostly this loop).
            let mut around = [0; 8];
            let count = if interior {
                around = [
                    cell + 1,
                    cell - 1,
                    cell + w,
                    cell - w,
                    cell + w + 1,
                    cell - w - 1,
                    cell + 1 - w,
                    cell + w - 1,
                ];
                8
            } else {
                let mut count = 0;
                for (dx, dy) in NEIGHBOURS {
                    let (nx, ny) = (x.wrapping_add_signed(dx), y.wrapping_add_signed(dy));
                    if nx < w && ny < h {
                        around[count] = ny * w + nx;
                        count += 1;
                    }
                }
                count
            };
            // The maps and the scratch as locals for the loop: through `self`
            // each read reloaded their pointers after every store.
            let scratch = &mut *self.scratch;
            let (visited, stack, frontier) =
                (&mut scratch.visited[..], &mut scratch.stack, &mut scratch.frontier);
            let (heights, pool, gate) = (&*self.heights, &*self.pool, &self.gate);
            let open = gate.is_open();
            for &j in &around[..count] {
                // Seen or taken (`taken` is `seen + 1`): one comparison.
                if visited[j].wrapping_sub(seen) <= 1 {
                    continue;
                }
                visited[j] = seen;
                if !open && !gate.admits(j) {
                    continue; // a wall: never pooled, never a drain
                }
                let depth = f64::from(pool[j]);
                let surface = match sea {
                    Some(sea) if f64::from(heights[j]) <= sea => sea,
                    _ => level_of(heights, pool, j),
                };
                if depth > 0.0 && (surface - level).abs() <= depth * LEVEL_SLACK + level_slack {
                    stack.push(j);
                } else {
                    frontier.push(Frontier::new(surface, order, j));
                    order += 1;
                }
            }
        };
        self.report.flood_cells += visits;
        outcome
    }

    /// Fills the pool (the flood set, whose surfaces sum to `sum` over the
    /// `start_level` of `start`, where the particle stalled) to the level that
    /// holds the particle's water, and settles its load there from `start`:
    /// the particle ends in the pool.
    fn fill_exact(&mut self, p: &mut Particle, start: usize, start_level: f64, sum: f64) -> Flood {
        let n = self.scratch.set.len() as f64;
        let top = start_level + (p.water / self.k.volume_factor + sum) / n;
        let placed = self.fill_set_to(top);
        p.water -= placed;
        p.sediment = self.settle(p.sediment, top, start, &mut p.water);
        Flood::Placed
    }

    /// The lowest-ground cell of the pool (stamped `taken`) beside cell `j`.
    fn lowest_taken_beside(&self, j: usize, taken: u32) -> Option<usize> {
        let (w, h) = (self.width, self.height);
        let (x, y) = (j % w, j / w);
        let mut lowest: Option<(usize, f32)> = None;
        for (dx, dy) in NEIGHBOURS {
            let (nx, ny) = (x.wrapping_add_signed(dx), y.wrapping_add_signed(dy));
            if nx < w && ny < h {
                let i = ny * w + nx;
                let height = self.heights[i];
                if self.scratch.visited[i] == taken && lowest.is_none_or(|(_, low)| height < low) {
                    lowest = Some((i, height));
                }
            }
        }
        lowest.map(|(i, _)| i)
    }
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;
    use core::cmp::Ordering;

    use glam::Vec2;

    use super::super::flood::Flood;
    use super::super::world::Particle;
    use super::super::{Hydrology, HydrologyParams};
    use super::Frontier;
    use crate::controls::Gate;

    const W: usize = 9;

    /// Exact floods with nothing else in the way: no drainage or sill cuts.
    fn params() -> HydrologyParams {
        HydrologyParams { exact_flood: true, drainage: 0.0, outlet_erosion: 0.0, ..Default::default() }
    }

    /// A 9 x 9 map at 1.0 with a 3 x 3 hollow in the middle: its centre at
    /// 0.125, the other eight at 0.25 (values `f32` holds exactly).
    fn hollow() -> Vec<f32> {
        (0..W * W)
            .map(|i| {
                let (x, y) = (i % W, i / W);
                match (x.abs_diff(4), y.abs_diff(4)) {
                    (0, 0) => 0.125,
                    (0..=1, 0..=1) => 0.25,
                    _ => 1.0,
                }
            })
            .collect()
    }

    /// Floods once with a particle of `water` at cell (x, y) of `heights`
    /// (pools `pool`); returns the outcome, the particle and the pools.
    fn flood_at(
        params: HydrologyParams,
        heights: &mut [f32],
        pool: Option<&[f32]>,
        (x, y): (usize, usize),
        water: f64,
    ) -> (Flood, Particle, Vec<f32>) {
        let mut sim = Hydrology::new(params, W, W).unwrap();
        if let Some(pool) = pool {
            sim.pool.cells_mut().copy_from_slice(pool);
        }
        sim.rebuild_surface(heights);
        let (mut world, _, _) = sim.whole_map(heights, 0.0, Gate::default());
        let mut p = Particle::new(Vec2::new(x as f32 + 0.5, y as f32 + 0.5));
        p.water = water;
        let flood = world.flood_exact(&mut p);
        let pool = world.pool.to_vec();
        (flood, p, pool)
    }

    /// Two particle volumes (0.2 of height over a cell at a volume factor
    /// of 10) fill the centre to 0.25 (0.125 of height), then the eight
    /// cells around it with the rest: a level of 0.125 + (0.2 + 8 x 0.125) / 9.
    #[test]
    fn a_pool_fills_to_the_level_that_holds_its_water() {
        let mut heights = hollow();
        let (flood, p, pool) = flood_at(params(), &mut heights, None, (4, 4), 2.0);
        assert_eq!(flood, Flood::Placed);
        let level = 0.125 + (0.2 + 8.0 * 0.125) / 9.0;
        for (i, &depth) in pool.iter().enumerate() {
            let expected = if heights[i] < 1.0 { level - f64::from(heights[i]) } else { 0.0 };
            assert!((f64::from(depth) - expected).abs() < 1e-7, "cell {i}: {depth} against {expected}");
        }
        let pooled: f64 = pool.iter().map(|&d| f64::from(d) * 10.0).sum();
        assert!((pooled + p.water - 2.0).abs() < 1e-12, "water booked: {pooled} + {}", p.water);
        assert!(p.water.abs() < 1e-5);
    }

    /// Less water than the centre holds stays on the centre alone.
    #[test]
    fn a_little_water_stays_in_the_lowest_cell() {
        let mut heights = hollow();
        let (flood, _, pool) = flood_at(params(), &mut heights, None, (4, 4), 0.5);
        assert_eq!(flood, Flood::Placed);
        assert!((f64::from(pool[4 * W + 4]) - 0.05).abs() < 1e-8);
        assert_eq!(pool.iter().filter(|&&d| d > 0.0).count(), 1);
    }

    /// With a notch in the rim (ground 0.5) and a drain beyond it (0.375),
    /// plenty of water fills the hollow to the notch and spills: the
    /// particle stands on the drain, moving away from the notch, holding
    /// what the pool did not take.
    #[test]
    fn a_full_pool_spills_over_its_lowest_sill() {
        let mut heights = hollow();
        heights[4 * W + 6] = 0.5; // the notch, east of the hollow
        heights[4 * W + 7] = 0.375; // the drain beyond it
        heights[7 * W + 7] = 0.4375; // lower, but behind a rim at 1.0
        let params = HydrologyParams { spill_speed: 1.0, ..params() };
        let (flood, p, pool) = flood_at(params, &mut heights, None, (4, 4), 100.0);
        assert_eq!(flood, Flood::Drain);
        assert_eq!(p.position, Vec2::new(7.5, 4.5));
        assert_eq!(p.velocity, Vec2::new(1.0, 0.0));
        let taken = (0.5 - 0.125) + 8.0 * (0.5 - 0.25);
        assert!((p.water - (100.0 - 10.0 * taken)).abs() < 1e-5, "water left: {}", p.water);
        assert!((f64::from(pool[4 * W + 4]) - 0.375).abs() < 1e-7);
        assert_eq!((pool[4 * W + 6], pool[4 * W + 7], pool[7 * W + 7]), (0.0, 0.0, 0.0));
    }

    /// A particle stalled on dry ground beside lower cells moves to the
    /// lowest of them (not the first found), holding its water: a hop.
    #[test]
    fn a_dry_stall_hops_to_its_lowest_neighbour() {
        let mut heights = alloc::vec![1.0; W * W];
        heights[4 * W + 4] = 0.5;
        heights[4 * W + 5] = 0.375; // east: visited first
        heights[3 * W + 3] = 0.25; // north-west: lower
        let (flood, p, pool) = flood_at(params(), &mut heights, None, (4, 4), 1.0);
        assert_eq!(flood, Flood::Hop);
        assert_eq!(p.position, Vec2::new(3.5, 3.5));
        assert_eq!(p.water, 1.0);
        assert!(pool.iter().all(|&d| d == 0.0));
    }

    /// Walled in (a closed border, no sea): the pool rises over the whole
    /// map by the water spread over it.
    #[test]
    fn a_pool_with_no_way_out_rises_over_all_it_holds() {
        let mut heights = alloc::vec![0.5; W * W];
        let params = HydrologyParams { open_border: false, ..params() };
        let (flood, _, pool) = flood_at(params, &mut heights, None, (4, 4), 100.0);
        assert_eq!(flood, Flood::Placed);
        let depth = 100.0 / 10.0 / (W * W) as f64;
        assert!(pool.iter().all(|&d| (f64::from(d) - depth).abs() < 1e-7));
    }

    /// A sea beyond a bank east of the hollow: the pool rises over the notch
    /// in the rim to the bank (its sill), and the particle leaves into the sea.
    #[test]
    fn a_pool_that_reaches_the_sea_drains_into_it() {
        let mut heights = hollow();
        for y in 0..W {
            heights[y * W + 8] = 0.0; // a sea strip along the east border
        }
        heights[4 * W + 6] = 0.5; // a notch in the rim, above the sea
        heights[4 * W + 7] = 0.625; // and a bank between it and the sea
        let params = HydrologyParams { sea_level: Some(0.0625), ..params() };
        let (flood, p, pool) = flood_at(params, &mut heights, None, (4, 4), 100.0);
        assert_eq!(flood, Flood::Sea);
        assert!((f64::from(pool[4 * W + 4]) - 0.5).abs() < 1e-7);
        assert!((f64::from(pool[4 * W + 6]) - 0.125).abs() < 1e-7);
        assert_eq!(pool[4 * W + 7], 0.0);
        let taken = (0.625 - 0.125) + 8.0 * (0.625 - 0.25) + (0.625 - 0.5);
        assert!((p.water - (100.0 - 10.0 * taken)).abs() < 1e-5);
    }

    /// A lake whose cells' stored levels sit off its level by their depths'
    /// rounding (a deep centre, shallow shores) is one pool: water added on
    /// a shore raises all of it evenly, and no cell of it is taken for a drain.
    #[test]
    fn a_lake_is_one_pool_whatever_its_rounding() {
        let mut heights = hollow();
        for (i, h) in heights.iter_mut().enumerate() {
            if *h < 1.0 {
                *h = 0.1 + 0.0237 * (i % 7) as f32 + if i == 4 * W + 4 { -0.1 } else { 0.2 };
            }
        }
        let level = 0.4999_f64;
        let pool: Vec<f32> =
            heights.iter().map(|&h| if h < 1.0 { (level - f64::from(h)) as f32 } else { 0.0 }).collect();
        let (flood, p, after) = flood_at(params(), &mut heights, Some(&pool), (5, 5), 1.0);
        assert_eq!(flood, Flood::Placed);
        assert!(p.water.abs() < 1e-5);
        let raised = level + 0.1 / 9.0;
        for i in (0..W * W).filter(|&i| heights[i] < 1.0) {
            let stored = f64::from(heights[i]) + f64::from(after[i]);
            assert!((stored - raised).abs() < 1e-7, "cell {i}: {stored} against {raised}");
        }
    }

    /// A particle raining on a pool at its sill level adds its water to the
    /// pool and spills it all: the pool ends at the same level.
    #[test]
    fn a_full_pool_passes_water_on() {
        let mut heights = hollow();
        heights[4 * W + 6] = 0.5;
        heights[4 * W + 7] = 0.375;
        let pool: Vec<f32> = heights.iter().map(|&h| if h <= 0.25 { 0.5 - h } else { 0.0 }).collect();
        let (flood, p, after) = flood_at(params(), &mut heights, Some(&pool), (3, 3), 1.0);
        assert_eq!(flood, Flood::Drain);
        assert_eq!(p.water, 1.0);
        assert_eq!(after, pool);
    }

    /// The integer keys order surfaces as `f64::total_cmp` does and give
    /// them back bit for bit: signed zeros, infinities, NaNs of both signs,
    /// subnormals and a spread of ordinary values, every pair.
    #[test]
    fn frontier_keys_order_as_total_cmp() {
        use super::{from_order_key, order_key};
        let mut xs: Vec<f64> = [
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            -f64::NAN,
            f64::MIN_POSITIVE,
            -f64::MIN_POSITIVE,
            f64::from_bits(1),
            -f64::from_bits(1),
            f64::MAX,
            f64::MIN,
            1.0,
            -1.0,
        ]
        .to_vec();
        let mut bits = 0x9e37_79b9_7f4a_7c15_u64;
        for _ in 0..200 {
            bits = bits.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            xs.push(f64::from_bits(bits));
            xs.push(f64::from(bits as u32 as f32) * 1e-3 - 2e6);
        }
        for &a in &xs {
            assert_eq!(from_order_key(order_key(a)).to_bits(), a.to_bits());
            for &b in &xs {
                assert_eq!(order_key(a).cmp(&order_key(b)), a.total_cmp(&b), "{a:e} {b:e}");
            }
        }
        // The heap pops the lowest surface first, the earliest on a tie.
        let (low, early, late) =
            (Frontier::new(0.5, 3, 0), Frontier::new(0.75, 1, 1), Frontier::new(0.75, 2, 2));
        assert_eq!(low.cmp(&early), Ordering::Greater);
        assert_eq!(early.cmp(&late), Ordering::Greater);
        assert_eq!(early.surface(), 0.75);
    }
}
