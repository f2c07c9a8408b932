//! Physical droplets in coloured tiles (see [`crate::tiles`]): a droplet runs
//! in the tile that holds its cell until its next step would read beyond the
//! tile's zone; it then waits, where it stands, for the next turn of the tile it
//! stands in. Which droplets a tile runs, and in what order, depends only on the
//! tile size, the sweep size and the seed, never on the threads.

use alloc::vec::Vec;

use glam::Vec2;
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256StarStar;

use super::lockstep::Feed;
use super::{Eroder, Extras, Physical, Refused, Walk};
use crate::controls::{self, Gate};
use crate::droplet::Droplet;
use crate::grid::Grid;
use crate::layers::Track;
use crate::normal::EightFacet;
use crate::progress::{Progress, Silent, Ticker};
use crate::report::ErosionReport;
use crate::tiles::{self, Layout, Traveller, Turn, WithTracks, Zone};

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
struct Rules<'a> {
    k: super::Constants,
    /// The whole map's base level when the run began.
    base_level: f32,
    lockstep: bool,
    /// The whole map's gate (a turn copies its zone of it) and width.
    gate: Gate<'a>,
    width: usize,
}

/// A droplet between turns, in map coordinates.
#[derive(Clone, Copy, Debug)]
struct Waiting {
    droplet: Droplet,
    age: u32,
    accel: f32,
}

impl Traveller for Waiting {
    fn position(&self) -> Vec2 {
        self.droplet.position
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
    Extras { mut tracks, gate, starts }: Extras<'_>,
) -> ErosionReport
where
    St: AsRef<[f32]> + AsMut<[f32]>,
    P: Progress + ?Sized,
{
    let k = physical.k;
    let mut total = u64::from(physical.params.droplets);
    let (width, height) = (map.width(), map.height());
    let mut report = ErosionReport::default();
    if width < 3 || height < 3 {
        return report;
    }
    let base_level = map.cells().iter().fold(f32::INFINITY, |lo, &h| lo.min(h));
    let rules = Rules { k, base_level, lockstep, gate, width };
    let layout = Layout::new(tile, width, height);
    let mut queues: Vec<Vec<Waiting>> = (0..layout.tiles()).map(|_| Vec::new()).collect();
    let mut spawned = 0u64;
    let mut round = 0u64;
    // What the zones could not place: summed, it can reach a unit in the last
    // place that no zone's share did, so it goes on the whole map at the end.
    let mut remainder = 0.0;
    let place = |map: &mut Grid<St>, report: &mut ErosionReport, remainder: f64| {
        let rest = gate.flush(map.cells_mut(), remainder, |old, new| {
            report.book(old, new);
        });
        report.unplaced += rest;
    };
    loop {
        if !report.cancelled && ticker.should_stop(report.droplets) {
            // No more rain; the droplets under way finish their walks (see the
            // `tiles` module).
            report.cancelled = true;
            total = spawned;
        }
        if spawned < total {
            let count = sweep.min(total - spawned);
            let mut rng = Xoshiro256StarStar::seed_from_u64(stream(seed, round));
            let mut drawn = 0;
            for start in controls::sweep_starts(starts, &mut rng, count, (width, height)) {
                drawn += 1;
                let walk = Walk::new(&k, (0, 0));
                queues[layout.tile_of(start)].push(Waiting {
                    droplet: Droplet::new(start),
                    age: walk.age,
                    accel: walk.accel,
                });
            }
            // Fewer starts than asked: no droplet can start any more.
            spawned = if drawn < count { total } else { spawned + count };
        } else if queues.iter().all(Vec::is_empty) {
            place(map, &mut report, remainder);
            return report;
        }
        round += 1;
        let park = spawned < total;
        let mut zoned = WithTracks { map: map.cells_mut(), tracks: tracks.as_deref_mut() };
        let turns = tiles::sweep(
            &layout,
            &mut zoned,
            &mut queues,
            &|copy: &mut (Vec<f32>, Vec<Track>), zone, queue: &[Waiting]| {
                turn(&rules, copy, zone, queue, park)
            },
        );
        let stuck = tiles::settle(&layout, turns, &mut queues, |(r, left)| {
            report.merge(&r);
            remainder += left;
        });
        if !stuck.is_empty() {
            // Jumps longer than half a tile: one step each on the whole map, in
            // order.
            let extras = Extras { tracks: tracks.as_deref_mut(), gate, starts: None };
            let mut eroder = Eroder::new(map.view_mut(), k, EightFacet).with_extras(extras);
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
            eroder.carry += remainder;
            eroder.flush_anywhere();
            remainder = eroder.carry;
            report.merge(&eroder.report);
        }
    }
}

/// One tile's turn: runs `queue` in order on `cells`, a copy of its zone, and
/// returns what became of the droplets and the rounding remainder the zone
/// could not place; `park` lets lockstep lanes stop early (see
/// [`Feed::park`]).
fn turn(
    rules: &Rules,
    (cells, tracks): &mut (Vec<f32>, Vec<Track>),
    zone: Zone,
    queue: &[Waiting],
    park: bool,
) -> Turn<Waiting, (ErosionReport, f64)> {
    let Rules { k, base_level, lockstep, gate, width } = *rules;
    let origin = Vec2::new(zone.x0 as f32, zone.y0 as f32);
    let keep_cell = gate.masks();
    let mut feed = ZoneFeed {
        queue: queue.iter(),
        zone,
        origin,
        park,
        keep_cell,
        passed: Vec::new(),
        stuck: Vec::new(),
    };
    let grid = Grid::new_unchecked(zone.width, zone.height, cells.as_mut_slice());
    // The zone's part of the gate, copied like its cells.
    let zone_gate = gate.copy_zone(&zone, width);
    let extras = Extras { tracks: tiles::zone_tracks(tracks), gate: zone_gate.gate(), starts: None };
    let mut eroder = Eroder::new(grid, k, EightFacet).with_extras(extras);
    eroder.base_level = base_level;
    if lockstep {
        super::lockstep::run_fed(&mut eroder, &mut feed, &mut Ticker::new(&mut Silent, u64::MAX));
    } else {
        while let Some((mut d, mut walk)) = feed.next(&eroder, &mut EightFacet) {
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
    // The zone is this turn's alone: its remainder goes on its own cells,
    // and what they cannot take goes back to the caller.
    eroder.flush_anywhere();
    Turn { report: (eroder.report, eroder.carry), passed: feed.passed, stuck: feed.stuck }
}

/// A tile's queue as a lockstep feed: droplets in queue order, in zone
/// coordinates; those that would leave the zone's reach are passed on.
struct ZoneFeed<'q> {
    queue: core::slice::Iter<'q, Waiting>,
    zone: Zone,
    origin: Vec2,
    /// Whether lanes may be parked (see [`Feed::park`]).
    park: bool,
    /// Whether droplets keep their cell on the way back to the map (with an
    /// active mask: see [`Zone::to_map`]).
    keep_cell: bool,
    passed: Vec<Waiting>,
    stuck: Vec<Waiting>,
}

impl Feed<EightFacet> for ZoneFeed<'_> {
    fn next(&mut self, eroder: &Eroder<'_, EightFacet>, _: &mut EightFacet) -> Option<(Droplet, Walk)> {
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
            droplet: Droplet { position: self.zone.to_map(d.position, self.keep_cell), ..d },
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

    /// A droplet whose first step in a turn would leave the zone's reach comes
    /// back unmoved, to take that step on the whole map.
    #[test]
    fn a_jump_out_of_reach_is_stuck_not_lost() {
        let map = Heightmap::from_fn(64, 64, |x, y| (x + y) as f32 * 0.01).unwrap();
        let params = ErosionParams::default();
        let k = super::super::Constants::new(&params);
        let layout = Layout::new(16, 64, 64);
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
            let rules = Rules { k, base_level: 0.0, lockstep, gate: Gate::default(), width: 64 };
            let mut copy = (zone.copy_in(map.cells(), 64), Vec::new());
            let out = turn(&rules, &mut copy, zone, &queue, false);
            assert_eq!(out.stuck.len(), 1, "lockstep {lockstep}");
            assert_eq!(out.stuck[0].droplet, fast);
            assert_eq!(out.stuck[0].age, 0);
            // The slow one ran downhill (towards the origin) until its next step
            // would read below cell 8, the zone's first: it stops inside.
            assert_eq!(out.passed.len(), 1);
            let (p, age) = (out.passed[0].droplet.position, out.passed[0].age);
            assert!(p.x < 24.5 && p.y < 24.5 && p.min_element() >= 9.0 && age > 0, "{p} {age}");
            assert_eq!(out.report.0.droplets, 0);
        }
    }
}
