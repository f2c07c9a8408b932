//! Snowballs in coloured tiles (see [`crate::tiles`]): a snowball rolls in the
//! tile that holds it until its next step would read (its normal, through the
//! sampler's reach) or write (behind it) beyond the tile's zone; it then waits,
//! as it stands, for the next turn of the tile it stands in.

use alloc::vec::Vec;

use glam::Vec2;
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256StarStar;

use super::{Refused, Roller, Rolling, Snowball};
use crate::controls::Extras;
use crate::controls::draw_start;
use crate::grid::Grid;
use crate::layers::Track;
use crate::normal::{NormalSampler, Offset};
use crate::progress::{Progress, Ticker};
use crate::report::ErosionReport;
use crate::tiles::{self, Layout, Traveller, Turn, WithTracks, Zone};

/// A snowball between turns, in map coordinates, with its own sampler (its
/// offset drawn when it spawned).
#[derive(Clone)]
struct Waiting<S> {
    ball: Rolling,
    sampler: Offset<S>,
}

impl<S: Clone + Send + Sync> Traveller for Waiting<S> {
    fn position(&self) -> Vec2 {
        self.ball.position
    }
}

/// A turn's books: its report, and the rounding remainder it could not place.
#[derive(Default)]
struct Books {
    report: ErosionReport,
    remainder: f64,
}

impl<S: NormalSampler + Clone + Send + Sync> Snowball<S> {
    /// Rolls `params().count` snowballs over `map` tile by tile on the current
    /// rayon pool (see [`Parallel`](crate::Parallel)): `sweep` new snowballs
    /// per sweep, each drawing its start and its sampler's offset from a
    /// `Xoshiro256StarStar` seeded with `stream(seed, sweep index)`, until every
    /// snowball has stopped. `reach` is the sampler's, at most `tile / 2`.
    /// Returns the report and the rounding remainder still to place (the caller
    /// blurs or flushes, as after the batches). The extras' starts (`None`:
    /// uniform) place the snowballs; each turn reads its zone's copy of the
    /// gate.
    pub(crate) fn run_tiled<St, P>(
        &self,
        map: &mut Grid<St>,
        seed: u64,
        (tile, sweep, reach): (usize, u64, u32),
        ticker: &mut Ticker<'_, P>,
        stream: impl Fn(u64, u64) -> u64,
        Extras { mut tracks, gate, starts }: Extras<'_>,
    ) -> (ErosionReport, f64)
    where
        St: AsRef<[f32]> + AsMut<[f32]>,
        P: Progress + ?Sized,
    {
        let (width, height) = (map.width(), map.height());
        let mut total = self.params.count(width, height);
        let (mut report, mut remainder) = (ErosionReport::default(), 0.0);
        if width < 3 || height < 3 {
            return (report, remainder);
        }
        let layout = Layout::new(tile, width, height);
        let mut queues: Vec<Vec<Waiting<S>>> = (0..layout.tiles()).map(|_| Vec::new()).collect();
        let mut spawned = 0u64;
        let mut round = 0u64;
        loop {
            if !report.cancelled && ticker.should_stop(report.droplets) {
                // No more snowballs; those under way finish their rolls (see the
                // `tiles` module).
                report.cancelled = true;
                total = spawned;
            }
            if spawned < total {
                let count = sweep.min(total - spawned);
                let mut rng = Xoshiro256StarStar::seed_from_u64(stream(seed, round));
                for _ in 0..count {
                    let Some(start) = draw_start(starts, &mut rng, width, height) else {
                        // Rain falls nowhere: no snowball can start.
                        spawned = total;
                        break;
                    };
                    let mut sampler = self.sampler.clone();
                    sampler.spawn(&mut rng);
                    queues[layout.tile_of(start)].push(Waiting { ball: Rolling::new(start), sampler });
                }
                spawned = (spawned + count).min(total);
            } else if queues.iter().all(Vec::is_empty) {
                return (report, remainder);
            }
            round += 1;
            let mut zoned = WithTracks { map: map.cells_mut(), tracks: tracks.as_deref_mut() };
            let turns = tiles::sweep(
                &layout,
                &mut zoned,
                &mut queues,
                &|(cells, tracks): &mut (Vec<f32>, Vec<Track>), zone, queue: &[Waiting<S>]| {
                    let zone_gate = gate.copy_zone(&zone, width);
                    let extras =
                        Extras { tracks: tiles::zone_tracks(tracks), gate: zone_gate.gate(), starts: None };
                    self.turn(reach as f32, cells, extras, zone, queue)
                },
            );
            let stuck = tiles::settle(&layout, turns, &mut queues, |books| {
                report.merge(&books.report);
                remainder += books.remainder;
            });
            if !stuck.is_empty() {
                // Jumps longer than half a tile: one step each on the whole
                // map, in turn order.
                let mut roller = Roller::new(map.cells_mut(), width, height, gate);
                roller.tracks = tracks.as_deref_mut();
                for mut w in stuck {
                    let mut checks = 0;
                    match roller.advance(&self.steps, &w.sampler, &mut w.ball, |_, _| {
                        checks += 1;
                        checks == 1
                    }) {
                        Ok(fate) => roller.settle(&w.ball, fate),
                        Err(Refused) => queues[layout.tile_of(w.ball.position)].push(w),
                    }
                }
                report.merge(&roller.report);
                remainder += roller.remainder;
            }
        }
    }

    /// One tile's turn: rolls `queue` in order on `cells`, a copy of its zone
    /// (as are the extras' tracks and gate), reading `reach` cells around each
    /// snowball's cell.
    fn turn(
        &self,
        reach: f32,
        cells: &mut [f32],
        Extras { tracks, gate, .. }: Extras<'_>,
        zone: Zone,
        queue: &[Waiting<S>],
    ) -> Turn<Waiting<S>, Books> {
        let origin = Vec2::new(zone.x0 as f32, zone.y0 as f32);
        let (w, h) = (zone.width, zone.height);
        let holds = |p: Vec2, r: f32| zone.reach.holds_within(w, h, p.x, p.y, r);
        let mut roller = Roller::new(cells, w, h, gate);
        roller.tracks = tracks;
        let (mut passed, mut stuck) = (Vec::new(), Vec::new());
        for waiting in queue {
            // Into zone coordinates only what the zone holds: that way is then
            // exact (the origin is a whole number no larger than the point).
            let b = waiting.ball;
            if !(zone.holds_map(b.position, reach) && zone.holds_map(b.previous, 1.0)) {
                stuck.push(waiting.clone());
                continue;
            }
            let mut ball = Rolling { position: b.position - origin, previous: b.previous - origin, ..b };
            match roller
                .advance(&self.steps, &waiting.sampler, &mut ball, |p, q| holds(p, reach) && holds(q, 1.0))
            {
                Ok(fate) => roller.settle(&ball, fate),
                Err(Refused) => {
                    let keep_cell = roller.gate.masks();
                    let ball = Rolling {
                        position: zone.to_map(ball.position, keep_cell),
                        previous: zone.to_map(ball.previous, keep_cell),
                        ..ball
                    };
                    let w = Waiting { ball, sampler: waiting.sampler.clone() };
                    if ball.i != b.i { passed.push(w) } else { stuck.push(w) }
                }
            }
        }
        Turn { report: Books { report: roller.report, remainder: roller.remainder }, passed, stuck }
    }
}
