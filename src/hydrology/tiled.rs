//! Hydrology particles in coloured tiles (see [`crate::tiles`]): each turn runs
//! a tile's particles on a copy of its zone (terrain, pool, stream, vegetation
//! and water track); a particle goes on until its next step, or its flood,
//! would read beyond the zone, and then waits, as it stands, for the next turn
//! of the tile it stands in (one that cannot go on in any zone lives out its
//! life on the whole map at the end of the sweep). Each sweep that starts
//! particles is one batch of the stream map and the trees, which take it in on
//! the whole map between sweeps; the last batch also holds the water of the
//! sweeps that run the particles still in flight, and is taken in when they
//! have all ended.

use alloc::vec::Vec;

use glam::Vec2;
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256StarStar;

use super::flood::FloodScratch;
use super::timing::Mark;
use super::world::{Constants, World};
use super::{Act, Hydrology, HydrologyReport, Journey, Next, PhaseTimes, cycle, end_batch};
use crate::controls::Extras;
use crate::controls::{self, Gate};
use crate::grid::Grid;
use crate::layers::Track;
use crate::progress::{Progress, Ticker};
use crate::reach::Reach;
use crate::tiles::{self, Layout, Traveller, Turn, Zone, Zoned};

impl Traveller for Journey {
    fn position(&self) -> Vec2 {
        self.particle.position
    }
}

/// The maps turns share, borrowed for a sweep: stream and vegetation change
/// only between sweeps, so turns copy them in but never back.
struct Layers<'a> {
    heights: &'a mut [f32],
    pool: &'a mut [f32],
    stream: &'a [f32],
    vegetation: &'a [f32],
    track: &'a mut [f32],
    /// The output layers' tracks, when the run records them.
    outputs: Option<&'a mut [Track]>,
}

/// A zone's copy of the [`Layers`], with its water surface.
#[derive(Clone)]
struct ZoneLayers {
    heights: Vec<f32>,
    pool: Vec<f32>,
    surface: Vec<f32>,
    stream: Vec<f32>,
    vegetation: Vec<f32>,
    track: Vec<f32>,
    /// Empty when the run records no output layers.
    outputs: Vec<Track>,
}

impl Zoned for Layers<'_> {
    type Copy = ZoneLayers;

    fn copy_in(&self, zone: &Zone, width: usize) -> ZoneLayers {
        let heights = zone.copy_in(self.heights, width);
        let pool = zone.copy_in(self.pool, width);
        // Always `heights + pool` in `f32`, as the whole map's.
        let surface = heights.iter().zip(&pool).map(|(&h, &d)| h + d).collect();
        ZoneLayers {
            heights,
            pool,
            surface,
            stream: zone.copy_in(self.stream, width),
            vegetation: zone.copy_in(self.vegetation, width),
            track: zone.copy_in(self.track, width),
            outputs: self.outputs.as_deref().map_or_else(Vec::new, |o| zone.copy_in(o, width)),
        }
    }

    fn copy_out(&mut self, zone: &Zone, width: usize, copy: &ZoneLayers) {
        zone.copy_out(&copy.heights, self.heights, width);
        zone.copy_out(&copy.pool, self.pool, width);
        zone.copy_out(&copy.track, self.track, width);
        if let Some(outputs) = self.outputs.as_deref_mut() {
            zone.copy_out(&copy.outputs, outputs, width);
        }
    }
}

/// A turn's books, with the rounding remainder its zone could not place
/// (below half a unit in the last place of every cell it could go on).
#[derive(Default)]
struct Books {
    report: HydrologyReport,
    times: PhaseTimes,
    remainder: f64,
}

/// What every turn of a sweep shares.
#[derive(Clone, Copy)]
struct Rules<'a> {
    k: Constants,
    /// The whole map's lowest height when the run began.
    base_level: f32,
    /// The controls' gate over the whole map (a turn copies its zone of it),
    /// and the map's width.
    gate: Gate<'a>,
    width: usize,
}

impl Hydrology {
    /// Runs `params().particles` particles over `map` tile by tile on the
    /// current rayon pool (see [`Parallel`](crate::Parallel)): one batch of new
    /// particles per sweep, drawn from a `Xoshiro256StarStar` seeded with
    /// `stream(seed, sweep index)` (through `extras`' starts; `None`:
    /// uniformly), which then draws the sweep's tree growth. `extras`' tracks
    /// record the output layers and its gate steers every turn (copied zone by
    /// zone) and the work on the whole map.
    ///
    /// # Errors
    /// As [`Hydrology::run`].
    pub(crate) fn run_tiled<St, P>(
        &mut self,
        map: &mut Grid<St>,
        seed: u64,
        tile: usize,
        progress: &mut P,
        stream: impl Fn(u64, u64) -> u64,
        Extras { tracks: mut outputs, gate, starts }: Extras<'_>,
    ) -> Result<HydrologyReport, crate::GridError>
    where
        St: AsRef<[f32]> + AsMut<[f32]>,
        P: Progress + ?Sized,
    {
        self.check(map)?;
        let mut ticker = Ticker::new(progress, u64::from(self.params.particles));
        self.times = PhaseTimes::default();
        let (width, height) = (self.width(), self.height());
        if width < 3 || height < 3 {
            ticker.finish(0);
            return Ok(HydrologyReport::default());
        }
        let (params, k) = (self.params, self.k);
        let heights = map.cells_mut();
        let before = if params.settle_pits { crate::grid::try_copy(heights)? } else { Vec::new() };
        let base_level = heights.iter().fold(f32::INFINITY, |lo, &h| lo.min(h));
        let layout = Layout::new(tile, width, height);
        let mut queues: Vec<Vec<Journey>> = (0..layout.tiles()).map(|_| Vec::new()).collect();
        let (mut total, batch) = (u64::from(params.particles), u64::from(k.batch));
        let mut report = HydrologyReport::default();
        let mut spawned = 0u64;
        let mut round = 0u64;
        // What the zones and the whole map could not place yet: summed, it can
        // reach a unit in the last place that no zone's share did, so it goes
        // on with the whole map's books (one remainder, as in a sequential run).
        let mut remainder = 0.0;
        // Particles started since the stream map last took in its track: once
        // all have started, the sweeps that run the rest in flight add their
        // water to the last batch, taken in when every particle has ended (a
        // sweep with no new particles would scale its water by nothing).
        let mut unbatched = 0;
        loop {
            if !report.erosion.cancelled && ticker.should_stop(report.erosion.droplets) {
                // No more rain; the particles under way finish their journeys
                // (see the `tiles` module).
                report.erosion.cancelled = true;
                total = spawned;
            }
            if spawned >= total && queues.iter().all(Vec::is_empty) {
                break;
            }
            let mut rng = Xoshiro256StarStar::seed_from_u64(stream(seed, round));
            round += 1;
            let mut sweep_particles = 0;
            if spawned < total {
                let count = batch.min(total - spawned);
                let mut drawn = 0;
                // Uniform starts draw as a run without controls did.
                for start in controls::sweep_starts(starts, &mut rng, count, (width, height)) {
                    drawn += 1;
                    report.rain += 1.0;
                    queues[layout.tile_of(start)].push(Journey::new(start, &k));
                }
                // Fewer starts than asked: no particle can start any more (the
                // rain falls nowhere, so none started at all).
                spawned = if drawn < count { total } else { spawned + count };
                sweep_particles = drawn;
                if drawn == 0 && queues.iter().all(Vec::is_empty) {
                    break;
                }
            }
            let rules = Rules { k, base_level, gate, width };
            let mut layers = self.layers(heights);
            layers.outputs = outputs.as_deref_mut();
            let turns = tiles::sweep(
                &layout,
                &mut layers,
                &mut queues,
                &|copy: &mut ZoneLayers, zone, queue: &[Journey]| turn(rules, copy, zone, queue),
            );
            let times = &mut self.times;
            let stuck = tiles::settle(&layout, turns, &mut queues, |books| {
                report.merge(&books.report);
                remainder += books.remainder;
                times.descend_seconds += books.times.descend_seconds;
                times.flood_seconds += books.times.flood_seconds;
            });
            // The rest of the sweep is on the whole map.
            self.rebuild_surface(heights);
            let (mut world, trees, times) = self.whole_map(heights, base_level, gate);
            world.outputs = outputs.as_deref_mut();
            world.carry = remainder;
            // Pools wider than a zone, and jumps longer than half a tile: those
            // particles live out their lives on the whole map, in turn order
            // (one act each and back to the tiles sent particles to the same
            // hollows beside a lake wider than a zone, sweep after sweep).
            for mut j in stuck {
                let end = cycle(&mut world, &mut j, times);
                world.end(&mut j.particle, end);
            }
            unbatched += sweep_particles;
            if spawned < total || queues.iter().all(Vec::is_empty) {
                end_batch(&mut world, unbatched, params.trees, trees, &mut rng);
                unbatched = 0;
            }
            world.flush();
            remainder = world.carry;
            report.merge(&world.report);
        }
        if params.settle_pits {
            // On the whole map, after every tile: the same bits on any thread
            // count.
            let (mut world, _, _) = self.whole_map(heights, base_level, gate);
            world.carry = remainder;
            world.settle_pits(&before);
            world.report.erosion.unplaced += world.carry;
            report.merge(&world.report);
        } else {
            // What no cell could take.
            report.erosion.unplaced += remainder;
        }
        ticker.finish(report.erosion.droplets);
        Ok(report)
    }
}

impl Hydrology {
    /// The layers turns copy their zones from, with the terrain `heights`.
    fn layers<'a>(&'a mut self, heights: &'a mut [f32]) -> Layers<'a> {
        Layers {
            heights,
            pool: self.pool.cells_mut(),
            stream: self.stream.cells(),
            vegetation: self.vegetation.cells(),
            track: &mut self.track,
            outputs: None,
        }
    }
}

/// One tile's turn: runs `queue` in order on `layers`, a copy of its zone, and
/// returns what became of the particles. The zone keeps its own rounding
/// remainder.
fn turn(rules: Rules<'_>, layers: &mut ZoneLayers, zone: Zone, queue: &[Journey]) -> Turn<Journey, Books> {
    let origin = Vec2::new(zone.x0 as f32, zone.y0 as f32);
    // The zone's part of the gate, copied like its cells.
    let zone_gate = rules.gate.copy_zone(&zone, rules.width);
    // A zone is at most the map, whose own scratch the simulator already holds.
    let mut scratch = FloodScratch::new(alloc::vec![0; layers.heights.len()]);
    let mut world = World {
        heights: &mut layers.heights,
        pool: &mut layers.pool,
        surface: &mut layers.surface,
        stream: &mut layers.stream,
        vegetation: &mut layers.vegetation,
        track: &mut layers.track,
        outputs: tiles::zone_tracks(&mut layers.outputs),
        scratch: &mut scratch,
        width: zone.width,
        height: zone.height,
        k: rules.k,
        report: HydrologyReport::default(),
        carry: 0.0,
        base_level: rules.base_level,
        origin,
        reach: zone.reach,
        high: Reach::far_bounds(zone.width, zone.height),
        undo: Vec::new(),
        gate: zone_gate.gate(),
    };
    let mut times = PhaseTimes::default();
    let (mut passed, mut stuck) = (Vec::new(), Vec::new());
    for j in queue {
        // Exact on the way in (the origin is a whole number no larger than the
        // position, or 0); on the way back a moved position rounds like any
        // step, the same on every thread (see `Zone::to_map`).
        let mut j = *j;
        j.particle.position -= origin;
        // Progress is a step taken or a flood done: a descent that only finds
        // the particle on a pool is none, so a pool wider than the zone always
        // ends up stuck (and flooded on the whole map), never passed in a loop.
        let (steps, mut flooded) = (j.steps_left, false);
        loop {
            let flooding = j.next == Next::Flood;
            match j.act(&mut world, &mut times, &mut Mark::now()) {
                Act::Ended(end) => {
                    world.end(&mut j.particle, end);
                    break;
                }
                Act::Went => flooded |= flooding,
                Act::Refused => {
                    j.particle.position = zone.to_map(j.particle.position, rules.gate.masks());
                    if flooded || j.steps_left != steps {
                        passed.push(j)
                    } else {
                        stuck.push(j)
                    }
                    break;
                }
            }
        }
    }
    world.flush();
    Turn { report: Books { report: world.report, times, remainder: world.carry }, passed, stuck }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hydrology::HydrologyParams;
    use crate::hydrology::flood::Flood;

    /// Tile 5's zone (tiles of 16 on a 64 x 64 map: cells 8..40 on both
    /// axes) and its copy of `heights` and `pool` (no stream, vegetation or
    /// track).
    fn zone_copy(heights: &mut [f32], pool: &mut [f32]) -> (ZoneLayers, Zone) {
        let w: usize = 64;
        let stream = alloc::vec![0.0; w * w];
        let mut track = alloc::vec![0.0; w * w];
        let zone = Layout::new(16, w, w).zone(5);
        let layers =
            Layers { heights, pool, stream: &stream, vegetation: &stream, track: &mut track, outputs: None };
        (layers.copy_in(&zone, w), zone)
    }

    /// A 64 x 64 map: a lake 40 cells across (level 0.5 over ground at 0.3)
    /// in a bowl, and the layers of one tile's zone (tiles of 16, tile 5: its
    /// zone is cells 8..40 on both axes, all inside the lake's square).
    fn lake_zone() -> (ZoneLayers, Zone) {
        let w: usize = 64;
        let inside = |x: usize, y: usize| (12..52).contains(&x) && (12..52).contains(&y);
        let mut heights: Vec<f32> =
            (0..w * w).map(|i| if inside(i % w, i / w) { 0.3 } else { 0.8 }).collect();
        let mut pool: Vec<f32> = (0..w * w).map(|i| if inside(i % w, i / w) { 0.2 } else { 0.0 }).collect();
        zone_copy(&mut heights, &mut pool)
    }

    fn rules() -> Rules<'static> {
        let k = Constants::new(&HydrologyParams::default());
        Rules { k, base_level: 0.3, gate: Gate::default(), width: 64 }
    }

    fn bits(v: &[f32]) -> Vec<u32> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    /// A particle raining on a lake wider than the zone floods it only on the
    /// whole map: in the turn, the flood is undone to the last bit and the
    /// particle comes back unmoved, stuck.
    #[test]
    fn a_flood_wider_than_the_zone_is_undone_and_stuck() {
        let (mut layers, zone) = lake_zone();
        let (heights, pool) = (bits(&layers.heights), bits(&layers.pool));
        let mut j = Journey::new(Vec2::new(20.5, 21.5), &rules().k);
        j.particle.sediment = 0.01; // a flood on a pool puts most of it down first
        let turn = turn(rules(), &mut layers, zone, &[j]);
        assert_eq!((turn.passed.len(), turn.stuck.len()), (0, 1));
        let back = turn.stuck[0];
        assert_eq!(back.particle.position, j.particle.position);
        assert_eq!(back.particle.sediment, 0.01);
        assert_eq!(back.particle.water, 1.0);
        assert_eq!((back.steps_left, back.spills, back.next), (j.steps_left, 0, Next::Flood));
        assert_eq!(bits(&layers.heights), heights);
        assert_eq!(bits(&layers.pool), pool);
        assert_eq!(turn.report.report, HydrologyReport::default());
    }

    /// A 64 x 64 valley along row 20 falling east, with a hollow at
    /// (`x`, 20) holding a pool full to its sill at (`x + 1`, 20) (exact,
    /// Sterbenz: the pool's surface is the sill's height); its drain is at
    /// (`x + 2`, 20). The terrain and the pool.
    fn valley_with_a_full_hollow(x: usize) -> (Vec<f32>, Vec<f32>) {
        let w: usize = 64;
        let mut heights: Vec<f32> = (0..w * w)
            .map(|i| 1.0 - 0.01 * (i % w) as f32 + 0.02 * (i / w).abs_diff(20_usize) as f32)
            .collect();
        let hollow = 20 * w + x;
        heights[hollow] = 0.5;
        let mut pool = alloc::vec![0.0; w * w];
        pool[hollow] = heights[hollow + 1] - 0.5;
        (heights, pool)
    }

    /// A pool full to its sill at (34, 20), in a valley along row 20 falling
    /// east, spills east to (36, 20), 3 cells from the high x side of tile
    /// 5's zone (cells 8..40). A particle that spilled to that drain before
    /// runs out 8 cells from it, beyond the zone: the turn refuses the whole
    /// flood (undone to the last bit, the particle stuck), and on the whole
    /// map the run-out goes its full length.
    #[test]
    fn a_run_out_beyond_the_zone_refuses_the_flood() {
        let w: usize = 64;
        let (mut heights, mut pool) = valley_with_a_full_hollow(34);
        let (copy, zone) = zone_copy(&mut heights, &mut pool);
        let mut j = Journey::new(Vec2::new(34.5, 20.5), &rules().k);
        j.next = Next::Flood;
        let drain = Vec2::new(36.5, 20.5);
        // A first spill: it goes on from the drain, which it remembers.
        let first = turn(rules(), &mut copy.clone(), zone, &[j]);
        assert_eq!((first.passed.len(), first.stuck.len()), (1, 0), "{:?}", first.report.report);
        assert_eq!(first.passed[0].last_spill, Some(drain));
        assert_eq!(first.report.report.drains, 1);
        // The same flood by a particle whose last spill went there too.
        j.last_spill = Some(drain);
        let mut again = copy.clone();
        let second = turn(rules(), &mut again, zone, &[j]);
        assert_eq!((second.passed.len(), second.stuck.len()), (0, 1));
        let back = second.stuck[0];
        assert_eq!(
            (back.particle.position, back.last_spill, back.next),
            (j.particle.position, Some(drain), Next::Flood)
        );
        assert_eq!((bits(&again.heights), bits(&again.pool)), (bits(&copy.heights), bits(&copy.pool)));
        assert_eq!(second.report.report, HydrologyReport::default());
        // On the whole map it spills and runs out 8 cells down the valley,
        // unless the spill is its last (then it ends at the drain).
        let whole = |last_one: bool| {
            let mut heights = heights.clone();
            let mut h = Hydrology::new(HydrologyParams::default(), w, w).unwrap();
            h.pool.cells_mut().copy_from_slice(&pool);
            h.rebuild_surface(&heights);
            let (mut world, _, _) = h.whole_map(&mut heights, 0.3, Gate::default());
            let (mut p, mut last) = (j.particle, Some(drain));
            assert_eq!(world.flood(&mut p, &mut last, last_one), Flood::Drain);
            assert_eq!(last, Some(drain));
            p.position
        };
        assert_eq!(whole(false), Vec2::new(44.5, 20.5));
        assert_eq!(whole(true), drain);
    }

    /// A run-out from a drain on the zone's last column (its lowest
    /// neighbour beyond the zone) refuses the flood: picked among the zone's
    /// cells alone, the run would stop at the drain, where the whole map's
    /// goes on down the valley.
    #[test]
    fn a_run_out_from_a_drain_at_the_zones_edge_refuses_the_flood() {
        // The drain at (39, 20): the zone's last column (cells 8..40).
        let (mut heights, mut pool) = valley_with_a_full_hollow(37);
        let (copy, zone) = zone_copy(&mut heights, &mut pool);
        let mut j = Journey::new(Vec2::new(37.5, 20.5), &rules().k);
        j.next = Next::Flood;
        let drain = Vec2::new(39.5, 20.5);
        // A first spill needs no run-out: done in the zone.
        let first = turn(rules(), &mut copy.clone(), zone, &[j]);
        assert_eq!((first.passed.len(), first.stuck.len()), (1, 0), "{:?}", first.report.report);
        assert_eq!(first.passed[0].last_spill, Some(drain));
        // The second runs out: refused, undone to the last bit.
        j.last_spill = Some(drain);
        let mut again = copy.clone();
        let second = turn(rules(), &mut again, zone, &[j]);
        assert_eq!((second.passed.len(), second.stuck.len()), (0, 1));
        assert_eq!((bits(&again.heights), bits(&again.pool)), (bits(&copy.heights), bits(&copy.pool)));
    }

    /// Rain on dry ground inside the zone runs there; a particle that then
    /// reaches the lake and floods it comes back passed (it moved), not stuck.
    #[test]
    fn a_particle_that_moved_is_passed() {
        let w: usize = 64;
        // A slope down towards low x, into a lake at level 0.22 that reaches
        // beyond the zone's low x side.
        let mut heights: Vec<f32> = (0..w * w).map(|i| 0.1 + 0.01 * (i % w) as f32).collect();
        let mut pool: Vec<f32> = heights.iter().map(|&h| (0.22 - h).max(0.0)).collect();
        let (mut layers, zone) = zone_copy(&mut heights, &mut pool);
        let j = Journey::new(Vec2::new(30.5, 20.5), &rules().k);
        let turn = turn(rules(), &mut layers, zone, &[j]);
        assert_eq!((turn.passed.len(), turn.stuck.len()), (1, 0), "{:?}", turn.report.report);
        let p = turn.passed[0];
        assert!(p.steps_left < j.steps_left && p.particle.position.x < 30.5, "{p:?}");
        // It ran to the lake (cells below 12, or cell 12 on its shore, level
        // with it: a hollow, where it stalls) and stopped at the flood, which
        // would have reached past the zone's side (cell 8).
        assert!((9.0..13.0).contains(&p.particle.position.x) && p.next == Next::Flood, "{p:?}");
        assert!(turn.report.report.erosion.steps > 0);
    }
}
