//! Controls (active mask, rain map, erodibility): masked cells keep their
//! bits, rain starts droplets only where it falls, bedrock does not erode,
//! the books balance, and bad maps are typed errors.

use hydraulic_erosion::rand_core::SeedableRng;
use hydraulic_erosion::{
    Controls, ErosionParams, ErosionReport, Error, GridError, Heightmap, Hydrology, HydrologyParams, Layers,
    MassBalance, Mode, Physical, RunOptions, Simulator, Snowball, SnowballParams, fbm_terrain,
};
use rand_xoshiro::Xoshiro256StarStar;

const SIZE: usize = 64;

fn terrain() -> Heightmap {
    fbm_terrain(SIZE, SIZE, 4).unwrap()
}

fn bits(map: &Heightmap) -> Vec<u32> {
    map.cells().iter().map(|h| h.to_bits()).collect()
}

/// Active 0 on the left third, a ramp from 0 to 1 across the middle third,
/// 1 on the right third.
fn mask() -> Heightmap {
    Heightmap::from_fn(SIZE, SIZE, |x, _| ((x as f32 - 21.0) / 21.0).clamp(0.0, 1.0)).unwrap()
}

/// Controls with only an erodibility map.
fn erodibility(map: &Heightmap) -> Controls<'_> {
    Controls { erodibility: Some(map.view()), ..Controls::default() }
}

fn seeds(droplets: u32) -> ErosionParams {
    ErosionParams { droplets, ..ErosionParams::default() }
}

fn landscape(droplets: u32) -> ErosionParams {
    ErosionParams { droplets, ..ErosionParams::landscape() }
}

fn run(
    params: ErosionParams,
    mode: Mode,
    map: &mut Heightmap,
    controls: Controls<'_>,
) -> Result<ErosionReport, Error> {
    let mut rng = Xoshiro256StarStar::seed_from_u64(3);
    let options = RunOptions::default().with_mode(mode).with_controls(controls);
    Physical::new(params)?.run_with(map.view_mut(), &mut rng, options)
}

fn cases() -> Vec<(&'static str, ErosionParams, Mode)> {
    vec![
        ("seeds sequential", seeds(3_000), Mode::Sequential),
        ("seeds lockstep", seeds(3_000), Mode::Lockstep),
        ("landscape sequential", landscape(3_000), Mode::Sequential),
        ("landscape interleaved", landscape(3_000), Mode::Lockstep),
    ]
}

/// Checks a masked run: cells of 0 keep their bits, the books balance, the
/// active part changed, and droplets stopped at the mask's edge.
fn assert_masked(
    name: &str,
    before: &Heightmap,
    after: &Heightmap,
    report: &ErosionReport,
    active: &Heightmap,
) {
    let mut changed = 0;
    for i in 0..after.len() {
        if active.cells()[i] == 0.0 {
            assert_eq!(
                after.cells()[i].to_bits(),
                before.cells()[i].to_bits(),
                "{name}: masked cell {i} changed"
            );
        } else {
            changed += usize::from(after.cells()[i] != before.cells()[i]);
        }
    }
    assert!(changed > 500, "{name}: only {changed} active cells changed");
    let balance = MassBalance::of_run(before, after, report);
    assert!(balance.is_conserved(), "{name}: {balance:?}");
    assert!(report.masked > 0, "{name}: no droplet reached the mask: {report:?}");
}

#[test]
fn masked_cells_keep_their_bits_in_every_mode() {
    let active = mask();
    for (name, params, mode) in cases() {
        let mut map = terrain();
        let before = map.clone();
        let controls = Controls { active: Some(active.view()), ..Controls::default() };
        let report = run(params, mode, &mut map, controls).unwrap();
        assert_masked(name, &before, &map, &report, &active);
    }
}

#[test]
fn without_controls_a_run_is_as_before() {
    for (name, params, mode) in cases() {
        let (mut plain, mut empty) = (terrain(), terrain());
        let a = run(params, mode, &mut plain, Controls::default()).unwrap();
        let mut rng = Xoshiro256StarStar::seed_from_u64(3);
        let b = Physical::new(params)
            .unwrap()
            .run_with(empty.view_mut(), &mut rng, RunOptions::default().with_mode(mode))
            .unwrap();
        assert_eq!(a, b, "{name}");
        assert_eq!(bits(&plain), bits(&empty), "{name}");
    }
}

#[test]
fn an_erodibility_of_one_changes_no_run() {
    // Erodibility 1 everywhere scales nothing: the same bits.
    let ones = Heightmap::filled(SIZE, SIZE, 1.0).unwrap();
    for (name, params, mode) in cases() {
        let (mut plain, mut gated) = (terrain(), terrain());
        let controls = Controls { erodibility: Some(ones.view()), ..Controls::default() };
        let a = run(params, mode, &mut plain, Controls::default()).unwrap();
        let b = run(params, mode, &mut gated, controls).unwrap();
        assert_eq!(a, b, "{name}");
        assert_eq!(bits(&plain), bits(&gated), "{name}");
    }
}

#[test]
fn droplets_start_only_where_rain_falls_and_the_mask_is_open() {
    // On a flat map droplets stand where they start until they evaporate: the
    // wetness layer shows the starts.
    let rain = Heightmap::from_fn(SIZE, SIZE, |x, y| {
        if (10..30).contains(&x) && (20..40).contains(&y) { 1.0 + x as f32 } else { 0.0 }
    })
    .unwrap();
    let active = Heightmap::from_fn(SIZE, SIZE, |x, _| if x < 20 { 0.0 } else { 1.0 }).unwrap();
    for mode in [Mode::Sequential, Mode::Lockstep] {
        let mut map = Heightmap::filled(SIZE, SIZE, 0.5).unwrap();
        let mut layers = Layers::new(SIZE, SIZE).unwrap();
        let mut rng = Xoshiro256StarStar::seed_from_u64(8);
        let controls =
            Controls { active: Some(active.view()), rain: Some(rain.view()), ..Controls::default() };
        let options = RunOptions::default().with_mode(mode).with_controls(controls).with_layers(&mut layers);
        let report =
            Physical::new(seeds(2_000)).unwrap().run_with(map.view_mut(), &mut rng, options).unwrap();
        assert_eq!(report.droplets, 2_000);
        let wet = layers.wetness();
        let mut wet_cells = 0;
        for y in 0..SIZE {
            for x in 0..SIZE {
                let inside = (20..30).contains(&x) && (20..40).contains(&y);
                if wet[(x, y)] > 0.0 {
                    assert!(inside, "{mode:?}: a droplet started at ({x}, {y})");
                    wet_cells += 1;
                }
            }
        }
        // 200 open cells, 2 000 droplets: nearly every one gets some.
        assert!(wet_cells > 150, "{mode:?}: {wet_cells} cells");
        // Heavier rain to the east: more water there.
        let column = |x: usize| (20..40).map(|y| f64::from(wet[(x, y)])).sum::<f64>();
        assert!(column(29) > column(20), "{} vs {}", column(29), column(20));
    }
}

#[test]
fn no_rain_starts_no_droplet() {
    let dry = Heightmap::filled(SIZE, SIZE, 0.0).unwrap();
    for (name, params, mode) in cases() {
        let mut map = terrain();
        let controls = Controls { rain: Some(dry.view()), ..Controls::default() };
        let report = run(params, mode, &mut map, controls).unwrap();
        assert_eq!(report.droplets, 0, "{name}");
        assert_eq!(bits(&map), bits(&terrain()), "{name}");
    }
}

#[test]
fn bedrock_does_not_erode_and_soft_rock_erodes_more() {
    let bedrock = Heightmap::filled(SIZE, SIZE, 0.0).unwrap();
    let soft = Heightmap::filled(SIZE, SIZE, 3.0).unwrap();
    for (name, params, mode) in cases() {
        let mut map = terrain();
        let before = map.clone();
        let report = run(params, mode, &mut map, erodibility(&bedrock)).unwrap();
        assert_eq!(report.eroded, 0.0, "{name}");
        assert!(map.cells().iter().zip(before.cells()).all(|(a, b)| a >= b), "{name}");
        let mut normal = terrain();
        let normal_report = run(params, mode, &mut normal, Controls::default()).unwrap();
        let mut softer = terrain();
        let soft_report = run(params, mode, &mut softer, erodibility(&soft)).unwrap();
        assert!(
            soft_report.eroded > 1.2 * normal_report.eroded,
            "{name}: {} vs {}",
            soft_report.eroded,
            normal_report.eroded
        );
        assert!(MassBalance::of_run(&before, &softer, &soft_report).is_conserved(), "{name}");
    }
}

/// An erodibility above 1 scales a cut up, but the landscape kernel's brush
/// still never cuts a cell below its floor (the pit-safe guard): at 10, 10^4
/// and 10^10 every mode's heights stay finite, within the terrain's relief
/// (a unit around it: the border's ghost cells may lie below the map), and
/// the books balance. (They grew to -1.3e10, then to infinities, when the
/// gate scaled the cut after the floor had bounded it.)
#[test]
fn soft_rock_is_cut_no_deeper_than_the_floor() {
    let side = 16;
    let terrain = fbm_terrain(side, side, 1).unwrap();
    let (low, high) = terrain.min_max();
    let params = ErosionParams { droplets: 300, ..ErosionParams::landscape_for(side, side) };
    for soft in [10.0, 1e4, 1e10] {
        let soft_map = Heightmap::filled(side, side, soft).unwrap();
        for mode in [Mode::Sequential, Mode::Lockstep, Mode::Fast] {
            let mut map = terrain.clone();
            let report = run(params, mode, &mut map, erodibility(&soft_map)).unwrap();
            let (min, max) = map.min_max();
            assert!(min >= low - 1.0 && max <= high + 1.0, "{soft} {mode:?}: heights in [{min}, {max}]");
            assert!(report.eroded.is_finite() && report.eroded > 0.0, "{soft} {mode:?}");
            assert!(MassBalance::of_run(&terrain, &map, &report).is_conserved(), "{soft} {mode:?}");
        }
    }
}

#[test]
fn bad_maps_are_typed_errors_and_change_nothing() {
    let wrong_size = Heightmap::filled(SIZE + 1, SIZE, 1.0).unwrap();
    let too_high = Heightmap::filled(SIZE, SIZE, 1.5).unwrap();
    let negative = Heightmap::filled(SIZE, SIZE, -1.0).unwrap();
    let cases: [(Controls<'_>, &str); 5] = [
        (Controls { active: Some(wrong_size.view()), ..Controls::default() }, "size"),
        (Controls { rain: Some(wrong_size.view()), ..Controls::default() }, "size"),
        (Controls { active: Some(too_high.view()), ..Controls::default() }, "controls.active"),
        (Controls { rain: Some(negative.view()), ..Controls::default() }, "controls.rain"),
        (Controls { erodibility: Some(negative.view()), ..Controls::default() }, "controls.erodibility"),
    ];
    for (controls, expected) in cases {
        let mut map = terrain();
        let error = run(seeds(100), Mode::Fast, &mut map, controls).unwrap_err();
        match (&error, expected) {
            (Error::Grid(GridError::SizeMismatch { .. }), "size") => {}
            (Error::Param(p), field) if p.field() == field => {}
            _ => panic!("{expected}: {error:?}"),
        }
        assert_eq!(bits(&map), bits(&terrain()));
    }
}

#[test]
fn hydrology_honours_the_mask() {
    // More in tests/controls_hydrology.rs.
    let active = mask();
    let mut map = terrain();
    let before = map.clone();
    let mut rng = Xoshiro256StarStar::seed_from_u64(1);
    let mut hydrology =
        Hydrology::new(HydrologyParams { particles: 3_000, ..HydrologyParams::default() }, SIZE, SIZE)
            .unwrap();
    let controls = Controls { active: Some(active.view()), ..Controls::default() };
    let report =
        hydrology.run_with(map.view_mut(), &mut rng, RunOptions::default().with_controls(controls)).unwrap();
    assert_masked("hydrology", &before, &map, &report.erosion, &active);
    assert!(report.is_water_balanced(), "{report:?}");
}

/// Snowball's params for these maps (heights in `[0, 1]`): `blur` as asked.
fn snowballs(count: u32, blur: bool) -> SnowballParams {
    SnowballParams { snowballs: Some(count), blur, ..SnowballParams::default() }
}

fn run_snowball(
    params: SnowballParams,
    map: &mut Heightmap,
    controls: Controls<'_>,
) -> Result<ErosionReport, Error> {
    let mut rng = Xoshiro256StarStar::seed_from_u64(4);
    let options = RunOptions::default().with_controls(controls);
    Snowball::new(params)?.run_with(map.view_mut(), &mut rng, options)
}

#[test]
fn snowball_honours_the_mask_with_and_without_its_blur() {
    let active = mask();
    for blur in [false, true] {
        let mut map = terrain();
        let before = map.clone();
        let controls = Controls { active: Some(active.view()), ..Controls::default() };
        let report = run_snowball(snowballs(3_000, blur), &mut map, controls).unwrap();
        assert_masked(&format!("snowball, blur {blur}"), &before, &map, &report, &active);
    }
}

#[test]
fn snowball_without_controls_is_as_before_and_on_bedrock_only_deposits() {
    let bedrock = Heightmap::filled(SIZE, SIZE, 0.0).unwrap();
    let ones = Heightmap::filled(SIZE, SIZE, 1.0).unwrap();
    for blur in [false, true] {
        let params = snowballs(3_000, blur);
        let mut plain = terrain();
        let mut rng = Xoshiro256StarStar::seed_from_u64(4);
        let a = Snowball::new(params).unwrap().run(&mut plain, &mut rng).unwrap();
        // No maps, and an erodibility of 1 everywhere: the same bits.
        for controls in [Controls::default(), erodibility(&ones)] {
            let mut map = terrain();
            let b = run_snowball(params, &mut map, controls).unwrap();
            assert_eq!(a, b, "blur {blur}");
            assert_eq!(bits(&plain), bits(&map), "blur {blur}");
        }
        // Bedrock: nothing is cut, not even by the blur; the books balance.
        let mut map = terrain();
        let before = map.clone();
        let report = run_snowball(params, &mut map, erodibility(&bedrock)).unwrap();
        assert_eq!(report.eroded, 0.0, "blur {blur}");
        assert!(map.cells().iter().zip(before.cells()).all(|(a, b)| a >= b), "blur {blur}");
        assert!(MassBalance::of_run(&before, &map, &report).is_conserved(), "blur {blur}");
    }
}

#[test]
fn snowballs_start_only_where_rain_falls() {
    // Rain on one block, on a plane falling away from it towards +x, +y:
    // the wetness layer (a unit a snowball a step) is 0 wherever no snowball
    // went, and a dry map starts none.
    let rain = Heightmap::from_fn(SIZE, SIZE, |x, y| f32::from(u8::from(x >= 40 && y >= 40))).unwrap();
    let mut map = Heightmap::from_fn(SIZE, SIZE, |x, y| (2 * SIZE - x - y) as f32 * 0.01).unwrap();
    let mut layers = Layers::new(SIZE, SIZE).unwrap();
    let mut rng = Xoshiro256StarStar::seed_from_u64(2);
    let controls = Controls { rain: Some(rain.view()), ..Controls::default() };
    let options = RunOptions::default().with_controls(controls).with_layers(&mut layers);
    let report =
        Snowball::new(snowballs(500, false)).unwrap().run_with(map.view_mut(), &mut rng, options).unwrap();
    assert_eq!(report.droplets, 500);
    let wetness = layers.wetness();
    let wet: Vec<(usize, usize)> =
        (0..SIZE * SIZE).map(|i| (i % SIZE, i / SIZE)).filter(|&(x, y)| wetness[(x, y)] > 0.0).collect();
    assert!(wet.len() > 200, "{} cells", wet.len());
    assert!(wet.iter().all(|&(x, y)| x >= 40 && y >= 40), "{wet:?}");
    let dry = Heightmap::filled(SIZE, SIZE, 0.0).unwrap();
    let mut map = terrain();
    let report = run_snowball(
        snowballs(500, true),
        &mut map,
        Controls { rain: Some(dry.view()), ..Controls::default() },
    )
    .unwrap();
    assert_eq!(report.droplets, 0);
    assert_eq!(bits(&map), bits(&terrain()));
}

#[test]
fn snowball_refuses_bad_maps_and_changes_nothing() {
    let wrong_size = Heightmap::filled(SIZE, SIZE + 2, 1.0).unwrap();
    let too_high = Heightmap::filled(SIZE, SIZE, 2.0).unwrap();
    let mut map = terrain();
    let error = run_snowball(
        snowballs(100, true),
        &mut map,
        Controls { rain: Some(wrong_size.view()), ..Controls::default() },
    )
    .unwrap_err();
    assert!(matches!(error, Error::Grid(GridError::SizeMismatch { .. })), "{error:?}");
    let error = run_snowball(
        snowballs(100, true),
        &mut map,
        Controls { active: Some(too_high.view()), ..Controls::default() },
    )
    .unwrap_err();
    assert!(matches!(&error, Error::Param(p) if p.field() == "controls.active"), "{error:?}");
    assert_eq!(bits(&map), bits(&terrain()));
}

#[cfg(feature = "parallel")]
mod parallel {
    use super::*;
    use hydraulic_erosion::{Layout, Parallel, ParallelParams};

    fn on_threads<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
        rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(f)
    }

    fn run_parallel(
        params: ErosionParams,
        layout: Layout,
        map: &mut Heightmap,
        controls: Controls<'_>,
    ) -> Result<ErosionReport, Error> {
        let parallel = ParallelParams { layout, tile_size: 16, sweep_size: 512, ..ParallelParams::default() };
        let mut rng = Xoshiro256StarStar::seed_from_u64(6);
        let options = RunOptions::default().with_controls(controls);
        Parallel::new(parallel).unwrap().run_with(
            &mut Physical::new(params).unwrap(),
            map.view_mut(),
            &mut rng,
            options,
        )
    }

    /// Every steered layout a model has in a `Parallel` run, by name.
    fn layouts() -> Vec<(&'static str, Layout, Option<ErosionParams>)> {
        vec![
            ("seeds tiles", Layout::Tiles, Some(seeds(4_000))),
            ("landscape tiles", Layout::Tiles, Some(landscape(4_000))),
            ("seeds batches", Layout::Batches, Some(seeds(4_000))),
            ("snowball tiles", Layout::Tiles, None),
            ("snowball batches", Layout::Batches, None),
        ]
    }

    fn run_layout(
        layout: Layout,
        physical: Option<ErosionParams>,
        map: &mut Heightmap,
        controls: Controls<'_>,
    ) -> Result<ErosionReport, Error> {
        let Some(params) = physical else {
            let parallel = ParallelParams {
                layout,
                tile_size: 16,
                sweep_size: 512,
                batch_size: 256,
                ..ParallelParams::default()
            };
            let mut rng = Xoshiro256StarStar::seed_from_u64(6);
            let options = RunOptions::default().with_controls(controls);
            let mut snowball = Snowball::new(snowballs(3_000, true)).unwrap();
            return Parallel::new(parallel).unwrap().run_with(
                &mut snowball,
                map.view_mut(),
                &mut rng,
                options,
            );
        };
        run_parallel(params, layout, map, controls)
    }

    #[test]
    fn every_layout_honours_the_controls_with_the_same_bits_on_any_thread_count() {
        let active = mask();
        let rain = Heightmap::from_fn(SIZE, SIZE, |_, y| y as f32).unwrap();
        let soft = Heightmap::from_fn(SIZE, SIZE, |x, y| 0.5 + ((x + y) % 3) as f32).unwrap();
        for (name, layout, physical) in layouts() {
            let mut results = Vec::new();
            for threads in [1, 2, 3] {
                let mut map = terrain();
                let before = map.clone();
                let controls = Controls {
                    active: Some(active.view()),
                    rain: Some(rain.view()),
                    erodibility: Some(soft.view()),
                };
                let report =
                    on_threads(threads, || run_layout(layout, physical, &mut map, controls)).unwrap();
                assert_masked(name, &before, &map, &report, &active);
                results.push(bits(&map));
            }
            assert!(results.windows(2).all(|w| w[0] == w[1]), "{name}: bits differ between thread counts");
        }
    }

    #[test]
    fn in_parallel_no_rain_starts_nothing_and_no_controls_change_nothing() {
        let dry = Heightmap::filled(SIZE, SIZE, 0.0).unwrap();
        for (name, layout, physical) in layouts() {
            let mut map = terrain();
            let controls = Controls { rain: Some(dry.view()), ..Controls::default() };
            let report = run_layout(layout, physical, &mut map, controls).unwrap();
            assert_eq!(report.droplets, 0, "{name}");
            assert_eq!(bits(&map), bits(&terrain()), "{name}");
            let (mut plain, mut empty) = (terrain(), terrain());
            let a = run_layout(layout, physical, &mut plain, Controls::default()).unwrap();
            let ones = Heightmap::filled(SIZE, SIZE, 1.0).unwrap();
            let b = run_layout(layout, physical, &mut empty, erodibility(&ones)).unwrap();
            assert_eq!(a, b, "{name}");
            assert_eq!(bits(&plain), bits(&empty), "{name}");
        }
    }

    /// Half a unit in the last place of `value`.
    fn half_ulp(value: f32) -> f64 {
        let v = value.abs();
        (f64::from(f32::from_bits(v.to_bits() + 1)) - f64::from(v)) / 2.0
    }

    /// Batches on a 3 x 5 map whose active cells are all far from 0 (the
    /// masked ones hold a 0 no remainder may go to): the last remainder can
    /// be a tie on the finest active cell, placed nowhere. The report says so
    /// (`unplaced`, under half an ulp of that cell) and the balance allows it;
    /// before, 3-11 of 200 seeds missed a bound made for the masked 0.
    #[test]
    fn batches_report_what_an_active_mask_leaves_unplaced() {
        // fBm scaled to [0, 1]: its 0 is among the masked cells.
        let zeroed = fbm_terrain(3, 5, 3).unwrap();
        let active = Heightmap::from_fn(3, 5, |x, y| if x + 3 * y < 7 { 0.0 } else { 1.0 }).unwrap();
        let (mut with_unplaced, mut conserved) = (0, 0);
        for seed in 0..200 {
            let mut after = zeroed.clone();
            let mut physical =
                Physical::new(ErosionParams { droplets: 50, ..ErosionParams::default() }).unwrap();
            let parallel = ParallelParams {
                layout: Layout::Batches,
                batch_size: 25,
                batches_per_round: 2,
                ..ParallelParams::default()
            };
            let controls = Controls { active: Some(active.view()), ..Controls::default() };
            let report = Parallel::new(parallel)
                .unwrap()
                .run_with(
                    &mut physical,
                    after.view_mut(),
                    &mut Xoshiro256StarStar::seed_from_u64(seed),
                    RunOptions::default().with_controls(controls),
                )
                .unwrap();
            let finest_active = (0..15)
                .filter(|&i| active.cells()[i] > 0.0)
                .map(|i| after.cells()[i].abs())
                .fold(f32::INFINITY, f32::min);
            assert!(report.unplaced.abs() <= half_ulp(finest_active), "seed {seed}: {report:?}");
            with_unplaced += usize::from(report.unplaced != 0.0);
            let balance = MassBalance::of_run(&zeroed, &after, &report);
            assert!(balance.is_conserved(), "seed {seed}: {balance:?} {report:?}");
            conserved += 1;
            // Masked cells keep their bits.
            for i in (0..15).filter(|&i| active.cells()[i] == 0.0) {
                assert_eq!(after.cells()[i].to_bits(), zeroed.cells()[i].to_bits());
            }
        }
        assert_eq!(conserved, 200);
        assert!(with_unplaced > 0, "no seed left a remainder unplaced: the case is not exercised");
    }
}

/// Bedrock (erodibility 0) never goes down, not even by the ulp a droplet's
/// load can end below 0 (its deposits' `f32` shares rounded above the `f64`
/// load): that load was put down on the droplet's cell without the gate.
/// Step-limited landscape droplets made it (an audit: 3 of 20 seeds).
#[test]
fn bedrock_keeps_its_bits_when_a_load_ends_a_hair_below_zero() {
    let start = fbm_terrain(32, 32, 3).unwrap();
    let rock = Heightmap::from_fn(32, 32, |x, y| if (x + 2 * y) % 4 == 0 { 0.0 } else { 1.0 }).unwrap();
    let params = ErosionParams { droplets: 87, max_steps: 2, ..ErosionParams::landscape() };
    for mode in [Mode::Sequential, Mode::Lockstep, Mode::Fast] {
        for seed in 0..20 {
            let mut map = start.clone();
            let controls = Controls { erodibility: Some(rock.view()), ..Controls::default() };
            let options = RunOptions::default().with_mode(mode).with_controls(controls);
            let mut rng = Xoshiro256StarStar::seed_from_u64(seed);
            let report = Physical::new(params).unwrap().run_with(map.view_mut(), &mut rng, options).unwrap();
            for (i, (&old, &new)) in start.cells().iter().zip(map.cells()).enumerate() {
                if rock.cells()[i] == 0.0 {
                    assert!(new >= old, "{mode:?} seed {seed}: bedrock cell {i} {old} -> {new}");
                }
            }
            assert!(MassBalance::of_run(&start, &map, &report).is_conserved(), "{mode:?} {seed}: {report:?}");
        }
    }
}
