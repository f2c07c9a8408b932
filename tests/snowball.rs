//! The Snowball simulator: conservation, determinism, the border rule, rest on
//! flat ground, no single-cell pits, progress, and typed errors for bad input.

use crate::common;

use hydraulic_erosion::rand_core::{Rng, SeedableRng};
use hydraulic_erosion::{
    BlurParams, EightFacet, Error, GridError, Heightmap, MassBalance, Snowball, SnowballParams, blur,
    fbm_terrain, island_terrain,
};
use hydraulic_erosion::{Mode, RunOptions, Simulator};
use proptest::prelude::*;
use rand_xoshiro::Xoshiro256StarStar;

fn params(snowballs: u32) -> SnowballParams {
    SnowballParams { snowballs: Some(snowballs), ..SnowballParams::default() }
}

/// `island_terrain` raised to `relief` height units (the original's islands are
/// about 10 units high over cells 0.1 units wide).
fn island(size: usize, seed: u64, relief: f32) -> Heightmap {
    let mut map = island_terrain(size, size, seed).unwrap();
    for h in map.cells_mut() {
        *h *= relief;
    }
    map
}

/// Cells strictly lower than all 8 neighbours.
fn pits(map: &Heightmap) -> usize {
    let (w, h) = (map.width(), map.height());
    let mut count = 0;
    for y in 1..h - 1 {
        for x in 1..w - 1 {
            let lowest = (0..9)
                .filter(|&k| k != 4)
                .map(|k| map[(x + k % 3 - 1, y + k / 3 - 1)])
                .fold(f32::INFINITY, f32::min);
            count += usize::from(map[(x, y)] < lowest);
        }
    }
    count
}

#[test]
fn a_default_run_on_an_island_erodes_and_balances() {
    let before = island(128, 3, 10.0);
    let mut map = before.clone();
    let mut snowball = Snowball::new(SnowballParams::default()).unwrap();
    let report = snowball.run_seeded(&mut map, 5).unwrap();
    // 0.4 snowballs per cell.
    assert_eq!(report.droplets, 6_554);
    assert_eq!(report.flat + report.left_map + report.step_limited + report.unstable, 6_554);
    assert!(report.steps > 50_000 && report.steps <= 6_554 * 80, "{report:?}");
    assert!(report.eroded > 10.0 && report.deposited > 10.0, "{report:?}");
    // Islands drain into the sea: snowballs come to rest there, none leaves.
    assert!(report.flat > 1_000, "{report:?}");
    assert_eq!((report.left_map, report.outflow), (0, 0.0));
    let balance = MassBalance::new(&before, &map, report.outflow);
    assert!(balance.is_conserved(), "{balance:?}");
    approx::assert_relative_eq!(report.eroded, report.deposited, max_relative = 1e-9);
    assert!(common::all_finite(&map));
    // The sea far from the island stays flat at 0 (up to the run's last sub-ulp
    // rounding remainder, put on the cell of smallest magnitude).
    let sea = (0..128).flat_map(|i| [map[(i, 0)], map[(0, i)], map[(127, i)], map[(i, 127)]]);
    assert!(sea.clone().all(|h| h.abs() < 1e-6), "{:?}", sea.fold(0.0_f32, |m, h| m.max(h.abs())));
}

#[test]
fn the_count_is_per_cell_or_exact() {
    let d = SnowballParams::default();
    assert_eq!(d.count(256, 256), 26_214); // 26 214.4
    assert_eq!(d.count(354, 354), 50_126);
    assert_eq!(SnowballParams { drops_per_cell: 0.5, ..d }.count(3, 1), 2); // 1.5 rounds up
    assert_eq!(SnowballParams { drops_per_cell: 0.0, ..d }.count(512, 512), 0);
    assert_eq!(params(35_000).count(7, 7), 35_000);
}

#[test]
fn same_seed_same_bits_other_seed_other_bits() {
    let base = island(64, 1, 10.0);
    let mut snowball = Snowball::new(params(2_000)).unwrap();
    let mut run = |seed| {
        let mut map = base.clone();
        let report = snowball.run_seeded(&mut map, seed).unwrap();
        (common::map_hash(&map), report)
    };
    let (a, ra) = run(7);
    let (b, rb) = run(7);
    let (c, _) = run(8);
    assert_eq!((a, ra), (b, rb));
    assert_ne!(a, c);
    // Any generator, through a trait object.
    let mut map = base.clone();
    let mut rng = Xoshiro256StarStar::seed_from_u64(7);
    let dyn_rng: &mut dyn Rng = &mut rng;
    snowball.run(&mut map, dyn_rng).unwrap();
    assert_eq!(common::map_hash(&map), a);
}

#[test]
fn the_blur_is_the_last_step_of_a_run() {
    let base = island(48, 2, 10.0);
    let mut with = base.clone();
    Snowball::new(params(800)).unwrap().run_seeded(&mut with, 3).unwrap();
    let mut without = base.clone();
    Snowball::new(SnowballParams { blur: false, ..params(800) })
        .unwrap()
        .run_seeded(&mut without, 3)
        .unwrap();
    assert_ne!(with, without);
    blur(&mut without, &BlurParams::default()).unwrap();
    // The same map, up to where the run's sub-ulp rounding remainder went.
    let most = with.cells().iter().zip(without.cells()).map(|(a, b)| (a - b).abs()).fold(0.0_f32, f32::max);
    assert!(most < 1e-8, "cells differ by up to {most}");
}

#[test]
fn snowballs_come_to_rest_in_a_gully_instead_of_digging_it() {
    // A straight V-shaped gully whose floor lies between two columns. The
    // offset sampler blends unit normals; at the floor the walls' normals cancel
    // sideways and leave (0, b, 0) with b < 1. Read as it is, a snowball would
    // rest there eroding `(1 - b) * erosion_rate` every step until its step
    // limit; as the unit normal it is, the floor is flat and the snowball stops.
    let before = Heightmap::from_fn(24, 24, |x, _| 0.1 * (x as f32 - 11.5).abs()).unwrap();
    let mut map = before.clone();
    let p = SnowballParams { radius: 0.0, blur: false, ..params(300) };
    let report = Snowball::new(p).unwrap().run_seeded(&mut map, 1).unwrap();
    // Read as it is, no snowball ever stops and the floor is dug 4 units deep.
    assert!(report.flat > 20, "{report:?}");
    assert!(MassBalance::new(&before, &map, report.outflow).is_conserved());
    // The floor (0.05 high) is not dug: the loads put down there raise it.
    let (lowest, _) = map.min_max();
    assert!(lowest >= 0.05, "lowest {lowest}");
}

#[test]
fn a_default_run_adds_no_crowd_of_single_cell_pits() {
    // A port of this algorithm is known to dig deep single-cell pits.
    let before = island(256, 1, 10.0);
    let mut map = before.clone();
    let report = Snowball::new(SnowballParams::default()).unwrap().run_seeded(&mut map, 1).unwrap();
    let (pits_before, pits_after) = (pits(&before), pits(&map));
    eprintln!("pits before {pits_before}, after {pits_after} of {} cells; {report:?}", map.len());
    assert!(pits_after <= pits_before + map.len() / 1000, "{pits_before} -> {pits_after}");
    // And the pits there are are shallow: none deeper than 1 % of the relief.
    let deepest = (1..255)
        .flat_map(|y| (1..255).map(move |x| (x, y)))
        .map(|(x, y)| {
            let lowest = (0..9)
                .filter(|&k| k != 4)
                .map(|k| map[(x + k % 3 - 1, y + k / 3 - 1)])
                .fold(f32::INFINITY, f32::min);
            lowest - map[(x, y)]
        })
        .fold(0.0_f32, f32::max);
    eprintln!("deepest pit {deepest}");
    assert!(deepest < 0.1, "deepest pit {deepest}");
}

#[test]
fn water_runs_off_a_tilted_map_and_the_border_erodes() {
    // Not an island: slopes that run off the map carry snowballs and their load out.
    let before = Heightmap::from_fn(40, 40, |x, y| 0.2 * x as f32 + 0.01 * ((x * y) % 7) as f32).unwrap();
    let mut map = before.clone();
    let p = SnowballParams { blur: false, ..params(4_000) };
    let report = Snowball::new(p).unwrap().run_seeded(&mut map, 3).unwrap();
    assert!(report.left_map > 1_000 && report.outflow > 0.0, "{report:?}");
    assert!(MassBalance::new(&before, &map, report.outflow).is_conserved());
    // No untouched rim: the low border column changes like the columns inside.
    let changed = |x: usize| (0..40).filter(|&y| map[(x, y)] != before[(x, y)]).count();
    let counts: Vec<usize> = (0..40).map(changed).collect();
    assert!(counts[0] >= 30, "{counts:?}");
}

#[test]
fn tiny_maps_erode_to_themselves() {
    for (w, h) in [(1, 1), (2, 2), (1, 9), (9, 2), (2, 40)] {
        let before = Heightmap::from_fn(w, h, |x, y| (x * 3 + y) as f32).unwrap();
        let mut map = before.clone();
        let report = Snowball::new(params(1_000)).unwrap().run_seeded(&mut map, 1).unwrap();
        assert_eq!(map, before, "{w}x{h}");
        assert_eq!((report.droplets, report.steps), (0, 0));
    }
    // 3x3 is the smallest map that simulates. (Unblurred: on a map of 9 cells
    // the blur's last rounding can exceed the tolerance, see tests/blur.rs.)
    let before = Heightmap::from_fn(3, 3, |x, y| (x * 3 + y) as f32 * 0.1).unwrap();
    let mut map = before.clone();
    let p = SnowballParams { blur: false, ..params(1_000) };
    let report = Snowball::new(p).unwrap().run_seeded(&mut map, 1).unwrap();
    assert_eq!(report.droplets, 1_000);
    assert!(MassBalance::new(&before, &map, report.outflow).is_conserved());
}

#[test]
fn the_iteration_limit_bounds_every_snowball() {
    // A bowl with no friction loss to speak of: snowballs slosh until the limit.
    let before = common::bowl(32, 0.01);
    let mut map = before.clone();
    let p = SnowballParams { max_iterations: 20, friction: 1.0, blur: false, ..params(300) };
    let report = Snowball::new(p).unwrap().run_seeded(&mut map, 1).unwrap();
    assert!(report.steps <= 300 * 20);
    assert!(report.step_limited > 200, "{report:?}");
    assert!(MassBalance::new(&before, &map, report.outflow).is_conserved());
}

#[test]
fn any_sampler_can_be_plugged_in() {
    let before = fbm_terrain(48, 48, 4).unwrap();
    let mut map = before.clone();
    let snowball = Snowball::with_sampler(SnowballParams { height_scale: 60.0, ..params(1_000) }, EightFacet);
    let report = snowball.unwrap().run_seeded(&mut map, 2).unwrap();
    assert!(report.eroded > 0.0);
    assert!(MassBalance::new(&before, &map, report.outflow).is_conserved());
}

#[test]
fn extreme_heights_never_produce_non_finite_cells() {
    for scale in [1e30_f32, 3e38, 1e-30] {
        let before =
            Heightmap::from_fn(24, 24, |x, y| (((x * 31 + y * 17) % 13) as f32 / 13.0 - 0.5) * scale)
                .unwrap();
        let mut map = before.clone();
        let p = SnowballParams { height_scale: 1e6, erosion_rate: 1e6, ..params(300) };
        let report = Snowball::new(p).unwrap().run_seeded(&mut map, 9).unwrap();
        assert!(common::all_finite(&map), "scale {scale}");
        let balance = MassBalance::new(&before, &map, report.outflow);
        assert!(balance.is_conserved(), "scale {scale}: {balance:?} {report:?}");
    }
}

#[test]
fn non_finite_maps_are_rejected_untouched() {
    let mut map = island(16, 1, 10.0);
    map[(5, 9)] = f32::NEG_INFINITY;
    let bits: Vec<u32> = map.cells().iter().map(|h| h.to_bits()).collect();
    let err = Snowball::new(params(100)).unwrap().run_seeded(&mut map, 1).unwrap_err();
    assert_eq!(err, Error::Grid(GridError::NonFinite { x: 5, y: 9 }));
    assert_eq!(map.cells().iter().map(|h| h.to_bits()).collect::<Vec<_>>(), bits);
}

#[test]
fn bad_params_are_typed_errors_naming_the_field() {
    let d = SnowballParams::default();
    let mut cases: Vec<(SnowballParams, &str)> = Vec::new();
    let bad_floats = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.5, 1e7];
    for v in bad_floats {
        cases.push((SnowballParams { drops_per_cell: v, ..d }, "drops_per_cell"));
        cases.push((SnowballParams { erosion_rate: v, ..d }, "erosion_rate"));
        cases.push((SnowballParams { deposition_rate: v, ..d }, "deposition_rate"));
        cases.push((SnowballParams { speed: v, ..d }, "speed"));
        cases.push((SnowballParams { friction: v, ..d }, "friction"));
        cases.push((SnowballParams { radius: v, ..d }, "radius"));
        cases.push((SnowballParams { iteration_scale: v, ..d }, "iteration_scale"));
        cases.push((SnowballParams { height_scale: v, ..d }, "height_scale"));
    }
    cases.extend([
        (SnowballParams { speed: 0.0, ..d }, "speed"),
        (SnowballParams { height_scale: 0.0, ..d }, "height_scale"),
        (SnowballParams { deposition_rate: 1.01, ..d }, "deposition_rate"),
        (SnowballParams { friction: 1.01, ..d }, "friction"),
        (SnowballParams { iteration_scale: 2.0, ..d }, "iteration_scale"),
        (SnowballParams { max_iterations: 0, ..d }, "max_iterations"),
        (SnowballParams { max_iterations: u32::MAX, ..d }, "max_iterations"),
    ]);
    let mut map = island(8, 1, 10.0);
    let before = map.clone();
    for (p, field) in cases {
        let err = p.validate().unwrap_err();
        assert_eq!(err.field(), field, "{p:?}");
        assert!(err.to_string().contains(field) && err.to_string().contains("must be"), "{err}");
        assert_eq!(Snowball::new(p).unwrap_err(), err);
        assert_eq!(Snowball::with_sampler(p, EightFacet).unwrap_err(), err);
        assert_eq!(Error::from(err), Error::Param(err));
    }
    assert_eq!(map, before);
    // The edges of each range are accepted; zero is fine where it means "none".
    for p in [
        SnowballParams {
            drops_per_cell: 0.0,
            erosion_rate: 0.0,
            deposition_rate: 0.0,
            friction: 0.0,
            radius: 0.0,
            iteration_scale: 0.0,
            max_iterations: 1,
            ..d
        },
        SnowballParams {
            drops_per_cell: 1000.0,
            erosion_rate: 1e6,
            deposition_rate: 1.0,
            speed: 1000.0,
            friction: 1.0,
            radius: 1e6,
            iteration_scale: 1.0,
            height_scale: 1e6,
            max_iterations: 1_000_000,
            snowballs: Some(0),
            blur: false,
            cell_size: 1e6,
        },
    ] {
        assert!(p.validate().is_ok(), "{p:?}");
        Snowball::new(p).unwrap().run_seeded(&mut map, 1).unwrap();
    }
}

#[test]
fn progress_reports_and_cancels_leaving_the_map_balanced() {
    use hydraulic_erosion::{Control, PROGRESS_INTERVAL};
    let before = island(64, 3, 10.0);
    let mut map = before.clone();
    let mut snowball = Snowball::new(params(10_000)).unwrap();
    let mut calls = Vec::new();
    let mut progress = |done: u64, total: u64| {
        calls.push((done, total));
        if done >= 3 * PROGRESS_INTERVAL { Control::Stop } else { Control::Continue }
    };
    let mut rng = Xoshiro256StarStar::seed_from_u64(9);
    let report = snowball
        .run_with(
            map.view_mut(),
            &mut rng,
            RunOptions::default().with_mode(Mode::Sequential).with_progress(&mut progress),
        )
        .unwrap();
    assert!(report.cancelled);
    assert_eq!(report.droplets, 3 * PROGRESS_INTERVAL);
    let p = PROGRESS_INTERVAL;
    assert_eq!(calls, vec![(p, 10_000), (2 * p, 10_000), (3 * p, 10_000), (3 * p, 10_000)]);
    assert!(MassBalance::new(&before, &map, report.outflow).is_conserved());

    // The cancelled run did exactly the first snowballs of the full run, unblurred.
    let mut partial = before.clone();
    let mut three = Snowball::new(SnowballParams { blur: false, ..params(3 * p as u32) }).unwrap();
    let full = three.run_seeded(&mut partial, 9).unwrap();
    assert_eq!(partial, map);
    assert_eq!(full.steps, report.steps);
    assert!(!full.cancelled);
}

#[test]
fn snowball_default_run_is_value_stable() {
    // Pinned: a change here is value-breaking (see tests/value_stability.rs).
    let mut map = island(64, 7, 10.0);
    let report = Snowball::new(SnowballParams::default()).unwrap().run_seeded(&mut map, 11).unwrap();
    assert_eq!((report.droplets, report.steps), (1_638, 84_311));
    assert_eq!(format!("{:016x}", common::map_hash(&map)), "660dc3f1c221defe");
}

#[test]
fn snowball_eight_facet_unblurred_run_is_value_stable() {
    let mut map = fbm_terrain(48, 40, 3).unwrap();
    let p = SnowballParams { height_scale: 60.0, blur: false, ..params(3_000) };
    let report = Snowball::with_sampler(p, EightFacet).unwrap().run_seeded(&mut map, 5).unwrap();
    assert_eq!(report.steps, 159_142);
    assert_eq!(format!("{:016x}", common::map_hash(&map)), "dfd0229a9d5ce40a");
}

fn arb_map() -> impl Strategy<Value = Heightmap> {
    (1usize..=48, 1usize..=48, -3i32..=6, any::<u64>(), 0u8..3).prop_flat_map(|(w, h, exp, seed, kind)| {
        let scale = 10f32.powi(exp);
        prop::collection::vec(-1.0f32..1.0, w * h).prop_map(move |noise| {
            // Rough noise, an island, or terrain plus a cliff.
            let terrain = fbm_terrain(w, h, seed).unwrap();
            let isle = island_terrain(w, h, seed).unwrap();
            Heightmap::from_fn(w, h, |x, y| match kind {
                0 => noise[y * w + x] * scale,
                1 => isle[(x, y)] * scale,
                _ => (terrain[(x, y)] + if x > w / 2 { 2.0 } else { 0.0 }) * scale,
            })
            .unwrap()
        })
    })
}

fn arb_params() -> impl Strategy<Value = SnowballParams> {
    (
        (0.0f32..=2.0, 0.0f32..=1.0, 0.0f32..=1.0, 0.01f32..=2.0, 0.0f32..=1.0),
        (0.0f32..=2.0, 1u32..=200, 0.0f32..=1.0, 0.1f32..=200.0, any::<bool>(), 0u32..=300, 0.25f32..=4.0),
    )
        .prop_map(
            |(
                (drops_per_cell, erosion_rate, deposition_rate, speed, friction),
                (radius, max_iterations, iteration_scale, height_scale, blur, snowballs, cell_size),
            )| SnowballParams {
                drops_per_cell,
                snowballs: (snowballs > 0).then_some(snowballs),
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
}

/// Half the ulp of the cell of smallest magnitude (see tests/blur.rs).
fn half_ulp(map: &Heightmap) -> f64 {
    let smallest = map.cells().iter().fold(f32::INFINITY, |m, h| m.min(h.abs()));
    f64::from(f32::from_bits(smallest.to_bits() + 1) - smallest) * 0.5
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256)
}

proptest! {
    // 256 cases by default; PROPTEST_CASES=100000 for a long soak.
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn sediment_is_conserved_on_any_map(map in arb_map(), p in arb_params(), seed in any::<u64>()) {
        let mut after = map.clone();
        let report = Snowball::new(p).unwrap().run_seeded(&mut after, seed).unwrap();
        prop_assert!(common::all_finite(&after));
        let balance = MassBalance::new(&map, &after, report.outflow);
        // The books are exact up to the run's last rounding, below half the ulp
        // of the smallest cell. On a map of a few cells that erosion has carved
        // far beyond its starting heights, f32 cannot resolve the tolerance
        // itself (see `MassBalance::TOLERANCE`).
        let slack = MassBalance::TOLERANCE * balance.scale + half_ulp(&after);
        prop_assert!(balance.is_conserved() || balance.error().abs() <= slack,
            "{:?} {:?}", balance, report);
        prop_assert!(report.steps <= p.count(map.width(), map.height()) * u64::from(p.max_iterations));
    }

    #[test]
    fn runs_are_deterministic(map in arb_map(), p in arb_params(), seed in any::<u64>()) {
        let mut snowball = Snowball::new(p).unwrap();
        let mut a = map.clone();
        let mut b = map.clone();
        let ra = snowball.run_seeded(&mut a, seed).unwrap();
        let rb = snowball.run_seeded(&mut b, seed).unwrap();
        prop_assert_eq!(common::map_hash(&a), common::map_hash(&b));
        prop_assert_eq!(ra, rb);
    }
}

#[cfg(feature = "serde")]
#[test]
fn params_round_trip_through_config_files() {
    let params = SnowballParams { snowballs: Some(35_000), blur: false, ..SnowballParams::default() };
    let json = serde_json::to_string(&params).unwrap();
    assert_eq!(serde_json::from_str::<SnowballParams>(&json).unwrap(), params);
    // A config file names only what it changes.
    let partial: SnowballParams = serde_json::from_str(r#"{"drops_per_cell": 0.6, "radius": 1.2}"#).unwrap();
    assert_eq!(partial, SnowballParams { drops_per_cell: 0.6, radius: 1.2, ..SnowballParams::default() });
    assert!(serde_json::from_str::<SnowballParams>(r#"{"snowbals": 10}"#).is_err());
    let blur: BlurParams = serde_json::from_str(r#"{"passes": 2}"#).unwrap();
    assert_eq!(blur, BlurParams { passes: 2, ..BlurParams::default() });
}

/// `cell_size` puts `height_scale`, `speed` and `radius` per unit length: a
/// run with it is, bit for bit, the run with those lengths over the cell size
/// by hand (and `cell_size` 1 is the params as they are).
#[test]
fn cell_size_scales_each_length_as_documented() {
    let before = island(64, 5, 10.0);
    for size in [0.5f32, 2.0, 3.0] {
        let world = SnowballParams { cell_size: size, ..params(3_000) };
        let hand = SnowballParams {
            height_scale: world.height_scale / size,
            speed: world.speed / size,
            radius: world.radius / size,
            ..params(3_000)
        };
        assert_eq!(world.in_cells(), hand, "{size}");
        let (mut a, mut b) = (before.clone(), before.clone());
        let ra = Snowball::new(world).unwrap().run_seeded(&mut a, 9).unwrap();
        let rb = Snowball::new(hand).unwrap().run_seeded(&mut b, 9).unwrap();
        assert_eq!(a, b, "cell size {size}");
        assert_eq!(ra, rb);
        assert!(ra.eroded > 0.0 && MassBalance::new(&before, &a, ra.outflow).is_conserved());
        assert_eq!(Snowball::new(world).unwrap().params().cell_size, size);
    }
    // Finer cells: the same slope in the world is steeper per cell, and a
    // snowball crosses more of them.
    let (mut coarse, mut fine) = (before.clone(), before.clone());
    let rc = Snowball::new(params(3_000)).unwrap().run_seeded(&mut coarse, 9).unwrap();
    let rf = Snowball::new(SnowballParams { cell_size: 0.5, ..params(3_000) })
        .unwrap()
        .run_seeded(&mut fine, 9)
        .unwrap();
    assert_ne!(coarse, fine);
    assert_ne!(rc.steps, rf.steps);
}

#[test]
fn cell_size_out_of_range_is_a_typed_error() {
    for size in [0.0, -1.0, f32::NAN, f32::INFINITY, 2e6] {
        let bad = SnowballParams { cell_size: size, ..SnowballParams::default() };
        assert_eq!(bad.validate().unwrap_err().field(), "cell_size", "{size}");
        assert_eq!(Snowball::new(bad).unwrap_err().field(), "cell_size", "{size}");
    }
    // Valid alone, but the lengths in cells leave their ranges: speed 0.15
    // over 1e-5 is 15 000 cells a step; 1e-40 over 1e6 rounds to 0.
    for bad in [
        SnowballParams { cell_size: 1e-5, ..SnowballParams::default() },
        SnowballParams { cell_size: 1e6, speed: 1e-40, ..SnowballParams::default() },
        SnowballParams {
            cell_size: 1e-3,
            radius: 1e6,
            speed: 0.001,
            height_scale: 1.0,
            ..SnowballParams::default()
        },
    ] {
        assert!(SnowballParams { cell_size: 1.0, ..bad }.validate().is_ok(), "{bad:?}");
        assert_eq!(bad.validate().unwrap_err().field(), "cell_size", "{bad:?}");
    }
}

/// Heights may be in any unit: heights `k` times larger with `height_scale /
/// k` and `erosion_rate * k` give the same run, heights and books `k` times
/// larger; bit for bit with `k` a power of two, blur included.
#[test]
fn heights_in_any_unit_scale_the_run_exactly() {
    let before = island(64, 3, 10.0);
    for k in [4.0f32, 0.125] {
        let p = params(1_500);
        let scaled_params =
            SnowballParams { height_scale: p.height_scale / k, erosion_rate: p.erosion_rate * k, ..p };
        let mut map = before.clone();
        let report = Snowball::new(p).unwrap().run_seeded(&mut map, 4).unwrap();
        let scaled_before = common::scaled(&before, k);
        let mut after = scaled_before.clone();
        let scaled_report = Snowball::new(scaled_params).unwrap().run_seeded(&mut after, 4).unwrap();
        assert_eq!(common::bits_times(&after, 1.0), common::bits_times(&map, k), "k {k}");
        assert!(report.eroded > 1.0, "k {k}: the run erodes");
        let k = f64::from(k);
        assert_eq!(
            (scaled_report.eroded, scaled_report.deposited, scaled_report.outflow),
            (report.eroded * k, report.deposited * k, report.outflow * k)
        );
        assert_eq!(scaled_report.steps, report.steps);
        assert!(MassBalance::of_run(&scaled_before, &after, &scaled_report).is_conserved());
    }
}
