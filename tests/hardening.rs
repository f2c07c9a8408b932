//! Hardening: every simulator and post-process against anything a user can pass.
//!
//! Random maps from 1 x 1 to 128 x 128 (flat, spiky, huge and tiny finite
//! heights, cliffs, pits, terrain) with random valid params: no panic, no
//! non-finite output, sediment (and water) conserved, same seed same bits
//! (and, with the `parallel` feature, the same bits on 1 and 2 threads for the
//! tiled runs of every simulator).
//!
//! Each property runs 10 000 cases by default (about twenty seconds per feature
//! set, so about a minute over CI's three); `HARDENING_CASES` (or
//! `PROPTEST_CASES`) sets the count, e.g. for a long local soak:
//!
//! ```text
//! HARDENING_CASES=100000 cargo test --release --test hardening
//! ```

mod common;

use hydraulic_erosion::rand_core::SeedableRng;
use hydraulic_erosion::{
    BlurParams, Control, ErosionParams, Error, Grid, GridError, Heightmap, Hydrology, HydrologyParams,
    MassBalance, Physical, Snowball, SnowballParams, blur,
};
#[cfg(feature = "parallel")]
use hydraulic_erosion::{Parallel, ParallelParams};
use proptest::prelude::*;
use rand_xoshiro::Xoshiro256StarStar;

/// The kinds of terrain that break numerical code.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Flat,
    Spiky,
    Cliff,
    Pits,
    Terrain,
}

/// A random map: any size from 1 x 1 to 128 x 128 (thin ones included), any
/// kind, heights scaled from 1e-30 to 1e30 and shifted.
fn arb_map() -> impl Strategy<Value = Heightmap> {
    let side = prop_oneof![1usize..=4, 1usize..=40, 100usize..=128];
    let kind = prop_oneof![
        Just(Kind::Flat),
        Just(Kind::Spiky),
        Just(Kind::Cliff),
        Just(Kind::Pits),
        Just(Kind::Terrain)
    ];
    let scale = prop_oneof![Just(1.0f32), Just(1e-30f32), Just(1e-3f32), Just(1e3f32), Just(1e30f32)];
    (side.clone(), side, kind, scale, -1e3f32..1e3, any::<u64>()).prop_map(
        |(w, h, kind, scale, shift, seed)| {
            let mut state = seed;
            let mut noise = move || {
                state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                (state >> 40) as f32 / (1u64 << 24) as f32
            };
            let terrain = hydraulic_erosion::fbm_terrain(w, h, seed).unwrap();
            let shift = if scale > 1e20 { 0.0 } else { shift };
            Heightmap::from_fn(w, h, |x, y| {
                let base = match kind {
                    Kind::Flat => 0.5,
                    Kind::Spiky => noise(),
                    Kind::Cliff => {
                        if x * 2 < w {
                            1.0
                        } else {
                            0.0
                        }
                    }
                    Kind::Pits => {
                        if (x * 7 + y * 3) % 11 == 0 {
                            0.0
                        } else {
                            1.0
                        }
                    }
                    Kind::Terrain => terrain[(x, y)],
                };
                base * scale + shift
            })
            .unwrap()
        },
    )
}

fn cases() -> u32 {
    std::env::var("HARDENING_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| common::proptest_cases(10_000))
}

/// The balance of a run, accepting what `f32` cannot resolve on huge maps: at
/// heights of 1e30 one ulp is 1e23, far above `1e-9 * sum` of a small map.
fn balanced(before: &Heightmap, after: &Heightmap, outflow: f64) -> Result<(), TestCaseError> {
    let balance = MassBalance::new(before, after, outflow);
    prop_assert!(balance.is_conserved(), "{balance:?}");
    prop_assert!(common::all_finite(after));
    Ok(())
}

fn arb_physical() -> impl Strategy<Value = ErosionParams> {
    (
        0.05f32..=3.0,
        0.0f32..=1.0,
        0.0f32..=1.0,
        0.0f32..=0.5,
        0.001f32..=0.9,
        0.0f32..=1e4,
        0u32..=40,
        1u32..=2_000,
    )
        .prop_flat_map(|(dt, f, kd, ke, min_water, height_scale, droplets, max_steps)| {
            any::<bool>().prop_map(move |pit_safe| ErosionParams {
                dt,
                density: 1.0,
                friction: f / dt,
                deposition_rate: kd / dt,
                evaporation_rate: ke / dt,
                min_water,
                height_scale,
                droplets,
                max_steps,
                pit_safe,
            })
        })
        .prop_filter("valid", |p| p.validate().is_ok())
}

fn arb_snowball() -> impl Strategy<Value = SnowballParams> {
    (
        0.0f32..=1.0,
        0.0f32..=2.0,
        0.0f32..=1.0,
        0.01f32..=3.0,
        0.0f32..=1.0,
        0.0f32..=3.0,
        1u32..=200,
        0.0f32..=1.0,
    )
        .prop_flat_map(
            |(erosion_rate, deposition_rate, _, speed, friction, radius, max_iterations, scale)| {
                (0u32..=60, 0.01f32..=100.0, any::<bool>()).prop_map(move |(count, height_scale, blur)| {
                    SnowballParams {
                        drops_per_cell: 0.4,
                        snowballs: Some(count),
                        erosion_rate,
                        deposition_rate: deposition_rate.min(1.0),
                        speed,
                        friction,
                        radius,
                        max_iterations,
                        iteration_scale: scale,
                        height_scale,
                        blur,
                    }
                })
            },
        )
        .prop_filter("valid", |p| p.validate().is_ok())
}

fn arb_hydrology() -> impl Strategy<Value = HydrologyParams> {
    (
        0.1f32..=2.0,
        0.0f32..=1.0,
        0.0f32..=1.0,
        0.0f32..=0.05,
        0.001f32..=0.5,
        0.0f32..=100.0,
        0u32..=30,
        1u32..=20,
    )
        .prop_flat_map(|(dt, friction, kd, ke, min_volume, height_scale, particles, batch)| {
            (any::<bool>(), any::<bool>(), prop::option::of(-1.0f32..1.0), 1u32..=2_000).prop_map(
                move |(pit_safe, trees, sea_level, max_steps)| HydrologyParams {
                    dt,
                    friction: friction / dt,
                    deposition_rate: kd / dt,
                    evaporation_rate: ke / dt,
                    min_volume,
                    height_scale,
                    particles,
                    batch,
                    max_steps,
                    pit_safe,
                    trees,
                    sea_level,
                    ..HydrologyParams::default()
                },
            )
        })
        .prop_filter("valid", |p| p.validate().is_ok())
}

/// A rayon pool of 1 or 2 threads, built once per test binary.
#[cfg(feature = "parallel")]
fn pool(threads: usize) -> &'static rayon::ThreadPool {
    static POOLS: std::sync::OnceLock<[rayon::ThreadPool; 2]> = std::sync::OnceLock::new();
    let build = |n| rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap();
    &POOLS.get_or_init(|| [build(1), build(2)])[threads - 1]
}

/// Runs `run` on a copy of `map` on pools of 1 and 2 threads: the maps and
/// what `run` returns must agree; returns the eroded map and that.
#[cfg(feature = "parallel")]
fn same_on_1_and_2_threads<R: PartialEq + std::fmt::Debug>(
    map: &Heightmap,
    run: impl Fn(&rayon::ThreadPool, &mut Heightmap) -> R,
) -> Result<(Heightmap, R), TestCaseError> {
    let (mut a, mut b) = (map.clone(), map.clone());
    let (ra, rb) = (run(pool(1), &mut a), run(pool(2), &mut b));
    prop_assert_eq!(common::map_hash(&a), common::map_hash(&b));
    prop_assert_eq!(&ra, &rb);
    Ok((a, ra))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn physical_sequential_survives(map in arb_map(), p in arb_physical(), seed in any::<u64>()) {
        let physical = Physical::new(p).unwrap();
        let (mut a, mut b) = (map.clone(), map.clone());
        let report = physical.run_seeded(&mut a, seed).unwrap();
        physical.run_seeded(&mut b, seed).unwrap();
        prop_assert_eq!(common::map_hash(&a), common::map_hash(&b));
        balanced(&map, &a, report.outflow)?;
        prop_assert!(report.steps <= u64::from(p.droplets) * u64::from(p.max_steps));
    }

    #[test]
    fn physical_lockstep_survives(map in arb_map(), p in arb_physical(), seed in any::<u64>()) {
        let physical = Physical::new(p).unwrap();
        let (mut a, mut b) = (map.clone(), map.clone());
        let report = physical.run_lockstep(&mut a, &mut Xoshiro256StarStar::seed_from_u64(seed)).unwrap();
        physical.run_lockstep(&mut b, &mut Xoshiro256StarStar::seed_from_u64(seed)).unwrap();
        prop_assert_eq!(common::map_hash(&a), common::map_hash(&b));
        balanced(&map, &a, report.outflow)?;
    }

    #[test]
    fn snowball_survives(map in arb_map(), p in arb_snowball(), seed in any::<u64>()) {
        let snowball = Snowball::new(p).unwrap();
        let (mut a, mut b) = (map.clone(), map.clone());
        let report = snowball.run_seeded(&mut a, seed).unwrap();
        snowball.run_seeded(&mut b, seed).unwrap();
        prop_assert_eq!(common::map_hash(&a), common::map_hash(&b));
        balanced(&map, &a, report.outflow)?;
    }

    #[test]
    fn hydrology_survives(map in arb_map(), p in arb_hydrology(), seed in any::<u64>()) {
        let run = || {
            let mut after = map.clone();
            let mut h = Hydrology::new(p, map.width(), map.height()).unwrap();
            let report = h.run_seeded(&mut after, seed).unwrap();
            (after, h, report)
        };
        let (a, h, report) = run();
        let (b, _, _) = run();
        prop_assert_eq!(common::map_hash(&a), common::map_hash(&b));
        balanced(&map, &a, report.erosion.outflow)?;
        prop_assert!(report.is_water_balanced(), "{report:?}");
        for layer in [h.stream(), h.pool(), h.vegetation()] {
            prop_assert!(common::all_finite(layer));
        }
    }

    #[cfg(feature = "parallel")]
    #[test]
    fn tiled_hydrology_survives(map in arb_map(), p in arb_hydrology(), tile in 8u32..40, seed in any::<u64>()) {
        let parallel = Parallel::new(ParallelParams { tile_size: tile, ..ParallelParams::default() }).unwrap();
        let (a, (report, finite)) = same_on_1_and_2_threads(&map, |pool, after| {
            let mut h = Hydrology::new(p, map.width(), map.height()).unwrap();
            let report = pool.install(|| parallel.run_hydrology(&mut h, after, seed)).unwrap();
            (report, [h.stream(), h.pool(), h.vegetation()].map(common::all_finite))
        })?;
        balanced(&map, &a, report.erosion.outflow)?;
        prop_assert!(report.is_water_balanced(), "{report:?}");
        prop_assert_eq!(report.erosion.droplets, if map.width() < 3 || map.height() < 3 { 0 } else { u64::from(p.particles) });
        prop_assert_eq!(finite, [true; 3]);
    }

    #[cfg(feature = "parallel")]
    #[test]
    fn tiled_physical_survives(map in arb_map(), p in arb_physical(), tile in 8u32..40, sweep in 1u32..200, seed in any::<u64>()) {
        let parallel = Parallel::new(ParallelParams { tile_size: tile, sweep_size: sweep, ..ParallelParams::default() }).unwrap();
        let physical = Physical::new(p).unwrap();
        let (a, report) = same_on_1_and_2_threads(&map, |pool, after| {
            pool.install(|| parallel.run_physical(&physical, after, seed)).unwrap()
        })?;
        balanced(&map, &a, report.outflow)?;
    }

    #[cfg(feature = "parallel")]
    #[test]
    fn tiled_snowball_survives(map in arb_map(), p in arb_snowball(), tile in 8u32..40, sweep in 1u32..200, seed in any::<u64>()) {
        let parallel = Parallel::new(ParallelParams { tile_size: tile, sweep_size: sweep, ..ParallelParams::default() }).unwrap();
        let snowball = Snowball::new(p).unwrap();
        let (a, report) = same_on_1_and_2_threads(&map, |pool, after| {
            pool.install(|| parallel.run_snowball(&snowball, after, seed)).unwrap()
        })?;
        balanced(&map, &a, report.outflow)?;
        let expected = if map.width() < 3 || map.height() < 3 { 0 } else { p.count(map.width(), map.height()) };
        prop_assert_eq!(report.droplets, expected);
    }

    #[test]
    fn blur_survives(map in arb_map(), passes in 0u32..=4, amount in 0.0f32..=1.0) {
        let mut after = map.clone();
        blur(&mut after, &BlurParams { passes, amount }).unwrap();
        balanced(&map, &after, 0.0)?;
    }
}

/// The bad-input table of the README ("Bad input"), one row a case.
#[test]
fn bad_input_table() {
    // Sizes.
    assert!(matches!(Heightmap::new(0, 5), Err(GridError::Empty { .. })));
    assert!(matches!(Heightmap::new(5, 0), Err(GridError::Empty { .. })));
    assert!(matches!(Heightmap::new(usize::MAX, 2), Err(GridError::TooLarge { .. })));
    assert!(matches!(Heightmap::new(1 << 25, 1), Err(GridError::TooLarge { .. })));
    // Buffers.
    let mut short = [0.0f32; 11];
    assert!(matches!(Grid::from_cells(4, 3, &mut short[..]), Err(GridError::LengthMismatch { .. })));
    // Non-finite heights, for every simulator and the blur: typed error, map untouched.
    for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let mut map = Heightmap::filled(8, 8, 0.5).unwrap();
        map[(3, 4)] = bad;
        let copy = map.clone();
        let non_finite = |e: GridError| matches!(e, GridError::NonFinite { x: 3, y: 4 });
        assert!(non_finite(
            Physical::new(ErosionParams::default()).unwrap().run_seeded(&mut map, 1).unwrap_err()
        ));
        let mut rng = Xoshiro256StarStar::seed_from_u64(1);
        let lockstep = Physical::new(ErosionParams::default()).unwrap().run_lockstep(&mut map, &mut rng);
        assert!(non_finite(lockstep.unwrap_err()));
        assert!(non_finite(
            Snowball::new(SnowballParams::default()).unwrap().run_seeded(&mut map, 1).unwrap_err()
        ));
        let mut h = Hydrology::new(HydrologyParams::default(), 8, 8).unwrap();
        assert!(non_finite(h.run_seeded(&mut map, 1).unwrap_err()));
        assert!(matches!(
            blur(&mut map, &BlurParams::default()),
            Err(Error::Grid(GridError::NonFinite { .. }))
        ));
        assert_eq!(common::map_hash(&map), common::map_hash(&copy));
    }
    // A map of another size than the Hydrology's layers.
    let mut map = Heightmap::filled(8, 8, 0.5).unwrap();
    let mut h = Hydrology::new(HydrologyParams::default(), 9, 8).unwrap();
    assert!(matches!(h.run_seeded(&mut map, 1), Err(GridError::SizeMismatch { .. })));
    // Params: NaN, infinite, negative, zero, absurd; a step limit of zero.
    let physical_rows: [(ErosionParams, &str); 7] = [
        (ErosionParams { dt: f32::NAN, ..Default::default() }, "dt"),
        (ErosionParams { dt: 0.0, ..Default::default() }, "dt"),
        (ErosionParams { density: f32::INFINITY, ..Default::default() }, "density"),
        (ErosionParams { friction: -0.1, ..Default::default() }, "friction"),
        (ErosionParams { min_water: 0.0, ..Default::default() }, "min_water"),
        (ErosionParams { height_scale: 1e30, ..Default::default() }, "height_scale"),
        (ErosionParams { max_steps: 0, ..Default::default() }, "max_steps"),
    ];
    for (p, field) in physical_rows {
        let e = Physical::new(p).unwrap_err();
        assert_eq!(e.field(), field, "{e}");
        assert!(!e.allowed().is_empty());
    }
    let snowball_rows: [(SnowballParams, &str); 4] = [
        (SnowballParams { speed: f32::NAN, ..Default::default() }, "speed"),
        (SnowballParams { friction: 2.0, ..Default::default() }, "friction"),
        (SnowballParams { radius: -1.0, ..Default::default() }, "radius"),
        (SnowballParams { max_iterations: 0, ..Default::default() }, "max_iterations"),
    ];
    for (p, field) in snowball_rows {
        assert_eq!(Snowball::new(p).unwrap_err().field(), field);
    }
    let hydrology_rows: [(HydrologyParams, &str); 4] = [
        (HydrologyParams { dt: f32::INFINITY, ..Default::default() }, "dt"),
        (HydrologyParams { volume_factor: 0.0, ..Default::default() }, "volume_factor"),
        (HydrologyParams { batch: 0, ..Default::default() }, "batch"),
        (HydrologyParams { max_steps: 0, ..Default::default() }, "max_steps"),
    ];
    for (p, field) in hydrology_rows {
        let e = Hydrology::new(p, 8, 8).unwrap_err();
        assert!(matches!(&e, Error::Param(pe) if pe.field() == field), "{e}");
    }
    assert!(matches!(blur(&mut map, &BlurParams { passes: 1, amount: f32::NAN }), Err(Error::Param(_))));
}

/// Zero droplets do nothing; tiny and thin maps erode to themselves or stay
/// balanced.
#[test]
fn zero_droplets_and_small_maps() {
    for (w, h) in [(1, 1), (2, 2), (3, 3), (1, 50), (50, 1), (2, 40)] {
        let map = hydraulic_erosion::fbm_terrain(w, h, 3).unwrap();
        let mut after = map.clone();
        let p = ErosionParams { droplets: 0, ..Default::default() };
        assert_eq!(Physical::new(p).unwrap().run_seeded(&mut after, 1).unwrap().droplets, 0);
        assert_eq!(after, map);
        let p = ErosionParams { droplets: 500, ..Default::default() };
        let report = Physical::new(p).unwrap().run_seeded(&mut after, 1).unwrap();
        if w < 3 || h < 3 {
            assert_eq!((report.droplets, &after), (0, &map));
        }
        assert!(MassBalance::new(&map, &after, report.outflow).is_conserved());
    }
}

/// `u32::MAX` droplets are accepted, and a progress callback stops the run
/// promptly with the books balanced, for every simulator.
#[test]
fn u32_max_droplets_are_cancellable() {
    let map = hydraulic_erosion::fbm_terrain(32, 32, 1).unwrap();
    let mut stop_soon = |done: u64, total: u64| {
        assert_eq!(total, u64::from(u32::MAX));
        if done >= 1_000 { Control::Stop } else { Control::Continue }
    };
    let physical = Physical::new(ErosionParams { droplets: u32::MAX, ..Default::default() }).unwrap();
    let mut after = map.clone();
    let mut rng = Xoshiro256StarStar::seed_from_u64(1);
    let report = physical.run_with_progress(&mut after, &mut rng, &mut stop_soon).unwrap();
    assert!(report.cancelled && report.droplets < 2_000);
    assert!(MassBalance::new(&map, &after, report.outflow).is_conserved());

    let mut after = map.clone();
    let report = physical.run_lockstep_with_progress(&mut after, &mut rng, &mut stop_soon).unwrap();
    assert!(report.cancelled && report.droplets < 2_000);
    assert!(MassBalance::new(&map, &after, report.outflow).is_conserved());

    let snowball = Snowball::new(SnowballParams { snowballs: Some(u32::MAX), ..Default::default() }).unwrap();
    let mut after = map.clone();
    let report = snowball.run_with_progress(&mut after, &mut rng, &mut stop_soon).unwrap();
    assert!(report.cancelled && report.droplets < 2_000);
    assert!(MassBalance::new(&map, &after, report.outflow).is_conserved());

    let mut hydrology =
        Hydrology::new(HydrologyParams { particles: u32::MAX, ..Default::default() }, 32, 32).unwrap();
    let mut after = map.clone();
    let report = hydrology.run_with_progress(&mut after, &mut rng, &mut stop_soon).unwrap();
    assert!(report.erosion.cancelled && report.erosion.droplets < 2_000);
    assert!(MassBalance::new(&map, &after, report.erosion.outflow).is_conserved());
    assert!(report.is_water_balanced());
}

/// The types users share across threads are `Send` and `Sync`.
#[test]
fn public_types_are_send_and_sync() {
    fn both<T: Send + Sync>() {}
    both::<Heightmap>();
    both::<Grid<&mut [f32]>>();
    both::<Grid<&[f32]>>();
    both::<ErosionParams>();
    both::<SnowballParams>();
    both::<HydrologyParams>();
    both::<BlurParams>();
    both::<Physical>();
    both::<Physical<hydraulic_erosion::Sampler>>();
    both::<Snowball>();
    both::<Hydrology>();
    both::<hydraulic_erosion::ErosionReport>();
    both::<hydraulic_erosion::HydrologyReport>();
    both::<MassBalance>();
    both::<Error>();
    both::<GridError>();
    both::<hydraulic_erosion::ParamError>();
    both::<hydraulic_erosion::IoError>();
    both::<hydraulic_erosion::Hillshade>();
    both::<hydraulic_erosion::RgbImage>();
}
