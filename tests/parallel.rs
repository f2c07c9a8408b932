//! The `parallel` feature: same bits for any thread count, conservation, errors.
#![cfg(feature = "parallel")]

mod common;

use hydraulic_erosion::{
    Control, ErosionParams, GridError, Heightmap, InnerMode, MassBalance, Parallel, ParallelParams, Physical,
    Snowball, SnowballParams, fbm_terrain, island_terrain,
};

use common::map_hash;

/// Runs `f` on a fresh pool of `threads` threads.
fn on_threads<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(f)
}

fn runner(batch_size: u32, batches_per_round: u32, mode: InnerMode) -> Parallel {
    Parallel::new(ParallelParams { batch_size, batches_per_round, mode }).unwrap()
}

fn physical(droplets: u32) -> Physical {
    Physical::new(ErosionParams { droplets, ..ErosionParams::default() }).unwrap()
}

/// An island 10 units high (the snowball original's setting).
fn island(size: usize) -> Heightmap {
    let mut map = island_terrain(size, size, 3).unwrap();
    map.cells_mut().iter_mut().for_each(|h| *h *= 10.0);
    map
}

#[test]
fn physical_same_bits_on_1_2_and_4_threads() {
    for mode in [InnerMode::Sequential, InnerMode::Lockstep] {
        // 3000 droplets: 12 batches of 256 (the last one short) in 6 rounds of 2.
        let report =
            physical_on_1_2_and_4_threads(runner(256, 2, mode), 3000, || fbm_terrain(64, 64, 5).unwrap(), 9);
        assert_eq!(report.droplets, 3000);
    }
}

/// Runs `droplets` Physical droplets on a fresh `map()` with `parallel` on 1, 2
/// and 4 threads; asserts each run conserves mass and all give the same bits and
/// reports; returns the report.
fn physical_on_1_2_and_4_threads(
    parallel: Parallel,
    droplets: u32,
    map: impl Fn() -> Heightmap,
    seed: u64,
) -> hydraulic_erosion::ErosionReport {
    let sim = physical(droplets);
    let runs: Vec<_> = [1, 2, 4]
        .into_iter()
        .map(|threads| {
            let mut map = map();
            let before = map.clone();
            let report = on_threads(threads, || parallel.run_physical(&sim, &mut map, seed).unwrap());
            assert!(
                MassBalance::new(&before, &map, report.outflow).is_conserved(),
                "{:?}",
                parallel.params()
            );
            (map_hash(&map), report)
        })
        .collect();
    assert!(runs.windows(2).all(|w| w[0] == w[1]), "{:?}: {runs:?}", parallel.params());
    runs[0].1
}

/// A map of several merge chunks (16 384 cells each; 200 x 130 is 26 000 cells,
/// the second chunk short), so the chunk-parallel merge runs on every thread.
#[test]
fn a_map_of_several_merge_chunks_gives_the_same_bits_on_1_2_and_4_threads() {
    let report = physical_on_1_2_and_4_threads(
        runner(512, 2, InnerMode::Lockstep),
        4000,
        || fbm_terrain(200, 130, 8).unwrap(),
        4,
    );
    assert_eq!(report.droplets, 4000);
}

#[test]
fn snowball_same_bits_on_1_2_and_4_threads() {
    let parallel = runner(300, 2, InnerMode::default());
    let sim = Snowball::new(SnowballParams::default()).unwrap();
    let runs: Vec<_> = [1, 2, 4]
        .into_iter()
        .map(|threads| {
            let mut map = island(64);
            let before = map.clone();
            let report = on_threads(threads, || parallel.run_snowball(&sim, &mut map, 3).unwrap());
            assert!(MassBalance::new(&before, &map, report.outflow).is_conserved());
            assert_eq!(report.droplets, SnowballParams::default().count(64, 64));
            (map_hash(&map), report)
        })
        .collect();
    assert!(runs.windows(2).all(|w| w[0] == w[1]), "{runs:?}");
}

#[test]
fn the_seed_and_the_batching_change_the_result() {
    let sim = physical(2000);
    let run = |parallel: Parallel, seed| {
        let mut map = fbm_terrain(48, 48, 2).unwrap();
        on_threads(2, || parallel.run_physical(&sim, &mut map, seed).unwrap());
        map_hash(&map)
    };
    let a = run(runner(200, 2, InnerMode::Lockstep), 1);
    assert_eq!(a, run(runner(200, 2, InnerMode::Lockstep), 1));
    assert_ne!(a, run(runner(200, 2, InnerMode::Lockstep), 2));
    assert_ne!(a, run(runner(300, 2, InnerMode::Lockstep), 1));
    assert_ne!(a, run(runner(200, 2, InnerMode::Sequential), 1));
}

/// Pins the output bits (value-breaking changes move these hashes). The
/// `parallel` feature needs `std`, so the maths here are std's; the crate's
/// other pins show std and libm agree, and the parallel runs only add batch
/// order on top. Both pins moved when the merge went chunk-parallel.
#[test]
fn value_stability() {
    let mut map = fbm_terrain(64, 64, 7).unwrap();
    let report = on_threads(2, || {
        runner(512, 2, InnerMode::Lockstep).run_physical(&physical(4000), &mut map, 11).unwrap()
    });
    assert_eq!((map_hash(&map), report.droplets), (PINNED_PHYSICAL, 4000));
    let mut map = island(64);
    let sim = Snowball::new(SnowballParams::default()).unwrap();
    on_threads(2, || runner(256, 2, InnerMode::Lockstep).run_snowball(&sim, &mut map, 11).unwrap());
    assert_eq!(map_hash(&map), PINNED_SNOWBALL);
}

const PINNED_PHYSICAL: u64 = 702310310755572233;
const PINNED_SNOWBALL: u64 = 720271467002364607;

#[test]
fn erodes_like_the_sequential_run() {
    // Totals within 15% of a sequential run with the same droplet count.
    let sim = physical(20_000);
    let mut sequential = fbm_terrain(128, 128, 4).unwrap();
    let expected = sim.run_seeded(&mut sequential, 4).unwrap();
    let mut map = fbm_terrain(128, 128, 4).unwrap();
    let got = on_threads(2, || runner(256, 2, InnerMode::Lockstep).run_physical(&sim, &mut map, 4).unwrap());
    for (what, a, b) in
        [("eroded", got.eroded, expected.eroded), ("deposited", got.deposited, expected.deposited)]
    {
        assert!((a - b).abs() <= 0.15 * b, "{what}: parallel {a}, sequential {b}");
    }
}

#[test]
fn bad_params_are_typed_errors() {
    let fields = |p: ParallelParams| Parallel::new(p).unwrap_err().field();
    let ok = ParallelParams::default();
    assert!(ok.validate().is_ok());
    assert_eq!(fields(ParallelParams { batch_size: 0, ..ok }), "batch_size");
    assert_eq!(fields(ParallelParams { batch_size: (1 << 24) + 1, ..ok }), "batch_size");
    assert_eq!(fields(ParallelParams { batches_per_round: 0, ..ok }), "batches_per_round");
    assert_eq!(fields(ParallelParams { batches_per_round: 3, ..ok }), "batches_per_round");
}

#[test]
fn non_finite_maps_are_rejected_untouched() {
    let mut map = fbm_terrain(16, 16, 1).unwrap();
    map.cells_mut()[37] = f32::NAN;
    let before = map.cells().to_vec();
    let parallel = Parallel::new(ParallelParams::default()).unwrap();
    let err = parallel.run_physical(&physical(100), &mut map, 1).unwrap_err();
    assert!(matches!(err, GridError::NonFinite { .. }), "{err:?}");
    let sim = Snowball::new(SnowballParams::default()).unwrap();
    assert!(parallel.run_snowball(&sim, &mut map, 1).is_err());
    assert_eq!(
        map.cells().iter().map(|h| h.to_bits()).collect::<Vec<_>>(),
        before.iter().map(|h| h.to_bits()).collect::<Vec<_>>()
    );
}

#[test]
fn tiny_maps_erode_to_themselves() {
    let parallel = Parallel::new(ParallelParams::default()).unwrap();
    for (w, h) in [(1, 1), (2, 5), (5, 2)] {
        let mut map = Heightmap::from_fn(w, h, |x, y| (x * 3 + y) as f32).unwrap();
        let before = map.clone();
        let report = parallel.run_physical(&physical(100), &mut map, 1).unwrap();
        assert_eq!((map, report.droplets), (before, 0));
    }
}

#[test]
fn a_stopped_run_is_balanced_and_marked() {
    let sim = physical(10_000);
    let mut map = fbm_terrain(64, 64, 3).unwrap();
    let before = map.clone();
    let mut calls = 0;
    let mut progress = |done: u64, total: u64| {
        calls += 1;
        assert_eq!(total, 10_000);
        if done >= 2_000 { Control::Stop } else { Control::Continue }
    };
    let parallel = runner(500, 2, InnerMode::Lockstep);
    let report =
        on_threads(2, || parallel.run_physical_with_progress(&sim, &mut map, 1, &mut progress).unwrap());
    assert!(report.cancelled);
    // Rounds of 1000 droplets: it stops after the second.
    assert_eq!(report.droplets, 2_000);
    assert!(calls >= 2);
    assert!(MassBalance::new(&before, &map, report.outflow).is_conserved());
}
