//! The `parallel` feature: same bits for any thread count, conservation, errors.
#![cfg(feature = "parallel")]

use crate::common;

use hydraulic_erosion::{
    Control, ErosionParams, GridError, Heightmap, Layout, MassBalance, Mode, Parallel, ParallelParams,
    Physical, Snowball, SnowballParams, fbm_terrain, island_terrain,
};

use common::map_hash;
use hydraulic_erosion::rand_core::SeedableRng;
use hydraulic_erosion::{Error, Progress, RunOptions, Simulator, Tiled};
use rand_xoshiro::Xoshiro256StarStar;

/// Runs `f` on a fresh pool of `threads` threads.
fn on_threads<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(f)
}

/// A `Parallel` and the mode its runs take (from their `RunOptions`).
struct Runner {
    parallel: Parallel,
    mode: Mode,
}

impl Runner {
    fn params(&self) -> (&ParallelParams, Mode) {
        (self.parallel.params(), self.mode)
    }

    fn run_seeded<M: Tiled>(
        &self,
        model: &mut M,
        map: &mut Heightmap,
        seed: u64,
    ) -> Result<M::Report, Error> {
        self.run_with_progress(model, map, seed, &mut |_, _| Control::Continue)
    }

    fn run_with_progress<M: Tiled>(
        &self,
        model: &mut M,
        map: &mut Heightmap,
        seed: u64,
        progress: &mut dyn Progress,
    ) -> Result<M::Report, Error> {
        let options = RunOptions::default().with_mode(self.mode).with_progress(progress);
        self.parallel.run_with(model, map.view_mut(), &mut Xoshiro256StarStar::seed_from_u64(seed), options)
    }
}

fn runner(batch_size: u32, batches_per_round: u32, mode: Mode) -> Runner {
    let params = ParallelParams {
        layout: Layout::Batches,
        batch_size,
        batches_per_round,
        ..ParallelParams::default()
    };
    Runner { parallel: Parallel::new(params).unwrap(), mode }
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
    for mode in [Mode::Sequential, Mode::Lockstep] {
        // 3000 droplets: 12 batches of 256 (the last one short) in 6 rounds of
        // 2; or 6 x 5 tiles of 16 (the last column and row short), 5 sweeps.
        let runs = [(runner(256, 2, mode), (64, 64)), (tiles(16, 700, mode), (90, 72))];
        for (parallel, (w, h)) in runs {
            let report = physical_on_1_2_and_4_threads(parallel, 3000, || fbm_terrain(w, h, 5).unwrap(), 9);
            assert_eq!(report.droplets, 3000);
        }
    }
}

/// Runs `droplets` Physical droplets on a fresh `map()` with `parallel` on 1, 2
/// and 4 threads; asserts each run conserves mass and all give the same bits and
/// reports; returns the report.
fn physical_on_1_2_and_4_threads(
    parallel: Runner,
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
            let report =
                on_threads(threads, || parallel.run_seeded(&mut sim.clone(), &mut map, seed).unwrap());
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

fn tiles(tile_size: u32, sweep_size: u32, mode: Mode) -> Runner {
    let params = ParallelParams { layout: Layout::Tiles, tile_size, sweep_size, ..ParallelParams::default() };
    Runner { parallel: Parallel::new(params).unwrap(), mode }
}

#[test]
fn tiled_runs_on_small_thin_and_one_tile_maps_give_the_same_bits() {
    // One tile bigger than the map; thin maps; tiles of the minimum size.
    let maps: [(usize, usize, u32); 5] = [(20, 20, 32), (3, 200, 8), (200, 3, 8), (9, 9, 8), (33, 17, 8)];
    for (w, h, tile) in maps {
        let map = || {
            Heightmap::from_fn(w, h, |x, y| ((x * 7 + y * 13) % 5) as f32 * 0.3 + x as f32 * 0.05).unwrap()
        };
        let report = physical_on_1_2_and_4_threads(tiles(tile, 300, Mode::Lockstep), 1000, map, 2);
        assert_eq!(report.droplets, 1000, "{w}x{h}");
    }
}

#[test]
fn tiled_runs_with_fast_droplets_give_the_same_bits() {
    // Steep, frictionless: droplets jump several cells a step, further than
    // half a tile of 8, and take those steps on the whole map.
    let sim = Physical::new(ErosionParams {
        droplets: 2000,
        friction: 0.0,
        height_scale: 200.0,
        pit_safe: true,
        ..ErosionParams::default()
    })
    .unwrap();
    let runs: Vec<_> = [1, 2, 4]
        .into_iter()
        .map(|threads| {
            let mut map = fbm_terrain(64, 64, 6).unwrap();
            let before = map.clone();
            let parallel = tiles(8, 500, Mode::Lockstep);
            let report = on_threads(threads, || parallel.run_seeded(&mut sim.clone(), &mut map, 5).unwrap());
            assert!(MassBalance::new(&before, &map, report.outflow).is_conserved());
            assert_eq!(report.droplets, 2000);
            (map_hash(&map), report)
        })
        .collect();
    assert!(runs.windows(2).all(|w| w[0] == w[1]), "{runs:?}");
}

/// A map of several merge chunks (16 384 cells each; 200 x 130 is 26 000 cells,
/// the second chunk short), so the chunk-parallel merge runs on every thread.
#[test]
fn a_map_of_several_merge_chunks_gives_the_same_bits_on_1_2_and_4_threads() {
    let report = physical_on_1_2_and_4_threads(
        runner(512, 2, Mode::Lockstep),
        4000,
        || fbm_terrain(200, 130, 8).unwrap(),
        4,
    );
    assert_eq!(report.droplets, 4000);
}

#[test]
fn snowball_same_bits_on_1_2_and_4_threads() {
    let parallel = runner(300, 2, Mode::default());
    let sim = Snowball::new(SnowballParams::default()).unwrap();
    let runs: Vec<_> = [1, 2, 4]
        .into_iter()
        .map(|threads| {
            let mut map = island(64);
            let before = map.clone();
            let report = on_threads(threads, || parallel.run_seeded(&mut sim.clone(), &mut map, 3).unwrap());
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
    let run = |parallel: Runner, seed| {
        let mut map = fbm_terrain(48, 48, 2).unwrap();
        on_threads(2, || parallel.run_seeded(&mut sim.clone(), &mut map, seed).unwrap());
        map_hash(&map)
    };
    let a = run(runner(200, 2, Mode::Lockstep), 1);
    assert_eq!(a, run(runner(200, 2, Mode::Lockstep), 1));
    assert_ne!(a, run(runner(200, 2, Mode::Lockstep), 2));
    assert_ne!(a, run(runner(300, 2, Mode::Lockstep), 1));
    assert_ne!(a, run(runner(200, 2, Mode::Sequential), 1));
}

/// Pins the output bits (value-breaking changes move these hashes). The
/// `parallel` feature needs `std`, so the maths here are std's; the crate's
/// other pins show std and libm agree, and the parallel runs only add batch or
/// tile order on top. The batch pins moved when the merge went chunk-parallel;
/// the tiles' pin is the default layout's, with smaller tiles and sweeps.
#[test]
fn value_stability() {
    let physical_runs =
        [(runner(512, 2, Mode::Lockstep), PINNED_PHYSICAL), (tiles(16, 1000, Mode::Lockstep), PINNED_TILES)];
    for (parallel, pin) in physical_runs {
        let mut map = fbm_terrain(64, 64, 7).unwrap();
        let report = on_threads(2, || parallel.run_seeded(&mut physical(4000), &mut map, 11).unwrap());
        assert_eq!((map_hash(&map), report.droplets), (pin, 4000), "{:?}", parallel.params().0.layout);
    }
    let mut map = island(64);
    let sim = Snowball::new(SnowballParams::default()).unwrap();
    on_threads(2, || runner(256, 2, Mode::Lockstep).run_seeded(&mut sim.clone(), &mut map, 11).unwrap());
    assert_eq!(map_hash(&map), PINNED_SNOWBALL);
}

const PINNED_PHYSICAL: u64 = 1015308016534098232;
const PINNED_TILES: u64 = 14666851080069999585;
const PINNED_SNOWBALL: u64 = 6965583179540291564;

/// Totals near a sequential run's with the same droplet count: within 15% for
/// batches (a round's batches add their cuts), within 5% for tiles (droplets
/// only change order); the spread between two sequential seeds is a few percent.
#[test]
fn erodes_like_the_sequential_run() {
    let mut sim = physical(20_000);
    let mut sequential = fbm_terrain(128, 128, 4).unwrap();
    let expected = sim.run_seeded(&mut sequential, 4).unwrap();
    let runs = [
        (runner(256, 2, Mode::Lockstep), 0.15),
        (tiles(32, 4096, Mode::Sequential), 0.05),
        (tiles(32, 4096, Mode::Lockstep), 0.05),
    ];
    for (parallel, tolerance) in runs {
        let mut map = fbm_terrain(128, 128, 4).unwrap();
        let got = on_threads(2, || parallel.run_seeded(&mut sim.clone(), &mut map, 4).unwrap());
        for (what, a, b) in
            [("eroded", got.eroded, expected.eroded), ("deposited", got.deposited, expected.deposited)]
        {
            let p = parallel.params();
            assert!((a - b).abs() <= tolerance * b, "{p:?} {what}: parallel {a}, sequential {b}");
        }
    }
}

#[test]
fn a_stopped_tiled_run_is_balanced_and_marked() {
    let sim = physical(10_000);
    let mut map = fbm_terrain(64, 64, 3).unwrap();
    let before = map.clone();
    let mut progress = |done: u64, _: u64| if done >= 2_000 { Control::Stop } else { Control::Continue };
    let parallel = tiles(16, 1000, Mode::Lockstep);
    let report =
        on_threads(2, || parallel.run_with_progress(&mut sim.clone(), &mut map, 1, &mut progress).unwrap());
    assert!(report.cancelled);
    // Stopped between sweeps of 1 000 new droplets, once 2 000 had ended; no
    // droplet starts after it, and those in flight finish their walks (none
    // is put down mid-walk), so every started droplet ends.
    assert!(report.droplets >= 2_000 && report.droplets < 10_000, "{report:?}");
    assert_eq!(report.droplets % 1_000, 0, "{report:?}");
    assert_eq!(report.stopped, 0);
    assert!(MassBalance::new(&before, &map, report.outflow).is_conserved());
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
    assert_eq!(fields(ParallelParams { tile_size: 7, ..ok }), "tile_size");
    assert_eq!(fields(ParallelParams { tile_size: (1 << 24) + 1, ..ok }), "tile_size");
    assert_eq!(fields(ParallelParams { sweep_size: 0, ..ok }), "sweep_size");
}

#[test]
fn non_finite_maps_are_rejected_untouched() {
    let mut map = fbm_terrain(16, 16, 1).unwrap();
    map.cells_mut()[37] = f32::NAN;
    let before = map.cells().to_vec();
    let parallel = Parallel::new(ParallelParams::default()).unwrap();
    let err = parallel.run_seeded(&mut physical(100), &mut map, 1).unwrap_err();
    assert!(matches!(err, Error::Grid(GridError::NonFinite { .. })), "{err:?}");
    let sim = Snowball::new(SnowballParams::default()).unwrap();
    assert!(parallel.run_seeded(&mut sim.clone(), &mut map, 1).is_err());
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
        let report = parallel.run_seeded(&mut physical(100), &mut map, 1).unwrap();
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
    let parallel = runner(500, 2, Mode::Lockstep);
    let report =
        on_threads(2, || parallel.run_with_progress(&mut sim.clone(), &mut map, 1, &mut progress).unwrap());
    assert!(report.cancelled);
    // Rounds of 1000 droplets: it stops after the second.
    assert_eq!(report.droplets, 2_000);
    assert!(calls >= 2);
    assert!(MassBalance::new(&before, &map, report.outflow).is_conserved());
}

mod tiled_properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: common::proptest_cases(200), ..ProptestConfig::default() })]

        /// Any map and tiling: one and two threads give the same bits, mass
        /// balances, every droplet ends.
        #[test]
        fn tiled_runs_agree_and_conserve(
            w in 3usize..70,
            h in 3usize..70,
            tile in 8u32..40,
            sweep in 1u32..400,
            droplets in 0u32..400,
            seed in any::<u64>(),
            height_scale in prop_oneof![Just(1.0f32), Just(50.0f32), Just(1e3f32)],
            lockstep in any::<bool>(),
        ) {
            let sim = Physical::new(ErosionParams { droplets, height_scale, ..ErosionParams::default() }).unwrap();
            let mode = if lockstep { Mode::Lockstep } else { Mode::Sequential };
            let parallel = tiles(tile, sweep, mode);
            let runs: Vec<_> = [1, 2].into_iter().map(|threads| {
                let mut map = fbm_terrain(w, h, seed).unwrap();
                let before = map.clone();
                let report = on_threads(threads, || parallel.run_seeded(&mut sim.clone(), &mut map, seed).unwrap());
                (map_hash(&map), report, MassBalance::new(&before, &map, report.outflow).is_conserved())
            }).collect();
            prop_assert_eq!(runs[0], runs[1]);
            prop_assert!(runs[0].2);
            prop_assert_eq!(runs[0].1.droplets, u64::from(droplets));
        }
    }
}
