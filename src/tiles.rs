//! Coloured tiling, the scheduling every tiled simulator shares: tiles, their
//! zones, and the sweeps that give each tile one turn on a copy of its zone.
//!
//! The map is cut into square tiles of `tile` cells, coloured by the parity of
//! their column and row (4 colours). A tile's **zone** is the tile grown by
//! `tile / 2` cells on every side: only a tile's 8 neighbours overlap its zone,
//! and two tiles of one colour never do. Each sweep gives every tile one turn,
//! colour by colour; a turn starts once the tile's neighbours of lower colours
//! have had theirs, so turns that run at once never share a cell. What a turn
//! does (which travellers it runs, which it passes on) is the simulator's; which
//! travellers a tile gets, and in what order, depends only on the layout and on
//! the turns' results, never on the threads.
//!
//! A stop (a [`Progress`](crate::Progress) that returns
//! [`Control::Stop`](crate::Control::Stop)) ends the rain: no traveller starts
//! after it (nor a round of rain), and those under way finish their walks in
//! the sweeps that follow, at most a sweep's worth. Why not put their loads
//! down where they stand, as the one-at-a-time modes do with their one (or
//! 32) droplets: a sweep leaves thousands waiting at the zones' edges,
//! bunched where the channels cross them, and the landscape preset's loads
//! put down there at once stood as walls of deposit (a 256² run stopped
//! after 1 s: cells of 1.2 to 2.5 on a map whose peak is 0.99).

#[cfg(feature = "parallel")]
extern crate std;

use alloc::vec::Vec;
#[cfg(feature = "parallel")]
use core::sync::atomic::{AtomicUsize, Ordering};
#[cfg(feature = "parallel")]
use std::sync::{Mutex, OnceLock};

use glam::Vec2;

use crate::grid::clamped_cell;
use crate::layers::Track;
use crate::reach::Reach;

/// One tile's zone: the cells it copies, and which of its sides are the map's.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Zone {
    pub(crate) x0: usize,
    pub(crate) y0: usize,
    pub(crate) width: usize,
    pub(crate) height: usize,
    /// Which of its sides are the map's edges.
    pub(crate) reach: Reach,
    /// `[width - 1, height - 1]` as `f32`: [`holds`](Self::holds)'s far
    /// bounds, converted once (a `usize` takes six instructions to convert,
    /// and the droplets ask every step).
    high: [f32; 2],
}

impl Zone {
    /// The zone of `width` x `height` cells from `(x0, y0)`, its `reach`.
    pub(crate) fn new(x0: usize, y0: usize, width: usize, height: usize, reach: Reach) -> Self {
        Zone { x0, y0, width, height, reach, high: Reach::far_bounds(width, height) }
    }

    /// The map index ranges of the zone's rows, top to bottom, on a map
    /// `width` cells wide.
    pub(crate) fn rows(&self, width: usize) -> impl Iterator<Item = core::ops::Range<usize>> + '_ {
        (self.y0..self.y0 + self.height).map(move |y| y * width + self.x0..y * width + self.x0 + self.width)
    }

    /// Copies the zone's cells of `map` (`width` cells a row), row by row.
    pub(crate) fn copy_in<T: Copy>(&self, map: &[T], width: usize) -> Vec<T> {
        let mut cells = Vec::with_capacity(self.width * self.height);
        for row in self.rows(width) {
            cells.extend_from_slice(&map[row]);
        }
        cells
    }

    /// Writes a zone copy made by [`copy_in`](Self::copy_in) back to `map`.
    pub(crate) fn copy_out<T: Copy>(&self, cells: &[T], map: &mut [T], width: usize) {
        for (row, line) in self.rows(width).zip(cells.chunks_exact(self.width)) {
            map[row].copy_from_slice(line);
        }
    }

    /// Whether a traveller at `p`, in **map** coordinates, that reads `r`
    /// cells (a whole number) around its cell reads only inside the zone (as
    /// [`Reach::holds_within`] in zone coordinates, without converting).
    #[cfg(feature = "parallel")]
    pub(crate) fn holds_map(&self, p: Vec2, r: f32) -> bool {
        let (x0, y0) = (self.x0 as f32, self.y0 as f32);
        let [low_x, high_x, low_y, high_y] = self.reach.edge;
        (low_x || p.x >= x0 + r)
            && (high_x || p.x < x0 + self.width as f32 - r)
            && (low_y || p.y >= y0 + r)
            && (high_y || p.y < y0 + self.height as f32 - r)
    }

    /// A position in the zone, `local`, back in map coordinates. The sum can
    /// round up onto the edge of the next cell; with an active mask
    /// (`keep_cell`) it stays in its own cell, which the gate admits where
    /// the next may be masked. Without one it rounds as it always has (the
    /// same bits).
    pub(crate) fn to_map(self, local: Vec2, keep_cell: bool) -> Vec2 {
        let origin = Vec2::new(self.x0 as f32, self.y0 as f32);
        let map = local + origin;
        if !keep_cell {
            return map;
        }
        // Rounding is monotonic, so the sum is never below its cell's low edge.
        let inside = |l: f32, o: f32, m: f32| {
            // Whole numbers well below 2^24: exact.
            let edge = crate::math::floor(l) + o + 1.0;
            if m < edge { m } else { f32::from_bits(edge.to_bits() - 1) }
        };
        Vec2::new(inside(local.x, origin.x, map.x), inside(local.y, origin.y, map.y))
    }

    /// Whether a traveller at `(px, py)` (zone coordinates) reads only inside
    /// the zone: its cell and that cell's neighbours, or, across the map's
    /// edge, the edge cells.
    #[inline(always)]
    pub(crate) fn holds(&self, px: f32, py: f32) -> bool {
        self.reach.holds_inside(1.0, self.high, px, py)
    }
}

/// The layout of the tiles on a `width` x `height` map.
pub(crate) struct Layout {
    pub(crate) tile: usize,
    pub(crate) columns: usize,
    pub(crate) rows: usize,
    pub(crate) width: usize,
    pub(crate) height: usize,
    /// Each tile's neighbours of lower colours, in colour, then tile order.
    lower: Vec<Vec<usize>>,
    /// The tiles in turn order: colour, then tile.
    order: Vec<usize>,
}

impl Layout {
    pub(crate) fn new(tile: usize, width: usize, height: usize) -> Self {
        let mut layout = Self {
            tile,
            columns: width.div_ceil(tile),
            rows: height.div_ceil(tile),
            width,
            height,
            lower: Vec::new(),
            order: Vec::new(),
        };
        // Fixed for the run: worked out once, not every sweep.
        layout.lower = (0..layout.tiles()).map(|t| layout.lower_of(t)).collect();
        let mut order: Vec<usize> = (0..layout.tiles()).collect();
        order.sort_by_key(|&t| (layout.colour(t), t));
        layout.order = order;
        layout
    }

    /// How many tiles there are.
    pub(crate) fn tiles(&self) -> usize {
        self.columns * self.rows
    }

    /// The tile holding the cell at `p` (clamped to the map).
    pub(crate) fn tile_of(&self, p: Vec2) -> usize {
        let (x, y) = clamped_cell(p, self.width, self.height);
        (y / self.tile) * self.columns + x / self.tile
    }

    /// Tile `t` and its (up to 8) neighbours, row by row.
    pub(crate) fn around(&self, t: usize) -> impl Iterator<Item = usize> + '_ {
        let (tx, ty) = (t % self.columns, t / self.columns);
        let xs = tx.saturating_sub(1)..(tx + 2).min(self.columns);
        (ty.saturating_sub(1)..(ty + 2).min(self.rows))
            .flat_map(move |y| xs.clone().map(move |x| y * self.columns + x))
    }

    /// Tile `t`'s neighbours of lower colours, in colour, then tile order: the
    /// turns that come before its own in a sweep and touch its zone.
    fn lower_of(&self, t: usize) -> Vec<usize> {
        let mut lower: Vec<usize> = self.around(t).filter(|&n| self.colour(n) < self.colour(t)).collect();
        lower.sort_by_key(|&n| (self.colour(n), n));
        lower
    }

    /// Whether tiles `a` and `b` touch (a tile touches itself).
    pub(crate) fn neighbours(&self, a: usize, b: usize) -> bool {
        let (ax, ay, bx, by) = (a % self.columns, a / self.columns, b % self.columns, b / self.columns);
        ax.abs_diff(bx) <= 1 && ay.abs_diff(by) <= 1
    }

    /// Tile `t`'s queue for its turn in a sweep: its `waiting` travellers,
    /// then those each of its lower neighbours `n` passed to it (`passed(n)`,
    /// in colour, then tile order).
    fn queue<'a, T: Traveller + 'a>(
        &self,
        t: usize,
        mut waiting: Vec<T>,
        passed: impl Fn(usize) -> &'a [T],
    ) -> Vec<T> {
        for &n in &self.lower[t] {
            waiting.extend(passed(n).iter().filter(|w| self.tile_of(w.position()) == t).cloned());
        }
        waiting
    }

    pub(crate) fn colour(&self, t: usize) -> usize {
        (t % self.columns) % 2 + 2 * ((t / self.columns) % 2)
    }

    pub(crate) fn zone(&self, t: usize) -> Zone {
        let (tx, ty) = (t % self.columns, t / self.columns);
        let margin = self.tile / 2;
        let x0 = (tx * self.tile).saturating_sub(margin);
        let y0 = (ty * self.tile).saturating_sub(margin);
        let x1 = ((tx + 1) * self.tile + margin).min(self.width);
        let y1 = ((ty + 1) * self.tile + margin).min(self.height);
        let reach = Reach { edge: [x0 == 0, x1 == self.width, y0 == 0, y1 == self.height] };
        Zone::new(x0, y0, x1 - x0, y1 - y0, reach)
    }
}

/// Something that waits in a tile between turns: a droplet, a particle.
pub(crate) trait Traveller: Clone + Send + Sync {
    /// Where it stands, in map coordinates.
    fn position(&self) -> Vec2;
}

/// The map state a tiled run works on, copied zone by zone for each turn.
pub(crate) trait Zoned: Send {
    /// A zone's copy, which the turn works on.
    type Copy: Send;
    /// Copies `zone` of the map (`width` cells a row).
    fn copy_in(&self, zone: &Zone, width: usize) -> Self::Copy;
    /// Writes the turn's copy of `zone` back.
    fn copy_out(&mut self, zone: &Zone, width: usize, copy: &Self::Copy);
}

/// A heightmap alone (the [`Physical`](crate::Physical) runs).
impl Zoned for [f32] {
    type Copy = Vec<f32>;

    fn copy_in(&self, zone: &Zone, width: usize) -> Vec<f32> {
        zone.copy_in(self, width)
    }

    fn copy_out(&mut self, zone: &Zone, width: usize, copy: &Vec<f32>) {
        zone.copy_out(copy, self, width);
    }
}

/// A map state with the output layers' tracks beside it, when the run records
/// them: a zone's copy carries its tracks too (empty when there are none).
pub(crate) struct WithTracks<'m, M: ?Sized> {
    pub(crate) map: &'m mut M,
    pub(crate) tracks: Option<&'m mut [Track]>,
}

impl<M: Zoned + ?Sized> Zoned for WithTracks<'_, M> {
    type Copy = (M::Copy, Vec<Track>);

    fn copy_in(&self, zone: &Zone, width: usize) -> Self::Copy {
        let tracks = self.tracks.as_deref().map_or_else(Vec::new, |t| zone.copy_in(t, width));
        (self.map.copy_in(zone, width), tracks)
    }

    fn copy_out(&mut self, zone: &Zone, width: usize, copy: &Self::Copy) {
        self.map.copy_out(zone, width, &copy.0);
        if let Some(tracks) = self.tracks.as_deref_mut() {
            zone.copy_out(&copy.1, tracks, width);
        }
    }
}

/// The tracks of a zone's copy made by [`WithTracks`], if the run records them.
pub(crate) fn zone_tracks(copy: &mut Vec<Track>) -> Option<&mut [Track]> {
    (!copy.is_empty()).then_some(copy.as_mut_slice())
}

/// What one tile's turn produced.
pub(crate) struct Turn<T, R> {
    pub(crate) report: R,
    /// Travellers that moved and then stopped at the edge of the zone's reach,
    /// in map coordinates: they wait for the turn of the tile they stand in.
    pub(crate) passed: Vec<T>,
    /// Travellers that could not move at all within the zone (a jump longer
    /// than half a tile, a pool wider than the zone): the run moves them on
    /// the whole map.
    pub(crate) stuck: Vec<T>,
}

impl<T, R: Default> Default for Turn<T, R> {
    fn default() -> Self {
        Self { report: R::default(), passed: Vec::new(), stuck: Vec::new() }
    }
}

/// The default side of a tile in cells (`ParallelParams::tile_size`, and
/// the landscape kernel's [`Mode::Fast`](crate::Mode::Fast)).
pub(crate) const TILE: u32 = 64;

/// The default droplets started per sweep (`ParallelParams::sweep_size`, and
/// the landscape kernel's [`Mode::Fast`](crate::Mode::Fast)).
pub(crate) const SWEEP: u32 = 32_768;

/// Where a tiled run's turns run: the results are the same bits either way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Turns {
    /// One after another on the calling thread ([`sweep_here`]).
    Here,
    /// On the current rayon pool ([`sweep`]).
    #[cfg(feature = "parallel")]
    Pool,
}

impl Turns {
    /// One sweep's turns, here or on the pool (see [`sweep_here`]).
    pub(crate) fn sweep<M, T, R, F>(
        self,
        layout: &Layout,
        map: &mut M,
        queues: &mut [Vec<T>],
        turn: &F,
    ) -> Vec<(usize, Turn<T, R>)>
    where
        M: Zoned + ?Sized,
        T: Traveller,
        R: Default + Send + Sync,
        F: Fn(&mut M::Copy, Zone, &[T]) -> Turn<T, R> + Sync,
    {
        match self {
            Turns::Here => sweep_here(layout, map, queues, turn),
            #[cfg(feature = "parallel")]
            Turns::Pool => sweep(layout, map, queues, turn),
        }
    }
}

/// One sweep's turns on the calling thread, each tile once in colour, then
/// tile order: what [`sweep`] gives on any number of threads (a tile's queue
/// is its waiting travellers, then those its lower neighbours passed to it,
/// in colour, then tile order), without a thread pool.
pub(crate) fn sweep_here<M, T, R, F>(
    layout: &Layout,
    map: &mut M,
    queues: &mut [Vec<T>],
    turn: &F,
) -> Vec<(usize, Turn<T, R>)>
where
    M: Zoned + ?Sized,
    T: Traveller,
    R: Default,
    F: Fn(&mut M::Copy, Zone, &[T]) -> Turn<T, R>,
{
    let mut done: Vec<Option<Turn<T, R>>> = (0..queues.len()).map(|_| None).collect();
    for &t in &layout.order {
        let queue = layout.queue(t, core::mem::take(&mut queues[t]), |n| {
            done[n].as_ref().map(|turn| turn.passed.as_slice()).expect("a lower neighbour's turn came first")
        });
        done[t] = Some(if queue.is_empty() {
            Turn::default()
        } else {
            let zone = layout.zone(t);
            let mut copy = map.copy_in(&zone, layout.width);
            let turn = turn(&mut copy, zone, &queue);
            map.copy_out(&zone, layout.width, &copy);
            turn
        });
    }
    layout.order.iter().map(|&t| (t, done[t].take().expect("every tile had its turn"))).collect()
}

/// One sweep's turns, each tile once, colour by colour: a tile's turn starts as
/// soon as its neighbours of lower colours have had theirs (only they overlap
/// its zone, and only they pass travellers to it in this sweep), so no turn
/// waits for a whole colour. Takes each tile's waiting travellers from
/// `queues`, adds those its lower neighbours passed to it (in colour, then
/// tile order), runs `turn(zone copy, zone, queue)` for each tile with a
/// non-empty queue, and returns every turn in colour, then tile order.
#[cfg(feature = "parallel")]
pub(crate) fn sweep<M, T, R, F>(
    layout: &Layout,
    map: &mut M,
    queues: &mut [Vec<T>],
    turn: &F,
) -> Vec<(usize, Turn<T, R>)>
where
    M: Zoned + ?Sized,
    T: Traveller,
    R: Default + Send + Sync,
    F: Fn(&mut M::Copy, Zone, &[T]) -> Turn<T, R> + Sync,
{
    let tiles = queues.len();
    let waiting: Vec<Mutex<Vec<T>>> = queues.iter_mut().map(|q| Mutex::new(core::mem::take(q))).collect();
    let done: Vec<OnceLock<Turn<T, R>>> = (0..tiles).map(|_| OnceLock::new()).collect();
    let pending: Vec<AtomicUsize> = layout.lower.iter().map(|l| AtomicUsize::new(l.len())).collect();
    let map = Mutex::new(map);
    let sweep = Sweep { layout, waiting: &waiting, done: &done, pending: &pending, map: &map, turn };
    // The tiles with no lower neighbour, chosen before any turn runs (a turn
    // that ends may bring another tile's count to zero and start it).
    let first: Vec<usize> = (0..tiles).filter(|&t| pending[t].load(Ordering::Acquire) == 0).collect();
    rayon::scope(|scope| {
        for t in first {
            scope.spawn(move |scope| sweep.take_turn(scope, t));
        }
    });
    let mut done = done;
    layout.order.iter().map(|&t| (t, done[t].take().expect("every tile had its turn"))).collect()
}

/// Settles a sweep in turn order (colour, then tile): hands each turn's report
/// to `merge`, queues the travellers passed to tiles that did not take them
/// during the sweep (those whose turn had come already, and those that are not
/// neighbours of the passing tile: a traveller that jumps further than its
/// zone), and returns the stuck travellers, in order.
pub(crate) fn settle<T: Traveller, R>(
    layout: &Layout,
    turns: Vec<(usize, Turn<T, R>)>,
    queues: &mut [Vec<T>],
    mut merge: impl FnMut(R),
) -> Vec<T> {
    let mut stuck = Vec::new();
    for (src, turn) in turns {
        merge(turn.report);
        for w in turn.passed {
            let to = layout.tile_of(w.position());
            let taken = layout.colour(to) > layout.colour(src) && layout.neighbours(to, src);
            if !taken {
                queues[to].push(w);
            }
        }
        stuck.extend(turn.stuck);
    }
    stuck
}

#[cfg(feature = "parallel")]
/// What the turns of a sweep share.
struct Sweep<'a, M: Zoned + ?Sized, T, R, F> {
    layout: &'a Layout,
    /// Travellers waiting for each tile's turn.
    waiting: &'a [Mutex<Vec<T>>],
    done: &'a [OnceLock<Turn<T, R>>],
    /// Lower neighbours of each tile whose turn is still to end.
    pending: &'a [AtomicUsize],
    /// The map, locked only to copy a zone in or out: tiles whose turns run at
    /// once are never neighbours, so their zones never overlap.
    map: &'a Mutex<&'a mut M>,
    turn: &'a F,
}

#[cfg(feature = "parallel")]
impl<M: Zoned + ?Sized, T, R, F> Clone for Sweep<'_, M, T, R, F> {
    fn clone(&self) -> Self {
        *self
    }
}

#[cfg(feature = "parallel")]
impl<M: Zoned + ?Sized, T, R, F> Copy for Sweep<'_, M, T, R, F> {}

#[cfg(feature = "parallel")]
impl<M, T, R, F> Sweep<'_, M, T, R, F>
where
    M: Zoned + ?Sized,
    T: Traveller,
    R: Default + Send + Sync,
    F: Fn(&mut M::Copy, Zone, &[T]) -> Turn<T, R> + Sync,
{
    fn take_turn<'s>(self, scope: &rayon::Scope<'s>, t: usize)
    where
        Self: 's,
    {
        let layout = self.layout;
        let waiting = core::mem::take(&mut *lock(&self.waiting[t]));
        let queue = layout.queue(t, waiting, |n| {
            self.done[n].get().map(|turn| turn.passed.as_slice()).expect("a lower neighbour's turn ended")
        });
        let zone = layout.zone(t);
        let turn = if queue.is_empty() {
            Turn::default()
        } else {
            let mut copy = lock(self.map).copy_in(&zone, layout.width);
            let turn = (self.turn)(&mut copy, zone, &queue);
            lock(self.map).copy_out(&zone, layout.width, &copy);
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
#[cfg(feature = "parallel")]
fn lock<T: ?Sized>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {

    use super::*;
    /// Back on the map, a position just below a cell's edge can round onto
    /// it: with controls it is kept in its cell (the next may be masked).
    #[test]
    fn a_position_back_on_the_map_keeps_its_cell_with_controls() {
        let zone = Zone::new(32, 8, 16, 16, Reach::WHOLE);
        let local = Vec2::new(f32::from_bits(16.0f32.to_bits() - 1), 3.25);
        assert_eq!(zone.to_map(local, false), Vec2::new(48.0, 11.25));
        let kept = zone.to_map(local, true);
        assert_eq!(kept, Vec2::new(f32::from_bits(48.0f32.to_bits() - 1), 11.25));
        assert_eq!(zone.to_map(Vec2::new(5.5, 0.0), true), Vec2::new(37.5, 8.0));
    }

    /// Two tiles of one colour never share a cell of their zones, whatever the
    /// map and tile sizes: their turns can run at once.
    #[test]
    fn zones_of_one_colour_never_overlap() {
        for (width, height, tile) in
            [(512usize, 512usize, 64usize), (100, 37, 8), (9, 200, 8), (65, 65, 16), (20, 20, 32)]
        {
            let layout = Layout::new(tile, width, height);
            for colour in 0..4 {
                let mut owner = alloc::vec![usize::MAX; width * height];
                for t in (0..layout.tiles()).filter(|&t| layout.colour(t) == colour) {
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
        let inner = Zone::new(10, 10, 20, 20, Reach { edge: [false; 4] });
        assert!(inner.holds(1.0, 18.99));
        assert!(!inner.holds(0.99, 5.0));
        assert!(!inner.holds(5.0, 19.0));
        let corner = Zone::new(0, 0, 20, 20, Reach { edge: [true, false, true, false] });
        assert!(corner.holds(-3.0, -0.5));
        assert!(!corner.holds(-3.0, 19.5));
        // The bounds converted once answer as the window's own test, around
        // each edge by ulps.
        for zone in [inner, corner, Zone::new(3, 5, 7, 300, Reach { edge: [false, true, false, false] })] {
            for edge in [0.0f32, 1.0, 6.0, 7.0, 299.0, 300.0] {
                for ulps in -2i32..=2 {
                    let v = f32::from_bits((edge.to_bits() as i32 + ulps).max(0) as u32);
                    for (px, py) in [(v, 2.5), (2.5, v), (v, v), (-v, v)] {
                        let expected = zone.reach.holds_within(zone.width, zone.height, px, py, 1.0);
                        assert_eq!(zone.holds(px, py), expected, "{zone:?} at ({px}, {py})");
                    }
                }
            }
        }
    }

    /// A zone copy goes out as it came in, to the cells it came from.
    #[test]
    fn zone_copies_round_trip() {
        let layout = Layout::new(8, 20, 13);
        let mut map: Vec<u32> = (0..20 * 13).collect();
        let zone = layout.zone(4); // (1, 1): cells 4..20 by 4..13
        let mut copy = zone.copy_in(&map, 20);
        assert_eq!((zone.x0, zone.y0, zone.width, zone.height), (4, 4, 16, 9));
        assert_eq!(copy[0], 4 * 20 + 4);
        assert_eq!(copy[copy.len() - 1], 12 * 20 + 19);
        for c in &mut copy {
            *c += 1000;
        }
        zone.copy_out(&copy, &mut map, 20);
        for (i, &v) in map.iter().enumerate() {
            let (x, y) = (i % 20, i / 20);
            let inside = x >= 4 && y >= 4;
            assert_eq!(v, i as u32 + if inside { 1000 } else { 0 }, "cell ({x}, {y})");
        }
    }
}
