//! The thermal pass as a simulator (controls, layers, progress) and the
//! `Pipeline` that alternates it with a hydraulic run: same bits as the runs
//! one after another, conservation, masks, cancellation, bad input.

use hydraulic_erosion::rand_core::SeedableRng;
use hydraulic_erosion::{
    Control, Controls, ErosionParams, Error, Heightmap, Layers, MassBalance, Physical, Pipeline, RunOptions,
    Simulator, Thermal, ThermalParams, fbm_terrain, thermal,
};
use rand_xoshiro::Xoshiro256StarStar;

const SIZE: usize = 64;

/// A rugged terrain: fBm scaled to 40 height units over 64 cells, with
/// slopes well past 35 degrees.
fn rugged() -> Heightmap {
    let map = fbm_terrain(SIZE, SIZE, 9).unwrap();
    Heightmap::from_cells(SIZE, SIZE, map.cells().iter().map(|h| h * 40.0).collect()).unwrap()
}

fn bits(map: &Heightmap) -> Vec<u32> {
    map.cells().iter().map(|h| h.to_bits()).collect()
}

fn talus(iterations: u32) -> Thermal {
    Thermal::new(ThermalParams { iterations, ..ThermalParams::default() }).unwrap()
}

fn water(droplets: u32) -> Physical {
    Physical::new(ErosionParams { droplets, ..ErosionParams::default() }).unwrap()
}

/// Active 0 on the left half, 1 on the right.
fn half_mask() -> Heightmap {
    Heightmap::from_fn(SIZE, SIZE, |x, _| f32::from(u8::from(x >= SIZE / 2))).unwrap()
}

#[test]
fn the_thermal_simulator_is_the_thermal_pass_with_books() {
    let before = rugged();
    let (mut a, mut b) = (before.clone(), before.clone());
    let plain = thermal(&mut a, &ThermalParams::default()).unwrap();
    let report = talus(50).run_seeded(&mut b, 1).unwrap();
    assert_eq!(bits(&a), bits(&b));
    assert_eq!((plain.moved, plain.steepest_excess), (report.moved, report.steepest_excess));
    assert_eq!(report.iterations, 50);
    // Every lowered cell's loss is booked; nothing leaves the map.
    let lowered: f64 =
        before.cells().iter().zip(b.cells()).map(|(&o, &n)| (f64::from(o) - f64::from(n)).max(0.0)).sum();
    assert!(report.erosion.eroded >= lowered * (1.0 - 1e-9), "{} vs {lowered}", report.erosion.eroded);
    assert!((report.erosion.eroded - report.erosion.deposited).abs() < 1e-6 * report.erosion.eroded);
    assert_eq!((report.erosion.outflow, report.erosion.droplets), (0.0, 0));
    assert!(MassBalance::of_run(&before, &b, &report.erosion).is_conserved());
}

#[test]
fn the_thermal_simulator_honours_the_mask_and_bedrock() {
    let before = rugged();
    let active = half_mask();
    let bedrock = Heightmap::from_fn(SIZE, SIZE, |_, y| f32::from(u8::from(y >= SIZE / 2))).unwrap();
    let controls =
        Controls { active: Some(active.view()), erodibility: Some(bedrock.view()), ..Controls::default() };
    let mut map = before.clone();
    let mut rng = Xoshiro256StarStar::seed_from_u64(1);
    let report =
        talus(50).run_with(map.view_mut(), &mut rng, RunOptions::default().with_controls(controls)).unwrap();
    let mut changed = 0;
    for y in 0..SIZE {
        for x in 0..SIZE {
            let (old, new) = (before[(x, y)], map[(x, y)]);
            if x < SIZE / 2 {
                assert_eq!(old.to_bits(), new.to_bits(), "masked ({x}, {y})");
            } else if y < SIZE / 2 {
                assert!(new >= old, "bedrock ({x}, {y}) went down: {old} -> {new}");
            } else {
                changed += usize::from(old != new);
            }
        }
    }
    assert!(changed > 300, "{changed} cells moved");
    assert!(MassBalance::of_run(&before, &map, &report.erosion).is_conserved());
}

#[test]
fn the_thermal_simulator_records_its_height_change_and_stops_when_told() {
    let before = rugged();
    let mut layers = Layers::new(SIZE, SIZE).unwrap();
    let mut map = before.clone();
    let mut rng = Xoshiro256StarStar::seed_from_u64(1);
    talus(20).run_with(map.view_mut(), &mut rng, RunOptions::default().with_layers(&mut layers)).unwrap();
    let (erosion, deposition) = (layers.erosion(), layers.deposition());
    for i in 0..map.len() {
        assert_eq!(
            deposition.cells()[i] - erosion.cells()[i],
            map.cells()[i] - before.cells()[i],
            "cell {i}"
        );
    }
    assert_eq!(layers.flux().cells().iter().sum::<f32>(), 0.0);

    // Stopped after 7 iterations: the bits of a 7-iteration pass.
    let mut stopped = before.clone();
    let mut stop = |done: u64, _: u64| if done >= 7 { Control::Stop } else { Control::Continue };
    let report = talus(20)
        .run_with(stopped.view_mut(), &mut rng, RunOptions::default().with_progress(&mut stop))
        .unwrap();
    assert!(report.erosion.cancelled);
    assert_eq!(report.iterations, 7);
    let mut seven = before.clone();
    talus(7).run_seeded(&mut seven, 0).unwrap();
    assert_eq!(bits(&stopped), bits(&seven));
}

#[test]
fn a_pipeline_is_its_runs_in_turn() {
    let before = rugged();
    let mut piped = before.clone();
    let report = Pipeline::new(water(1_500), talus(10), 3).unwrap().run_seeded(&mut piped, 5).unwrap();
    assert_eq!((report.first.len(), report.second.len()), (3, 3));
    assert_eq!(report.total.droplets, 4_500);
    // By hand, drawing from one generator in the same order.
    let mut by_hand = before.clone();
    let mut rng = Xoshiro256StarStar::seed_from_u64(5);
    for round in 0..3 {
        let a = water(1_500).run(&mut by_hand, &mut rng).unwrap();
        let b = talus(10).run(&mut by_hand, &mut rng).unwrap();
        assert_eq!((&a, &b), (&report.first[round], &report.second[round]), "round {round}");
    }
    assert_eq!(bits(&piped), bits(&by_hand));
    let balance = MassBalance::of_run(&before, &piped, &report.total);
    assert!(balance.is_conserved(), "{balance:?}");
    assert!(report.total.outflow > 0.0 && report.total.eroded > 0.0);
}

/// Models chosen at run time (boxed) or lent (`&mut`) run as themselves,
/// in a pipeline too.
#[test]
fn boxed_and_borrowed_simulators_run_as_themselves() {
    use hydraulic_erosion::ErosionReport;
    let before = rugged();
    let mut owned = before.clone();
    let expected = Pipeline::new(water(1_000), talus(5), 2).unwrap().run_seeded(&mut owned, 3).unwrap();

    let mut boxed = before.clone();
    let first: Box<dyn Simulator<Report = ErosionReport>> = Box::new(water(1_000));
    let mut second = talus(5);
    let report = Pipeline::new(first, &mut second, 2).unwrap().run_seeded(&mut boxed, 3).unwrap();
    assert_eq!(bits(&boxed), bits(&owned));
    assert_eq!(
        (&report.first, &report.second, &report.total),
        (&expected.first, &expected.second, &expected.total)
    );
    // The lent model is still the caller's.
    assert_eq!(second.params().iterations, 5);
}

#[test]
fn talus_rounds_leave_gentler_slopes_than_water_alone() {
    // The same droplets with and without a talus pass after each round: the
    // steepest slope past repose is lower with them.
    let steepest = |map: &Heightmap| talus(0).run_seeded(&mut map.clone(), 0).unwrap().steepest_excess;
    let mut alone = rugged();
    let mut rng = Xoshiro256StarStar::seed_from_u64(3);
    for _ in 0..4 {
        water(1_000).run(&mut alone, &mut rng).unwrap();
    }
    let mut piped = rugged();
    Pipeline::new(water(1_000), talus(25), 4).unwrap().run_seeded(&mut piped, 3).unwrap();
    let (a, p) = (steepest(&alone), steepest(&piped));
    assert!(p < 0.5 * a, "with talus {p}, water alone {a}");
}

#[test]
fn a_masked_pipeline_keeps_masked_cells_and_a_stopped_one_ends_balanced() {
    let before = rugged();
    let active = half_mask();
    let mut map = before.clone();
    let mut rng = Xoshiro256StarStar::seed_from_u64(2);
    let options =
        RunOptions::default().with_controls(Controls { active: Some(active.view()), ..Controls::default() });
    let report = Pipeline::new(water(1_000), talus(10), 2)
        .unwrap()
        .run_with(map.view_mut(), &mut rng, options)
        .unwrap();
    for i in 0..map.len() {
        if active.cells()[i] == 0.0 {
            assert_eq!(map.cells()[i].to_bits(), before.cells()[i].to_bits(), "masked cell {i}");
        }
    }
    assert!(report.total.masked > 0);
    assert!(MassBalance::of_run(&before, &map, &report.total).is_conserved());

    // Progress runs over the whole pipeline, and a stop ends it in that run.
    let mut seen = Vec::new();
    let mut stop_late = |done: u64, total: u64| {
        seen.push((done, total));
        if done >= 3 * 1024 { Control::Stop } else { Control::Continue }
    };
    let mut map = before.clone();
    let options = RunOptions::default().with_progress(&mut stop_late);
    let report = Pipeline::new(water(1_000), talus(10), 4)
        .unwrap()
        .run_with(map.view_mut(), &mut rng, options)
        .unwrap();
    // The stop came as the third run ended: no fourth run.
    assert!(report.total.cancelled);
    assert_eq!((report.first.len(), report.second.len()), (2, 1));
    assert!(seen.iter().all(|&(_, total)| total == 8 * 1024));
    assert!(seen.windows(2).all(|w| w[0].0 <= w[1].0), "progress went back");
    assert!(MassBalance::of_run(&before, &map, &report.total).is_conserved());
}

/// A stop said once, at a run's last call (which a run alone finishes
/// anyway), still ends the pipeline before its next run. (It was lost: the
/// next run asked anew, and the pipeline ran to its end.)
#[test]
fn a_stop_at_a_runs_last_call_ends_the_pipeline() {
    let before = rugged();
    // Stop once, at the first run's last call (done 1024 of 4 * 1024).
    let (mut calls, mut stops) = (0u32, 0u32);
    let mut stop_once = |done: u64, _: u64| {
        calls += 1;
        if done == 1024 && stops == 0 {
            stops += 1;
            Control::Stop
        } else {
            Control::Continue
        }
    };
    let mut map = before.clone();
    let mut rng = Xoshiro256StarStar::seed_from_u64(4);
    let options = RunOptions::default().with_progress(&mut stop_once);
    let report = Pipeline::new(water(1_000), talus(10), 2)
        .unwrap()
        .run_with(map.view_mut(), &mut rng, options)
        .unwrap();
    assert_eq!(stops, 1);
    assert!(report.total.cancelled);
    assert_eq!((report.first.len(), report.second.len()), (1, 0));
    assert_eq!(report.total.droplets, 1_000, "the first run finished");
    assert!(MassBalance::of_run(&before, &map, &report.total).is_conserved());
    // A stop at the very last call ends nothing: every run is done.
    let mut stop_last = |done: u64, total: u64| if done == total { Control::Stop } else { Control::Continue };
    let mut map = before.clone();
    let options = RunOptions::default().with_progress(&mut stop_last);
    let report = Pipeline::new(water(1_000), talus(10), 2)
        .unwrap()
        .run_with(map.view_mut(), &mut rng, options)
        .unwrap();
    assert!(!report.total.cancelled);
    assert_eq!((report.first.len(), report.second.len()), (2, 2));
}

#[test]
fn bad_input_is_a_typed_error_and_changes_nothing() {
    assert_eq!(Pipeline::new(water(10), talus(1), 0).unwrap_err().field(), "rounds");
    assert_eq!(
        Thermal::new(ThermalParams { rate: 2.0, ..ThermalParams::default() }).unwrap_err().field(),
        "rate"
    );
    let wrong = Heightmap::filled(SIZE + 1, SIZE, 1.0).unwrap();
    let mut map = rugged();
    let mut rng = Xoshiro256StarStar::seed_from_u64(2);
    let options =
        RunOptions::default().with_controls(Controls { active: Some(wrong.view()), ..Controls::default() });
    let error = Pipeline::new(water(100), talus(1), 2)
        .unwrap()
        .run_with(map.view_mut(), &mut rng, options)
        .unwrap_err();
    assert!(matches!(error, Error::Grid(_)), "{error:?}");
    assert_eq!(bits(&map), bits(&rugged()));
}

/// A later run's error (a second simulator made for another map size) puts
/// the map and the layers back as the pipeline found them: before, the first
/// run's changes stayed and its books (its outflow) were dropped with the
/// report, so no balance could be drawn.
#[test]
fn a_later_runs_error_puts_the_map_and_the_layers_back() {
    use hydraulic_erosion::{GridError, Hydrology, HydrologyParams};
    let hydrology =
        Hydrology::new(HydrologyParams { particles: 10, ..HydrologyParams::default() }, SIZE + 1, SIZE)
            .unwrap();
    let mut pipeline = Pipeline::new(water(500), hydrology, 1).unwrap();
    let mut map = rugged();
    let mut layers = Layers::new(SIZE, SIZE).unwrap();
    let mut rng = Xoshiro256StarStar::seed_from_u64(3);
    let options = RunOptions::default().with_layers(&mut layers);
    let error = pipeline.run_with(map.view_mut(), &mut rng, options).unwrap_err();
    assert!(matches!(error, Error::Grid(GridError::SizeMismatch { .. })), "{error:?}");
    assert_eq!(bits(&map), bits(&rugged()));
    assert_eq!(layers, Layers::new(SIZE, SIZE).unwrap());
}
