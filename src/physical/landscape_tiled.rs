//! The landscape kernel in coloured tiles (see [`crate::tiles`]): each turn
//! copies its zone of the terrain and of the flow maps' cells, runs its
//! droplets eight at a time until a step would read beyond the zone, and
//! writes both back. The discharge map refreshes between sweeps, for the
//! droplets the sweep ended. Which droplets a tile runs, and in what order,
//! depends only on the tile size, the sweep size and the seed, never on the
//! threads.

use alloc::vec::Vec;

use glam::Vec2;
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256StarStar;

use super::drain::Rounds;
use super::landscape::{FlowCell, FlowMaps, Walk};
use super::simd::{self, Isa};
use super::{Constants, Eroder, Extras, Physical, Refused};
use crate::channels::Channels;
use crate::controls::{self, Gate};
use crate::droplet::Droplet;
use crate::error::GridError;
use crate::grid::{Grid, try_copy};
use crate::layers::Track;
use crate::normal::EightFacet;
use crate::progress::{Progress, Ticker};
use crate::random::stream_seed;
use crate::report::ErosionReport;
use crate::tiles::{self, Layout, Traveller, Turn, Turns, WithTracks, Zone, Zoned};

/// Droplets a tile's turn walks together (see [`turn`]): their headings
/// (the normal and the steering, the step's chain of square roots and
/// divisions) are taken together at the start of each round, so the chains
/// overlap, and the lanes' vectors compute the steering. On a Zen 3 (512²
/// fBm 1, one thread) 8 lanes took 0.76 of the time of one droplet at a
/// time; 4 lanes less, 16 no more.
const TURN_LANES: usize = 8;

/// What every turn of a run shares.
#[derive(Clone, Copy, Debug)]
struct Rules<'a> {
    k: Constants,
    channels: Channels,
    /// The whole map's base level when the run began.
    base_level: f32,
    /// The whole map's gate (a turn copies its zone of it) and width.
    gate: Gate<'a>,
    width: usize,
}

/// A droplet between turns, in map coordinates.
#[derive(Clone, Copy, Debug)]
struct Waiting {
    droplet: Droplet,
    age: u32,
}

impl Traveller for Waiting {
    fn position(&self) -> Vec2 {
        self.droplet.position
    }
}

/// The layers a turn copies: the terrain and the flow maps' cells.
struct ZoneLayers<'m> {
    heights: &'m mut [f32],
    flow: &'m mut [FlowCell],
}

impl Zoned for ZoneLayers<'_> {
    type Copy = (Vec<f32>, Vec<FlowCell>);

    fn copy_in(&self, zone: &Zone, width: usize) -> Self::Copy {
        (zone.copy_in(self.heights, width), zone.copy_in(self.flow, width))
    }

    fn copy_out(&mut self, zone: &Zone, width: usize, copy: &Self::Copy) {
        zone.copy_out(&copy.0, self.heights, width);
        zone.copy_out(&copy.1, self.flow, width);
    }
}

/// How a landscape run is tiled, and where its turns run.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tiling {
    /// The side of a tile, in cells.
    pub(crate) tile: usize,
    /// Droplets started per sweep (at most [`sweep_cap`] of them).
    pub(crate) sweep: u64,
    pub(crate) at: Turns,
}

/// Runs `physical`'s droplets through the landscape kernel on `map`, tile by
/// tile, `at` the calling thread or on the current rayon pool (the same
/// bits): `sweep` new droplets per sweep (at most
/// [`sweep_cap`] of them) from a
/// `Xoshiro256StarStar` seeded with `stream_seed(seed, sweep index)`, a turn of each
/// colour, then one refresh of the maps for every `refresh` droplets ended so
/// far, until every droplet has ended.
///
/// # Errors
/// [`GridError::OutOfMemory`] if the discharge map cannot be allocated (before
/// the map changes).
pub(crate) fn run<St, P>(
    physical: &Physical<EightFacet>,
    channels: Channels,
    map: &mut Grid<St>,
    Tiling { tile, sweep, at }: Tiling,
    ticker: &mut Ticker<'_, P>,
    seed: u64,
    Extras { mut tracks, gate, starts }: Extras<'_>,
) -> Result<ErosionReport, GridError>
where
    St: AsRef<[f32]> + AsMut<[f32]>,
    P: Progress + ?Sized,
{
    let k = physical.k;
    let mut total = u64::from(physical.params.droplets);
    let (width, height) = (map.width(), map.height());
    let mut report = ErosionReport::default();
    if width < 3 || height < 3 {
        return Ok(report);
    }
    let mut flow = FlowMaps::new(channels, width * height)?;
    let sweep = sweep.min(sweep_cap(width * height, channels.refresh));
    // The map as the run found it: pits it did not make stay.
    let before = if channels.settle_pits { try_copy(map.cells())? } else { Vec::new() };
    let base_level = map.cells().iter().fold(f32::INFINITY, |lo, &h| lo.min(h));
    let rules = Rules { k, channels, base_level, gate, width };
    let mut rounds = Rounds::new(&channels, physical.params.droplets);
    let layout = Layout::new(tile, width, height);
    let mut queues: Vec<Vec<Waiting>> = (0..layout.tiles()).map(|_| Vec::new()).collect();
    let (mut spawned, mut round, mut unrefreshed) = (0u64, 0u64, 0u64);
    // What the zones could not place: summed, it can reach a unit in the last
    // place that no zone's share did, so it goes on the whole map at the end.
    let mut remainder = 0.0;
    loop {
        if !report.cancelled && ticker.should_stop(report.droplets) {
            // No more rain; the droplets under way finish their walks (see the
            // `tiles` module).
            report.cancelled = true;
            total = spawned;
        }
        if spawned < total {
            let count = sweep.min(total - spawned);
            let mut rng = Xoshiro256StarStar::seed_from_u64(stream_seed(seed, round));
            let mut drawn = 0;
            for start in controls::sweep_starts(starts, &mut rng, count, (width, height)) {
                drawn += 1;
                queues[layout.tile_of(start)].push(Waiting { droplet: Droplet::new(start), age: 0 });
            }
            // Fewer starts than asked: no droplet can start any more.
            spawned = if drawn < count { total } else { spawned + count };
        } else if queues.iter().all(Vec::is_empty) {
            let more = match report.cancelled {
                true => 0,
                false => rounds.next(map.cells(), width, height, &rules.gate, report.steps),
            };
            if more == 0 {
                finish(&rules, &before, map, &mut report, remainder);
                return Ok(report);
            }
            // More rain: the next sweeps start it.
            total += more;
            ticker.extend(more);
            continue;
        }
        round += 1;
        let ended = report.droplets;
        let mut layers = ZoneLayers { heights: map.cells_mut(), flow: flow.cells_mut() };
        let mut zoned = WithTracks { map: &mut layers, tracks: tracks.as_deref_mut() };
        let turns =
            at.sweep(&layout, &mut zoned, &mut queues, &|copy: &mut ZoneCopy, zone, queue: &[Waiting]| {
                turn(&rules, copy, zone, queue)
            });
        let stuck = tiles::settle(&layout, turns, &mut queues, |(r, left)| {
            report.merge(&r);
            remainder += left;
        });
        if !stuck.is_empty() {
            // Steps that would read beyond a fresh zone: one each on the whole
            // map, in order.
            let extras = Extras { tracks: tracks.as_deref_mut(), gate, starts: None };
            let mut eroder = Eroder::new(map.view_mut(), k, EightFacet).with_extras(extras);
            eroder.base_level = base_level;
            for w in stuck {
                let mut d = w.droplet;
                let mut walk = Walk { age: w.age, cell: eroder.cell_of(d.position) };
                match eroder.landscape_step(&mut flow, &EightFacet, &mut d, &mut walk) {
                    Some(fate) => eroder.settle_poured(&mut d, fate),
                    None => queues[layout.tile_of(d.position)].push(Waiting { droplet: d, age: walk.age }),
                }
            }
            eroder.carry += remainder;
            eroder.flush_anywhere();
            remainder = eroder.carry;
            report.merge(&eroder.report);
        }
        unrefreshed += report.droplets - ended;
        let refreshes = unrefreshed / u64::from(channels.refresh);
        if refreshes > 0 {
            flow.refresh(u32::try_from(refreshes).unwrap_or(u32::MAX));
            unrefreshed -= refreshes * u64::from(channels.refresh);
        }
    }
}

/// The most droplets a sweep of the landscape kernel starts: a thirty-second
/// of a droplet per cell, and at least one refresh's worth. The maps refresh
/// between sweeps only, so this keeps their lag the same depth of rain at
/// every map size. fBm 256² on two threads, plain sweeps of 32 768 against
/// 2 048: the same 0.75 s, depressions 3.8 % -> 2.0 %, θ 0.28 (r² 0.82) ->
/// 0.37 (0.94), as the sequential run's 1.4 % and 0.39 (0.91); 512²: 4.13 s
/// -> 4.15 s, θ 0.22 (0.81) -> 0.27 (0.94).
fn sweep_cap(cells: usize, refresh: u32) -> u64 {
    (cells as u64 / 32).max(u64::from(refresh))
}

/// The run's end: places the zones' summed rounding `remainder` and settles
/// the pits the run made (`before`: the map as it found it), when the
/// channels ask for it: on the whole map after every tile, so the same bits
/// on any number of threads.
fn finish<St: AsRef<[f32]> + AsMut<[f32]>>(
    rules: &Rules,
    before: &[f32],
    map: &mut Grid<St>,
    report: &mut ErosionReport,
    remainder: f64,
) {
    if rules.channels.settle_pits {
        let extras = Extras { tracks: None, gate: rules.gate, starts: None };
        let mut eroder = Eroder::new(map.view_mut(), rules.k, EightFacet).with_extras(extras);
        eroder.settle_pits(before);
        eroder.carry += remainder;
        eroder.close_books();
        report.merge(&eroder.report);
    } else {
        let rest = rules.gate.flush(map.cells_mut(), remainder, |old, new| {
            report.book(old, new);
        });
        report.unplaced += rest;
    }
}

/// A zone's copy of the terrain, of the flow maps' cells and of the tracks.
type ZoneCopy = ((Vec<f32>, Vec<FlowCell>), Vec<Track>);

/// One tile's turn: runs `queue` on `copy`, its zone of the terrain and of
/// the flow maps' cells, [`TURN_LANES`] droplets at a time, and returns what
/// became of the droplets and the rounding remainder the zone could not
/// place. Each round takes every lane's heading from the heights as the
/// round found them, then steps the lanes in lane order (an earlier lane's
/// exchanges are not in a later lane's normal until the next round); a lane
/// whose droplet ends or leaves the zone takes the next in the queue.
fn turn(
    rules: &Rules,
    ((heights, cells), tracks): &mut ZoneCopy,
    zone: Zone,
    queue: &[Waiting],
) -> Turn<Waiting, (ErosionReport, f64)> {
    let origin = Vec2::new(zone.x0 as f32, zone.y0 as f32);
    let mut flow = FlowMaps::zone(rules.channels, core::mem::take(cells));
    let grid = Grid::new_unchecked(zone.width, zone.height, heights.as_mut_slice());
    // The zone's part of the gate, copied like its cells.
    let zone_gate = rules.gate.copy_zone(&zone, rules.width);
    let extras = Extras { tracks: tiles::zone_tracks(tracks), gate: zone_gate.gate(), starts: None };
    let mut eroder = Eroder::new(grid, rules.k, EightFacet).with_extras(extras);
    eroder.base_level = rules.base_level;
    let (mut passed, mut stuck) = (Vec::new(), Vec::new());
    simd::widest_with(
        Isa::detect(),
        #[inline(always)]
        |isa| {
            // The lanes: a droplet, its walk, and whether it moved this turn.
            let mut lanes: [Option<(Droplet, Walk, bool)>; TURN_LANES] = [None; TURN_LANES];
            let mut waiting = queue.iter();
            loop {
                let mut live = false;
                for lane in &mut lanes {
                    if lane.is_none() {
                        *lane = waiting.next().map(|w| {
                            let d = Droplet { position: w.droplet.position - origin, ..w.droplet };
                            (d, Walk { age: w.age, cell: eroder.cell_of(d.position) }, false)
                        });
                    }
                    live |= lane.is_some();
                }
                if !live {
                    break;
                }
                let headings = eroder.headings::<TURN_LANES>(
                    isa,
                    &flow,
                    &EightFacet,
                    core::array::from_fn(|l| lanes[l].as_ref().map(|(d, walk, _)| (d, walk.cell))),
                );
                for (l, lane) in lanes.iter_mut().enumerate() {
                    let Some((d, walk, moved)) = lane else { continue };
                    let heading = headings.get(l);
                    match eroder.headed_step_if(&mut flow, d, walk, heading, |px, py| zone.holds(px, py)) {
                        Ok(None) => *moved = true,
                        Ok(Some(fate)) => {
                            eroder.settle_poured(d, fate);
                            *lane = None;
                        }
                        Err(Refused) => {
                            let position = zone.to_map(d.position, rules.gate.masks());
                            let w = Waiting { droplet: Droplet { position, ..*d }, age: walk.age };
                            if *moved {
                                passed.push(w);
                            } else {
                                stuck.push(w);
                            }
                            *lane = None;
                        }
                    }
                }
            }
        },
    );
    // The zone is this turn's alone: its remainder goes on its own cells,
    // and what they cannot take goes back to the caller.
    eroder.flush_anywhere();
    *cells = flow.into_cells();
    Turn { report: (eroder.report, eroder.carry), passed, stuck }
}

#[cfg(test)]
mod tests {
    use super::sweep_cap;

    #[test]
    fn sweeps_hold_a_thirty_second_of_a_droplet_per_cell() {
        assert_eq!(sweep_cap(512 * 512, 2048), 8192);
        assert_eq!(sweep_cap(1024 * 1024, 2048), 32_768);
        // At least one refresh's worth.
        assert_eq!(sweep_cap(256 * 256, 2048), 2048);
        assert_eq!(sweep_cap(9, 1), 1);
    }
}
