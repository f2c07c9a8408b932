//! `Parallel::run` with a `Hydrology`: tiled Hydrology runs give the same bits for any
//! thread count, balance sediment and water, and erode like a sequential run.
#![cfg(feature = "parallel")]

use crate::common;

use hydraulic_erosion::{
    Control, GridError, Heightmap, Hydrology, HydrologyParams, HydrologyReport, Parallel, ParallelParams,
    fbm_terrain, island_terrain,
};

use common::{assert_books, basin, lake_params, map_hash};
use hydraulic_erosion::rand_core::SeedableRng;
use hydraulic_erosion::{RunOptions, Simulator};
use rand_xoshiro::Xoshiro256StarStar;

/// Runs `f` on a fresh pool of `threads` threads.
fn on_threads<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(f)
}

fn tiles(tile_size: u32) -> Parallel {
    Parallel::new(ParallelParams { tile_size, ..ParallelParams::default() }).unwrap()
}

/// Batches of 100 and a fast stream map, so streams, stalls and trees matter
/// within a few thousand particles.
fn params(particles: u32) -> HydrologyParams {
    HydrologyParams { particles, batch: 100, lrate: 0.1, ..HydrologyParams::default() }
}

/// Everything a run leaves: the hashes of the map and the three layers, the
/// trees, and the report.
type Outcome = ([u64; 4], Vec<(usize, usize)>, HydrologyReport);

/// Runs `p` with `parallel` on a fresh `map()` on 1, 2 and 4 threads; asserts
/// each run balances and all leave the same bits; returns what they left.
fn on_1_2_and_4_threads(
    parallel: &Parallel,
    p: HydrologyParams,
    map: impl Fn() -> Heightmap,
    seed: u64,
) -> Outcome {
    let runs: Vec<Outcome> = [1, 2, 4]
        .into_iter()
        .map(|threads| {
            let mut map = map();
            let before = map.clone();
            let mut h = Hydrology::new(p, map.width(), map.height()).unwrap();
            let report = on_threads(threads, || parallel.run_seeded(&mut h, &mut map, seed).unwrap());
            assert_books(&before, &map, 0.0, &h, &report);
            let hashes = [&map, h.pool(), h.stream(), h.vegetation()].map(map_hash);
            (hashes, h.trees().collect(), report)
        })
        .collect();
    assert!(runs.windows(2).all(|w| w[0] == w[1]), "{:?}: {:?}", parallel.params(), runs);
    runs.into_iter().next().unwrap()
}

#[test]
fn same_bits_on_1_2_and_4_threads() {
    let (_, trees, report) =
        on_1_2_and_4_threads(&tiles(16), params(3000), || fbm_terrain(96, 80, 5).unwrap(), 9);
    eprintln!("{report:?} {} trees", trees.len());
    assert_eq!(report.erosion.droplets, 3000);
    assert_eq!(report.rain, 3000.0);
    assert!(report.floods > 0 && report.drains > 0 && report.pooled > 0.0);
    assert!(!trees.is_empty());
}

/// An island with a sea, its rivers building deltas in the tiles' turns: the
/// same bits on any thread count, books balanced, and other bits than without.
#[test]
fn deltas_give_the_same_bits_on_1_2_and_4_threads() {
    let island = || island_terrain(96, 96, 4).unwrap();
    let p = HydrologyParams { sea_level: Some(0.03), ..params(6000) };
    assert!(p.sea_deltas);
    let (hashes, _, report) = on_1_2_and_4_threads(&tiles(16), p, island, 9);
    assert_eq!(report.erosion.droplets, 6000);
    assert!(report.erosion.left_map > 500, "{report:?}");
    let without = on_1_2_and_4_threads(&tiles(16), HydrologyParams { sea_deltas: false, ..p }, island, 9);
    assert_ne!(hashes[0], without.0[0], "the deltas change the map");
}

/// The article's test planes: the same bits on any thread count, and lakes
/// wider than a zone (refused in the tiles' turns) flood on the whole map as
/// in a sequential run.
#[test]
fn test_planes_give_the_same_bits_on_1_2_and_4_threads() {
    let p = HydrologyParams { exact_flood: false, spill: 20, ..params(3000) };
    let (_, _, report) = on_1_2_and_4_threads(&tiles(16), p, || fbm_terrain(96, 80, 5).unwrap(), 9);
    assert_eq!(report.erosion.droplets, 3000);
    assert!(report.floods > 0 && report.drains > 0 && report.pooled > 0.0);
    let p = HydrologyParams { exact_flood: false, spill: 20, ..lake_params() };
    let (_, _, report) = on_1_2_and_4_threads(&tiles(8), p, || basin(48), 3);
    let mut h = Hydrology::new(p, 48, 48).unwrap();
    let sequential = h.run_seeded(&mut basin(48), 3).unwrap();
    assert_eq!((report.ended_in_pool, sequential.ended_in_pool), (1500, 1500), "{report:?}");
    assert!((report.pooled - sequential.pooled).abs() < 0.01 * sequential.pooled);
}

#[test]
fn value_stability() {
    // Pinned: a change here is value-breaking (see tests/value_stability.rs).
    // CI runs this file with `std` alone and with `std` and `libm` together.
    let mut map = fbm_terrain(48, 40, 3).unwrap();
    let mut h = Hydrology::new(params(3_000), 48, 40).unwrap();
    let report = on_threads(2, || tiles(16).run_seeded(&mut h, &mut map, 11).unwrap());
    let hashes = [&map, h.pool(), h.stream(), h.vegetation()].map(|g| format!("{:016x}", map_hash(g)));
    eprintln!("{hashes:?} {report:?}");
    assert_eq!(report.erosion.steps, 37_088);
    assert_eq!(hashes, ["a3a61633c7f6de55", "2a0a9432d9a982e5", "7e5bb058d8b9a29f", "f1f1ff50f83f5c73"]);
}

#[test]
fn value_stability_with_test_planes() {
    // Pinned as the test above, with the article's test planes (and the
    // spill limit they had as defaults).
    let mut map = fbm_terrain(48, 40, 3).unwrap();
    let p = HydrologyParams { exact_flood: false, spill: 20, ..params(3_000) };
    let mut h = Hydrology::new(p, 48, 40).unwrap();
    let report = on_threads(2, || tiles(16).run_seeded(&mut h, &mut map, 11).unwrap());
    let hashes = [&map, h.pool(), h.stream(), h.vegetation()].map(|g| format!("{:016x}", map_hash(g)));
    eprintln!("{hashes:?} {report:?}");
    assert_eq!(report.erosion.steps, 34_864);
    assert_eq!(hashes, ["7a919c9bdf252b28", "ca07a3d6b7fa77f6", "bbb53d9de9daa7fd", "03e870bb5f678f93"]);
}

#[test]
fn pools_wider_than_a_zone_flood_on_the_whole_map() {
    // Particles that stall on all but steep ground and move no sediment (the
    // scene of tests/hydrology.rs): they hop down into the basin and fill it.
    let p = lake_params();
    let (_, _, report) = on_1_2_and_4_threads(&tiles(8), p, || basin(48), 3);
    // Run again to look at the pool.
    let mut map = basin(48);
    let mut h = Hydrology::new(p, 48, 48).unwrap();
    let again = tiles(8).run_seeded(&mut h, &mut map, 3).unwrap();
    assert_eq!(again, report);
    // The lake across the middle row is wider than any zone (16 cells): its
    // floods could only run on the whole map.
    let wet = (0..48).filter(|&x| h.pool()[(x, 24)] > 0.0).count();
    assert!(wet > 16, "{wet} wet cells across the middle: {report:?}");
    // As in a sequential run, every particle ends in the lake.
    let mut h = Hydrology::new(p, 48, 48).unwrap();
    let sequential = h.run_seeded(&mut basin(48), 3).unwrap();
    assert_eq!((report.ended_in_pool, sequential.ended_in_pool), (1500, 1500), "{report:?}");
    assert!((report.pooled - sequential.pooled).abs() < 0.01 * sequential.pooled);
}

#[test]
fn small_thin_and_one_tile_maps_give_the_same_bits() {
    for (w, h, tile) in [(3, 200, 8), (200, 3, 8), (9, 9, 8), (33, 17, 8), (20, 20, 64)] {
        let (_, _, report) =
            on_1_2_and_4_threads(&tiles(tile), params(400), || fbm_terrain(w, h, 2).unwrap(), 4);
        assert_eq!(report.erosion.droplets, 400, "{w}x{h}");
    }
}

#[test]
fn the_seed_and_the_tiles_change_the_result() {
    let run = |parallel: &Parallel, seed| {
        let mut map = fbm_terrain(64, 64, 1).unwrap();
        let mut h = Hydrology::new(params(1000), 64, 64).unwrap();
        parallel.run_seeded(&mut h, &mut map, seed).unwrap();
        map_hash(&map)
    };
    let a = run(&tiles(16), 1);
    assert_eq!(a, run(&tiles(16), 1));
    assert_ne!(a, run(&tiles(16), 2));
    assert_ne!(a, run(&tiles(32), 1));
}

#[test]
fn erodes_like_the_sequential_run() {
    // 128 x 128, 20 000 particles: two tiled runs' totals against two
    // sequential runs', seeds 1 and 2. Single runs wander: the two
    // sequential runs' steps differ by 9 %, tiled runs' over four seeds by up
    // to 20 %. Tiles of 64: +12 % steps, +1 % eroded, +4 % deposited. Smaller
    // tiles run more steps and put down more (tiles of 32, four seeds: +12 %
    // steps, +8 % deposited, measured before the dry-stall rule went back to
    // the first outlet), an effect of erosion (without it, tiles of 32 and 64
    // run within 8 % of the sequential steps either way), not understood
    // yet: steps are held to 15 %. Without outlet erosion, whose lakes drain
    // or not by chance.
    let base = fbm_terrain(128, 128, 7).unwrap();
    let p = HydrologyParams { particles: 20_000, outlet_erosion: 0.0, ..HydrologyParams::default() };
    let sequential = |seed| {
        let mut map = base.clone();
        Hydrology::new(p, 128, 128).unwrap().run_seeded(&mut map, seed).unwrap()
    };
    let tiled = |seed| {
        let mut map = base.clone();
        let mut h = Hydrology::new(p, 128, 128).unwrap();
        on_threads(2, || tiles(64).run_seeded(&mut h, &mut map, seed).unwrap())
    };
    let (a, b) = (sequential(1), sequential(2));
    let (c, d) = (tiled(1), tiled(2));
    eprintln!("tiled {c:?}\n      {d:?}\nseq   {a:?}\n      {b:?}");
    let near = |x: f64, y: f64, tol: f64| (x - y).abs() <= tol * y.abs();
    let mean = |f: fn(&HydrologyReport) -> f64, x: &HydrologyReport, y: &HydrologyReport| (f(x) + f(y)) / 2.0;
    let eroded = |r: &HydrologyReport| r.erosion.eroded;
    let deposited = |r: &HydrologyReport| r.erosion.deposited;
    let steps = |r: &HydrologyReport| r.erosion.steps as f64;
    assert!(near(mean(eroded, &c, &d), mean(eroded, &a, &b), 0.1), "eroded");
    assert!(near(mean(deposited, &c, &d), mean(deposited, &a, &b), 0.1), "deposited");
    assert!(near(mean(steps, &c, &d), mean(steps, &a, &b), 0.15), "steps");
}

#[test]
fn a_stopped_run_is_balanced_and_marked() {
    let before = fbm_terrain(64, 64, 3).unwrap();
    let mut map = before.clone();
    let mut h = Hydrology::new(params(10_000), 64, 64).unwrap();
    let mut calls = 0;
    let mut progress = |done: u64, total: u64| {
        calls += 1;
        assert_eq!(total, 10_000);
        if done >= 2_000 { Control::Stop } else { Control::Continue }
    };
    let report = on_threads(2, || {
        tiles(16)
            .run_with(
                &mut h,
                map.view_mut(),
                &mut Xoshiro256StarStar::seed_from_u64(1),
                RunOptions::default().with_progress(&mut progress),
            )
            .unwrap()
    });
    assert!(report.erosion.cancelled && calls >= 2);
    // Stopped between sweeps once 2 000 particles had ended; none starts
    // after it, and those under way finish their journeys (none is stopped
    // mid-way), so every particle that started has ended.
    assert!(report.erosion.droplets >= 2_000 && report.erosion.droplets < 10_000, "{report:?}");
    assert_eq!(report.erosion.stopped, 0, "{report:?}");
    assert_eq!(report.rain, report.erosion.droplets as f64);
    assert_books(&before, &map, 0.0, &h, &report);
}

#[test]
fn runs_resume_from_the_layers_they_leave() {
    // Two runs of 500 on one simulator: the second starts from the first's
    // pools, streams and trees, and the books of each balance.
    let mut map = fbm_terrain(64, 64, 8).unwrap();
    let mut h = Hydrology::new(params(500), 64, 64).unwrap();
    let parallel = tiles(16);
    parallel.run_seeded(&mut h, &mut map, 1).unwrap();
    let (before, pool_before) = (map.clone(), h.pool_volume());
    let stream_before = h.stream().clone();
    let report = parallel.run_seeded(&mut h, &mut map, 2).unwrap();
    assert_books(&before, &map, pool_before, &h, &report);
    assert_ne!(h.stream(), &stream_before);
}

#[test]
fn bad_maps_are_typed_errors_and_change_nothing() {
    let parallel = tiles(16);
    let mut h = Hydrology::new(params(100), 32, 32).unwrap();
    let mut wrong = fbm_terrain(32, 31, 1).unwrap();
    let err = parallel.run_seeded(&mut h, &mut wrong, 1).unwrap_err();
    assert!(matches!(err, hydraulic_erosion::Error::Grid(GridError::SizeMismatch { .. })), "{err:?}");
    let mut map = fbm_terrain(32, 32, 1).unwrap();
    map.cells_mut()[37] = f32::INFINITY;
    let before = map.clone();
    let err = parallel.run_seeded(&mut h, &mut map, 1).unwrap_err();
    assert!(matches!(err, hydraulic_erosion::Error::Grid(GridError::NonFinite { x: 5, y: 1 })), "{err:?}");
    assert_eq!(
        map.cells().iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        before.cells().iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    );
    let empty = Heightmap::new(32, 32).unwrap();
    assert_eq!((h.pool(), h.stream(), h.vegetation(), h.trees().len()), (&empty, &empty, &empty, 0));
}

#[test]
fn tiny_maps_erode_to_themselves() {
    for (w, hh) in [(1, 1), (2, 5), (5, 2)] {
        let mut map = Heightmap::from_fn(w, hh, |x, y| (x * 3 + y) as f32).unwrap();
        let before = map.clone();
        let mut h = Hydrology::new(params(100), w, hh).unwrap();
        let report = tiles(8).run_seeded(&mut h, &mut map, 1).unwrap();
        assert_eq!((map, report), (before, HydrologyReport::default()));
    }
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: common::proptest_cases(64), ..ProptestConfig::default() })]

        /// Any map and tiling: one and two threads give the same bits, sediment
        /// and water balance, every particle ends.
        #[test]
        fn tiled_runs_agree_and_balance(
            w in 3usize..60,
            hh in 3usize..60,
            tile in 8u32..32,
            particles in 0u32..300,
            batch in 1u32..120,
            volume_factor in prop_oneof![Just(1.0f32), Just(100.0f32)],
            exact_flood in any::<bool>(),
            seed in any::<u64>(),
        ) {
            let p = HydrologyParams { particles, batch, volume_factor, exact_flood, ..HydrologyParams::default() };
            let parallel = tiles(tile);
            let runs: Vec<Outcome> = [1, 2].into_iter().map(|threads| {
                let before = fbm_terrain(w, hh, seed).unwrap();
                let mut map = before.clone();
                let mut h = Hydrology::new(p, w, hh).unwrap();
                let report = on_threads(threads, || parallel.run_seeded(&mut h, &mut map, seed).unwrap());
                assert_books(&before, &map, 0.0, &h, &report);
                ([&map, h.pool(), h.stream(), h.vegetation()].map(map_hash), h.trees().collect(), report)
            }).collect();
            prop_assert_eq!(&runs[0], &runs[1]);
            let r = &runs[0].2;
            prop_assert_eq!(r.erosion.droplets, u64::from(particles));
            prop_assert_eq!(r.rain, f64::from(particles));
        }
    }
}
