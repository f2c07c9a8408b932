//! Controls with `Hydrology` (active mask, rain map, erodibility), run one
//! particle after another and in `Parallel` tiles: masked cells keep their
//! terrain bits and stay dry, rain starts particles only where it falls,
//! bedrock does not erode, the sediment and water books balance, tiled runs
//! give the same bits on any thread count, and bad maps are typed errors.

use crate::common;

use common::{assert_books, basin, bowl, lake_params};
use hydraulic_erosion::rand_core::SeedableRng;
use hydraulic_erosion::{
    Controls, Error, GridError, Heightmap, Hydrology, HydrologyParams, HydrologyReport, Layers, RunOptions,
    Simulator, fbm_terrain,
};
use rand_xoshiro::Xoshiro256StarStar;

const SIZE: usize = 64;

fn bits(map: &Heightmap) -> Vec<u32> {
    map.cells().iter().map(|h| h.to_bits()).collect()
}

/// Batches of 100 and a fast stream map, so streams, stalls and trees matter
/// within a few thousand particles.
fn params(particles: u32) -> HydrologyParams {
    HydrologyParams { particles, batch: 100, lrate: 0.1, ..HydrologyParams::default() }
}

/// The terrains the runs erode: fBm, and a bowl (which gathers its water in
/// pools on both sides of the mask below).
fn terrains() -> Vec<(&'static str, Heightmap)> {
    vec![("fbm", fbm_terrain(SIZE, SIZE, 4).unwrap()), ("bowl", bowl(SIZE, 0.0005))]
}

/// Active 0 on the left half, then a ramp from 0.25 up to 1 at three
/// quarters of the way across, 1 beyond.
fn mask() -> Heightmap {
    Heightmap::from_fn(SIZE, SIZE, |x, _| {
        if x < SIZE / 2 { 0.0 } else { (0.25 + (x - SIZE / 2) as f32 / 16.0).min(1.0) }
    })
    .unwrap()
}

/// How a test runs: one particle after another, or in tiles of 16 on a pool
/// of this many threads.
#[derive(Clone, Copy, Debug)]
enum Way {
    Sequential,
    #[cfg(feature = "parallel")]
    Tiled(usize),
}

/// The sequential run, and (with `parallel`) the tiled run on one thread.
fn ways() -> Vec<Way> {
    vec![
        Way::Sequential,
        #[cfg(feature = "parallel")]
        Way::Tiled(1),
    ]
}

/// Runs `h` over `map` with `controls` (and `layers`), seeded with 3.
fn run(
    way: Way,
    h: &mut Hydrology,
    map: &mut Heightmap,
    controls: Controls<'_>,
    layers: Option<&mut Layers>,
) -> Result<HydrologyReport, Error> {
    let options = move || {
        let options = RunOptions::default().with_controls(controls);
        match layers {
            Some(layers) => options.with_layers(layers),
            None => options,
        }
    };
    let mut rng = Xoshiro256StarStar::seed_from_u64(3);
    match way {
        Way::Sequential => h.run_with(map.view_mut(), &mut rng, options()),
        #[cfg(feature = "parallel")]
        Way::Tiled(threads) => {
            use hydraulic_erosion::{Parallel, ParallelParams};
            let parallel =
                Parallel::new(ParallelParams { tile_size: 16, ..ParallelParams::default() }).unwrap();
            // The options are made on the pool's thread (a progress callback
            // need not be `Send`).
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| parallel.run_with(h, map.view_mut(), &mut rng, options()))
        }
    }
}

/// Every particle has exactly one fate.
fn assert_fates(name: &str, r: &HydrologyReport) {
    let e = &r.erosion;
    let fates = e.evaporated
        + e.left_map
        + e.step_limited
        + e.unstable
        + e.masked
        + e.stopped
        + r.ended_in_pool
        + r.flood_failed
        + r.spill_limited;
    assert_eq!(fates, e.droplets, "{name}: {r:?}");
    assert_eq!(r.rain, e.droplets as f64, "{name}");
}

#[test]
fn masked_cells_keep_their_bits_and_stay_dry() {
    let active = mask();
    for way in ways() {
        for (terrain, start) in terrains() {
            let name = format!("{way:?} {terrain}");
            let mut map = start.clone();
            let mut h = Hydrology::new(params(3_000), SIZE, SIZE).unwrap();
            let mut layers = Layers::new(SIZE, SIZE).unwrap();
            let controls = Controls { active: Some(active.view()), ..Controls::default() };
            let report = run(way, &mut h, &mut map, controls, Some(&mut layers)).unwrap();
            eprintln!("{name}: {report:?}");
            assert_books(&start, &map, 0.0, &h, &report);
            assert_fates(&name, &report);
            assert!(report.erosion.masked > 0, "{name}: no particle reached the mask");
            let (wetness, pool) = (layers.wetness(), h.pool());
            let (mut changed, mut wet) = (0, 0);
            for i in 0..map.len() {
                if active.cells()[i] == 0.0 {
                    assert_eq!(map.cells()[i].to_bits(), start.cells()[i].to_bits(), "{name}: cell {i}");
                    assert_eq!(pool.cells()[i].to_bits(), 0, "{name}: water on masked cell {i}");
                    assert_eq!(wetness.cells()[i], 0.0, "{name}: a particle entered masked cell {i}");
                } else {
                    changed += usize::from(map.cells()[i] != start.cells()[i]);
                    wet += usize::from(pool.cells()[i] > 0.0);
                }
            }
            assert!(changed > 300, "{name}: only {changed} open cells changed");
            assert!(wet > 5, "{name}: {wet} wet cells");
        }
    }
}

#[test]
fn a_lake_stops_at_the_mask() {
    // Particles that stall on all but steep ground and move no sediment hop
    // down into the basin and fill it: the lake spans the middle of the map,
    // unless the mask closes its left half, which then walls it in.
    let p = lake_params();
    let active = mask();
    let middle = SIZE / 2;
    for way in ways() {
        for masked in [false, true] {
            let name = format!("{way:?}, masked {masked}");
            let mut map = basin(SIZE);
            let mut h = Hydrology::new(p, SIZE, SIZE).unwrap();
            let controls = Controls { active: masked.then(|| active.view()), ..Controls::default() };
            let report = run(way, &mut h, &mut map, controls, None).unwrap();
            assert_books(&basin(SIZE), &map, 0.0, &h, &report);
            assert_fates(&name, &report);
            let wet = |x: usize| h.pool()[(x, middle)] > 0.0;
            let (left, right) =
                ((0..middle).filter(|&x| wet(x)).count(), (middle..SIZE).filter(|&x| wet(x)).count());
            assert!(right > 4, "{name}: {right} wet cells on the right: {report:?}");
            if masked {
                assert_eq!(left, 0, "{name}");
                // The lake reaches the wall.
                assert!(wet(middle), "{name}");
                assert!(report.ended_in_pool > 1_000, "{name}: {report:?}");
            } else {
                assert!(left > 4, "{name}: {left} wet cells on the left");
            }
        }
    }
}

#[test]
fn particles_start_only_where_rain_falls() {
    // A plane falling towards +x, +y (steeper along y, so no two cells are
    // level and a flood's drain is always a lower neighbour), rain on the
    // quarter x, y >= 40: no particle ever visits a cell outside it (wetness
    // 0), which keeps its bits. With the mask closing x >= 56 as well,
    // particles stop there.
    let rain = Heightmap::from_fn(SIZE, SIZE, |x, y| f32::from(u8::from(x >= 40 && y >= 40))).unwrap();
    let active = Heightmap::from_fn(SIZE, SIZE, |x, _| f32::from(u8::from(x < 56))).unwrap();
    let start =
        Heightmap::from_fn(SIZE, SIZE, |x, y| (SIZE - x) as f32 * 0.01 + (SIZE - y) as f32 * 0.0137).unwrap();
    for way in ways() {
        for masked in [false, true] {
            let name = format!("{way:?}, masked {masked}");
            let mut map = start.clone();
            let mut h = Hydrology::new(params(1_000), SIZE, SIZE).unwrap();
            let mut layers = Layers::new(SIZE, SIZE).unwrap();
            let controls = Controls {
                rain: Some(rain.view()),
                active: masked.then(|| active.view()),
                ..Controls::default()
            };
            let report = run(way, &mut h, &mut map, controls, Some(&mut layers)).unwrap();
            assert_eq!(report.erosion.droplets, 1_000, "{name}");
            assert_books(&start, &map, 0.0, &h, &report);
            assert_fates(&name, &report);
            assert_eq!(report.erosion.masked > 0, masked, "{name}: {report:?}");
            let wetness = layers.wetness();
            let mut visited = 0;
            for y in 0..SIZE {
                for x in 0..SIZE {
                    let open = x >= 40 && y >= 40 && (!masked || x < 56);
                    if !open {
                        assert_eq!(wetness[(x, y)], 0.0, "{name}: a particle was at ({x}, {y})");
                        assert_eq!(map[(x, y)].to_bits(), start[(x, y)].to_bits(), "{name}: ({x}, {y})");
                    }
                    visited += usize::from(wetness[(x, y)] > 0.0);
                }
            }
            assert!(visited > 200, "{name}: {visited} cells visited");
        }
    }
}

#[test]
fn no_rain_starts_no_particle() {
    let dry = Heightmap::filled(SIZE, SIZE, 0.0).unwrap();
    let closed = Heightmap::filled(SIZE, SIZE, 0.0).unwrap();
    for way in ways() {
        for controls in [
            Controls { rain: Some(dry.view()), ..Controls::default() },
            Controls { active: Some(closed.view()), ..Controls::default() },
        ] {
            let mut map = fbm_terrain(SIZE, SIZE, 4).unwrap();
            let mut h = Hydrology::new(params(2_000), SIZE, SIZE).unwrap();
            let report = run(way, &mut h, &mut map, controls, None).unwrap();
            assert_eq!(report.erosion.droplets, 0, "{way:?}");
            assert_eq!(report.rain, 0.0, "{way:?}");
            assert_eq!(bits(&map), bits(&fbm_terrain(SIZE, SIZE, 4).unwrap()), "{way:?}");
            assert!(h.pool().cells().iter().all(|&d| d == 0.0), "{way:?}");
        }
    }
}

#[test]
fn bedrock_does_not_erode_and_soft_rock_erodes_more() {
    let bedrock = Heightmap::filled(SIZE, SIZE, 0.0).unwrap();
    let soft = Heightmap::filled(SIZE, SIZE, 3.0).unwrap();
    let erodibility = |map| Controls { erodibility: Some(map), ..Controls::default() };
    for way in ways() {
        let start = fbm_terrain(SIZE, SIZE, 4).unwrap();
        let mut map = start.clone();
        let mut h = Hydrology::new(params(3_000), SIZE, SIZE).unwrap();
        let report = run(way, &mut h, &mut map, erodibility(bedrock.view()), None).unwrap();
        assert_eq!(report.erosion.eroded, 0.0, "{way:?}");
        assert!(map.cells().iter().zip(start.cells()).all(|(a, b)| a >= b), "{way:?}: a cell was cut");
        assert_books(&start, &map, 0.0, &h, &report);

        let mut plain = start.clone();
        let mut h = Hydrology::new(params(3_000), SIZE, SIZE).unwrap();
        let plain_report = run(way, &mut h, &mut plain, Controls::default(), None).unwrap();
        let mut softer = start.clone();
        let mut h = Hydrology::new(params(3_000), SIZE, SIZE).unwrap();
        let soft_report = run(way, &mut h, &mut softer, erodibility(soft.view()), None).unwrap();
        assert_books(&start, &softer, 0.0, &h, &soft_report);
        assert!(
            soft_report.erosion.eroded > 1.2 * plain_report.erosion.eroded,
            "{way:?}: {} vs {}",
            soft_report.erosion.eroded,
            plain_report.erosion.eroded
        );
    }
}

/// A deposit whose load plus the carried rounding ends a hair below 0 waits
/// in the carry on bedrock: added, it lowered a cell of erodibility 0 by an
/// ulp past the gate (found by an audit at heights to 1e6: cell 214 went from
/// 216524.7 to 216524.69), as `Physical`'s deposit once did.
#[test]
fn bedrock_keeps_its_bits_when_a_deposit_ends_a_hair_below_zero() {
    let side = 24;
    let base = fbm_terrain(side, side, 25).unwrap();
    let start = Heightmap::from_fn(side, side, |x, y| base[(x, y)] * 1e6).unwrap();
    let rock = Heightmap::from_fn(side, side, |x, y| if (x + y) % 2 == 0 { 0.0 } else { 1.0 }).unwrap();
    let mut map = start.clone();
    let mut h =
        Hydrology::new(HydrologyParams { particles: 300, ..HydrologyParams::default() }, side, side).unwrap();
    let controls = Controls { erodibility: Some(rock.view()), ..Controls::default() };
    let mut rng = Xoshiro256StarStar::seed_from_u64(25);
    let report = h.run_with(map.view_mut(), &mut rng, RunOptions::default().with_controls(controls)).unwrap();
    assert!(report.erosion.eroded > 0.0, "{report:?}");
    for (i, (after, before)) in map.cells().iter().zip(start.cells()).enumerate() {
        if rock.cells()[i] == 0.0 {
            assert!(after >= before, "bedrock cell {i} lowered: {before} -> {after}");
        }
    }
    assert_books(&start, &map, 0.0, &h, &report);
}

#[test]
fn the_books_balance_with_each_control() {
    let active = mask();
    let rain = Heightmap::from_fn(SIZE, SIZE, |x, y| ((x * y) % 7) as f32).unwrap();
    let erodibility = Heightmap::from_fn(SIZE, SIZE, |x, y| ((x + 2 * y) % 5) as f32 * 0.5).unwrap();
    let sets = [
        ("active", Controls { active: Some(active.view()), ..Controls::default() }),
        ("rain", Controls { rain: Some(rain.view()), ..Controls::default() }),
        ("erodibility", Controls { erodibility: Some(erodibility.view()), ..Controls::default() }),
        (
            "all",
            Controls {
                active: Some(active.view()),
                rain: Some(rain.view()),
                erodibility: Some(erodibility.view()),
            },
        ),
    ];
    for way in ways() {
        for (terrain, start) in terrains() {
            for (set, controls) in &sets {
                let name = format!("{way:?} {terrain} {set}");
                // Lakes from a first run, so the controlled one floods, drains
                // and deposits under water from the start.
                let mut map = start.clone();
                let mut h = Hydrology::new(params(1_000), SIZE, SIZE).unwrap();
                h.run_seeded(&mut map, 1).unwrap();
                let (before, pool_before) = (map.clone(), h.pool_volume());
                let report = run(way, &mut h, &mut map, controls.clone(), None).unwrap();
                assert_eq!(report.erosion.droplets, 1_000, "{name}");
                assert_books(&before, &map, pool_before, &h, &report);
                assert_fates(&name, &report);
                assert!(report.floods > 0 && report.erosion.eroded > 0.0, "{name}: {report:?}");
            }
        }
    }
}

#[test]
fn a_lake_set_on_masked_cells_keeps_its_bits() {
    // Water the caller puts on masked cells stays as it is: floods wall those
    // cells off, so they neither fill nor drain.
    let active = mask();
    for way in ways() {
        let start = bowl(SIZE, 0.0005);
        let lake = Heightmap::from_fn(SIZE, SIZE, |x, y| (0.2 - start[(x, y)]).max(0.0)).unwrap();
        let mut map = start.clone();
        let mut h = Hydrology::new(params(2_000), SIZE, SIZE).unwrap();
        h.set_pool(&lake).unwrap();
        let pool_before = h.pool_volume();
        let controls = Controls { active: Some(active.view()), ..Controls::default() };
        let report = run(way, &mut h, &mut map, controls, None).unwrap();
        assert_books(&start, &map, pool_before, &h, &report);
        let pool = h.pool();
        let mut open_changed = 0;
        for i in 0..map.len() {
            if active.cells()[i] == 0.0 {
                assert_eq!(map.cells()[i].to_bits(), start.cells()[i].to_bits(), "{way:?}: cell {i}");
                assert_eq!(pool.cells()[i].to_bits(), lake.cells()[i].to_bits(), "{way:?}: pool {i}");
            } else {
                open_changed += usize::from(pool.cells()[i] != lake.cells()[i]);
            }
        }
        assert!(open_changed > 10, "{way:?}: the open half of the lake did not change");
    }
}

#[test]
fn without_controls_a_run_is_as_before() {
    // No maps, and an erodibility of 1 everywhere (it scales nothing and
    // leaves the starts uniform): the bits of a run without options.
    let ones = Heightmap::filled(SIZE, SIZE, 1.0).unwrap();
    for way in ways() {
        let start = fbm_terrain(SIZE, SIZE, 4).unwrap();
        let mut plain = start.clone();
        let mut h_plain = Hydrology::new(params(2_000), SIZE, SIZE).unwrap();
        let mut rng = Xoshiro256StarStar::seed_from_u64(3);
        let a = match way {
            Way::Sequential => h_plain.run(&mut plain, &mut rng).unwrap(),
            #[cfg(feature = "parallel")]
            Way::Tiled(_) => run(way, &mut h_plain, &mut plain, Controls::default(), None).unwrap(),
        };
        for controls in
            [Controls::default(), Controls { erodibility: Some(ones.view()), ..Controls::default() }]
        {
            let mut map = start.clone();
            let mut h = Hydrology::new(params(2_000), SIZE, SIZE).unwrap();
            let b = run(way, &mut h, &mut map, controls, None).unwrap();
            assert_eq!(a, b, "{way:?}");
            assert_eq!(bits(&plain), bits(&map), "{way:?}");
            for (x, y) in [(h_plain.pool(), h.pool()), (h_plain.stream(), h.stream())] {
                assert_eq!(bits(x), bits(y), "{way:?}");
            }
        }
    }
}

#[test]
fn bad_controls_are_typed_errors_and_change_nothing() {
    let wrong_size = Heightmap::filled(SIZE + 1, SIZE, 1.0).unwrap();
    let too_high = Heightmap::filled(SIZE, SIZE, 1.5).unwrap();
    let negative = Heightmap::filled(SIZE, SIZE, -1.0).unwrap();
    let mut nan = Heightmap::filled(SIZE, SIZE, 0.5).unwrap();
    nan[(3, 5)] = f32::NAN;
    let cases: [(Controls<'_>, &str); 7] = [
        (Controls { active: Some(wrong_size.view()), ..Controls::default() }, "size"),
        (Controls { rain: Some(wrong_size.view()), ..Controls::default() }, "size"),
        (Controls { erodibility: Some(wrong_size.view()), ..Controls::default() }, "size"),
        (Controls { active: Some(too_high.view()), ..Controls::default() }, "controls.active"),
        (Controls { rain: Some(negative.view()), ..Controls::default() }, "controls.rain"),
        (Controls { erodibility: Some(nan.view()), ..Controls::default() }, "controls.erodibility"),
        (Controls { active: Some(nan.view()), ..Controls::default() }, "controls.active"),
    ];
    for way in ways() {
        for (controls, expected) in cases.clone() {
            // Layers with something in them, to see that they stay as they are.
            let mut map = fbm_terrain(SIZE, SIZE, 4).unwrap();
            let mut h = Hydrology::new(params(500), SIZE, SIZE).unwrap();
            h.run_seeded(&mut map, 1).unwrap();
            let (before, pool, stream) = (map.clone(), h.pool().clone(), h.stream().clone());
            let error = run(way, &mut h, &mut map, controls, None).unwrap_err();
            match (&error, expected) {
                (Error::Grid(GridError::SizeMismatch { .. }), "size") => {}
                (Error::Param(p), field) if p.field() == field => {}
                _ => panic!("{way:?} {expected}: {error:?}"),
            }
            assert_eq!(bits(&map), bits(&before), "{way:?} {expected}");
            assert_eq!(bits(h.pool()), bits(&pool), "{way:?} {expected}");
            assert_eq!(bits(h.stream()), bits(&stream), "{way:?} {expected}");
        }
    }
}

#[cfg(feature = "parallel")]
#[test]
fn tiled_runs_with_controls_give_the_same_bits_on_1_2_and_3_threads() {
    let active = mask();
    let rain = Heightmap::from_fn(SIZE, SIZE, |x, y| ((x * y) % 7) as f32).unwrap();
    let erodibility = Heightmap::from_fn(SIZE, SIZE, |x, y| ((x + 2 * y) % 5) as f32 * 0.5).unwrap();
    for (terrain, start) in terrains() {
        let runs: Vec<_> = [1, 2, 3]
            .into_iter()
            .map(|threads| {
                let mut map = start.clone();
                let mut h = Hydrology::new(params(3_000), SIZE, SIZE).unwrap();
                let mut layers = Layers::new(SIZE, SIZE).unwrap();
                let controls = Controls {
                    active: Some(active.view()),
                    rain: Some(rain.view()),
                    erodibility: Some(erodibility.view()),
                };
                let report = run(Way::Tiled(threads), &mut h, &mut map, controls, Some(&mut layers)).unwrap();
                assert_books(&start, &map, 0.0, &h, &report);
                assert!(report.erosion.masked > 0, "{terrain}: {report:?}");
                let hashes =
                    [&map, h.pool(), h.stream(), h.vegetation(), &layers.flux()].map(common::map_hash);
                (hashes, h.trees().collect::<Vec<_>>(), report)
            })
            .collect();
        assert!(runs.windows(2).all(|w| w[0] == w[1]), "{terrain}: {runs:?}");
    }
}
