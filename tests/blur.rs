//! The mass-conserving blur: exact values on spikes, the Gaussian inside the
//! map, conservation, determinism, smoothing, and typed errors for bad input.

use crate::common;

use hydraulic_erosion::{BlurParams, Error, GridError, Heightmap, MassBalance, blur, fbm_terrain};
use proptest::prelude::*;

fn spike(width: usize, height: usize, at: (usize, usize), value: f32) -> Heightmap {
    Heightmap::from_fn(width, height, |x, y| if (x, y) == at { value } else { 0.0 }).unwrap()
}

fn passes(passes: u32) -> BlurParams {
    BlurParams { passes, ..BlurParams::default() }
}

#[test]
fn a_spike_spreads_as_the_3x3_gaussian() {
    let mut map = spike(5, 5, (2, 2), 16.0);
    let report = blur(&mut map, &BlurParams::default()).unwrap();
    let expected = [[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]];
    for y in 0..5 {
        for x in 0..5 {
            let want = if (1..4).contains(&x) && (1..4).contains(&y) { expected[y - 1][x - 1] } else { 0.0 };
            assert_eq!(map[(x, y)], want, "({x}, {y})");
        }
    }
    assert_eq!((report.passes, report.lowered, report.raised), (1, 12.0, 12.0));
}

#[test]
fn a_corner_spike_keeps_what_it_cannot_give_away() {
    // A corner cell has 2 edge neighbours (1/8 each) and 1 corner neighbour (1/16).
    let mut map = spike(4, 3, (0, 0), 16.0);
    blur(&mut map, &BlurParams::default()).unwrap();
    assert_eq!((map[(0, 0)], map[(1, 0)], map[(0, 1)], map[(1, 1)]), (11.0, 2.0, 2.0, 1.0));
    assert_eq!(map.sum(), 16.0);
}

#[test]
fn amount_blends_and_passes_repeat() {
    let mut half = spike(5, 5, (2, 2), 16.0);
    blur(&mut half, &BlurParams { amount: 0.5, ..BlurParams::default() }).unwrap();
    assert_eq!((half[(2, 2)], half[(1, 2)], half[(1, 1)]), (10.0, 1.0, 0.5));

    // Two passes are the 5 x 5 binomial kernel, [1 4 6 4 1] in each direction.
    let mut twice = spike(7, 7, (3, 3), 256.0);
    blur(&mut twice, &passes(2)).unwrap();
    let binomial = [0.0, 1.0, 4.0, 6.0, 4.0, 1.0, 0.0];
    for y in 0..7 {
        for x in 0..7 {
            assert_eq!(twice[(x, y)], binomial[x] * binomial[y], "({x}, {y})");
        }
    }
}

#[test]
fn inside_the_map_it_is_the_gaussian_of_the_seed() {
    let before = fbm_terrain(32, 32, 5).unwrap();
    let mut after = before.clone();
    blur(&mut after, &BlurParams::default()).unwrap();
    for y in 1..31 {
        for x in 1..31 {
            let h = |dx: usize, dy: usize| f64::from(before[(x + dx - 1, y + dy - 1)]);
            let edges = h(0, 1) + h(2, 1) + h(1, 0) + h(1, 2);
            let corners = h(0, 0) + h(2, 0) + h(0, 2) + h(2, 2);
            let gauss = edges * 0.125 + corners * 0.0625 + h(1, 1) * 0.25;
            // The rounding remainder carried between cells is below an ulp.
            assert!((f64::from(after[(x, y)]) - gauss).abs() <= 2.0 * f64::from(f32::EPSILON), "({x}, {y})");
        }
    }
}

#[test]
fn constant_maps_and_zero_blurs_change_nothing() {
    for (w, h) in [(1, 1), (1, 7), (6, 1), (2, 2), (9, 5)] {
        let mut map = Heightmap::filled(w, h, 0.3).unwrap();
        let report = blur(&mut map, &passes(3)).unwrap();
        assert_eq!(map, Heightmap::filled(w, h, 0.3).unwrap(), "{w}x{h}");
        assert_eq!((report.lowered, report.raised), (0.0, 0.0));
    }
    let before = fbm_terrain(16, 16, 1).unwrap();
    for params in [passes(0), BlurParams { amount: 0.0, ..BlurParams::default() }] {
        let mut map = before.clone();
        blur(&mut map, &params).unwrap();
        assert_eq!(map, before);
    }
}

#[test]
fn thin_maps_blur_along_their_one_row() {
    let mut row = spike(5, 1, (2, 0), 8.0);
    blur(&mut row, &BlurParams::default()).unwrap();
    assert_eq!(row.cells(), &[0.0, 1.0, 6.0, 1.0, 0.0]);
}

#[test]
fn bad_params_and_bad_maps_are_typed_errors() {
    let before = fbm_terrain(8, 8, 1).unwrap();
    let d = BlurParams::default();
    for (params, field) in [
        (BlurParams { passes: 1001, ..d }, "passes"),
        (BlurParams { passes: u32::MAX, ..d }, "passes"),
        (BlurParams { amount: f32::NAN, ..d }, "amount"),
        (BlurParams { amount: f32::INFINITY, ..d }, "amount"),
        (BlurParams { amount: -0.1, ..d }, "amount"),
        (BlurParams { amount: 1.5, ..d }, "amount"),
    ] {
        let mut map = before.clone();
        let err = params.validate().unwrap_err();
        assert_eq!(err.field(), field);
        assert!(err.to_string().contains(field) && err.to_string().contains("must be"), "{err}");
        assert_eq!(blur(&mut map, &params), Err(Error::Param(err)));
        assert_eq!(map, before);
    }
    let mut map = before.clone();
    map[(3, 4)] = f32::NAN;
    let bits: Vec<u32> = map.cells().iter().map(|h| h.to_bits()).collect();
    assert_eq!(blur(&mut map, &d), Err(Error::Grid(GridError::NonFinite { x: 3, y: 4 })));
    assert_eq!(map.cells().iter().map(|h| h.to_bits()).collect::<Vec<_>>(), bits);
}

#[test]
fn extreme_heights_stay_finite_and_balanced() {
    for scale in [3e38_f32, 1e30, 1e-30] {
        let before =
            Heightmap::from_fn(12, 9, |x, y| if (x * 7 + y * 3) % 4 == 0 { scale } else { -scale }).unwrap();
        let mut map = before.clone();
        blur(&mut map, &passes(4)).unwrap();
        assert!(common::all_finite(&map), "scale {scale}");
        let balance = MassBalance::new(&before, &map, 0.0);
        assert!(balance.is_conserved(), "scale {scale}: {balance:?}");
    }
}

#[test]
fn blur_is_value_stable() {
    let mut map = fbm_terrain(64, 48, 7).unwrap();
    blur(&mut map, &BlurParams { passes: 3, amount: 0.75 }).unwrap();
    assert_eq!(format!("{:016x}", common::map_hash(&map)), "04da7138312d8fda");
}

/// Half the ulp of the cell of smallest magnitude: the finest step the sum of
/// an `f32` map can take.
fn half_ulp(map: &Heightmap) -> f32 {
    let smallest = map.cells().iter().fold(f32::INFINITY, |m, h| m.min(h.abs()));
    (f32::from_bits(smallest.to_bits() + 1) - smallest) * 0.5
}

/// `sum((h - mean)^2)` in f64.
fn spread(map: &Heightmap) -> f64 {
    let mean = map.sum() / map.len() as f64;
    map.cells().iter().map(|&h| (f64::from(h) - mean).powi(2)).sum()
}

fn arb_map() -> impl Strategy<Value = Heightmap> {
    (1usize..=48, 1usize..=48, -3i32..=6, any::<u64>(), any::<bool>()).prop_flat_map(
        |(w, h, exp, seed, rough)| {
            let scale = 10f32.powi(exp);
            prop::collection::vec(-1.0f32..1.0, w * h).prop_map(move |noise| {
                let terrain = fbm_terrain(w, h, seed).unwrap();
                Heightmap::from_fn(
                    w,
                    h,
                    |x, y| if rough { noise[y * w + x] } else { terrain[(x, y)] } * scale,
                )
                .unwrap()
            })
        },
    )
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(512)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn blur_conserves_mass_and_smooths(map in arb_map(), n in 0u32..=4, amount in 0.0f32..=1.0) {
        let mut after = map.clone();
        let report = blur(&mut after, &BlurParams { passes: n, amount }).unwrap();
        prop_assert!(common::all_finite(&after));
        let balance = MassBalance::new(&map, &after, 0.0);
        // On maps of a few cells f32 may not resolve the tolerance: the sum of
        // the blurred map moves in steps of the finest cell's ulp.
        let finest = f64::from(half_ulp(&after));
        prop_assert!(balance.is_conserved() || balance.error().abs() <= finest, "{:?} {:?}", balance, report);
        // A symmetric averaging never spreads heights further apart.
        prop_assert!(spread(&after) <= spread(&map) * (1.0 + 1e-6) + 1e-12, "{} > {}", spread(&after), spread(&map));
    }

    #[test]
    fn blur_is_deterministic(map in arb_map(), n in 0u32..=3) {
        let mut a = map.clone();
        let mut b = map.clone();
        let ra = blur(&mut a, &passes(n)).unwrap();
        let rb = blur(&mut b, &passes(n)).unwrap();
        prop_assert_eq!(common::map_hash(&a), common::map_hash(&b));
        prop_assert_eq!(ra, rb);
    }
}
