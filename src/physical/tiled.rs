//! Coloured tiling: droplets run in the tiles of the map, each tile on its own
//! copy of its zone, tiles that do not overlap side by side.
//!
//! The map is cut into square tiles of `tile` cells, coloured by the parity of
//! their column and row (4 colours). A tile's **zone** is the tile grown by
//! `tile / 2` cells on every side: only a tile's 8 neighbours overlap its zone,
//! and two tiles of one colour never do. Each sweep gives every tile one turn,
//! colour by colour; a turn starts once the tile's neighbours of lower colours
//! have had theirs, so turns that run at once never share a cell. A droplet runs
//! in the tile that holds its cell until its next step would read beyond the
//! zone; it then waits, where it stands, for the next turn of the tile it stands
//! in. Which droplets a tile runs, and in what order, depends only on the tile
//! size, the sweep size and the seed, never on the threads.

extern crate std;

use alloc::vec::Vec;
use core::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use glam::Vec2;
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256StarStar;

use super::lockstep::Feed;
use super::{Eroder, Physical, Refused, Walk};
use crate::droplet::{Droplet, Fate};
use crate::grid::{Grid, clamped_cell};
use crate::normal::EightFacet;
use crate::progress::{Progress, Silent, Ticker};
use crate::random::unit_f32;
use crate::report::ErosionReport;

/// How a tiled run goes: tiles of `tile` cells a side, `sweep` new droplets per
/// sweep, each turn in lockstep or one droplet after another.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tiling {
    pub(crate) tile: usize,
    pub(crate) sweep: u64,
    pub(crate) lockstep: bool,
}

/// What every turn of a run shares.
#[derive(Clone, Copy, Debug)]
struct Rules {
    k: super::Constants,
    /// The whole map's base level when the run began.
    base_level: f32,
    lockstep: bool,
}

/// A droplet between turns, in map coordinates.
#[derive(Clone, Copy, Debug)]
struct Waiting {
    droplet: Droplet,
    age: u32,
    accel: f32,
}

/// One tile's zone: the cells it copies, and which of its sides are the map's.
#[derive(Clone, Copy, Debug)]
struct Zone {
    x0: usize,
    y0: usize,
    width: usize,
    height: usize,
    /// Whether the zone's low / high side along x and along y is the map's edge.
    edge: [bool; 4],
}

impl Zone {
    /// The map index ranges of the zone's rows, top to bottom, on a map
    /// `width` cells wide.
    fn rows(&self, width: usize) -> impl Iterator<Item = core::ops::Range<usize>> + '_ {
        (self.y0..self.y0 + self.height).map(move |y| y * width + self.x0..y * width + self.x0 + self.width)
    }

    /// Whether a droplet moving to `(px, py)` (zone coordinates) reads only
    /// inside the zone: its next cell and that cell's neighbours, or, across the
    /// map's edge, the edge cells.
    #[inline(always)]
    fn holds(&self, px: f32, py: f32) -> bool {
        (self.edge[0] || px >= 1.0)
            && (self.edge[1] || px < (self.width - 1) as f32)
            && (self.edge[2] || py >= 1.0)
            && (self.edge[3] || py < (self.height - 1) as f32)
    }
}

/// What one tile's turn produced.
#[derive(Default)]
struct Turn {
    report: ErosionReport,
    /// Droplets that stepped out of reach, in map coordinates.
    passed: Vec<Waiting>,
    /// Droplets whose very first step in the turn was out of reach (a jump
    /// longer than half a tile): they take that step on the whole map.
    stuck: Vec<Waiting>,
}

/// The layout of the tiles.
struct Layout {
    tile: usize,
    columns: usize,
    rows: usize,
    width: usize,
    height: usize,
}

impl Layout {
    fn tile_of(&self, p: Vec2) -> usize {
        let (x, y) = clamped_cell(p, self.width, self.height);
        (y / self.tile) * self.columns + x / self.tile
    }

    /// Tile `t` and its (up to 8) neighbours, row by row.
    fn around(&self, t: usize) -> impl Iterator<Item = usize> + '_ {
        let (tx, ty) = (t % self.columns, t / self.columns);
        let xs = tx.saturating_sub(1)..(tx + 2).min(self.columns);
        (ty.saturating_sub(1)..(ty + 2).min(self.rows))
            .flat_map(move |y| xs.clone().map(move |x| y * self.columns + x))
    }

    /// Tile `t`'s neighbours of lower colours, in colour, then tile order: the
    /// turns that come before its own in a sweep and touch its zone.
    fn lower(&self, t: usize) -> Vec<usize> {
        let mut lower: Vec<usize> = self.around(t).filter(|&n| self.colour(n) < self.colour(t)).collect();
        lower.sort_by_key(|&n| (self.colour(n), n));
        lower
    }

    fn colour(&self, t: usize) -> usize {
        (t % self.columns) % 2 + 2 * ((t / self.columns) % 2)
    }

    fn zone(&self, t: usize) -> Zone {
        let (tx, ty) = (t % self.columns, t / self.columns);
        let margin = self.tile / 2;
        let x0 = (tx * self.tile).saturating_sub(margin);
        let y0 = (ty * self.tile).saturating_sub(margin);
        let x1 = ((tx + 1) * self.tile + margin).min(self.width);
        let y1 = ((ty + 1) * self.tile + margin).min(self.height);
        Zone {
            x0,
            y0,
            width: x1 - x0,
            height: y1 - y0,
            edge: [x0 == 0, x1 == self.width, y0 == 0, y1 == self.height],
        }
    }
}

/// Runs `physical`'s droplets on `map` tile by tile on the current rayon pool
/// (see [`Parallel`](crate::Parallel)): `sweep` new droplets per sweep, drawn
/// from a `Xoshiro256StarStar` seeded with `stream(seed, sweep index)`, then a
/// turn of each colour, until every droplet has ended. Every rounding
/// remainder is placed before it returns.
pub(crate) fn run<St, P>(
    physical: &Physical<EightFacet>,
    map: &mut Grid<St>,
    seed: u64,
    Tiling { tile, sweep, lockstep }: Tiling,
    ticker: &mut Ticker<'_, P>,
    stream: impl Fn(u64, u64) -> u64,
) -> ErosionReport
where
    St: AsRef<[f32]> + AsMut<[f32]>,
    P: Progress + ?Sized,
{
    let k = physical.k;
    let total = u64::from(physical.params.droplets);
    let (width, height) = (map.width(), map.height());
    let mut report = ErosionReport::default();
    if width < 3 || height < 3 {
        return report;
    }
    let base_level = map.cells().iter().fold(f32::INFINITY, |lo, &h| lo.min(h));
    let rules = Rules { k, base_level, lockstep };
    let layout = Layout { tile, columns: width.div_ceil(tile), rows: height.div_ceil(tile), width, height };
    let tiles = layout.columns * layout.rows;
    let mut queues: Vec<Vec<Waiting>> = (0..tiles).map(|_| Vec::new()).collect();
    let (wf, hf) = (width as f32, height as f32);
    let mut spawned = 0u64;
    let mut round = 0u64;
    loop {
        if ticker.should_stop(report.droplets) {
            // Everything in flight puts its load down where it stands.
            let mut eroder = Eroder::new(map.view_mut(), k, EightFacet);
            for w in queues.iter_mut().flat_map(|q| q.drain(..)) {
                let mut d = w.droplet;
                eroder.settle(&mut d, Fate::Stopped);
            }
            eroder.flush_anywhere();
            report.merge(&eroder.report);
            report.cancelled = true;
            return report;
        }
        if spawned < total {
            let count = sweep.min(total - spawned);
            let mut rng = Xoshiro256StarStar::seed_from_u64(stream(seed, round));
            for _ in 0..count {
                let start = Vec2::new(unit_f32(&mut rng) * wf, unit_f32(&mut rng) * hf);
                let walk = Walk::new(&k, (0, 0));
                queues[layout.tile_of(start)].push(Waiting {
                    droplet: Droplet::new(start),
                    age: walk.age,
                    accel: walk.accel,
                });
            }
            spawned += count;
        } else if queues.iter().all(Vec::is_empty) {
            return report;
        }
        round += 1;
        let turns = run_sweep(&rules, &layout, map.cells_mut(), &mut queues, spawned < total);
        // Settle the sweep in turn order (colour, then tile): reports, then the
        // droplets passed to tiles whose turn had come already (the others took
        // theirs during the sweep), then the long jumps.
        let mut stuck = Vec::new();
        for (src, turn) in turns {
            report.merge(&turn.report);
            for w in turn.passed {
                let to = layout.tile_of(w.droplet.position);
                if layout.colour(to) <= layout.colour(src) {
                    queues[to].push(w);
                }
            }
            stuck.extend(turn.stuck);
        }
        if !stuck.is_empty() {
            // Jumps longer than half a tile: one step each on the whole map, in
            // order.
            let mut eroder = Eroder::new(map.view_mut(), k, EightFacet);
            eroder.base_level = base_level;
            for w in stuck {
                let (mut d, mut walk) = (
                    w.droplet,
                    Walk { age: w.age, accel: w.accel, cell: eroder.cell_of(w.droplet.position) },
                );
                match eroder.step(&mut d, &mut walk) {
                    Some(fate) => eroder.settle(&mut d, fate),
                    None => queues[layout.tile_of(d.position)].push(Waiting {
                        droplet: d,
                        age: walk.age,
                        accel: walk.accel,
                    }),
                }
            }
            eroder.flush_anywhere();
            report.merge(&eroder.report);
        }
    }
}

/// One sweep's turns, each tile once, colour by colour: a tile's turn starts as
/// soon as its neighbours of lower colours have had theirs (only they overlap
/// its zone, and only they pass droplets to it in this sweep), so no turn waits
/// for a whole colour. Takes each tile's waiting droplets from `queues`, adds
/// those its lower neighbours passed to it (in colour, then tile order), and
/// returns every turn in colour, then tile order.
fn run_sweep(
    rules: &Rules,
    layout: &Layout,
    cells: &mut [f32],
    queues: &mut [Vec<Waiting>],
    park: bool,
) -> Vec<(usize, Turn)> {
    let tiles = queues.len();
    let lower: Vec<Vec<usize>> = (0..tiles).map(|t| layout.lower(t)).collect();
    let waiting: Vec<Mutex<Vec<Waiting>>> =
        queues.iter_mut().map(|q| Mutex::new(core::mem::take(q))).collect();
    let done: Vec<OnceLock<Turn>> = (0..tiles).map(|_| OnceLock::new()).collect();
    let pending: Vec<AtomicUsize> = lower.iter().map(|l| AtomicUsize::new(l.len())).collect();
    let map = Mutex::new(cells);
    let sweep = Sweep {
        rules,
        layout,
        lower: &lower,
        waiting: &waiting,
        done: &done,
        pending: &pending,
        map: &map,
        park,
    };
    // The tiles with no lower neighbour, chosen before any turn runs (a turn
    // that ends may bring another tile's count to zero and start it).
    let first: Vec<usize> = (0..tiles).filter(|&t| pending[t].load(Ordering::Acquire) == 0).collect();
    rayon::scope(|scope| {
        for t in first {
            scope.spawn(move |scope| sweep.take_turn(scope, t));
        }
    });
    let mut order: Vec<usize> = (0..tiles).collect();
    order.sort_by_key(|&t| (layout.colour(t), t));
    let mut done = done;
    order.into_iter().map(|t| (t, done[t].take().expect("every tile had its turn"))).collect()
}

/// What the turns of a sweep share.
#[derive(Clone, Copy)]
struct Sweep<'a> {
    rules: &'a Rules,
    layout: &'a Layout,
    /// Each tile's neighbours of lower colours, in colour, then tile order.
    lower: &'a [Vec<usize>],
    /// Droplets waiting for each tile's turn.
    waiting: &'a [Mutex<Vec<Waiting>>],
    done: &'a [OnceLock<Turn>],
    /// Lower neighbours of each tile whose turn is still to end.
    pending: &'a [AtomicUsize],
    /// The map, locked only to copy a zone in or out: tiles whose turns run at
    /// once are never neighbours, so their zones never overlap.
    map: &'a Mutex<&'a mut [f32]>,
    park: bool,
}

impl Sweep<'_> {
    fn take_turn<'s>(self, scope: &rayon::Scope<'s>, t: usize)
    where
        Self: 's,
    {
        let layout = self.layout;
        let mut queue = core::mem::take(&mut *lock(&self.waiting[t]));
        for &n in &self.lower[t] {
            let passed = &self.done[n].get().expect("a lower neighbour's turn ended").passed;
            queue.extend(passed.iter().filter(|w| layout.tile_of(w.droplet.position) == t));
        }
        let zone = layout.zone(t);
        let turn = if queue.is_empty() {
            Turn::default()
        } else {
            let mut cells = Vec::with_capacity(zone.width * zone.height);
            for row in zone.rows(layout.width) {
                cells.extend_from_slice(&lock(self.map)[row]);
            }
            let turn = turn(self.rules, &mut cells, zone, &queue, self.park);
            let mut map = lock(self.map);
            for (row, line) in zone.rows(layout.width).zip(cells.chunks_exact(zone.width)) {
                map[row].copy_from_slice(line);
            }
            turn
        };
        if self.done[t].set(turn).is_err() {
            unreachable!("one turn per tile and sweep");
        }
        // Wake the higher neighbours whose last lower neighbour this was.
        for n in layout.around(t) {
            if layout.colour(n) > layout.colour(t) && self.pending[n].fetch_sub(1, Ordering::AcqRel) == 1 {
                scope.spawn(move |scope| self.take_turn(scope, n));
            }
        }
    }
}

/// Locks `m`; a turn that panicked poisons nothing this code relies on.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// One tile's turn: runs `queue` in order on `cells`, a copy of its zone, and
/// returns what became of the droplets; `park` lets lockstep lanes stop early
/// (see [`Feed::park`]).
fn turn(rules: &Rules, cells: &mut [f32], zone: Zone, queue: &[Waiting], park: bool) -> Turn {
    let Rules { k, base_level, lockstep } = *rules;
    let origin = Vec2::new(zone.x0 as f32, zone.y0 as f32);
    let mut feed =
        ZoneFeed { queue: queue.iter(), zone, origin, park, passed: Vec::new(), stuck: Vec::new() };
    let mut eroder = Eroder::new(Grid::new_unchecked(zone.width, zone.height, cells), k, EightFacet);
    eroder.base_level = base_level;
    if lockstep {
        super::lockstep::run_fed(&mut eroder, &mut feed, &mut Ticker::new(&mut Silent, u64::MAX));
    } else {
        while let Some((mut d, mut walk)) = feed.next(&eroder) {
            let mut moved = false;
            loop {
                match eroder.step_if(&mut d, &mut walk, |px, py| zone.holds(px, py)) {
                    Ok(None) => moved = true,
                    Ok(Some(fate)) => break eroder.settle(&mut d, fate),
                    Err(Refused) => break feed.pass(d, walk, moved),
                }
            }
        }
    }
    // The zone is this turn's alone: its remainder goes on its own cells.
    eroder.flush_anywhere();
    Turn { report: eroder.report, passed: feed.passed, stuck: feed.stuck }
}

/// A tile's queue as a lockstep feed: droplets in queue order, in zone
/// coordinates; those that would leave the zone's reach are passed on.
struct ZoneFeed<'q> {
    queue: core::slice::Iter<'q, Waiting>,
    zone: Zone,
    origin: Vec2,
    /// Whether lanes may be parked (see [`Feed::park`]).
    park: bool,
    passed: Vec<Waiting>,
    stuck: Vec<Waiting>,
}

impl Feed for ZoneFeed<'_> {
    fn next(&mut self, eroder: &Eroder<'_, EightFacet>) -> Option<(Droplet, Walk)> {
        let w = self.queue.next()?;
        let d = Droplet { position: w.droplet.position - self.origin, ..w.droplet };
        Some((d, Walk { age: w.age, accel: w.accel, cell: eroder.cell_of(d.position) }))
    }

    #[inline(always)]
    fn holds(&self, px: f32, py: f32) -> bool {
        self.zone.holds(px, py)
    }

    /// Once the queue is empty and under a quarter of the lanes run, the rest
    /// wait for the tile's next turn (while new droplets still come).
    fn park(&self, live: usize) -> bool {
        self.park && self.queue.len() == 0 && live < super::LOCKSTEP_LANES / 4
    }

    fn pass(&mut self, d: Droplet, walk: Walk, moved: bool) {
        let w = Waiting {
            droplet: Droplet { position: d.position + self.origin, ..d },
            age: walk.age,
            accel: walk.accel,
        };
        if moved { self.passed.push(w) } else { self.stuck.push(w) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::Heightmap;
    use crate::params::ErosionParams;

    /// Two tiles of one colour never share a cell of their zones, whatever the
    /// map and tile sizes: their turns can run at once.
    #[test]
    fn zones_of_one_colour_never_overlap() {
        for (width, height, tile) in
            [(512usize, 512usize, 64usize), (100, 37, 8), (9, 200, 8), (65, 65, 16), (20, 20, 32)]
        {
            let layout =
                Layout { tile, columns: width.div_ceil(tile), rows: height.div_ceil(tile), width, height };
            let tiles = layout.columns * layout.rows;
            for colour in 0..4 {
                let mut owner = alloc::vec![usize::MAX; width * height];
                for t in (0..tiles).filter(|&t| layout.colour(t) == colour) {
                    let z = layout.zone(t);
                    for y in z.y0..z.y0 + z.height {
                        for x in z.x0..z.x0 + z.width {
                            assert_eq!(owner[y * width + x], usize::MAX, "{width}x{height}/{tile}: tile {t}");
                            owner[y * width + x] = t;
                        }
                    }
                }
            }
            // Every cell's tile holds it in its body, away from interior zone edges.
            for y in 0..height {
                for x in 0..width {
                    let t = layout.tile_of(Vec2::new(x as f32 + 0.5, y as f32 + 0.5));
                    let z = layout.zone(t);
                    assert!(z.holds(x as f32 + 0.5 - z.x0 as f32, y as f32 + 0.5 - z.y0 as f32));
                }
            }
        }
    }

    /// A zone's reach: a cell and its neighbours inside, or across the map's edge.
    #[test]
    fn holds_keeps_reads_inside_the_zone() {
        let inner = Zone { x0: 10, y0: 10, width: 20, height: 20, edge: [false; 4] };
        assert!(inner.holds(1.0, 18.99));
        assert!(!inner.holds(0.99, 5.0));
        assert!(!inner.holds(5.0, 19.0));
        let corner = Zone { x0: 0, y0: 0, width: 20, height: 20, edge: [true, false, true, false] };
        assert!(corner.holds(-3.0, -0.5));
        assert!(!corner.holds(-3.0, 19.5));
    }

    /// A droplet whose first step in a turn would leave the zone's reach comes
    /// back unmoved, to take that step on the whole map.
    #[test]
    fn a_jump_out_of_reach_is_stuck_not_lost() {
        let map = Heightmap::from_fn(64, 64, |x, y| (x + y) as f32 * 0.01).unwrap();
        let params = ErosionParams::default();
        let k = super::super::Constants::new(&params);
        let layout = Layout { tile: 16, columns: 4, rows: 4, width: 64, height: 64 };
        let t = 5; // (1, 1): an inner tile, zone 8..40 on both axes
        let zone = layout.zone(t);
        let fast = Droplet { velocity: Vec2::new(30.0, 0.0), ..Droplet::new(Vec2::new(20.5, 20.5)) };
        let slow = Droplet::new(Vec2::new(24.5, 24.5));
        let walk = Walk::new(&k, (0, 0));
        let queue: Vec<Waiting> = [fast, slow]
            .iter()
            .map(|&droplet| Waiting { droplet, age: walk.age, accel: walk.accel })
            .collect();
        for lockstep in [false, true] {
            let rules = Rules { k, base_level: 0.0, lockstep };
            let mut cells: Vec<f32> =
                zone.rows(64).flat_map(|row| map.cells()[row].iter().copied()).collect();
            let out = turn(&rules, &mut cells, zone, &queue, false);
            assert_eq!(out.stuck.len(), 1, "lockstep {lockstep}");
            assert_eq!(out.stuck[0].droplet, fast);
            assert_eq!(out.stuck[0].age, 0);
            // The slow one ran downhill (towards the origin) until its next step
            // would read below cell 8, the zone's first: it stops inside.
            assert_eq!(out.passed.len(), 1);
            let (p, age) = (out.passed[0].droplet.position, out.passed[0].age);
            assert!(p.x < 24.5 && p.y < 24.5 && p.min_element() >= 9.0 && age > 0, "{p} {age}");
            assert_eq!(out.report.droplets, 0);
        }
    }
}
