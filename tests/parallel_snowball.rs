//! `Parallel::run` with a `Snowball`, in tiles: the same bits for any thread count,
//! conservation, the fallback to batches, and erosion like a sequential run.
#![cfg(feature = "parallel")]

use crate::common;

use glam::Vec3;
use hydraulic_erosion::{
    CentralDifference, Control, ErosionReport, GridRef, Heightmap, Layout, MassBalance, NormalSampler,
    Offset, Parallel, ParallelParams, Snowball, SnowballParams, island_terrain,
};

use common::map_hash;
use hydraulic_erosion::rand_core::SeedableRng;
use hydraulic_erosion::{RunOptions, Simulator};
use rand_xoshiro::Xoshiro256StarStar;

/// Runs `f` on a fresh pool of `threads` threads.
fn on_threads<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(f)
}

fn tiles(tile_size: u32, sweep_size: u32) -> Parallel {
    Parallel::new(ParallelParams { tile_size, sweep_size, ..ParallelParams::default() }).unwrap()
}

/// An island 10 units high (the snowball original's setting).
fn island(w: usize, h: usize) -> Heightmap {
    let mut map = island_terrain(w, h, 3).unwrap();
    map.cells_mut().iter_mut().for_each(|v| *v *= 10.0);
    map
}

/// Runs `sim` with `parallel` on a fresh `map()` on 1, 2 and 4 threads;
/// asserts each run conserves mass and all give the same bits and reports.
fn on_1_2_and_4_threads<S: NormalSampler + Clone + Send + Sync>(
    parallel: &Parallel,
    sim: &Snowball<S>,
    map: impl Fn() -> Heightmap,
    seed: u64,
) -> (u64, ErosionReport) {
    let runs: Vec<_> = [1, 2, 4]
        .into_iter()
        .map(|threads| {
            let mut map = map();
            let before = map.clone();
            let report =
                on_threads(threads, || parallel.run_seeded(&mut sim.clone(), &mut map, seed).unwrap());
            assert!(MassBalance::new(&before, &map, report.outflow).is_conserved(), "{report:?}");
            assert!(map.cells().iter().all(|h| h.is_finite()));
            (map_hash(&map), report)
        })
        .collect();
    assert!(runs.windows(2).all(|w| w[0] == w[1]), "{:?}: {runs:?}", parallel.params());
    runs[0]
}

#[test]
fn same_bits_on_1_2_and_4_threads() {
    let sim = Snowball::new(SnowballParams::default()).unwrap();
    let (_, report) = on_1_2_and_4_threads(&tiles(16, 700), &sim, || island(96, 80), 3);
    assert_eq!(report.droplets, SnowballParams::default().count(96, 80));
    // Small maps, thin maps, one tile larger than the map.
    for (w, h, tile) in [(3, 200, 8), (200, 3, 8), (9, 9, 8), (33, 17, 8), (20, 20, 64)] {
        let (_, report) = on_1_2_and_4_threads(&tiles(tile, 50), &sim, || island(w, h), 4);
        assert_eq!(report.droplets, SnowballParams::default().count(w, h), "{w}x{h}");
    }
}

#[test]
fn fast_snowballs_jump_on_the_whole_map_with_the_same_bits() {
    // Speed 20: steps longer than half a tile of 16 happen, and are taken on
    // the whole map between sweeps.
    let sim = Snowball::new(SnowballParams { speed: 20.0, ..SnowballParams::default() }).unwrap();
    let (_, report) = on_1_2_and_4_threads(&tiles(16, 500), &sim, || island(64, 64), 5);
    assert_eq!(report.droplets, SnowballParams::default().count(64, 64));
}

#[test]
fn tiles_need_a_known_reach_within_half_a_tile_else_batches() {
    /// Central differences, with a reach nobody told the crate about.
    #[derive(Clone, Copy)]
    struct Unknown;
    impl NormalSampler for Unknown {
        fn cell_normal(&self, grid: &GridRef<'_>, x: usize, y: usize, scale: f32) -> Vec3 {
            CentralDifference.cell_normal(grid, x, y, scale)
        }
    }
    let params = SnowballParams::default();
    let run = |parallel: &Parallel, sim: &dyn Fn(&Parallel, &mut Heightmap) -> ErosionReport| {
        let mut map = island(64, 64);
        sim(parallel, &mut map);
        map_hash(&map)
    };
    let unknown = Snowball::with_sampler(params, Unknown).unwrap();
    let known = Snowball::new(params).unwrap();
    let with_unknown = |p: &Parallel, m: &mut Heightmap| p.run_seeded(&mut unknown.clone(), m, 1).unwrap();
    let with_known = |p: &Parallel, m: &mut Heightmap| p.run_seeded(&mut known.clone(), m, 1).unwrap();
    let tiled = ParallelParams { tile_size: 16, ..ParallelParams::default() };
    let as_batches = Parallel::new(ParallelParams { layout: Layout::Batches, ..tiled }).unwrap();
    let as_tiles = Parallel::new(tiled).unwrap();
    // An unknown reach runs in batches whatever the layout says.
    assert_eq!(run(&as_tiles, &with_unknown), run(&as_batches, &with_unknown));
    // The same sampler with its reach known runs in tiles: other bits.
    assert_eq!(run(&as_batches, &with_unknown), run(&as_batches, &with_known));
    assert_ne!(run(&as_tiles, &with_known), run(&as_batches, &with_known));
    // A radius of 7 reaches 2 + 7 + 1 = 10 cells, more than half a tile of 16.
    assert_eq!(Offset::new(CentralDifference, 7.0).unwrap().reach(), Some(10));
    let wide = Snowball::new(SnowballParams { radius: 7.0, ..params }).unwrap();
    let with_wide = |p: &Parallel, m: &mut Heightmap| p.run_seeded(&mut wide.clone(), m, 1).unwrap();
    assert_eq!(run(&as_tiles, &with_wide), run(&as_batches, &with_wide));
}

#[test]
fn erodes_like_the_sequential_run() {
    // 128 x 128, 0.4 snowballs per cell: totals within 5% of a sequential run.
    let mut sim = Snowball::new(SnowballParams::default()).unwrap();
    let mut sequential = island(128, 128);
    let expected = sim.run_seeded(&mut sequential, 4).unwrap();
    let mut map = island(128, 128);
    let got = on_threads(2, || tiles(32, 4096).run_seeded(&mut sim.clone(), &mut map, 4).unwrap());
    for (what, a, b) in
        [("eroded", got.eroded, expected.eroded), ("deposited", got.deposited, expected.deposited)]
    {
        assert!((a - b).abs() <= 0.05 * b, "{what}: tiles {a}, sequential {b}");
    }
    let mad = map.cells().iter().zip(sequential.cells()).map(|(a, b)| f64::from((a - b).abs())).sum::<f64>()
        / map.len() as f64;
    let change =
        map.cells().iter().zip(island(128, 128).cells()).map(|(a, b)| f64::from((a - b).abs())).sum::<f64>()
            / map.len() as f64;
    eprintln!("tiles {got:?}\nsequential {expected:?}\nmean difference {mad:e}, mean change {change:e}");
}

#[test]
fn a_stopped_run_is_balanced_and_marked() {
    let sim = Snowball::new(SnowballParams { snowballs: Some(10_000), ..SnowballParams::default() }).unwrap();
    let mut map = island(64, 64);
    let before = map.clone();
    let mut progress = |done: u64, _: u64| if done >= 2_000 { Control::Stop } else { Control::Continue };
    let report = on_threads(2, || {
        tiles(16, 1000)
            .run_with(
                &mut sim.clone(),
                map.view_mut(),
                &mut Xoshiro256StarStar::seed_from_u64(1),
                RunOptions::default().with_progress(&mut progress),
            )
            .unwrap()
    });
    assert!(report.cancelled);
    // None starts after the stop, and those under way finish their rolls
    // (none is stopped mid-way): whole sweeps of 1 000.
    assert!(report.droplets >= 2_000 && report.droplets < 10_000, "{report:?}");
    assert_eq!(report.droplets % 1_000, 0, "{report:?}");
    assert_eq!(report.stopped, 0, "{report:?}");
    assert!(MassBalance::new(&before, &map, report.outflow).is_conserved());
}

#[test]
fn value_stability() {
    // Pinned: a change here is value-breaking (see tests/value_stability.rs).
    let mut map = island(64, 64);
    let sim = Snowball::new(SnowballParams::default()).unwrap();
    on_threads(2, || tiles(16, 1000).run_seeded(&mut sim.clone(), &mut map, 11).unwrap());
    assert_eq!(map_hash(&map), PINNED);
}

const PINNED: u64 = 13713763651393527098;

/// `cell_size` holds in tiles as in a sequential run: the same bits as the
/// lengths over the cell size by hand, on any thread count.
#[test]
fn cell_size_is_the_lengths_by_hand_in_tiles() {
    let d = SnowballParams::default();
    let world = Snowball::new(SnowballParams { cell_size: 2.0, ..d }).unwrap();
    let by_hand = SnowballParams {
        height_scale: d.height_scale / 2.0,
        speed: d.speed / 2.0,
        radius: d.radius / 2.0,
        ..d
    };
    let hand = Snowball::new(by_hand).unwrap();
    let a = on_1_2_and_4_threads(&tiles(16, 700), &world, || island(64, 48), 7);
    let b = on_1_2_and_4_threads(&tiles(16, 700), &hand, || island(64, 48), 7);
    assert_eq!(a, b);
    assert!(a.1.eroded > 0.0);
}
