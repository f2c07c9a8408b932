//! Findings at the ends of the documented ranges, each pinned by the test that
//! first failed on it: valid inputs that panicked, diverged, aborted or fooled
//! `MassBalance`.

use crate::common;

use hydraulic_erosion::rand_core::SeedableRng;
use hydraulic_erosion::{
    Control, ErosionParams, Error, GridError, Heightmap, Hydrology, HydrologyParams, MAX_SIDE, MassBalance,
    Physical, Progress, Snowball, SnowballParams, erode_seeded,
};
#[cfg(feature = "parallel")]
use hydraulic_erosion::{Layout, Parallel, ParallelParams};
use hydraulic_erosion::{Mode, RunOptions, Simulator};
use proptest::prelude::*;
use rand_xoshiro::Xoshiro256StarStar;

fn ramp_3x3() -> Heightmap {
    Heightmap::from_fn(3, 3, |x, y| (x + y) as f32 * 0.25).unwrap()
}

/// A droplet flung far off the map by a tiny density made a wrapped cell offset
/// ("index out of bounds: the len is 9 but the index is 18446744073709551612").
#[test]
fn tiny_density_does_not_panic_in_any_mode() {
    for density in [1e-19f32, 1e-30, f32::MIN_POSITIVE, 1e-10] {
        for seed in 0..20 {
            let params = ErosionParams { density, droplets: 4, ..Default::default() };
            let before = ramp_3x3();
            let mut map = before.clone();
            let report = erode_seeded(&mut map, &params, seed).unwrap();
            assert!(MassBalance::of_run(&before, &map, &report).is_conserved());

            let mut physical = Physical::new(params).unwrap();
            let mut map = before.clone();
            let report = physical
                .run_with(
                    map.view_mut(),
                    &mut Xoshiro256StarStar::seed_from_u64(seed),
                    RunOptions::default().with_mode(Mode::Lockstep),
                )
                .unwrap();
            assert!(MassBalance::of_run(&before, &map, &report).is_conserved());

            #[cfg(feature = "parallel")]
            for layout in [Layout::Tiles, Layout::Batches] {
                let parallel = Parallel::new(ParallelParams { layout, ..Default::default() }).unwrap();
                let mut map = before.clone();
                let report = parallel.run_seeded(&mut physical.clone(), &mut map, seed).unwrap();
                assert!(MassBalance::of_run(&before, &map, &report).is_conserved());
            }

            let hp = HydrologyParams { density, particles: 4, ..Default::default() };
            let mut h = Hydrology::new(hp, 3, 3).unwrap();
            let mut map = before.clone();
            let report = h.run_seeded(&mut map, seed).unwrap();
            assert!(MassBalance::of_run(&before, &map, &report.erosion).is_conserved());
            assert!(report.is_water_balanced());
        }
    }
}

/// The case: a second run on the kept layers took heights from [0, 0.86]
/// to about ±2e12.
#[test]
fn hydrology_on_kept_layers_stays_bounded() {
    let params = HydrologyParams {
        pit_safe: false,
        deposition_rate: 0.77,
        lrate: 0.78,
        entrainment: 49.0,
        stall_stream: 1.46,
        max_steps: 4,
        particles: 47,
        ..Default::default()
    };
    let before = Heightmap::from_fn(16, 3, |x, _| x as f32 * 0.86 / 15.0).unwrap();
    for seed in 0..50 {
        let mut h = Hydrology::new(params, 16, 3).unwrap();
        let mut map = before.clone();
        for _ in 0..4 {
            let start = map.clone();
            let report = h.run_seeded(&mut map, seed).unwrap();
            assert!(MassBalance::of_run(&start, &map, &report.erosion).is_conserved());
            let (lo, hi) = map.min_max();
            assert!(lo >= -1.0 && hi <= 2.0, "seed {seed}: heights in [{lo}, {hi}]");
        }
    }
}

/// The Physical case: `density: 1e-11` with `height_scale: 986781` cut
/// a cell to -4e10 (and missed the balance by 2e-7). Erosion now stops at the
/// next cell (or the base level beyond the border), so no cell goes below the
/// map's lowest height, and the balance holds against the exact sum.
#[test]
fn tiny_density_with_huge_height_scale_stays_within_the_terrain() {
    let params =
        ErosionParams { density: 1e-11, height_scale: 986_781.0, droplets: 200, ..Default::default() };
    for seed in 0..20 {
        let before = hydraulic_erosion::fbm_terrain(16, 16, seed).unwrap();
        let mut map = before.clone();
        let report = erode_seeded(&mut map, &params, seed).unwrap();
        let balance = MassBalance::of_run(&before, &map, &report);
        assert!(balance.is_conserved(), "{balance:?}");
        let ((lo, _), (new_lo, new_hi)) = (before.min_max(), map.min_max());
        assert!(new_lo >= lo - 1e-6, "seed {seed}: {new_lo} below {lo}");
        assert!(new_hi < 10.0, "seed {seed}: {new_hi}");
    }
}

/// Grid sizes within `MAX_SIDE` but beyond any machine's memory are a typed
/// error, not an abort.
#[test]
fn huge_valid_sizes_are_typed_errors() {
    assert!(matches!(Heightmap::new(MAX_SIDE, MAX_SIDE), Err(GridError::OutOfMemory { .. })));
    assert!(matches!(Heightmap::filled(MAX_SIDE, 1 << 22, 1.0), Err(GridError::OutOfMemory { .. })));
    assert!(matches!(Heightmap::from_fn(MAX_SIDE, MAX_SIDE, |_, _| 0.0), Err(GridError::OutOfMemory { .. })));
    let h = Hydrology::new(HydrologyParams::default(), 1 << 20, 1 << 20);
    assert!(matches!(h, Err(Error::Grid(GridError::OutOfMemory { .. }))), "{h:?}");
}

/// "0 droplets: map unchanged" holds for Snowball's blur too.
#[test]
fn zero_snowballs_leave_the_map_unchanged() {
    let before = hydraulic_erosion::fbm_terrain(32, 32, 1).unwrap();
    for params in [
        SnowballParams { snowballs: Some(0), ..Default::default() },
        SnowballParams { drops_per_cell: 0.0, ..Default::default() },
    ] {
        assert!(params.blur);
        let mut map = before.clone();
        let report = Snowball::new(params).unwrap().run_seeded(&mut map, 1).unwrap();
        assert_eq!(report.droplets, 0);
        assert_eq!(map, before);
        #[cfg(feature = "parallel")]
        for layout in [Layout::Tiles, Layout::Batches] {
            let parallel = Parallel::new(ParallelParams { layout, ..Default::default() }).unwrap();
            let snowball = Snowball::new(params).unwrap();
            let mut map = before.clone();
            parallel.run_seeded(&mut snowball.clone(), &mut map, 1).unwrap();
            assert_eq!(map, before);
        }
    }
}

/// A transposed map has as many cells as the layers: the error names the sizes.
#[test]
fn size_mismatch_names_the_sizes() {
    let mut h = Hydrology::new(HydrologyParams::default(), 8, 4).unwrap();
    let mut map = Heightmap::new(4, 8).unwrap();
    let err = h.run_seeded(&mut map, 1).unwrap_err();
    assert_eq!(
        err,
        Error::Grid(GridError::SizeMismatch {
            expected_width: 8,
            expected_height: 4,
            actual_width: 4,
            actual_height: 8
        })
    );
    assert_eq!(err.to_string(), "grid is 4x8, but 8x4 is needed");
    let mut layer = Heightmap::new(8, 4).unwrap();
    assert!(matches!(layer.copy_from(&map), Err(GridError::SizeMismatch { .. })));
}

/// `&mut dyn FnMut` callbacks, the natural thing for a tool, are progress sinks.
#[test]
fn dyn_fn_mut_is_a_progress() {
    let mut calls = 0u32;
    let mut stop_at_half = |done: u64, total: u64| {
        calls += 1;
        if done * 2 >= total { Control::Stop } else { Control::Continue }
    };
    let mut callback: &mut dyn FnMut(u64, u64) -> Control = &mut stop_at_half;
    let mut physical = Physical::new(ErosionParams { droplets: 2_048, ..Default::default() }).unwrap();
    let mut map = hydraulic_erosion::fbm_terrain(32, 32, 1).unwrap();
    let mut rng = Xoshiro256StarStar::seed_from_u64(1);
    let report = physical
        .run_with(
            map.view_mut(),
            &mut rng,
            RunOptions::default().with_mode(Mode::Sequential).with_progress(&mut callback),
        )
        .unwrap();
    assert!(report.cancelled);
    assert_eq!(report.droplets, 1_024);
    assert!(calls >= 4);
    fn takes_dyn(progress: &mut dyn Progress) -> Control {
        progress.update(1, 2)
    }
    assert_eq!(takes_dyn(&mut |_, _| Control::Continue), Control::Continue);
}

/// An independent exact sum: Shewchuk's non-overlapping partials (as Python's
/// `math.fsum`), exact for any finite f64 inputs whose sum does not overflow.
fn fsum(values: impl IntoIterator<Item = f64>) -> f64 {
    let mut partials: Vec<f64> = Vec::new();
    for mut x in values {
        let mut i = 0;
        for j in 0..partials.len() {
            let mut y = partials[j];
            if x.abs() < y.abs() {
                core::mem::swap(&mut x, &mut y);
            }
            let hi = x + y;
            let lo = y - (hi - x);
            if lo != 0.0 {
                partials[i] = lo;
                i += 1;
            }
            x = hi;
        }
        partials.truncate(i);
        partials.push(x);
    }
    // Round the partials (largest last) to one f64, correctly (fsum's last step).
    let mut n = partials.len();
    let mut hi = 0.0;
    if n > 0 {
        n -= 1;
        hi = partials[n];
        let mut lo = 0.0;
        while n > 0 {
            let x = hi;
            n -= 1;
            let y = partials[n];
            hi = x + y;
            let yr = hi - x;
            lo = y - yr;
            if lo != 0.0 {
                break;
            }
        }
        if n > 0 && ((lo < 0.0 && partials[n - 1] < 0.0) || (lo > 0.0 && partials[n - 1] > 0.0)) {
            let y = lo * 2.0;
            let x = hi + y;
            if y == x - hi {
                hi = x;
            }
        }
    }
    hi
}

/// f32 values of any magnitude and sign, zero and subnormals included.
fn arb_cell() -> impl Strategy<Value = f32> {
    prop_oneof![
        any::<u32>().prop_map(f32::from_bits).prop_filter("finite", |v| v.is_finite()),
        (-1.0f32..1.0),
        Just(0.0f32),
        (1u32..1000).prop_map(f32::from_bits),
        (-1e30f32..1e30),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: common::proptest_cases(2_000), ..ProptestConfig::default() })]

    /// The balance's error is the exact sum rounded once, against Shewchuk's
    /// partials, bit for bit.
    #[test]
    fn balance_error_is_the_exact_sum(
        cells in prop::collection::vec((arb_cell(), arb_cell()), 1..200),
        outflow in prop_oneof![Just(0.0f64), -1e30f64..1e30, any::<f32>().prop_map(f64::from).prop_filter("finite", |v| v.is_finite())],
    ) {
        let n = cells.len();
        let before = Heightmap::from_cells(n, 1, cells.iter().map(|c| c.0).collect::<Vec<_>>()).unwrap();
        let after = Heightmap::from_cells(n, 1, cells.iter().map(|c| c.1).collect::<Vec<_>>()).unwrap();
        let balance = MassBalance::new(&before, &after, outflow);
        let terms = cells.iter().flat_map(|&(b, a)| [f64::from(b), -f64::from(a)]).chain([-outflow]);
        prop_assert_eq!(balance.error().to_bits(), fsum(terms).to_bits());
        prop_assert_eq!(balance.before.to_bits(), fsum(cells.iter().map(|c| f64::from(c.0))).to_bits());
        prop_assert_eq!(balance.after.to_bits(), fsum(cells.iter().map(|c| f64::from(c.1))).to_bits());
    }

    /// Moving mass between cells in exact steps balances exactly, however large
    /// the cells: the naive f64 sums this replaced lost such balances to
    /// cancellation.
    #[test]
    fn exact_moves_balance_exactly(
        base in prop::collection::vec(-1e30f32..1e30, 2..100),
        moves in prop::collection::vec((0usize..100, 0usize..100, 0u32..1 << 20), 0..50),
    ) {
        let n = base.len();
        let before = Heightmap::from_cells(n, 1, base.clone()).unwrap();
        let mut after = before.clone();
        let mut outflow = 0.0f64;
        for (from, to, amount) in moves {
            let (from, to) = (from % n, to % n);
            if from == to {
                continue;
            }
            // A power-of-two multiple of the coarser cell's ulp moves exactly.
            let step = f32::from_bits(after[(from, 0)].abs().max(after[(to, 0)].abs()).max(1.0).to_bits() & 0x7F80_0000) * f32::EPSILON;
            let amount = amount as f32 * step;
            let (old_from, old_to) = (after[(from, 0)], after[(to, 0)]);
            after[(from, 0)] = old_from - amount;
            after[(to, 0)] = old_to + amount;
            // Book what was applied, as the simulators do; the rest "left the map".
            outflow += (f64::from(old_from) - f64::from(after[(from, 0)])) - (f64::from(after[(to, 0)]) - f64::from(old_to));
        }
        let balance = MassBalance::new(&before, &after, outflow);
        prop_assert!(balance.is_conserved(), "{:?}", balance);
    }
}

/// The bound is the books' tolerance plus the map's resolution: a run on
/// 1e29 heights whose last remainder left half an ulp unplaced, its books
/// off by their own rounding besides, is conserved (the larger of the two
/// alone was exceeded by the books' 2^-52: a proptest found it).
#[test]
fn balance_bound_adds_the_resolution_to_the_tolerance() {
    let map = Heightmap::from_cells(1, 1, vec![8.830_033e29f32]).unwrap();
    let probe = MassBalance::new(&map, &map, 0.0);
    let half_ulp = probe.resolution;
    assert_eq!(half_ulp, 2f64.powi(75));
    let books = 1e-9 * f64::from(8.830_033e29f32) / 2.0;
    let balance = MassBalance::new(&map, &map, half_ulp + books);
    assert_eq!(balance.bound(), 1e-9 * balance.scale.max(balance.moved) + half_ulp);
    assert!(balance.is_conserved(), "{balance:?}");
    assert!(balance.error().abs() > (1e-9 * balance.scale).max(half_ulp), "the larger alone is exceeded");
    // Beyond both together, not.
    let balance = MassBalance::new(&map, &map, 2.0 * half_ulp);
    assert!(!balance.is_conserved(), "{balance:?}");
}

/// A single unit among huge cells is measured exactly (naive f64 sums of
/// 1e30-sized cells round it away), and the verdict follows the stated bound.
#[test]
fn balance_measures_a_unit_among_huge_cells() {
    let before = Heightmap::from_cells(3, 1, vec![1e30f32, 1.0, -1e30]).unwrap();
    let after = Heightmap::from_cells(3, 1, vec![1e30f32, 0.0, -1e30]).unwrap();
    let naive: f64 = before.cells().iter().chain(after.cells()).map(|&h| f64::from(h)).sum();
    assert_ne!(naive, 1.0);
    let balance = MassBalance::new(&before, &after, 0.0);
    assert_eq!(balance.error(), 1.0);
    assert_eq!(balance.moved, 1.0);
    // 1 is far below 1e-9 of the 2e30 the map holds: conserved, as stated.
    assert_eq!(balance.bound(), 1e-9 * balance.scale);
    assert!(balance.is_conserved());
    assert_eq!(MassBalance::new(&before, &after, 1.0).error(), 0.0);
    // On cells of ordinary size the same unit is far outside the bound.
    let before = Heightmap::from_cells(3, 1, vec![0.5f32, 1.0, 0.25]).unwrap();
    let after = Heightmap::from_cells(3, 1, vec![0.5f32, 0.0, 0.25]).unwrap();
    let balance = MassBalance::new(&before, &after, 0.0);
    assert_eq!((balance.error(), balance.is_conserved()), (1.0, false));
}
