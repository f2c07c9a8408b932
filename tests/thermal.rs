//! The thermal (talus) pass: conservation, convergence to the angle of repose,
//! determinism, bad input.

use hydraulic_erosion::{Error, GridError, Heightmap, MassBalance, ThermalParams, fbm_terrain, thermal};
use proptest::prelude::*;

/// A cone whose sides slope at 45 degrees (1 height unit per cell).
fn cone(size: usize) -> Heightmap {
    let c = (size as f32 - 1.0) / 2.0;
    Heightmap::from_fn(size, size, |x, y| {
        let (dx, dy) = (x as f32 - c, y as f32 - c);
        (c - (dx * dx + dy * dy).sqrt()).max(0.0)
    })
    .unwrap()
}

#[test]
fn slopes_settle_at_the_angle_of_repose() {
    let before = cone(48);
    let mut map = before.clone();
    let params = ThermalParams { repose_angle: 30.0, rate: 1.0, iterations: 800, ..ThermalParams::default() };
    let start = thermal(&mut before.clone(), &ThermalParams { iterations: 0, ..params }).unwrap();
    // 45 degrees against 30: 1 - tan(30) = 0.42 beyond repose on the diagonal-free sides.
    assert!(start.steepest_excess > 0.4, "{start:?}");
    let report = thermal(&mut map, &params).unwrap();
    assert!(report.steepest_excess < 0.01 * start.steepest_excess, "{report:?}");
    assert!(report.moved > 0.0);
    assert!(MassBalance::new(&before, &map, 0.0).is_conserved());
    // The peak came down, the foot went up.
    assert!(map[(24, 24)] < before[(24, 24)]);
}

#[test]
fn gentle_slopes_do_not_move() {
    // 0.2 per cell is well under tan(35) = 0.70.
    let before = Heightmap::from_fn(20, 20, |x, y| (x + y) as f32 * 0.1).unwrap();
    let mut map = before.clone();
    let report = thermal(&mut map, &ThermalParams::default()).unwrap();
    assert_eq!(map, before);
    assert_eq!((report.moved, report.steepest_excess), (0.0, 0.0));
}

#[test]
fn world_units_scale_the_slope() {
    // A step of 1 between cells 2 units wide is a slope of 0.5: below 35 degrees.
    let before = Heightmap::from_fn(16, 16, |x, _| if x < 8 { 1.0 } else { 0.0 }).unwrap();
    let mut wide = before.clone();
    thermal(&mut wide, &ThermalParams { cell_size: 2.0, ..ThermalParams::default() }).unwrap();
    assert_eq!(wide, before);
    let mut narrow = before.clone();
    thermal(&mut narrow, &ThermalParams { cell_size: 0.5, ..ThermalParams::default() }).unwrap();
    assert_ne!(narrow, before);
}

#[test]
fn the_same_bits_every_time_and_on_any_thread_count() {
    let before = fbm_terrain(200, 150, 4).unwrap().cells().iter().map(|h| h * 300.0).collect::<Vec<_>>();
    let before = Heightmap::from_cells(200, 150, before).unwrap();
    let params = ThermalParams { iterations: 20, ..ThermalParams::default() };
    let run = || {
        let mut map = before.clone();
        let report = thermal(&mut map, &params).unwrap();
        (map, report)
    };
    let (a, ra) = run();
    assert_eq!((a.clone(), ra), run());
    assert!(MassBalance::new(&before, &a, 0.0).is_conserved());
    #[cfg(feature = "parallel")]
    for threads in [1, 2, 4] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        assert_eq!(pool.install(run), (a.clone(), ra), "{threads} threads");
    }
}

#[test]
fn bad_input_is_a_typed_error() {
    for (p, field) in [
        (ThermalParams { repose_angle: 0.0, ..Default::default() }, "repose_angle"),
        (ThermalParams { repose_angle: f32::NAN, ..Default::default() }, "repose_angle"),
        (ThermalParams { cell_size: -1.0, ..Default::default() }, "cell_size"),
        (ThermalParams { rate: 1.5, ..Default::default() }, "rate"),
        (ThermalParams { iterations: 100_001, ..Default::default() }, "iterations"),
    ] {
        let mut map = cone(8);
        assert!(matches!(thermal(&mut map, &p), Err(Error::Param(e)) if e.field() == field));
        assert_eq!(map, cone(8));
    }
    let mut map = cone(8);
    map[(3, 3)] = f32::INFINITY;
    assert!(matches!(
        thermal(&mut map, &ThermalParams::default()),
        Err(Error::Grid(GridError::NonFinite { x: 3, y: 3 }))
    ));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Any map, any valid params: conserved, finite, never steeper than before.
    #[test]
    fn conserves_and_never_steepens(
        w in 1usize..40, h in 1usize..40, scale in prop_oneof![Just(1.0f32), Just(1e-3f32), Just(1e4f32)],
        cells in prop::collection::vec(0.0f32..1.0, 1600),
        repose in 1.0f32..=89.0, rate in 0.01f32..=1.0, iterations in 0u32..30, cell_size in 0.01f32..10.0,
    ) {
        let before = Heightmap::from_cells(w, h, cells[..w * h].iter().map(|c| c * scale).collect()).unwrap();
        let mut map = before.clone();
        let params = ThermalParams { repose_angle: repose, rate, iterations, cell_size };
        let start = thermal(&mut before.clone(), &ThermalParams { iterations: 0, ..params }).unwrap();
        let report = thermal(&mut map, &params).unwrap();
        let balance = MassBalance::new(&before, &map, 0.0);
        prop_assert!(balance.is_conserved(), "{balance:?}");
        prop_assert!(map.cells().iter().all(|h| h.is_finite()));
        prop_assert!(report.steepest_excess <= start.steepest_excess * (1.0 + 1e-6) + 1e-6, "{report:?} {start:?}");
    }
}

/// A pit in a plateau takes from all 8 neighbours at once: it rises by at most
/// `rate / 2` of its depth (as from one neighbour), never past the plateau
/// (it did: to 1.79 times the plateau's height at the default rate).
#[test]
fn a_pit_among_many_senders_fills_without_overshooting() {
    for rate in [0.25f32, 0.5, 1.0] {
        let before = Heightmap::from_fn(9, 9, |x, y| if (x, y) == (4, 4) { 0.0 } else { 1.0 }).unwrap();
        let mut map = before.clone();
        let params = ThermalParams { repose_angle: 5.0, rate, iterations: 1, cell_size: 1.0 };
        let start = thermal(&mut before.clone(), &ThermalParams { iterations: 0, ..params }).unwrap();
        let report = thermal(&mut map, &params).unwrap();
        let depth = 1.0 - params.talus();
        let pit = f64::from(map[(4, 4)]);
        assert!((pit - f64::from(rate) / 2.0 * depth).abs() < 1e-6, "rate {rate}: pit at {pit}");
        // Its neighbours gave an eighth each and stay above it.
        for (x, y) in [(3, 3), (4, 3), (5, 5), (3, 4)] {
            assert!(map[(x, y)] > map[(4, 4)] && map[(x, y)] < 1.0, "rate {rate}: ({x}, {y})");
        }
        assert!(report.steepest_excess < start.steepest_excess, "rate {rate}: {report:?}");
        assert!(MassBalance::new(&before, &map, 0.0).is_conserved());
        // Many iterations level it.
        let report = thermal(&mut map, &ThermalParams { iterations: 400, ..params }).unwrap();
        assert!(report.steepest_excess < 0.01 * start.steepest_excess, "rate {rate}: {report:?}");
    }
}

/// The pass's sub-ulp remainder can reach two units of a cell just below a
/// binade (0.99999994 here): one cell takes it rounded to a tie at 1 and
/// loses one unit, so what it does not take goes to the next cell. (The
/// balance missed by that unit on this 2 x 2 ramp.)
#[test]
fn the_remainder_a_cell_rounds_away_goes_to_the_next() {
    let before = Heightmap::from_fn(2, 2, |x, y| (x + y) as f32).unwrap();
    let mut map = before.clone();
    let params = ThermalParams { repose_angle: 1e-6, cell_size: 1.0, rate: 1.0, iterations: 20 };
    let report = thermal(&mut map, &params).unwrap();
    let balance = MassBalance::new(&before, &map, 0.0);
    assert!(balance.is_conserved(), "{balance:?}, heights {:?}", map.cells());
    assert_eq!(balance.error(), 0.0, "{:?}", map.cells());
    assert!(MassBalance::of_run(&before, &map, &report.erosion).is_conserved());
}
