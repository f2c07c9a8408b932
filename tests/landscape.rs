//! The landscape preset ([`ErosionParams::landscape`], [`Channels`]): mass
//! balance and determinism in every mode, each mechanism's switch, typed
//! errors for out-of-range fields, and what it does to a terrain.

use hydraulic_erosion::analysis::count_pits;
use hydraulic_erosion::rand_core::SeedableRng;
use hydraulic_erosion::{
    Channels, Drain, ErosionParams, Fate, Heightmap, MassBalance, Mode, Physical, RunOptions, Simulator,
    fbm_terrain,
};
use rand_xoshiro::Xoshiro256StarStar;

use crate::common;
use common::{bits_times, scaled};

const MODES: [Mode; 3] = [Mode::Sequential, Mode::Lockstep, Mode::Fast];

fn run(
    params: ErosionParams,
    map: &mut Heightmap,
    seed: u64,
    mode: Mode,
) -> hydraulic_erosion::ErosionReport {
    let mut physical = Physical::new(params).unwrap();
    let mut rng = Xoshiro256StarStar::seed_from_u64(seed);
    physical.run_with(map.view_mut(), &mut rng, RunOptions::default().with_mode(mode)).unwrap()
}

fn preset(droplets: u32) -> ErosionParams {
    ErosionParams { droplets, ..ErosionParams::landscape() }
}

#[test]
fn landscape_runs_balance_in_every_mode() {
    for mode in MODES {
        for seed in 1..4 {
            let before = fbm_terrain(96, 80, seed).unwrap();
            let mut map = before.clone();
            let report = run(preset(20_000), &mut map, seed, mode);
            let balance = MassBalance::of_run(&before, &map, &report);
            assert!(balance.is_conserved(), "{mode:?} seed {seed}: {balance:?}");
            assert!(report.eroded > 1.0, "{mode:?}: the preset erodes ({})", report.eroded);
            assert_eq!(report.droplets, 20_000);
            assert!(map.cells().iter().all(|h| h.is_finite()));
        }
    }
}

#[test]
fn landscape_runs_are_deterministic_in_every_mode() {
    let before = fbm_terrain(64, 64, 7).unwrap();
    let mut outputs = Vec::new();
    for mode in MODES {
        let (mut a, mut b) = (before.clone(), before.clone());
        run(preset(8_000), &mut a, 3, mode);
        run(preset(8_000), &mut b, 3, mode);
        assert_eq!(a.cells(), b.cells(), "{mode:?}: same seed, same bits");
        let mut c = before.clone();
        run(preset(8_000), &mut c, 4, mode);
        assert_ne!(a.cells(), c.cells(), "{mode:?}: another seed, other droplets");
        outputs.push(a);
    }
    // Three orders of the droplets: one after another, interleaved, in tiles.
    assert_ne!(outputs[0].cells(), outputs[1].cells());
    assert_ne!(outputs[0].cells(), outputs[2].cells());
    assert_ne!(outputs[1].cells(), outputs[2].cells());
}

/// `Mode::Fast` runs the landscape kernel in `ParallelParams::default()`'s tiles on
/// the calling thread: the bits of a `Parallel` run on any number of threads.
#[test]
fn the_world_preset_spans_one_world_at_every_size() {
    let world = ErosionParams::landscape_world;
    let cell = |w, h| world(w, h).channels.unwrap().cell_size;
    // The longer side spans 512 unit lengths.
    assert_eq!((cell(256, 256), cell(512, 512), cell(1024, 1024)), (2.0, 1.0, 0.5));
    assert_eq!((cell(512, 2048), cell(2048, 100)), (0.25, 0.25));
    // Below 64 cells a side, cells of 8 unit lengths (near the coarsest the
    // rates allow, 8.3: 61 cells would pass it); above 2^19, the cells of 2^19.
    assert_eq!((cell(64, 64), cell(63, 1), cell(1, 1), cell(0, 0)), (8.0, 8.0, 8.0, 8.0));
    assert_eq!(cell(hydraulic_erosion::MAX_SIDE, 1), 1.0 / 1024.0);
    let steps_too_many = ErosionParams {
        channels: Some(Channels {
            cell_size: 512.0 / hydraulic_erosion::MAX_SIDE as f32,
            ..Channels::default()
        }),
        ..world(1, 1)
    };
    assert!(steps_too_many.validate().is_err(), "the clamp is needed at the top");
    let too_coarse = ErosionParams {
        channels: Some(Channels { cell_size: 512.0 / 61.0, ..Channels::default() }),
        ..world(1, 1)
    };
    assert!(too_coarse.validate().is_err(), "and at the bottom");
    for side in [0, 1, 2, 31, 63, 64, 65, 100, 256, 777, 1024, 4096, 1 << 19, hydraulic_erosion::MAX_SIDE] {
        assert!(world(side, side).validate().is_ok(), "{side}");
        assert!(world(side, 1).validate().is_ok(), "{side} x 1");
    }
    // The rest is the sized preset's (rounds and all), with the longer life.
    let (p, sized) = (world(300, 200), ErosionParams::landscape_for(300, 200));
    assert_eq!(p.max_steps, ErosionParams::LANDSCAPE_WORLD_MAX_STEPS);
    assert_eq!(sized.channels.unwrap().drain, Some(Drain::default()));
    assert_eq!(p.channels, sized.channels.map(|c| Channels { cell_size: 512.0 / 300.0, ..c }));
    assert_eq!(ErosionParams { max_steps: sized.max_steps, channels: sized.channels, ..p }, sized);
    // A run balances and repeats its bits, rounds and all.
    let before = fbm_terrain(64, 64, 5).unwrap();
    let params = ErosionParams { droplets: 1_024, ..world(64, 64) };
    let (mut a, mut b) = (before.clone(), before.clone());
    let report = run(params, &mut a, 3, Mode::Fast);
    assert!(MassBalance::of_run(&before, &a, &report).is_conserved());
    assert_eq!(run(params, &mut b, 3, Mode::Fast), report);
    assert!(report.droplets > 1_024, "the rounds ran: {}", report.droplets);
    assert_eq!(bits_times(&a, 1.0), bits_times(&b, 1.0));
}

/// Rain in rounds ends once a round's droplets take no step: on a 3 x 3 map
/// with a pit in the middle every droplet ends where it starts, so the first
/// rain and one round are all, whatever the budget (with `most` at its
/// largest, 10^6 runs, it rained 10^8 droplets that changed nothing).
#[test]
fn rounds_without_a_step_end_the_rain() {
    let before = Heightmap::from_fn(3, 3, |x, y| if (x, y) == (1, 1) { 0.0 } else { 1.0 }).unwrap();
    let mut params = ErosionParams { droplets: 150, ..ErosionParams::landscape_for(16, 16) };
    let drain = Drain { most: 1e6, ..Drain::default() };
    params.channels = Some(Channels { drain: Some(drain), ..params.channels.unwrap() });
    for mode in MODES {
        let mut map = before.clone();
        let report = run(params, &mut map, 7, mode);
        assert_eq!((report.steps, report.flat), (0, report.droplets), "{mode:?}");
        assert!(report.droplets <= 150, "{mode:?}: {} droplets", report.droplets);
        assert_eq!(map.cells(), before.cells(), "{mode:?}");
    }
}

#[cfg(feature = "parallel")]
#[test]
fn fast_is_the_parallel_tiles_on_one_thread() {
    use hydraulic_erosion::{Parallel, ParallelParams};
    let before = fbm_terrain(150, 130, 4).unwrap();
    // Without and with rain in rounds (two extra rounds of 14 400).
    for (params, droplets) in [(preset(30_000), 30_000), (draining(30_000, 0.0), 30_000 + 2 * 14_400)] {
        let mut fast = before.clone();
        let report = run(params, &mut fast, 5, Mode::Fast);
        assert_eq!(report.droplets, droplets);
        assert!(MassBalance::of_run(&before, &fast, &report).is_conserved());
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let mut map = before.clone();
            let mut physical = Physical::new(params).unwrap();
            let mut rng = Xoshiro256StarStar::seed_from_u64(5);
            let parallel = Parallel::new(ParallelParams::default()).unwrap();
            let tiled = pool.install(|| parallel.run(&mut physical, &mut map, &mut rng)).unwrap();
            assert_eq!(map.cells(), fast.cells(), "{threads} threads");
            assert_eq!(tiled, report, "{threads} threads");
        }
    }
}

/// `Mode::Lockstep` takes its eight lanes' headings together for a sampler
/// with the 8-facet lane kernel (its normals across the lanes, in AVX2
/// vectors where the CPU has them) and lane by lane, each lane asking its
/// own sampler, for any other: a sampler computing the same normals without
/// claiming the kernel gives the same bits, with and without the momentum
/// map's steering.
#[test]
fn interleaved_headings_are_the_same_with_the_lane_kernel_or_without() {
    use glam::Vec3;
    use hydraulic_erosion::{EightFacet, GridRef, NormalSampler};

    /// `EightFacet`'s normals, without its lane kernel.
    #[derive(Clone)]
    struct PlainEightFacet;
    impl NormalSampler for PlainEightFacet {
        fn cell_normal(&self, grid: &GridRef<'_>, x: usize, y: usize, height_scale: f32) -> Vec3 {
            EightFacet::at(grid, x, y, height_scale)
        }
    }
    assert!(PlainEightFacet.lane_kernel().is_none() && EightFacet.lane_kernel().is_some());
    let before = fbm_terrain(64, 48, 5).unwrap();
    for momentum in [0.3, 0.0] {
        let params = preset(3_000);
        let channels = params.channels.map(|c| Channels { momentum, ..c });
        let params = ErosionParams { channels, ..params };
        let bits = |map: &Heightmap| map.cells().iter().map(|h| h.to_bits()).collect::<Vec<_>>();
        let options = || RunOptions::default().with_mode(Mode::Lockstep);
        let (mut kernel, mut plain) = (before.clone(), before.clone());
        let mut rng = Xoshiro256StarStar::seed_from_u64(4);
        let report = Physical::new(params).unwrap().run_with(kernel.view_mut(), &mut rng, options()).unwrap();
        let mut rng = Xoshiro256StarStar::seed_from_u64(4);
        let mut physical = Physical::with_sampler(params, PlainEightFacet).unwrap();
        let plain_report = physical.run_with(plain.view_mut(), &mut rng, options()).unwrap();
        assert_eq!(report.steps, plain_report.steps, "momentum {momentum}");
        assert!(bits(&kernel) == bits(&plain), "momentum {momentum}");
        assert_ne!(kernel.cells(), before.cells());
    }
}

/// Other samplers carry per-droplet state the tiles do not: `Mode::Fast`
/// runs them one droplet after another, as `Mode::Sequential`.
#[test]
fn fast_is_sequential_for_samplers_without_tiles() {
    use hydraulic_erosion::CentralDifference;
    let before = fbm_terrain(64, 64, 7).unwrap();
    let mut maps = Vec::new();
    for mode in [Mode::Fast, Mode::Sequential] {
        let mut map = before.clone();
        let mut physical = Physical::with_sampler(preset(4_000), CentralDifference).unwrap();
        let mut rng = Xoshiro256StarStar::seed_from_u64(2);
        physical.run_with(map.view_mut(), &mut rng, RunOptions::default().with_mode(mode)).unwrap();
        maps.push(map);
    }
    assert_eq!(maps[0].cells(), maps[1].cells());
    assert_ne!(maps[0].cells(), before.cells());
}

#[test]
fn zero_capacity_never_erodes() {
    // No capacity: every step's change is `-dt * kd * load` with no load, so
    // the map keeps its bits exactly.
    let before = fbm_terrain(64, 64, 2).unwrap();
    let channels = Channels { capacity: 0.0, settle_pits: false, ..Channels::default() };
    for mode in MODES {
        let mut map = before.clone();
        let report = run(ErosionParams { channels: Some(channels), ..preset(5_000) }, &mut map, 1, mode);
        assert_eq!(map.cells(), before.cells(), "{mode:?}");
        assert_eq!((report.eroded, report.deposited, report.outflow), (0.0, 0.0, 0.0));
        assert!(report.steps > 5_000);
    }
}

#[test]
fn a_flat_map_stops_every_droplet_untouched() {
    let before = Heightmap::from_fn(32, 32, |_, _| 0.25).unwrap();
    let mut map = before.clone();
    let report = run(preset(1_000), &mut map, 1, Mode::Sequential);
    assert_eq!(map.cells(), before.cells());
    assert_eq!(report.flat, 1_000);
    let _ = Fate::Flat;
}

fn with_sea(level: f32, droplets: u32) -> ErosionParams {
    let channels = Channels { sea_level: Some(level), ..Channels::default() };
    ErosionParams { channels: Some(channels), ..preset(droplets) }
}

#[test]
fn rain_on_the_sea_ends_where_it_falls() {
    // Every cell at or below the level: each droplet ends before its first
    // step, as one that left the map, with no load; nothing changes.
    let before = fbm_terrain(48, 40, 3).unwrap();
    let top = before.cells().iter().fold(f32::MIN, |a, &b| a.max(b));
    for mode in MODES {
        let mut map = before.clone();
        let report = run(with_sea(top, 2_000), &mut map, 5, mode);
        assert_eq!(map.cells(), before.cells(), "{mode:?}");
        assert_eq!((report.droplets, report.left_map, report.steps), (2_000, 2_000, 0), "{mode:?}");
        assert_eq!((report.eroded, report.deposited, report.outflow), (0.0, 0.0, 0.0), "{mode:?}");
    }
}

/// A ramp from height 1 at `y = 0` down to 0.05 at row 39, then a sea
/// floor at -1 (sea level 0): deposits can never make land of it.
fn ramp_into_a_deep_sea() -> Heightmap {
    Heightmap::from_fn(48, 64, |x, y| {
        let bump = 0.01 * ((x * 7 + y * 13) % 5) as f32;
        if y < 40 { 1.0 - 0.95 * y as f32 / 39.0 + bump } else { -1.0 }
    })
    .unwrap()
}

#[test]
fn rivers_end_at_the_sea_and_carry_their_load_off() {
    let before = ramp_into_a_deep_sea();
    for mode in MODES {
        let mut map = before.clone();
        let report = run(with_sea(0.0, 4_000), &mut map, 2, mode);
        assert!(MassBalance::of_run(&before, &map, &report).is_conserved(), "{mode:?}");
        assert!(report.eroded > 0.5 && report.outflow > 0.5 * report.eroded, "{mode:?}: {report:?}");
        // Droplets end on the first sea row; their last deposits reach at
        // most one cell beyond where they stood, and the brush never cuts a
        // cell below the droplet's: the sea from row 41 keeps its bits.
        let sea = 41 * 48;
        assert_eq!(map.cells()[sea..], before.cells()[sea..], "{mode:?}");
        // Without the sea, the droplets run on over the floor (and off the
        // map's far edge), cutting and filling it.
        let mut open = before.clone();
        run(preset(4_000), &mut open, 2, mode);
        assert_ne!(open.cells()[sea..], before.cells()[sea..], "{mode:?}");
    }
}

#[cfg(feature = "parallel")]
#[test]
fn tiled_runs_with_a_sea_keep_their_bits_on_any_thread_count() {
    use hydraulic_erosion::{Parallel, ParallelParams};
    let before = ramp_into_a_deep_sea();
    let parallel =
        Parallel::new(ParallelParams { tile_size: 16, sweep_size: 1_000, ..ParallelParams::default() })
            .unwrap();
    let mut outputs = Vec::new();
    for threads in [1, 2, 3] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let mut map = before.clone();
        let mut physical = Physical::new(with_sea(0.0, 4_000)).unwrap();
        let report = pool.install(|| parallel.run_seeded(&mut physical, &mut map, 3)).unwrap();
        assert!(MassBalance::of_run(&before, &map, &report).is_conserved(), "{threads} threads");
        assert!(report.outflow > 0.5 * report.eroded, "{report:?}");
        assert_eq!(map.cells()[41 * 48..], before.cells()[41 * 48..]);
        outputs.push(map);
    }
    assert_eq!(outputs[0].cells(), outputs[1].cells());
    assert_eq!(outputs[0].cells(), outputs[2].cells());
}

#[test]
fn each_mechanism_is_switchable_and_changes_the_result() {
    let before = fbm_terrain(64, 64, 5).unwrap();
    let mut reference = before.clone();
    run(preset(10_000), &mut reference, 9, Mode::Sequential);
    let off = [
        Channels { discharge_gain: 0.0, ..Channels::default() },
        Channels { channel_relief: 0.0, ..Channels::default() },
        Channels { momentum: 0.0, ..Channels::default() },
        Channels { stride: 0.2, ..Channels::default() },
        Channels { brush_radius: 0.0, ..Channels::default() },
        Channels { settle_pits: false, ..Channels::default() },
    ];
    for channels in off {
        let mut map = before.clone();
        let report =
            run(ErosionParams { channels: Some(channels), ..preset(10_000) }, &mut map, 9, Mode::Sequential);
        assert!(MassBalance::of_run(&before, &map, &report).is_conserved());
        assert_ne!(map.cells(), reference.cells(), "{channels:?} should change the run");
    }
}

#[test]
fn the_preset_leaves_no_pits_on_a_smooth_dome() {
    // A smooth dome: no interior cell starts as a pit. The pit-safe brush never
    // makes one (no cell is cut below the step's floor, no brush cell below the
    // droplet's); deposits can (raising a cell can leave a lower neighbour with
    // no way out): without settling, measured 0.9 % of the cells (the momentum
    // map gathers droplets, and their deposits), and the bound is 2 %.
    // Settling the pits at the end leaves none, in every mode.
    let before = Heightmap::from_fn(96, 96, |x, y| {
        let (dx, dy) = (x as f32 - 47.5, y as f32 - 47.5);
        1.0 - (dx * dx + dy * dy) / 9000.0
    })
    .unwrap();
    assert_eq!(count_pits(&before).unwrap().0, 0);
    for mode in MODES {
        let unsettled = Channels { settle_pits: false, ..Channels::default() };
        let mut map = before.clone();
        let report = run(ErosionParams { channels: Some(unsettled), ..preset(30_000) }, &mut map, 1, mode);
        assert!(report.eroded > 1.0);
        let (pits, interior) = count_pits(&map).unwrap();
        assert!(pits > 0 && pits * 50 <= interior, "{mode:?}: {pits} pits of {interior} cells");
        let mut map = before.clone();
        let report = run(preset(30_000), &mut map, 1, mode);
        assert_eq!(count_pits(&map).unwrap().0, 0, "{mode:?}");
        assert!(MassBalance::of_run(&before, &map, &report).is_conserved(), "{mode:?}");
    }
}

#[test]
fn out_of_range_channel_fields_are_typed_errors() {
    let drain = |d: Drain| Channels { drain: Some(d), ..Channels::default() };
    let cases: [(Channels, &str); 26] = [
        (Channels { capacity: -1.0, ..Channels::default() }, "channels.capacity"),
        (Channels { discharge_gain: f32::NAN, ..Channels::default() }, "channels.discharge_gain"),
        (Channels { channel_area: 0.0, ..Channels::default() }, "channels.channel_area"),
        (Channels { river_area: f32::NAN, ..Channels::default() }, "channels.river_area"),
        (Channels { river_area: f32::INFINITY, ..Channels::default() }, "channels.river_area"),
        (Channels { cell_size: f32::INFINITY, ..Channels::default() }, "channels.cell_size"),
        (Channels { discharge_rate: 0.0, ..Channels::default() }, "channels.discharge_rate"),
        (Channels { discharge_rate: 1.5, ..Channels::default() }, "channels.discharge_rate"),
        (Channels { refresh: 0, ..Channels::default() }, "channels.refresh"),
        (Channels { channel_relief: 1.1, ..Channels::default() }, "channels.channel_relief"),
        (Channels { momentum: -0.5, ..Channels::default() }, "channels.momentum"),
        (Channels { stride: -0.1, ..Channels::default() }, "channels.stride"),
        (Channels { stride: 1.01, ..Channels::default() }, "channels.stride"),
        (Channels { stride: f32::NAN, ..Channels::default() }, "channels.stride"),
        (Channels { brush_radius: 9.0, ..Channels::default() }, "channels.brush_radius"),
        (Channels { sea_level: Some(f32::NAN), ..Channels::default() }, "channels.sea_level"),
        (Channels { sea_level: Some(f32::NEG_INFINITY), ..Channels::default() }, "channels.sea_level"),
        (drain(Drain { closed: -0.1, ..Drain::default() }), "channels.drain.closed"),
        (drain(Drain { closed: f32::NAN, ..Drain::default() }), "channels.drain.closed"),
        (drain(Drain { round: 0.009, ..Drain::default() }), "channels.drain.round"),
        (drain(Drain { round: f32::INFINITY, ..Drain::default() }), "channels.drain.round"),
        (drain(Drain { most: -1.0, ..Drain::default() }), "channels.drain.most"),
        (drain(Drain { most: f32::NAN, ..Drain::default() }), "channels.drain.most"),
        (drain(Drain { basin: -0.01, ..Drain::default() }), "channels.drain.basin"),
        (drain(Drain { basin: 1.5, ..Drain::default() }), "channels.drain.basin"),
        (drain(Drain { basin: f32::NAN, ..Drain::default() }), "channels.drain.basin"),
    ];
    for (channels, field) in cases {
        assert_eq!(channels.validate().unwrap_err().field(), field);
        let params = ErosionParams { channels: Some(channels), ..ErosionParams::landscape() };
        assert_eq!(Physical::new(params).unwrap_err().field(), field);
    }
    assert!(Channels::default().validate().is_ok());
    assert!(drain(Drain::default()).validate().is_ok());
    assert!(drain(Drain { closed: 0.0, round: 1e6, most: 0.0, basin: 0.0 }).validate().is_ok());
    assert!(drain(Drain { closed: 1.0, round: 0.01, most: 1e6, basin: 1.0 }).validate().is_ok());
    assert!(ErosionParams::landscape().validate().is_ok());
}

/// The preset with rain in rounds: `closed` 0 and `basin` 0 (any closed
/// cell asks for more) and rounds of 0.48 of the run's droplets, 0.96 of
/// them in all.
fn draining(droplets: u32, closed: f32) -> ErosionParams {
    let drain = Drain { closed, round: 0.48, most: 0.96, basin: 0.0 };
    ErosionParams {
        channels: Some(Channels { drain: Some(drain), ..Channels::default() }),
        ..preset(droplets)
    }
}

#[test]
fn rain_in_rounds_runs_until_the_budget_in_every_mode() {
    // 96 x 80 fBm keeps some closed cell after any rain: two rounds of 3 840
    // droplets (0.48 of the run's 8 000), the budget of 0.96 of them.
    let before = fbm_terrain(96, 80, 2).unwrap();
    for mode in MODES {
        let (mut a, mut b) = (before.clone(), before.clone());
        let report = run(draining(8_000, 0.0), &mut a, 3, mode);
        assert_eq!(report.droplets, 8_000 + 2 * 3_840, "{mode:?}");
        assert!(MassBalance::of_run(&before, &a, &report).is_conserved(), "{mode:?}");
        assert_eq!(run(draining(8_000, 0.0), &mut b, 3, mode), report, "{mode:?}");
        assert_eq!(a.cells(), b.cells(), "{mode:?}: the same bits");
        // A share every map meets takes no extra round: the bits of no drain.
        let (mut c, mut d) = (before.clone(), before.clone());
        let once = run(draining(8_000, 1.0), &mut c, 3, mode);
        assert_eq!(once.droplets, 8_000, "{mode:?}");
        assert_eq!(run(preset(8_000), &mut d, 3, mode), once, "{mode:?}");
        assert_eq!(c.cells(), d.cells(), "{mode:?}");
    }
}

/// The rounds scale with the run: a preset run asked for few droplets takes
/// few more (8/3 of them at most), not the preset's four a cell.
#[test]
fn a_small_run_takes_small_rounds() {
    let before = fbm_terrain(96, 80, 2).unwrap();
    let params = ErosionParams { droplets: 300, ..ErosionParams::landscape_for(96, 80) };
    for mode in MODES {
        let mut map = before.clone();
        let report = run(params, &mut map, 3, mode);
        // Rounds of 100: 300 droplets leave the noise's basins closed.
        assert!(report.droplets > 300 && report.droplets <= 300 + 800, "{mode:?}: {}", report.droplets);
        assert_eq!((report.droplets - 300) % 100, 0, "{mode:?}: whole rounds");
        assert!(MassBalance::of_run(&before, &map, &report).is_conserved(), "{mode:?}");
    }
}

#[test]
fn rain_in_rounds_drains_a_crater() {
    // A crater: a bowl 0.3 deep inside a rim, on a slope to the border.
    let before = Heightmap::from_fn(96, 96, |x, y| {
        let (dx, dy) = (x as f32 - 47.5, y as f32 - 47.5);
        let r = (dx * dx + dy * dy).sqrt();
        let rim = 0.3 * (-(r - 20.0) * (r - 20.0) / 40.0).exp();
        0.5 - r / 200.0 + rim + 0.002 * ((x * 7 + y * 13) % 11) as f32
    })
    .unwrap();
    let share = |map: &Heightmap| {
        let depth =
            hydraulic_erosion::analysis::fill_depressions(map, hydraulic_erosion::analysis::Fill::Flat)
                .unwrap()
                .depth;
        depth.cells().iter().filter(|&&d| d > 0.0).count() as f64 / map.len() as f64
    };
    assert!(share(&before) > 0.1, "the crater is closed: {}", share(&before));
    // The default `basin`: the crater is one.
    let drain = Drain { closed: 0.02, round: 1.0, most: 12.0, ..Drain::default() };
    let params = ErosionParams {
        channels: Some(Channels { drain: Some(drain), ..Channels::default() }),
        ..preset(9_216)
    };
    let (mut once, mut drained) = (before.clone(), before.clone());
    run(preset(9_216), &mut once, 1, Mode::Fast);
    let report = run(params, &mut drained, 1, Mode::Fast);
    assert!(MassBalance::of_run(&before, &drained, &report).is_conserved());
    assert!(report.droplets > 9_216 && report.droplets <= 9_216 * 13, "{}", report.droplets);
    assert!(share(&once) > 0.05, "one droplet a cell leaves the crater closed: {}", share(&once));
    assert!(share(&drained) < share(&once) / 2.0, "{} -> {}", share(&once), share(&drained));
    // Under an active mask of 0 the crater cannot change, so it does not
    // count: the run takes no round, in every mode, and the crater keeps
    // its bits.
    let mask = Heightmap::from_fn(96, 96, |x, y| {
        let (dx, dy) = (x as f32 - 47.5, y as f32 - 47.5);
        if dx * dx + dy * dy < 30.0 * 30.0 { 0.0 } else { 1.0 }
    })
    .unwrap();
    for mode in MODES {
        let mut masked = before.clone();
        let mut rng = Xoshiro256StarStar::seed_from_u64(1);
        let controls = hydraulic_erosion::Controls { active: Some(mask.view()), ..Default::default() };
        let options = RunOptions::default().with_mode(mode).with_controls(controls);
        let report = Physical::new(params).unwrap().run_with(masked.view_mut(), &mut rng, options).unwrap();
        assert_eq!(report.droplets, 9_216, "{mode:?}");
        assert!(MassBalance::of_run(&before, &masked, &report).is_conserved(), "{mode:?}");
        let inside = |map: &Heightmap| {
            map.cells()
                .iter()
                .zip(mask.cells())
                .filter(|&(_, &m)| m == 0.0)
                .map(|(h, _)| h.to_bits())
                .collect::<Vec<_>>()
        };
        assert_eq!(inside(&masked), inside(&before), "{mode:?}");
    }
}

#[test]
fn the_preset_sets_droplets_per_cell() {
    assert_eq!(ErosionParams::landscape_for(512, 512).droplets, 393_216);
    assert_eq!(ErosionParams::landscape_for(3, 1).droplets, 5); // 4.5 rounds up
    assert_eq!(ErosionParams::landscape_for(1 << 20, 1 << 20).droplets, u32::MAX);
    // The discharge map refreshes every 1/128 droplet per cell: the default
    // 2 048 at 512², within `Channels`' range at any size.
    let refresh = |w, h| ErosionParams::landscape_for(w, h).channels.unwrap().refresh;
    assert_eq!(refresh(512, 512), Channels::default().refresh);
    assert_eq!((refresh(256, 256), refresh(1024, 1024)), (512, 8192));
    assert_eq!((refresh(3, 1), refresh(1 << 20, 1 << 20)), (1, Channels::MAX_REFRESH));
    assert!(ErosionParams::landscape_for(1 << 20, 1 << 20).validate().is_ok());
    // The sized preset rains in rounds until the basins drain; the bare one
    // runs its droplets alone.
    assert_eq!(ErosionParams::landscape_for(64, 32).channels.unwrap().drain, Some(Drain::default()));
    assert_eq!(ErosionParams::landscape().channels.unwrap().drain, None);
    // No droplets, no rounds, in every mode: the map stays as it is, closed
    // basins and all.
    let before = fbm_terrain(48, 48, 2).unwrap();
    for mode in MODES {
        let mut map = before.clone();
        let params = ErosionParams { droplets: 0, ..ErosionParams::landscape_for(48, 48) };
        let report = run(params, &mut map, 1, mode);
        assert_eq!((report.droplets, report.steps), (0, 0), "{mode:?}");
        assert_eq!(map, before, "{mode:?}");
    }
    assert_eq!(ErosionParams::default().channels, None, "the seeds' model stays the default");
    // Rain per area for any params, and Hydrology's particles likewise.
    let seeds = ErosionParams::default();
    assert_eq!(seeds.with_droplets_per_cell(0.5, 100, 10).droplets, 500);
    assert_eq!(seeds.with_droplets_per_cell(-1.0, 100, 10).droplets, 0);
    assert_eq!(seeds.with_droplets_per_cell(f32::NAN, 100, 10).droplets, 0);
    assert_eq!(seeds.with_droplets_per_cell(f32::INFINITY, 100, 10).droplets, u32::MAX);
    assert_eq!(seeds.with_droplets_per_cell(2.0, 64, 64), ErosionParams { droplets: 8192, ..seeds });
    let hydrology = hydraulic_erosion::HydrologyParams::default();
    assert_eq!(hydrology.with_particles_per_cell(0.25, 64, 64).particles, 1024);
    assert_eq!(hydrology.with_particles_per_cell(f32::NAN, 64, 64).particles, 0);
}

#[cfg(feature = "parallel")]
#[test]
fn tiled_landscape_runs_balance_and_keep_their_bits_on_any_thread_count() {
    use hydraulic_erosion::{Parallel, ParallelParams};
    let before = fbm_terrain(160, 128, 4).unwrap();
    let parallel =
        Parallel::new(ParallelParams { tile_size: 32, sweep_size: 4_000, ..ParallelParams::default() })
            .unwrap();
    let mut outputs = Vec::new();
    for threads in [1, 2, 3] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let mut map = before.clone();
        let mut physical = Physical::new(preset(30_000)).unwrap();
        let report = pool.install(|| parallel.run_seeded(&mut physical, &mut map, 11)).unwrap();
        assert!(MassBalance::of_run(&before, &map, &report).is_conserved(), "{threads} threads");
        assert_eq!(report.droplets, 30_000);
        assert!(report.eroded > 1.0);
        outputs.push(map);
    }
    assert_eq!(outputs[0].cells(), outputs[1].cells());
    assert_eq!(outputs[0].cells(), outputs[2].cells());
    // Not the sequential run's bits (other streams, another order), but its
    // landforms: no pits (settled on the whole map after the last sweep), and
    // the momentum map carried through the tiles (turning it off changes them).
    assert_eq!(count_pits(&outputs[0]).unwrap().0, 0);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let still = Channels { momentum: 0.0, ..Channels::default() };
    let mut map = before.clone();
    let mut physical = Physical::new(ErosionParams { channels: Some(still), ..preset(30_000) }).unwrap();
    let report = pool.install(|| parallel.run_seeded(&mut physical, &mut map, 11)).unwrap();
    assert!(MassBalance::of_run(&before, &map, &report).is_conserved());
    assert_ne!(map.cells(), outputs[0].cells());
}

#[cfg(feature = "parallel")]
#[test]
fn parallel_landscape_refusals_are_typed_errors() {
    // Batches merged on a frozen map would add up the cuts each copy's
    // pit-safe guard clamped; the tiles carry no sampler state.
    use hydraulic_erosion::{CentralDifference, Layout, Parallel, ParallelParams};
    let before = fbm_terrain(64, 64, 4).unwrap();
    let tiles = Parallel::new(ParallelParams::default()).unwrap();
    let batches =
        Parallel::new(ParallelParams { layout: Layout::Batches, ..ParallelParams::default() }).unwrap();
    let field = |error: hydraulic_erosion::Error| match error {
        hydraulic_erosion::Error::Param(p) => p.field(),
        other => panic!("{other}"),
    };
    let mut map = before.clone();
    assert_eq!(
        field(batches.run_seeded(&mut Physical::new(preset(500)).unwrap(), &mut map, 1).unwrap_err()),
        "channels"
    );
    let mut other = Physical::with_sampler(preset(500), CentralDifference).unwrap();
    assert_eq!(field(tiles.run_seeded(&mut other, &mut map, 1).unwrap_err()), "channels");
    assert_eq!(map.cells(), before.cells(), "the map is untouched");
}

/// `cell_size` is the side of a cell in the params' unit length: a step of one
/// cell takes `cell_size` of the time step, the height scale is per unit length,
/// the step limit counts unit lengths, `channel_area` and `river_area` are
/// upstream areas per unit width (the discharge, in cells, times `cell_size`),
/// the capacity is per unit slope. With the momentum map off this is exactly
/// the same run as the params rewritten per cell by hand (each factor a power
/// of two: exact).
#[test]
fn cell_size_scales_each_length_as_documented() {
    let before = fbm_terrain(64, 48, 3).unwrap();
    for (size, mode) in [(2.0f32, Mode::Sequential), (0.5, Mode::Lockstep), (4.0, Mode::Fast)] {
        let world = Channels { momentum: 0.0, cell_size: size, ..Channels::default() };
        let by_hand = Channels {
            momentum: 0.0,
            cell_size: 1.0,
            capacity: world.capacity / size,
            channel_area: world.channel_area / size,
            river_area: world.river_area / size,
            ..world
        };
        let p = preset(8_000);
        let hand = ErosionParams {
            dt: p.dt * size,
            height_scale: p.height_scale / size,
            max_steps: (p.max_steps as f32 / size) as u32,
            channels: Some(by_hand),
            ..p
        };
        let (mut a, mut b) = (before.clone(), before.clone());
        let ra = run(ErosionParams { channels: Some(world), ..p }, &mut a, 5, mode);
        let rb = run(hand, &mut b, 5, mode);
        assert_eq!(a, b, "cell_size {size}");
        assert_eq!(ra, rb);
        assert!(ra.eroded > 1.0 && MassBalance::of_run(&before, &a, &ra).is_conserved());
        // Droplets walk `max_steps / cell_size` cells at most.
        assert!(ra.steps <= ra.droplets * u64::from(hand.max_steps));
    }
}

#[test]
fn cell_size_must_keep_each_step_in_range() {
    // At cell size 10 a step of dt 1.2 with deposition rate 0.1 would take
    // more than all of the load's gap at once.
    let coarse = ErosionParams {
        channels: Some(Channels { cell_size: 10.0, ..Channels::default() }),
        ..ErosionParams::landscape()
    };
    assert_eq!(coarse.validate().unwrap_err().field(), "channels.cell_size");
    // At 1e-4, 300 unit lengths are 3 000 000 steps, past the largest limit.
    let fine = ErosionParams {
        channels: Some(Channels { cell_size: 1e-4, ..Channels::default() }),
        ..ErosionParams::landscape()
    };
    assert_eq!(Physical::new(fine).unwrap_err().field(), "channels.cell_size");
    for size in [0.25, 0.5, 2.0, 4.0, 8.0] {
        let ok = ErosionParams {
            channels: Some(Channels { cell_size: size, ..Channels::default() }),
            ..ErosionParams::landscape()
        };
        assert!(ok.validate().is_ok(), "{size}");
    }
}

/// `trace` follows seed 000's droplet in the params' own units, whatever the
/// channels (and their cell size) say.
#[test]
fn trace_takes_the_seeds_steps_whatever_the_cell_size() {
    let before = fbm_terrain(48, 48, 2).unwrap();
    let start = hydraulic_erosion::glam::Vec2::new(20.3, 27.8);
    let seeds = ErosionParams { channels: None, ..ErosionParams::landscape() };
    let mut paths = Vec::new();
    for params in
        [seeds, ErosionParams { channels: Some(Channels { cell_size: 2.0, ..Channels::default() }), ..seeds }]
    {
        let mut map = before.clone();
        let physical = Physical::new(params).unwrap();
        let path: Vec<_> = physical.trace(&mut map, start).unwrap().map(|d| d.position).collect();
        assert!(path.len() > 3);
        paths.push((path, map));
    }
    assert_eq!(paths[0], paths[1]);
}

/// Speeds past what the steering can square (`|speed * v|²` past `f32::MAX`
/// from about 4e9, here from a density of 1e-12) take their step unturned,
/// and motion that leaves the finite numbers (a density of 1e-30) ends as
/// unstable: the map stays finite and balanced in every mode.
#[test]
fn overflowing_speeds_stay_finite_and_balanced() {
    for mode in MODES {
        for density in [1e-12, 1e-30] {
            let before = fbm_terrain(48, 40, 5).unwrap();
            let mut map = before.clone();
            // The flow maps refreshed every 50 droplets, so droplets steer.
            let base = preset(2_000);
            let channels = base.channels.map(|c| Channels { refresh: 50, ..c });
            let params = ErosionParams { density, channels, ..base };
            let report = run(params, &mut map, 3, mode);
            let balance = MassBalance::of_run(&before, &map, &report);
            assert!(balance.is_conserved(), "{mode:?} {density}: {balance:?}");
            assert!(map.cells().iter().all(|h| h.is_finite()), "{mode:?} {density}");
            if density < 1e-20 {
                assert_eq!(report.unstable, 2_000, "{mode:?}: the first step overflows ({report:?})");
            } else {
                assert!(report.steps > 2_000 && report.eroded > 0.0, "{mode:?}: they run ({report:?})");
            }
        }
    }
}

/// Heights may be in any unit (metres, say): a run is linear in height but
/// for the slope its normal takes, so heights `k` times larger with
/// `height_scale / k` (and a sea level `k` times higher) erode into the same
/// landforms, heights and books `k` times larger. With `k` a power of two
/// every step scales exactly: the same bits, times `k`, in every mode, for
/// the seeds' model and the landscape preset alike.
#[test]
fn heights_in_any_unit_scale_the_run_exactly() {
    let before = fbm_terrain(80, 64, 4).unwrap();
    let sea = Channels { sea_level: Some(0.2), ..Channels::default() };
    let seeds = ErosionParams { droplets: 3_000, ..ErosionParams::default() };
    let landscape = ErosionParams { channels: Some(sea), ..preset(6_000) };
    for params in [seeds, landscape] {
        for k in [4.0f32, 0.125] {
            let scaled_channels =
                params.channels.map(|c| Channels { sea_level: c.sea_level.map(|s| s * k), ..c });
            let scaled_params =
                ErosionParams { height_scale: params.height_scale / k, channels: scaled_channels, ..params };
            for mode in MODES {
                let mut map = before.clone();
                let report = run(params, &mut map, 7, mode);
                let scaled_before = scaled(&before, k);
                let mut after = scaled_before.clone();
                let scaled_report = run(scaled_params, &mut after, 7, mode);
                let what = format!("{mode:?}, k {k}, landscape {}", params.channels.is_some());
                assert_eq!(bits_times(&after, 1.0), bits_times(&map, k), "{what}");
                assert!(report.eroded > 1.0, "{what}: the run erodes");
                let k = f64::from(k);
                assert_eq!(scaled_report.eroded, report.eroded * k, "{what}");
                assert_eq!(scaled_report.deposited, report.deposited * k, "{what}");
                assert_eq!(scaled_report.outflow, report.outflow * k, "{what}");
                assert_eq!(
                    (scaled_report.steps, scaled_report.left_map),
                    (report.steps, report.left_map),
                    "{what}"
                );
                assert!(MassBalance::of_run(&scaled_before, &after, &scaled_report).is_conserved(), "{what}");
            }
        }
    }
}

/// A stop in the tiles (`Mode::Fast`, the preset's own mode) ends the rain
/// and lets the droplets under way finish their walks: put down at once
/// where they waited at the zones' edges, their loads stood as walls of
/// deposit (the tool stopped after a second on 256²: cells of 1.2 to 2.5 on
/// a map whose peak was 0.99). After the stop no droplet starts and no
/// round of rain falls; the map stays balanced and below its old peak.
#[test]
fn a_stopped_tiled_run_finishes_its_droplets_instead_of_piling_their_loads() {
    use hydraulic_erosion::Control;
    let before = fbm_terrain(256, 256, 1).unwrap();
    let params = ErosionParams::landscape_for(256, 256);
    for stop_at in [1, 2, 3] {
        let mut map = before.clone();
        let mut calls = 0;
        let mut at_stop = 0;
        let mut progress = |done: u64, _total: u64| {
            calls += 1;
            if calls == stop_at {
                at_stop = done;
            }
            if calls >= stop_at { Control::Stop } else { Control::Continue }
        };
        let mut physical = Physical::new(params).unwrap();
        let mut rng = Xoshiro256StarStar::seed_from_u64(1);
        let options = RunOptions::default().with_mode(Mode::Fast).with_progress(&mut progress);
        let report = physical.run_with(map.view_mut(), &mut rng, options).unwrap();
        assert!(report.cancelled, "{report:?}");
        assert!(report.droplets > at_stop && report.droplets < u64::from(params.droplets), "{report:?}");
        assert_eq!(report.stopped, 0, "none put down mid-walk");
        assert!(MassBalance::of_run(&before, &map, &report).is_conserved(), "{report:?}");
        let (peak, new_peak) = (before.min_max().1, map.min_max().1);
        assert!(new_peak <= peak, "stop at call {stop_at}: a cell of {new_peak} over the peak {peak}");
    }
}

/// How far the highest cell the run raised stands above all of its eight
/// neighbours (0 where every raised cell has a neighbour as high).
fn tallest_raised_spike(before: &Heightmap, after: &Heightmap) -> f32 {
    let (w, h) = (after.width(), after.height());
    let (a, b) = (after.cells(), before.cells());
    let mut tallest = 0.0f32;
    for y in 1..h - 1 {
        for x in 1..w - 1 {
            let i = y * w + x;
            let around = [i - w - 1, i - w, i - w + 1, i - 1, i + 1, i + w - 1, i + w, i + w + 1];
            let highest = around.iter().map(|&j| a[j]).fold(f32::NEG_INFINITY, f32::max);
            if a[i] > b[i] {
                tallest = tallest.max(a[i] - highest);
            }
        }
    }
    tallest
}

/// A droplet that ends on the map puts its load on its cell only up to its
/// highest neighbour and pours the rest into the low cells around it: no
/// load stands as a single-cell spike. (Put down on the droplet's cell
/// alone, the loads of droplets that reached the step limit circling on a
/// plain stood up to 0.37 high on a 512² fBm map of relief 1.1; here, on a
/// 192² one, 0.036 in `Mode::Fast`.) What is left is the deposits' own
/// roughness: a cell a deposit raised a hair above its neighbours (at most
/// 0.0112 over twelve 192² runs: fBm 1-4, rain seeds 1-3, both modes).
#[test]
fn the_preset_leaves_no_spikes_where_droplets_end() {
    let before = fbm_terrain(192, 192, 4).unwrap();
    for mode in [Mode::Sequential, Mode::Fast] {
        let mut map = before.clone();
        let report = run(ErosionParams::landscape_for(192, 192), &mut map, 3, mode);
        assert!(report.step_limited > 1_000, "{mode:?}: {report:?}");
        let tallest = tallest_raised_spike(&before, &map);
        assert!(tallest < 0.02, "{mode:?}: a raised cell {tallest} above its neighbours");
        assert!(MassBalance::of_run(&before, &map, &report).is_conserved(), "{mode:?}");
    }
}
