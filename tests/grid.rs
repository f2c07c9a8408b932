//! Grid construction, layout, views and errors.

use glam::Vec2;
use hydraulic_erosion::{Grid, GridError, Heightmap, MAX_SIDE};

#[test]
fn construction_rejects_bad_sizes_and_buffers() {
    assert_eq!(Heightmap::new(0, 5), Err(GridError::Empty { width: 0, height: 5 }));
    assert_eq!(Heightmap::new(5, 0), Err(GridError::Empty { width: 5, height: 0 }));
    assert_eq!(Heightmap::new(MAX_SIDE + 1, 1), Err(GridError::TooLarge { width: MAX_SIDE + 1, height: 1 }));
    assert_eq!(
        Heightmap::new(usize::MAX, usize::MAX),
        Err(GridError::TooLarge { width: usize::MAX, height: usize::MAX })
    );
    assert_eq!(
        Grid::from_cells(3, 3, vec![0.0; 8]),
        Err(GridError::LengthMismatch { expected: 9, actual: 8 })
    );
    let mut cells = vec![0.0_f32; 12];
    cells[4 * 2 + 1] = f32::NAN;
    assert_eq!(Grid::from_cells(4, 3, cells), Err(GridError::NonFinite { x: 1, y: 2 }));
    assert_eq!(
        Grid::from_cells(2, 1, &[0.0, f32::NEG_INFINITY][..]),
        Err(GridError::NonFinite { x: 1, y: 0 })
    );
    assert_eq!(Heightmap::filled(2, 2, f32::INFINITY), Err(GridError::NonFinite { x: 0, y: 0 }));
    assert!(Heightmap::from_fn(3, 3, |x, _| if x == 2 { f32::NAN } else { 0.0 }).is_err());
}

#[test]
fn error_messages_name_the_problem() {
    let e = Grid::from_cells(3, 3, vec![0.0; 8]).unwrap_err();
    assert_eq!(e.to_string(), "buffer holds 8 cells, but the grid needs width * height = 9");
    let e = Heightmap::new(0, 4).unwrap_err();
    assert!(e.to_string().contains("at least 1"), "{e}");
}

#[test]
fn layout_is_row_major_and_views_write_through() {
    let map = Heightmap::from_fn(4, 3, |x, y| (10 * y + x) as f32).unwrap();
    assert_eq!(map.cells()[2 * 4 + 3], 23.0);
    assert_eq!(map[(3, 2)], 23.0);
    assert_eq!(map.get(4, 0), None);
    assert_eq!(map.get(0, 3), None);
    assert_eq!((map.width(), map.height(), map.len()), (4, 3, 12));

    let mut buffer = vec![0.0_f32; 6];
    {
        let mut view = Grid::from_cells(3, 2, &mut buffer[..]).unwrap();
        view[(2, 1)] = 7.0;
        *view.get_mut(0, 1).unwrap() = 5.0;
        assert!(view.get_mut(3, 0).is_none());
    }
    assert_eq!(buffer, [0.0, 0.0, 0.0, 5.0, 0.0, 7.0]);

    let mut owned = Heightmap::new(3, 2).unwrap();
    owned.view_mut().cells_mut()[1] = 1.5;
    assert_eq!(owned.view().cells()[1], 1.5);
    assert_eq!(owned.to_heightmap(), owned);
    let other = Heightmap::filled(3, 2, 2.0).unwrap();
    owned.copy_from(&other).unwrap();
    assert_eq!(owned.into_cells(), vec![2.0; 6]);
    assert!(Heightmap::new(2, 2).unwrap().copy_from(&other).is_err());
}

#[test]
fn sums_and_ranges() {
    let map = Grid::from_cells(2, 2, vec![1.0, -2.0, 3.5, 0.25]).unwrap();
    assert_eq!(map.sum(), 2.75);
    assert_eq!(map.sum_abs(), 6.75);
    assert_eq!(map.min_max(), (-2.0, 3.5));
}

#[test]
fn positions_map_to_cells() {
    let map = Heightmap::new(4, 3).unwrap();
    assert!(map.contains(Vec2::new(3.99, 2.99)));
    assert!(!map.contains(Vec2::new(4.0, 0.0)));
    assert!(!map.contains(Vec2::new(-0.01, 0.0)));
    assert!(!map.contains(Vec2::new(f32::NAN, 0.0)));
    assert_eq!(map.cell_at(Vec2::new(2.7, 1.2)), (2, 1));
    assert_eq!(map.cell_at(Vec2::new(-5.0, 99.0)), (0, 2));
    assert_eq!(map.cell_at(Vec2::new(f32::NAN, f32::INFINITY)), (0, 2));
}

#[test]
#[should_panic(expected = "outside the grid")]
fn indexing_out_of_range_panics_like_a_slice() {
    let map = Heightmap::new(2, 2).unwrap();
    let _ = map[(2, 0)];
}

#[test]
fn non_finite_writes_are_caught_before_a_run() {
    let mut map = Heightmap::new(8, 8).unwrap();
    map[(3, 4)] = f32::NAN;
    assert_eq!(map.check_finite(), Err(GridError::NonFinite { x: 3, y: 4 }));
}

#[cfg(feature = "serde")]
#[test]
fn serde_round_trip_and_validation() {
    let map = Heightmap::from_fn(3, 2, |x, y| (x * y) as f32 + 0.5).unwrap();
    let json = serde_json::to_string(&map).unwrap();
    let back: Heightmap = serde_json::from_str(&json).unwrap();
    assert_eq!(back, map);
    let bad = r#"{"width":3,"height":2,"cells":[1.0,2.0]}"#;
    let err = serde_json::from_str::<Heightmap>(bad).unwrap_err();
    assert!(err.to_string().contains("buffer holds 2 cells"), "{err}");
}

#[test]
fn the_balance_floor_is_half_an_ulp_of_the_finest_cell() {
    use hydraulic_erosion::MassBalance;
    let before = Heightmap::filled(2, 2, 1000.0).unwrap();
    let mut after = before.clone();
    // 1000 has an ulp of 2^-14: a 2^-16 error cannot be expressed in f32 here, and
    // is below half an ulp of the finest cell, so it counts as balanced.
    let balance = MassBalance::new(&before, &after, 2f64.powi(-16));
    assert_eq!(balance.resolution, 2f64.powi(-15));
    assert!(balance.error().abs() > MassBalance::TOLERANCE * balance.scale);
    assert!(balance.is_conserved());
    // A whole ulp lost is not.
    after[(0, 0)] = f32::from_bits(1000f32.to_bits() - 1);
    assert!(!MassBalance::new(&before, &after, 0.0).is_conserved());
    // Near zero the floor vanishes and the relative bound rules.
    let zero = Heightmap::filled(2, 2, 0.0).unwrap();
    assert!(MassBalance::new(&zero, &zero, 0.0).resolution < 1e-44);
}

/// A map with an infinite or NaN cell, or an infinite outflow, has no
/// balance: not conserved, the error NaN. (An infinite cell made the mass
/// moved, and so the bound, infinite: anything passed.)
#[test]
fn a_map_with_a_non_finite_cell_does_not_balance() {
    use hydraulic_erosion::MassBalance;
    let before = Heightmap::filled(2, 2, 1.0).unwrap();
    for bad in [f32::INFINITY, f32::NEG_INFINITY, f32::NAN] {
        let mut after = before.clone();
        after[(1, 0)] = bad;
        for balance in [MassBalance::new(&before, &after, 0.0), MassBalance::new(&after, &before, 0.0)] {
            assert!(!balance.is_conserved(), "{bad}: {balance:?}");
            assert!(balance.error().is_nan(), "{bad}");
        }
        // Cells beyond the shorter grid count too.
        let mut longer = Heightmap::filled(2, 3, 1.0).unwrap();
        longer[(1, 2)] = bad;
        assert!(!MassBalance::new(&before, &longer, 0.0).is_conserved(), "{bad}");
        assert!(!MassBalance::new(&longer, &before, 0.0).is_conserved(), "{bad}");
    }
    for outflow in [f64::INFINITY, f64::NEG_INFINITY, f64::NAN] {
        assert!(!MassBalance::new(&before, &before, outflow).is_conserved(), "{outflow}");
    }
    assert!(MassBalance::new(&before, &before, 0.0).is_conserved());
}
