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
//! HARDENING_CASES=100000 cargo test --release --all-features --test integration hardening::
//! ```

use crate::common;

use hydraulic_erosion::rand_core::SeedableRng;
use hydraulic_erosion::{
    BaseSampler, BlurParams, Channels, Control, Drain, ErosionParams, ErosionReport, Error, Grid, GridError,
    Heightmap, Hydrology, HydrologyParams, MassBalance, Offset, Physical, Sampler, Snowball, SnowballParams,
    blur,
};
#[cfg(feature = "parallel")]
use hydraulic_erosion::{Layout, Parallel, ParallelParams};
use hydraulic_erosion::{Mode, RunOptions, Simulator};
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

/// The balance of a run against an exact sum of both maps, within the crate's
/// stated bound (relative to the mass held or moved, or the map's resolution:
/// at heights of 1e30 one ulp is 1e23), and every cell finite.
fn balanced(before: &Heightmap, after: &Heightmap, report: &ErosionReport) -> Result<(), TestCaseError> {
    let balance = MassBalance::of_run(before, after, report);
    prop_assert!(balance.is_conserved(), "{balance:?} {report:?}");
    prop_assert!(common::all_finite(after));
    Ok(())
}

/// A value of a documented range `[lo, hi]` (`(lo, hi]` when `open_low`), drawn
/// so every part of it is reached: both endpoints (the smallest value above an
/// open end: a subnormal above 0), magnitudes log-uniform across the whole range
/// (1e-38 to `hi` above 0), and uniform draws.
fn ranged(lo: f32, hi: f32, open_low: bool) -> BoxedStrategy<f32> {
    let low_end = if open_low { next_up(lo) } else { lo };
    let tiny = low_end.max(1e-38);
    let (log_lo, log_hi) = (f64::from(tiny).log10(), f64::from(hi).log10());
    let log = (log_lo..=log_hi).prop_map(move |e| (10f64.powf(e) as f32).clamp(low_end, hi));
    let uniform = (low_end..=hi).boxed();
    prop_oneof![1 => Just(low_end), 1 => Just(hi), 3 => log, 3 => uniform].boxed()
}

/// The next `f32` above `v` (finite, non-negative).
fn next_up(v: f32) -> f32 {
    if v == 0.0 { f32::from_bits(1) } else { f32::from_bits(v.to_bits() + 1) }
}

/// A rate of a documented range `[0, 1/dt]`: a fraction of `1/dt` from the whole
/// of `[0, 1]`, stepped down where `rate * dt` rounds above 1.
fn rate_for(dt: f32, fraction: f32) -> f32 {
    let mut rate = fraction / dt;
    while rate * dt > 1.0 {
        rate = f32::from_bits(rate.to_bits() - 1);
    }
    rate
}

/// A step limit from the whole of `[1, 1 000 000]`: the endpoints and
/// log-uniform counts.
fn step_limit() -> BoxedStrategy<u32> {
    prop_oneof![1 => Just(1u32), 1 => Just(1_000_000u32), 4 => (0.0f64..=6.0).prop_map(|e| 10f64.powf(e) as u32)]
        .boxed()
}

/// Droplets for a case: up to 40, fewer when each may take many steps, so a case
/// stays within about 200 000 steps.
fn droplet_budget(droplets: u32, max_steps: u32) -> u32 {
    droplets.min(200_000 / max_steps)
}

fn arb_physical() -> impl Strategy<Value = ErosionParams> {
    (
        ranged(0.0, 10.0, true),
        ranged(0.0, 1000.0, true),
        [ranged(0.0, 1.0, false), ranged(0.0, 1.0, false), ranged(0.0, 1.0, false)],
        ranged(0.0, 1.0, true),
        ranged(0.0, 1e6, false),
        0u32..=40,
        step_limit(),
        any::<bool>(),
        prop::option::of(arb_channels()),
    )
        .prop_map(
            |(
                dt,
                density,
                [f, kd, ke],
                min_water,
                height_scale,
                droplets,
                max_steps,
                pit_safe,
                mut channels,
            )| {
                // A landscape step's rates are per `cell_size` and its step
                // limit counts unit lengths: keep both in range per cell.
                let mut length = 1.0f32;
                if let Some(c) = channels.as_mut() {
                    while f64::from(max_steps) / f64::from(c.cell_size) > 1e6 {
                        c.cell_size = f32::from_bits(c.cell_size.to_bits() + 1).max(c.cell_size * 1.5);
                    }
                    length = c.cell_size;
                }
                let dt_per_cell = dt * length.max(1.0);
                let cell_steps = (f64::from(max_steps) / f64::from(length)).round().max(1.0) as u32;
                ErosionParams {
                    dt,
                    density,
                    friction: rate_for(dt_per_cell, f),
                    deposition_rate: rate_for(dt_per_cell, kd),
                    evaporation_rate: rate_for(dt_per_cell, ke),
                    min_water,
                    height_scale,
                    // Within budget either way (some tests drop the channels),
                    // landscape steps at a quarter of it: they cost more and, at
                    // small cell sizes, few droplets evaporate early.
                    droplets: droplet_budget(
                        droplets,
                        cell_steps.max(max_steps).saturating_mul(if channels.is_some() { 4 } else { 1 }),
                    ),
                    max_steps,
                    pit_safe,
                    channels,
                }
            },
        )
}

/// The landscape kernel's mechanisms over their whole documented ranges.
fn arb_channels() -> impl Strategy<Value = Channels> {
    (
        [
            ranged(0.0, 1e6, false),
            ranged(0.0, 1000.0, false),
            ranged(0.0, 1e30, true),
            ranged(0.0, 1e15, true),
        ],
        [ranged(0.0, 1.0, true), ranged(0.0, 1.0, false), ranged(0.0, 100.0, false), ranged(0.0, 8.0, false)],
        prop_oneof![1u32..=10, Just(Channels::MAX_REFRESH), Just(2048)],
        (ranged(0.0, 1e30, true), ranged(0.0, 1.0, false)),
        prop::option::of(prop_oneof![-2.0f32..2.0, Just(f32::MAX), Just(f32::MIN)]),
        // Extra rain up to half the run's droplets again (a case stays near
        // its budget of steps, see `droplet_budget`; the range's top, 1e6
        // times, would run for hours); rounds over the whole range.
        prop::option::of(
            (
                ranged(0.0, 1.0, false),
                ranged(0.01, 1e6, false),
                ranged(0.0, 0.5, false),
                ranged(0.0, 1.0, false),
            )
                .prop_map(|(closed, round, most, basin)| Drain { closed, round, most, basin }),
        ),
    )
        .prop_map(
            |(
                [capacity, discharge_gain, channel_area, cell_size],
                [discharge_rate, channel_relief, momentum, brush_radius],
                refresh,
                (river_area, stride),
                sea_level,
                drain,
            )| Channels {
                capacity,
                discharge_gain,
                channel_area,
                river_area,
                cell_size,
                discharge_rate,
                refresh,
                channel_relief,
                momentum,
                stride,
                brush_radius,
                settle_pits: refresh % 2 == 0,
                sea_level,
                drain,
            },
        )
}

fn arb_snowball() -> impl Strategy<Value = SnowballParams> {
    (
        [
            ranged(0.0, 1000.0, false),
            ranged(0.0, 1e6, false),
            ranged(0.0, 1.0, false),
            ranged(0.0, 1000.0, true),
        ],
        [ranged(0.0, 1.0, false), ranged(0.0, 1e6, false), ranged(0.0, 1.0, false), ranged(0.0, 1e6, true)],
        (prop::option::of(0u32..=60), step_limit(), any::<bool>(), ranged(0.0, 1e6, true)),
    )
        .prop_map(
            |(
                [drops_per_cell, erosion_rate, deposition_rate, speed],
                [friction, radius, iteration_scale, height_scale],
                (snowballs, max_iterations, blur, cell_size),
            )| SnowballParams {
                drops_per_cell,
                snowballs: snowballs.map(|n| droplet_budget(n, max_iterations)),
                erosion_rate,
                deposition_rate,
                speed,
                friction,
                radius,
                max_iterations,
                iteration_scale,
                height_scale,
                blur,
                cell_size,
            },
        )
        // A cell size whose lengths in cells leave their ranges is refused
        // (tested in tests/snowball.rs); those runs take cells of 1.
        .prop_map(|p| if p.validate().is_ok() { p } else { SnowballParams { cell_size: 1.0, ..p } })
}

/// Snowball params whose count on a `width` x `height` map stays within the
/// case's budget (`drops_per_cell` reaches 1000 a cell).
fn snowball_for(p: SnowballParams, width: usize, height: usize) -> SnowballParams {
    let budget = u64::from(droplet_budget(40, p.max_iterations));
    if p.count(width, height) > budget { SnowballParams { snowballs: Some(budget as u32), ..p } } else { p }
}

fn arb_hydrology() -> impl Strategy<Value = HydrologyParams> {
    (
        [ranged(0.0, 10.0, true), ranged(0.0, 1000.0, true), ranged(0.0, 1.0, true), ranged(0.0, 1e6, false)],
        [ranged(0.0, 1.0, false), ranged(0.0, 1.0, false), ranged(0.0, 1.0, false)],
        [ranged(0.0, 1.0, false), ranged(1e-3, 1e9, false), ranged(0.0, 1.0, false), ranged(0.0, 1.0, true)],
        [ranged(0.0, 1e6, false), ranged(0.0, 1e6, false), ranged(0.0, 1000.0, false)],
        (0u32..=30, prop_oneof![1u32..=20, Just(u32::MAX)], step_limit()),
        (prop_oneof![1u32..=10, Just(1000u32)], prop_oneof![1u32..=10, Just(1000u32)]),
        (
            any::<bool>(),
            any::<bool>(),
            prop::option::of(prop_oneof![-2.0f32..2.0, ranged(0.0, 1e30, false)]),
            any::<bool>(),
            any::<bool>(),
        ),
        (
            any::<bool>(),
            any::<bool>(),
            [ranged(1e-3, 1e9, false), ranged(0.0, 1e6, false), ranged(0.0, 100.0, false)],
            prop_oneof![Just(1.0f32), 0.5f32..4.0],
        ),
    )
        .prop_map(
            |(
                [dt, density, min_volume, height_scale],
                [f, kd, ke],
                [lrate, volume_factor, drainage, approach],
                [stall_stream, stall_acceleration, entrainment],
                (particles, batch, max_steps),
                (max_fails, spill),
                (pit_safe, trees, sea_level, exact_flood, sea_deltas),
                (stall_in_pits, open_border, [channel_area, outlet_erosion, spill_speed], cell_size),
            )| HydrologyParams {
                dt,
                density,
                friction: rate_for(dt, f),
                deposition_rate: rate_for(dt, kd),
                evaporation_rate: rate_for(dt, ke),
                min_volume,
                height_scale,
                // Each spill can take a whole step budget again.
                particles: droplet_budget(particles, max_steps.saturating_mul(spill.min(20))),
                batch,
                lrate,
                volume_factor,
                drainage,
                exact_flood,
                approach,
                max_fails,
                spill,
                max_steps,
                stall_stream,
                stall_acceleration,
                stall_in_pits,
                entrainment,
                channel_area,
                outlet_erosion,
                spill_speed,
                pit_safe,
                trees,
                open_border,
                sea_level,
                sea_deltas,
                settle_pits: batch % 2 == 0,
                cell_size,
            },
        )
        // A cell size whose params in cells leave their ranges (a rate times
        // `dt * cell_size` above 1) is drawn as 1.
        .prop_map(|p| if p.validate().is_ok() { p } else { HydrologyParams { cell_size: 1.0, ..p } })
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

/// A built-in sampler, any of them (Offset with any radius of its range).
fn arb_sampler() -> impl Strategy<Value = Sampler> {
    prop_oneof![
        Just(Sampler::EightFacet),
        Just(Sampler::CentralDifference),
        (ranged(0.0, 1e6, false), any::<bool>()).prop_map(|(radius, facet)| {
            let base = if facet { BaseSampler::EightFacet } else { BaseSampler::CentralDifference };
            Sampler::Offset(Offset::new(base, radius).unwrap())
        }),
    ]
}

/// Parallel params over their whole ranges: both layouts, both inner modes,
/// tiles from 8 cells to larger than any map.
#[cfg(feature = "parallel")]
fn arb_parallel() -> impl Strategy<Value = (Parallel, Mode)> {
    (
        prop_oneof![Just(Layout::Tiles), Just(Layout::Batches)],
        prop_oneof![Just(Mode::Sequential), Just(Mode::Lockstep)],
        prop_oneof![4 => 8u32..40, 1 => Just(1u32 << 24)],
        prop_oneof![4 => 1u32..200, 1 => Just(1u32 << 24)],
        prop_oneof![4 => 1u32..64, 1 => Just(1u32 << 24)],
        1u32..=2,
    )
        .prop_map(|(layout, mode, tile_size, sweep_size, batch_size, batches_per_round)| {
            let params = ParallelParams { layout, tile_size, sweep_size, batch_size, batches_per_round };
            (Parallel::new(params).unwrap(), mode)
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn physical_sequential_survives(map in arb_map(), p in arb_physical(), sampler in arb_sampler(), seed in any::<u64>()) {
        let mut physical = Physical::with_sampler(p, sampler).unwrap();
        let (mut a, mut b) = (map.clone(), map.clone());
        let run = |physical: &mut Physical<Sampler>, m: &mut Heightmap| {
            let sequential = RunOptions::default().with_mode(Mode::Sequential);
            physical.run_with(m.view_mut(), &mut Xoshiro256StarStar::seed_from_u64(seed), sequential).unwrap()
        };
        let report = run(&mut physical, &mut a);
        run(&mut physical, &mut b);
        prop_assert_eq!(common::map_hash(&a), common::map_hash(&b));
        balanced(&map, &a, &report)?;
        // A landscape step crosses one cell, `cell_size` of the limit's unit lengths.
        let length = p.channels.map_or(1.0, |c| f64::from(c.cell_size));
        let cell_steps = (f64::from(p.max_steps) / length).round().max(1.0) as u64;
        // Rain in rounds adds at most `most` times the run's droplets.
        let extra = p.channels.and_then(|c| c.drain).map_or(0, |d| (f64::from(d.most) * f64::from(p.droplets) + 0.5) as u64);
        prop_assert!(report.droplets <= u64::from(p.droplets) + extra);
        prop_assert!(report.steps <= report.droplets * cell_steps);
    }

    /// Lockstep with every sampler: the 8-facet SIMD lanes and the others'
    /// lane-by-lane normals.
    #[test]
    fn physical_lockstep_survives(map in arb_map(), p in arb_physical(), sampler in arb_sampler(), seed in any::<u64>()) {
        let mut physical = Physical::with_sampler(p, sampler).unwrap();
        let (mut a, mut b) = (map.clone(), map.clone());
        let report = physical.run_with(a.view_mut(), &mut Xoshiro256StarStar::seed_from_u64(seed), RunOptions::default().with_mode(Mode::Lockstep)).unwrap();
        physical.run_with(b.view_mut(), &mut Xoshiro256StarStar::seed_from_u64(seed), RunOptions::default().with_mode(Mode::Lockstep)).unwrap();
        prop_assert_eq!(common::map_hash(&a), common::map_hash(&b));
        balanced(&map, &a, &report)?;
    }

    #[test]
    fn snowball_survives(map in arb_map(), p in arb_snowball(), seed in any::<u64>()) {
        let p = snowball_for(p, map.width(), map.height());
        let mut snowball = Snowball::new(p).unwrap();
        let (mut a, mut b) = (map.clone(), map.clone());
        let report = snowball.run_seeded(&mut a, seed).unwrap();
        snowball.run_seeded(&mut b, seed).unwrap();
        prop_assert_eq!(common::map_hash(&a), common::map_hash(&b));
        balanced(&map, &a, &report)?;
        if report.droplets == 0 {
            prop_assert_eq!(&a, &map);
        }
    }

    /// Two runs on the kept layers (the second resumes the first's stream, pool
    /// and trees), each balanced.
    #[test]
    fn hydrology_survives(map in arb_map(), p in arb_hydrology(), seed in any::<u64>()) {
        let run = || {
            let mut h = Hydrology::new(p, map.width(), map.height()).unwrap();
            let mut after = map.clone();
            let first = h.run_seeded(&mut after, seed).unwrap();
            let middle = after.clone();
            let second = h.run_seeded(&mut after, seed ^ 1).unwrap();
            (middle, after, h, first, second)
        };
        let (middle, a, h, first, second) = run();
        let (_, b, _, _, _) = run();
        prop_assert_eq!(common::map_hash(&a), common::map_hash(&b));
        balanced(&map, &middle, &first.erosion)?;
        balanced(&middle, &a, &second.erosion)?;
        prop_assert!(first.is_water_balanced(), "{first:?}");
        prop_assert!(second.is_water_balanced(), "{second:?}");
        for layer in [h.stream(), h.pool(), h.vegetation()] {
            prop_assert!(common::all_finite(layer));
        }
    }

    #[cfg(feature = "parallel")]
    #[test]
    fn tiled_hydrology_survives(map in arb_map(), p in arb_hydrology(), (parallel, mode) in arb_parallel(), seed in any::<u64>()) {
        let (a, (report, finite)) = same_on_1_and_2_threads(&map, |pool, after| {
            let mut h = Hydrology::new(p, map.width(), map.height()).unwrap();
            let report = pool.install(|| parallel.run_with(&mut h, after.view_mut(), &mut Xoshiro256StarStar::seed_from_u64(seed), RunOptions::default().with_mode(mode))).unwrap();
            (report, [h.stream(), h.pool(), h.vegetation()].map(common::all_finite))
        })?;
        balanced(&map, &a, &report.erosion)?;
        prop_assert!(report.is_water_balanced(), "{report:?}");
        prop_assert_eq!(report.erosion.droplets, if map.width() < 3 || map.height() < 3 { 0 } else { u64::from(p.particles) });
        prop_assert_eq!(finite, [true; 3]);
    }

    #[cfg(feature = "parallel")]
    #[test]
    fn parallel_physical_survives(map in arb_map(), p in arb_physical(), (parallel, mode) in arb_parallel(), seed in any::<u64>()) {
        // The landscape kernel runs in tiles, without the momentum map (a
        // Parallel run refuses the rest: `parallel_landscape_refusals`).
        let channels = p.channels.filter(|_| parallel.params().layout == Layout::Tiles);
        let channels = channels.map(|c| Channels { momentum: 0.0, ..c });
        let physical = Physical::new(ErosionParams { channels, ..p }).unwrap();
        let (a, report) = same_on_1_and_2_threads(&map, |pool, after| {
            pool.install(|| parallel.run_with(&mut physical.clone(), after.view_mut(), &mut Xoshiro256StarStar::seed_from_u64(seed), RunOptions::default().with_mode(mode))).unwrap()
        })?;
        balanced(&map, &a, &report)?;
    }

    #[cfg(feature = "parallel")]
    #[test]
    fn parallel_snowball_survives(map in arb_map(), p in arb_snowball(), (parallel, mode) in arb_parallel(), seed in any::<u64>()) {
        let p = snowball_for(p, map.width(), map.height());
        let snowball = Snowball::new(p).unwrap();
        let (a, report) = same_on_1_and_2_threads(&map, |pool, after| {
            pool.install(|| parallel.run_with(&mut snowball.clone(), after.view_mut(), &mut Xoshiro256StarStar::seed_from_u64(seed), RunOptions::default().with_mode(mode))).unwrap()
        })?;
        balanced(&map, &a, &report)?;
        let expected = if map.width() < 3 || map.height() < 3 { 0 } else { p.count(map.width(), map.height()) };
        prop_assert_eq!(report.droplets, expected);
    }

    #[test]
    fn blur_survives(map in arb_map(), passes in prop_oneof![0u32..=4, Just(1000u32)], amount in ranged(0.0, 1.0, false)) {
        let mut after = map.clone();
        let passes = if passes > 4 && map.len() > 64 { 4 } else { passes };
        blur(&mut after, &BlurParams { passes, amount }).unwrap();
        balanced(&map, &after, &ErosionReport::default())?;
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
        let non_finite = |e: Error| matches!(e, Error::Grid(GridError::NonFinite { x: 3, y: 4 }));
        assert!(non_finite(
            Physical::new(ErosionParams::default()).unwrap().run_seeded(&mut map, 1).unwrap_err()
        ));
        let mut rng = Xoshiro256StarStar::seed_from_u64(1);
        let lockstep = Physical::new(ErosionParams::default()).unwrap().run_with(
            map.view_mut(),
            &mut rng,
            RunOptions::default().with_mode(Mode::Lockstep),
        );
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
    assert!(matches!(h.run_seeded(&mut map, 1), Err(Error::Grid(GridError::SizeMismatch { .. }))));
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
    let mut physical = Physical::new(ErosionParams { droplets: u32::MAX, ..Default::default() }).unwrap();
    let mut after = map.clone();
    let mut rng = Xoshiro256StarStar::seed_from_u64(1);
    let report = physical
        .run_with(
            after.view_mut(),
            &mut rng,
            RunOptions::default().with_mode(Mode::Sequential).with_progress(&mut stop_soon),
        )
        .unwrap();
    assert!(report.cancelled && report.droplets < 2_000);
    assert!(MassBalance::new(&map, &after, report.outflow).is_conserved());

    let mut after = map.clone();
    let report = physical
        .run_with(
            after.view_mut(),
            &mut rng,
            RunOptions::default().with_mode(Mode::Lockstep).with_progress(&mut stop_soon),
        )
        .unwrap();
    assert!(report.cancelled && report.droplets < 2_000);
    assert!(MassBalance::new(&map, &after, report.outflow).is_conserved());

    let mut snowball =
        Snowball::new(SnowballParams { snowballs: Some(u32::MAX), ..Default::default() }).unwrap();
    let mut after = map.clone();
    let report = snowball
        .run_with(
            after.view_mut(),
            &mut rng,
            RunOptions::default().with_mode(Mode::Sequential).with_progress(&mut stop_soon),
        )
        .unwrap();
    assert!(report.cancelled && report.droplets < 2_000);
    assert!(MassBalance::new(&map, &after, report.outflow).is_conserved());

    let mut hydrology =
        Hydrology::new(HydrologyParams { particles: u32::MAX, ..Default::default() }, 32, 32).unwrap();
    let mut after = map.clone();
    let report = hydrology
        .run_with(
            after.view_mut(),
            &mut rng,
            RunOptions::default().with_mode(Mode::Sequential).with_progress(&mut stop_soon),
        )
        .unwrap();
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
