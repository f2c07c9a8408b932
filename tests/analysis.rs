//! Terrain analysis against maps worked out by hand and analytic surfaces.

use hydraulic_erosion::analysis::{
    AnalysisOptions, Fill, FlowField, NO_RECEIVER, PowerLawFit, TerrainStats, count_pits, fill_depressions,
};
use hydraulic_erosion::{GridError, Heightmap, fbm_terrain};
use proptest::prelude::*;

fn grid(width: usize, rows: &[&[f32]]) -> Heightmap {
    Heightmap::from_cells(width, rows.len(), rows.concat()).unwrap()
}

/// A 5 x 5 bowl: a rim at 5 with a notch at 3, a floor at 1 and 2.
fn bowl() -> Heightmap {
    grid(
        5,
        &[
            &[5.0, 5.0, 3.0, 5.0, 5.0],
            &[5.0, 2.0, 2.0, 2.0, 5.0],
            &[5.0, 2.0, 1.0, 2.0, 5.0],
            &[5.0, 2.0, 2.0, 2.0, 5.0],
            &[5.0, 5.0, 5.0, 5.0, 5.0],
        ],
    )
}

#[test]
fn a_bowl_fills_to_its_spill_level() {
    let filled = fill_depressions(&bowl(), Fill::Flat).unwrap();
    // The floor rises to the notch (3); the rim stays.
    let expected = grid(
        5,
        &[
            &[5.0, 5.0, 3.0, 5.0, 5.0],
            &[5.0, 3.0, 3.0, 3.0, 5.0],
            &[5.0, 3.0, 3.0, 3.0, 5.0],
            &[5.0, 3.0, 3.0, 3.0, 5.0],
            &[5.0, 5.0, 5.0, 5.0, 5.0],
        ],
    );
    assert_eq!(filled.surface, expected);
    let depth: f32 = filled.depth.cells().iter().sum();
    assert_eq!(depth, 8.0 * 1.0 + 2.0);
    assert_eq!(filled.depth[(2, 2)], 2.0);
    let stats = TerrainStats::measure(&bowl(), &AnalysisOptions::default()).unwrap();
    assert_eq!(stats.depression_fraction, 9.0 / 25.0);
    assert_eq!((stats.pits, stats.pit_fraction), (1, 1.0 / 9.0));
}

#[test]
fn an_epsilon_fill_gives_every_cell_a_way_down() {
    for map in [bowl(), fbm_terrain(40, 30, 3).unwrap()] {
        let eps = fill_depressions(&map, Fill::Epsilon).unwrap();
        let flat = fill_depressions(&map, Fill::Flat).unwrap();
        assert_eq!(eps.depth, flat.depth);
        let flow = FlowField::d8(&eps.surface).unwrap();
        let (w, h) = (map.width(), map.height());
        for (i, &r) in flow.receivers().iter().enumerate() {
            let border = i % w == 0 || i / w == 0 || i % w == w - 1 || i / w == h - 1;
            assert_eq!(r == NO_RECEIVER, border, "cell {i}");
            if !border {
                assert!(eps.surface.cells()[r as usize] < eps.surface.cells()[i]);
            }
        }
        // Every cell's water reaches the border: the outlets hold all of it.
        let area = flow.drainage_area().unwrap();
        let out: f32 =
            (0..w * h).filter(|&i| flow.receivers()[i] == NO_RECEIVER).map(|i| area.cells()[i]).sum();
        assert_eq!(out, (w * h) as f32);
    }
}

#[test]
fn a_plane_drains_down_its_slope() {
    // Heights rise with the row: every interior cell sends its water to the row
    // above (straight down the slope), so its area is its distance from the last
    // interior row plus one.
    let (w, h) = (7usize, 9usize);
    let plane = Heightmap::from_fn(w, h, |x, y| y as f32 + 0.001 * ((x * 7) % 3) as f32).unwrap();
    let flow = FlowField::d8(&plane).unwrap();
    let area = flow.drainage_area().unwrap();
    for y in 1..h - 1 {
        for x in 1..w - 1 {
            let i = y * w + x;
            let r = flow.receivers()[i] as usize;
            assert_eq!(r / w, y - 1, "({x}, {y}) drains up the map");
        }
    }
    // A clean tilt: exact areas along a column.
    let tilt = Heightmap::from_fn(w, h, |_, y| y as f32).unwrap();
    let flow = FlowField::d8(&tilt).unwrap();
    let area_tilt = flow.drainage_area().unwrap();
    for y in 1..h - 1 {
        assert_eq!(area_tilt[(3, y)], (h - 1 - y) as f32);
        assert_eq!(flow.receivers()[y * w + 3] as usize, (y - 1) * w + 3);
    }
    assert_eq!(area_tilt[(3, 0)], (h - 1) as f32);
    // Slope along the flow: 1 height unit per cell, over the cell size.
    let slope = flow.slope(&tilt, 2.0).unwrap();
    assert_eq!(slope[(3, 4)], 0.5);
    // The longest path upstream of the bottom interior cell's receiver chain.
    let length = flow.flow_length(1.0).unwrap();
    assert_eq!(length[(3, 1)], (h - 3) as f32);
    drop(area);
}

#[test]
fn a_v_valley_collects_everything_in_its_channel() {
    // Walls slope to the centre column, which slopes to the top row.
    let (w, h) = (9usize, 12usize);
    let valley = Heightmap::from_fn(w, h, |x, y| (x as f32 - 4.0).abs() * 2.0 + y as f32 * 0.5).unwrap();
    let flow = FlowField::d8(&valley).unwrap();
    let area = flow.drainage_area().unwrap();
    // The channel cell at the last interior row collects its own row's interior
    // cells (7 of them, the border column cells are outlets).
    assert_eq!(area[(4, h - 2)], 7.0);
    // Going up the channel, each row adds its 7 interior cells.
    for y in 1..h - 1 {
        assert_eq!(area[(4, y)], ((h - 1 - y) * 7) as f32, "row {y}");
    }
    // Rain weighting: twice the rain, twice the area; it all reaches the border.
    let rain = Heightmap::filled(w, h, 2.0).unwrap();
    let wet = flow.weighted_area(&rain).unwrap();
    assert_eq!(wet[(4, 1)], 2.0 * area[(4, 1)]);
    let out: f32 = (0..w * h).filter(|&i| flow.receivers()[i] == NO_RECEIVER).map(|i| wet.cells()[i]).sum();
    assert_eq!(out, 2.0 * (w * h) as f32);
    assert!(matches!(
        flow.weighted_area(&Heightmap::new(3, 3).unwrap()),
        Err(GridError::SizeMismatch { .. })
    ));
}

#[test]
fn fits_recover_known_power_laws() {
    // y = 3 x^-0.45 exactly.
    let points: Vec<(f64, f64)> =
        (1..40).map(|k| (k as f64 * 7.0, 3.0 * (k as f64 * 7.0).powf(-0.45))).collect();
    let fit = PowerLawFit::binned(points.iter().copied(), (1.0, 1e6), 10, 1).unwrap();
    assert!((fit.exponent + 0.45).abs() < 1e-9, "{fit:?}");
    assert!((fit.coefficient - 3.0).abs() < 1e-9, "{fit:?}");
    assert!(fit.r_squared > 0.999_999);
    // Too few points, or no spread: no fit, no NaN.
    assert_eq!(PowerLawFit::of_logs(&[(1.0, 1.0)]), None);
    assert_eq!(PowerLawFit::of_logs(&[(1.0, 1.0), (1.0, 2.0)]), None);
}

#[test]
fn pits_are_strictly_lower_than_all_neighbours() {
    let map = grid(
        4,
        &[&[1.0, 1.0, 1.0, 1.0], &[1.0, 0.0, 0.5, 1.0], &[1.0, 0.5, 0.5, 1.0], &[1.0, 1.0, 1.0, 1.0]],
    );
    // (1, 1) is a pit; (2, 2) ties with (2, 1) and (1, 2): not strictly lower.
    assert_eq!(count_pits(&map), (1, 4));
}

#[test]
fn flat_and_tiny_maps_measure_without_panics() {
    for (w, h) in [(1, 1), (1, 9), (9, 1), (2, 2), (3, 3), (16, 16)] {
        let flat = Heightmap::filled(w, h, 0.5).unwrap();
        let stats = TerrainStats::measure(&flat, &AnalysisOptions::default()).unwrap();
        assert_eq!((stats.pits, stats.depression_fraction, stats.slope_area), (0, 0.0, None));
        assert!(stats.channel_flat_fraction.is_finite());
    }
}

#[test]
fn noise_measures_as_noise() {
    let map = fbm_terrain(256, 256, 1).unwrap();
    let stats = TerrainStats::measure(&map, &AnalysisOptions::default()).unwrap();
    assert!(stats.depression_fraction > 0.05 && stats.depression_fraction < 0.6, "{stats:?}");
    let beta = stats.exceedance().unwrap();
    assert!(beta > 0.3 && beta < 1.2, "{stats:?}");
    // Noise is not graded: its concavity is far below a river's 0.35 to 0.6.
    assert!(stats.concavity().unwrap() < 0.3, "{stats:?}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Filling raises, is idempotent, and every drop reaches the border.
    #[test]
    fn fill_properties(w in 1usize..24, h in 1usize..24, cells in prop::collection::vec(-5.0f32..5.0, 576)) {
        let map = Heightmap::from_cells(w, h, cells[..w * h].to_vec()).unwrap();
        let flat = fill_depressions(&map, Fill::Flat).unwrap();
        prop_assert!(flat.surface.cells().iter().zip(map.cells()).all(|(f, h)| f >= h));
        prop_assert!(flat.depth.cells().iter().all(|&d| d >= 0.0));
        let again = fill_depressions(&flat.surface, Fill::Flat).unwrap();
        prop_assert_eq!(&again.surface, &flat.surface);
        prop_assert!(again.depth.cells().iter().all(|&d| d == 0.0));
        let eps = fill_depressions(&map, Fill::Epsilon).unwrap();
        let area = FlowField::d8(&eps.surface).unwrap().drainage_area().unwrap();
        let flow = FlowField::d8(&eps.surface).unwrap();
        let out: f64 = (0..w * h).filter(|&i| flow.receivers()[i] == NO_RECEIVER).map(|i| f64::from(area.cells()[i])).sum();
        prop_assert_eq!(out, (w * h) as f64);
    }
}
