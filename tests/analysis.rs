//! Terrain analysis against maps worked out by hand and analytic surfaces.

use hydraulic_erosion::analysis::{
    AnalysisOptions, Fill, FlowField, LakeStats, NO_RECEIVER, PowerLawFit, TerrainStats, count_pits,
    fill_depressions, fill_depressions_to,
};
use hydraulic_erosion::{Error, GridError, Heightmap, fbm_terrain, island_terrain};
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
    // Finite rain whose sums pass f32's range: they saturate (the error
    // named a cell of the output as the rain's before).
    let heavy = flow.weighted_area(&Heightmap::filled(w, h, f32::MAX).unwrap()).unwrap();
    assert_eq!(heavy[(4, 1)], f32::MAX);
    assert_eq!(heavy[(0, 0)], f32::MAX, "a border cell takes only its own rain");
    let light = flow.weighted_area(&Heightmap::filled(w, h, -f32::MAX).unwrap()).unwrap();
    assert_eq!(light[(4, 1)], -f32::MAX);
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
    assert_eq!(count_pits(&map), Ok((1, 4)));
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

/// `options` with a sea level.
fn at_sea(level: f32, options: AnalysisOptions) -> AnalysisOptions {
    AnalysisOptions { sea_level: Some(level), ..options }
}

#[test]
fn without_a_sea_level_the_figures_are_as_before() {
    // fbm_terrain(48, 48, 3)'s figures, measured before the sea level existed.
    let map = fbm_terrain(48, 48, 3).unwrap();
    let none = TerrainStats::measure(&map, &AnalysisOptions::default()).unwrap();
    assert_eq!(AnalysisOptions::default().sea_level, None);
    assert_eq!(none.land_cells, 48 * 48);
    assert_eq!(none.depression_fraction, 376.0 / 2304.0);
    assert_eq!((none.pits, none.pit_fraction), (57, 57.0 / 2116.0));
    assert_eq!((none.channel_cells, none.channel_flat_fraction), (131, 85.0 / 131.0));
    let close = |fit: Option<PowerLawFit>, exponent: f64, points: usize| {
        let fit = fit.unwrap();
        assert!((fit.exponent - exponent).abs() < 1e-12 && fit.points == points, "{fit:?}");
    };
    close(none.slope_area, 1.2237937988388277, 3);
    close(none.area_exceedance, -0.6646251607771442, 4);
    // The exceedance fit's range of 2026-11-24 (up to 5 % of the map).
    let wide = AnalysisOptions { exceedance_max_fraction: 0.05, ..AnalysisOptions::default() };
    close(TerrainStats::measure(&map, &wide).unwrap().area_exceedance, -0.610531078460132, 11);
    close(none.hack_fit, 0.6592345979859286, 4);
    // A level below every cell leaves all land: the same figures, bit for
    // bit, through the sea's code path.
    for level in [-1.0, f32::MIN, f32::NEG_INFINITY] {
        let options = at_sea(level, AnalysisOptions::default());
        assert_eq!(TerrainStats::measure(&map, &options).unwrap(), none, "{level}");
    }
    // With no outlet but the border, the fill and the flow are the plain ones.
    for mode in [Fill::Flat, Fill::Epsilon] {
        let plain = fill_depressions(&map, mode).unwrap();
        assert_eq!(fill_depressions_to(&map, mode, |_| false).unwrap(), plain);
        let flow = FlowField::d8(&plain.surface).unwrap();
        assert_eq!(FlowField::d8_to(&plain.surface, |_| false).unwrap(), flow);
    }
}

/// A 7 x 7 coast: sea at 0 in the two left columns, land rising 10 a column
/// eastwards (10 to 50), a closed pit at (3, 2) = 5, a lagoon below sea level
/// at (4, 4) = -1 and, beside it, a hollow at (5, 4) = 15 lower than all its
/// land neighbours.
fn coast() -> Heightmap {
    let mut map = Heightmap::from_fn(7, 7, |x, _| if x < 2 { 0.0 } else { 10.0 * (x as f32 - 1.0) }).unwrap();
    map[(3, 2)] = 5.0;
    map[(4, 4)] = -1.0;
    map[(5, 4)] = 15.0;
    map
}

#[test]
fn the_sea_is_an_outlet_and_only_land_is_measured() {
    let map = coast();
    let sea = |i: usize| map.cells()[i] <= 0.0;
    // The fill: the pit rises to its spill (10), the lagoon is sea and stays at
    // -1, and the hollow spills into it: open, not raised.
    let filled = fill_depressions_to(&map, Fill::Flat, sea).unwrap();
    let mut expected = map.clone();
    expected[(3, 2)] = 10.0;
    assert_eq!(filled.surface, expected);
    assert_eq!(filled.depth.cells().iter().sum::<f32>(), 5.0);
    // Without the sea the lagoon and the hollow are one closed depression,
    // spilling at 20 over the column x = 3.
    let plain = fill_depressions(&map, Fill::Flat).unwrap();
    assert_eq!((plain.surface[(4, 4)], plain.surface[(5, 4)], plain.surface[(3, 2)]), (20.0, 20.0, 10.0));

    // The flow, worked out by hand on the epsilon fill (the pit just above 10):
    // column x = 2 drains west into the sea strip; (3, 1) into (2, 1); (5, 1)
    // and (5, 2) into (4, 1) and (4, 2), both into the pit, the pit into
    // (2, 2); every other interior land cell into the lagoon.
    let eps = fill_depressions_to(&map, Fill::Epsilon, sea).unwrap();
    let flow = FlowField::d8_to(&eps.surface, sea).unwrap();
    let at = |x: usize, y: usize| y * 7 + x;
    for (i, &r) in flow.receivers().iter().enumerate() {
        if sea(i) {
            assert_eq!(r, NO_RECEIVER, "sea cell {i} passes nothing on");
        }
    }
    assert_eq!(flow.receivers()[at(5, 4)] as usize, at(4, 4), "the hollow drains into the lagoon");
    assert_eq!(flow.receivers()[at(2, 2)] as usize, at(1, 2), "the coast drains into the sea");
    let area = flow.drainage_area().unwrap();
    let expected_area = [
        // Land: the valley through the pit, the cells beside it, the lagoon's shore.
        ((4, 1), 2.0),
        ((4, 2), 2.0),
        ((3, 2), 5.0),
        ((2, 1), 2.0),
        ((2, 2), 6.0),
        ((2, 3), 1.0),
        ((2, 4), 1.0),
        ((2, 5), 1.0),
        ((3, 4), 1.0),
        ((5, 4), 1.0),
        // Sea: itself and what flows straight in, nothing further.
        ((1, 2), 7.0),
        ((1, 4), 2.0),
        ((4, 4), 9.0),
        ((0, 2), 1.0),
    ];
    for ((x, y), a) in expected_area {
        assert_eq!(area[(x, y)], a, "area at ({x}, {y})");
    }
    // Without the sea the filled lagoon (just above 20) takes in the hollow,
    // (5, 3) and (5, 5), and its 4 cells cross the land on their way out, over
    // (3, 4) and (2, 4).
    let plain_eps = fill_depressions(&map, Fill::Epsilon).unwrap();
    let plain_area = FlowField::d8(&plain_eps.surface).unwrap().drainage_area().unwrap();
    assert_eq!((plain_area[(4, 4)], plain_area[(3, 4)], plain_area[(2, 4)]), (4.0, 5.0, 6.0));

    // The figures: 34 land cells (49 less 14 in the strip and the lagoon), one
    // of them in a closed depression (the pit); 19 interior land cells, one pit
    // (the hollow has the lagoon below it). Channels from 5 cells: the pit
    // (flat on the flat fill) and (2, 2) below it.
    let options = AnalysisOptions { channel_area: 5.0, ..AnalysisOptions::default() };
    let land = TerrainStats::measure(&map, &at_sea(0.0, options)).unwrap();
    assert_eq!(land.land_cells, 34);
    assert_eq!(land.depression_fraction, 1.0 / 34.0);
    assert_eq!((land.pits, land.pit_fraction), (1, 1.0 / 19.0));
    assert_eq!((land.channel_cells, land.channel_flat_fraction), (2, 0.5));
    // Without a sea level: the lagoon and the hollow are closed too, the lagoon
    // is a pit, and the sea strip's cells are channels.
    let all = TerrainStats::measure(&map, &options).unwrap();
    assert_eq!(all.land_cells, 49);
    assert_eq!(all.depression_fraction, 3.0 / 49.0);
    assert_eq!((all.pits, all.pit_fraction), (2, 2.0 / 25.0));
    assert!(all.channel_cells > land.channel_cells, "{all:?}");
}

#[test]
fn an_island_measures_its_land_not_its_sea() {
    let map = island_terrain(128, 128, 4).unwrap();
    let all = TerrainStats::measure(&map, &AnalysisOptions::default()).unwrap();
    let land = TerrainStats::measure(&map, &at_sea(0.0, AnalysisOptions::default())).unwrap();
    // The flat sea made nearly every channel cell flat; the land's are few.
    assert!(all.channel_flat_fraction > 0.9, "{all:?}");
    assert!(land.channel_flat_fraction < 0.5, "{land:?}");
    let sea = map.cells().iter().filter(|&&h| h <= 0.0).count() as u64;
    assert!(sea > 0 && land.land_cells == 128 * 128 - sea, "{land:?}");
    assert!(land.channel_cells > 0 && land.channel_cells < all.channel_cells, "{land:?}");
    for figure in [
        land.depression_fraction,
        land.pit_fraction,
        land.channel_flat_fraction,
        land.concavity().unwrap(),
        land.exceedance().unwrap(),
        land.hack().unwrap(),
    ] {
        assert!(figure.is_finite(), "{land:?}");
    }
    assert!((0.0..=1.0).contains(&land.depression_fraction));
}

#[test]
fn a_map_all_at_sea_has_no_land_to_measure() {
    let fbm = fbm_terrain(32, 32, 2).unwrap();
    for (map, level) in [
        (Heightmap::filled(8, 8, 0.0).unwrap(), 0.0),
        (Heightmap::filled(1, 1, -3.0).unwrap(), 0.0),
        (fbm.clone(), 1.0),
        (fbm, f32::INFINITY),
    ] {
        let stats = TerrainStats::measure(&map, &at_sea(level, AnalysisOptions::default())).unwrap();
        assert_eq!(stats.land_cells, 0);
        assert_eq!((stats.depression_fraction, stats.pits, stats.pit_fraction), (0.0, 0, 0.0));
        assert_eq!((stats.channel_cells, stats.channel_flat_fraction), (0, 0.0));
        assert_eq!((stats.slope_area, stats.area_exceedance, stats.hack_fit), (None, None, None));
    }
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

    /// With a sea level the sea is never raised, no land drains through it, and
    /// every drop reaches the border or the sea.
    #[test]
    fn sea_properties(w in 1usize..24, h in 1usize..24, level in -5.0f32..5.0, cells in prop::collection::vec(-5.0f32..5.0, 576)) {
        let map = Heightmap::from_cells(w, h, cells[..w * h].to_vec()).unwrap();
        let sea = |i: usize| map.cells()[i] <= level;
        let flat = fill_depressions_to(&map, Fill::Flat, sea).unwrap();
        let eps = fill_depressions_to(&map, Fill::Epsilon, sea).unwrap();
        prop_assert_eq!(&eps.depth, &flat.depth);
        for i in 0..w * h {
            prop_assert!(flat.surface.cells()[i] >= map.cells()[i]);
            if sea(i) {
                prop_assert_eq!(flat.surface.cells()[i], map.cells()[i]);
                prop_assert_eq!(eps.surface.cells()[i], map.cells()[i]);
            }
        }
        let flow = FlowField::d8_to(&eps.surface, sea).unwrap();
        let area = flow.drainage_area().unwrap();
        let mut out = 0.0f64;
        for (i, &r) in flow.receivers().iter().enumerate() {
            let border = i % w == 0 || i / w == 0 || i % w == w - 1 || i / w == h - 1;
            prop_assert_eq!(r == NO_RECEIVER, border || sea(i), "cell {}", i);
            if r == NO_RECEIVER {
                out += f64::from(area.cells()[i]);
            }
        }
        prop_assert_eq!(out, (w * h) as f64);
        let stats = TerrainStats::measure(&map, &AnalysisOptions { sea_level: Some(level), ..AnalysisOptions::default() }).unwrap();
        prop_assert_eq!(stats.land_cells, (0..w * h).filter(|&i| !sea(i)).count() as u64);
        prop_assert!((0.0..=1.0).contains(&stats.depression_fraction));
    }
}

/// A Hydrology run's water surface: the share under water is the share of
/// cells whose pool lifts their `f32` surface, exactly, and a map with no
/// water measures as its own terrain statistics.
#[test]
fn lake_stats_read_a_hydrology_run_s_pools() {
    use hydraulic_erosion::analysis::LakeStats;
    use hydraulic_erosion::{Hydrology, HydrologyParams, Simulator};

    let mut ground = fbm_terrain(64, 64, 2).unwrap();
    let params = HydrologyParams { particles: 6_000, ..HydrologyParams::default() };
    let mut hydrology = Hydrology::new(params, 64, 64).unwrap();
    hydrology.run_seeded(&mut ground, 7).unwrap();
    let pool = hydrology.pool().cells();
    let surface: Vec<f32> = ground.cells().iter().zip(pool).map(|(&g, &p)| g + p).collect();
    let wet = surface.iter().zip(ground.cells()).filter(|(s, g)| s > g).count();
    assert!(wet > 0, "the run left no lake");
    let surface = Heightmap::from_cells(64, 64, surface).unwrap();
    let options = AnalysisOptions::default();
    let lakes = LakeStats::measure(&surface, &ground, &options).unwrap();
    assert_eq!(lakes.water_fraction, wet as f64 / 4096.0);
    let all = TerrainStats::measure(&surface, &options).unwrap();
    assert!(lakes.dry_channel_cells <= all.channel_cells);
    let dry = LakeStats::measure(&ground, &ground, &options).unwrap();
    let terrain = TerrainStats::measure(&ground, &options).unwrap();
    assert_eq!((dry.water_fraction, dry.dry_channel_cells), (0.0, terrain.channel_cells));
    assert_eq!(dry.dry_channel_flat_fraction, terrain.channel_flat_fraction);
}

/// A slope beyond `f32`'s range saturates at `f32::MAX`: a finite map
/// measures (a spike of 1e30 over cells of 1e-9, the extremes side by side;
/// before, `measure` called such a map's finite cell not finite).
#[test]
fn slopes_beyond_f32_saturate() {
    let spike = Heightmap::from_fn(3, 3, |x, y| if (x, y) == (1, 1) { 1e30 } else { 0.0 }).unwrap();
    let flow = FlowField::d8(&spike).unwrap();
    let slope = flow.slope(&spike, 1e-9).unwrap();
    assert_eq!(slope[(1, 1)], f32::MAX);
    let options = AnalysisOptions { cell_size: 1e-9, ..AnalysisOptions::default() };
    assert!(TerrainStats::measure(&spike, &options).is_ok());
    let board = Heightmap::from_fn(4, 4, |x, y| if (x + y) % 2 == 0 { f32::MAX } else { f32::MIN }).unwrap();
    assert!(TerrainStats::measure(&board, &AnalysisOptions::default()).is_ok());
    let ground = Heightmap::filled(4, 4, 0.0).unwrap();
    assert!(LakeStats::measure(&board, &ground, &AnalysisOptions::default()).is_ok());
}

/// A NaN or an infinity is refused by name, the first one in row order
/// (before, a map with a NaN cell measured as if it were a terrain).
#[test]
fn terrain_stats_refuse_non_finite_cells() {
    for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let mut map = fbm_terrain(32, 32, 1).unwrap();
        map.cells_mut()[5 * 32 + 7] = bad;
        map.cells_mut()[9 * 32 + 2] = bad;
        assert_eq!(
            TerrainStats::measure(&map, &AnalysisOptions::default()),
            Err(Error::Grid(GridError::NonFinite { x: 7, y: 5 }))
        );
    }
}

/// Options out of their documented ranges are refused by name, before any
/// work: a zero or NaN cell size used to be reported as a non-finite cell,
/// a negative one or a NaN channel area measured as figures, and an
/// infinite `exceedance_max_fraction` overflowed an index (a panic).
#[test]
fn analysis_options_out_of_range_are_refused_by_name() {
    use hydraulic_erosion::analysis::LakeStats;

    let map = fbm_terrain(32, 32, 1).unwrap();
    let d = AnalysisOptions::default();
    assert_eq!(d.validate(), Ok(()));
    let cases = [
        (AnalysisOptions { cell_size: 0.0, ..d }, "analysis.cell_size"),
        (AnalysisOptions { cell_size: -1.0, ..d }, "analysis.cell_size"),
        (AnalysisOptions { cell_size: f32::NAN, ..d }, "analysis.cell_size"),
        (AnalysisOptions { channel_area: f64::NAN, ..d }, "analysis.channel_area"),
        (AnalysisOptions { channel_area: -1.0, ..d }, "analysis.channel_area"),
        (AnalysisOptions { max_area_fraction: 2.0, ..d }, "analysis.max_area_fraction"),
        (AnalysisOptions { max_area_fraction: f64::NAN, ..d }, "analysis.max_area_fraction"),
        (AnalysisOptions { exceedance_min_area: 0.0, ..d }, "analysis.exceedance_min_area"),
        (AnalysisOptions { exceedance_max_fraction: f64::INFINITY, ..d }, "analysis.exceedance_max_fraction"),
        (AnalysisOptions { exceedance_max_fraction: 0.0, ..d }, "analysis.exceedance_max_fraction"),
        (AnalysisOptions { bins_per_decade: 0, ..d }, "analysis.bins_per_decade"),
        (AnalysisOptions { bins_per_decade: 1001, ..d }, "analysis.bins_per_decade"),
        (AnalysisOptions { min_per_bin: 0, ..d }, "analysis.min_per_bin"),
        (AnalysisOptions { flat_slope: f32::NAN, ..d }, "analysis.flat_slope"),
        (AnalysisOptions { flat_slope: -1e-6, ..d }, "analysis.flat_slope"),
        // A NaN level is refused, as the simulators' (it counted as no sea).
        (AnalysisOptions { sea_level: Some(f32::NAN), ..d }, "analysis.sea_level"),
    ];
    for (options, field) in cases {
        assert_eq!(options.validate().map_err(|e| e.field()), Err(field));
        let refused = |r: Result<(), Error>| matches!(r, Err(Error::Param(e)) if e.field() == field);
        assert!(refused(TerrainStats::measure(&map, &options).map(|_| ())), "{field}");
        assert!(refused(LakeStats::measure(&map, &map, &options).map(|_| ())), "{field}");
    }
    // The edges of the ranges are accepted.
    let edges = AnalysisOptions {
        max_area_fraction: 1.0,
        exceedance_max_fraction: 1.0,
        bins_per_decade: 1000,
        min_per_bin: 1,
        flat_slope: 0.0,
        sea_level: Some(f32::NEG_INFINITY),
        ..d
    };
    assert!(TerrainStats::measure(&map, &edges).is_ok());
}

/// The binned fit takes any range and bin count: its bins follow the pairs,
/// not the range (a range of 10^600 at 2^32 bins a decade asked for 30 TB
/// and aborted the process; an infinite `x_max` overflowed the bin count).
/// One pair a bin, each bin's point is its pair, so the fit is the exact
/// line through them.
#[test]
fn binned_fits_take_any_range_and_bin_count() {
    let points: Vec<(f64, f64)> = (1..60).map(|k| (k as f64, 2.0 / (k as f64 * k as f64))).collect();
    let exact = PowerLawFit::binned(points.iter().copied(), (1.0, 100.0), 1000, 1).unwrap();
    assert_eq!(exact.points, 59);
    assert!((exact.exponent + 2.0).abs() < 1e-12 && (exact.coefficient - 2.0).abs() < 1e-12, "{exact:?}");
    for range in [(1.0, 1e300), (1e-300, f64::MAX), (1.0, f64::INFINITY), (f64::MIN_POSITIVE, f64::INFINITY)]
    {
        for per in [1000, u32::MAX] {
            let fit = PowerLawFit::binned(points.iter().copied(), range, per, 1).unwrap();
            assert_eq!(fit.points, 59, "{range:?} {per}");
            assert!((fit.exponent + 2.0).abs() < 1e-12, "{range:?} {per}: {fit:?}");
        }
    }
    // Empty ranges and no bins give no fit.
    for range in [(0.0, 10.0), (-1.0, 10.0), (10.0, 1.0), (f64::NAN, 10.0), (1.0, f64::NAN)] {
        assert_eq!(PowerLawFit::binned(points.iter().copied(), range, 10, 1), None, "{range:?}");
    }
    assert_eq!(PowerLawFit::binned(points.iter().copied(), (1.0, 100.0), 0, 1), None);
}

/// A NaN or infinite cell, which only a caller's own edits can put in a
/// grid, is refused by name by every analysis function that reads cells
/// (before, D8 routed around a NaN and the pit count skipped it and its
/// neighbours, silently).
#[test]
fn flow_and_pits_refuse_non_finite_cells() {
    let good = fbm_terrain(16, 16, 1).unwrap();
    let flow = FlowField::d8(&good).unwrap();
    for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let mut map = good.clone();
        map.cells_mut()[3 * 16 + 4] = bad;
        map.cells_mut()[9 * 16 + 2] = bad;
        let refused = GridError::NonFinite { x: 4, y: 3 };
        assert_eq!(FlowField::d8(&map), Err(refused));
        assert_eq!(FlowField::d8_to(&map, |_| false), Err(refused));
        assert_eq!(count_pits(&map), Err(refused));
        assert_eq!(fill_depressions(&map, Fill::Flat).map(|_| ()), Err(refused));
        assert_eq!(flow.weighted_area(&map), Err(refused));
        assert_eq!(flow.slope(&map, 1.0), Err(Error::Grid(refused)));
    }
}

/// The flow's lengths and slopes refuse a cell size outside `(0, 1e15]` by
/// name (a zero or NaN one was reported as a non-finite cell, a negative one
/// gave negative lengths); the range's top is accepted.
#[test]
fn flow_lengths_and_slopes_refuse_bad_cell_sizes_by_name() {
    let map = fbm_terrain(16, 16, 1).unwrap();
    let flow = FlowField::d8(&map).unwrap();
    let refused = |r: Result<Heightmap, Error>| matches!(r, Err(Error::Param(e)) if e.field() == "cell_size");
    for bad in [0.0, -0.0, -1.0, f32::NAN, f32::INFINITY, 1.1e15, f32::MAX] {
        assert!(refused(flow.flow_length(bad)), "{bad}");
        assert!(refused(flow.slope(&map, bad)), "{bad}");
    }
    let unit = flow.flow_length(1.0).unwrap();
    let far = flow.flow_length(1e15).unwrap();
    // Both are the same f64 lengths scaled, each rounded once to f32.
    for (u, f) in unit.cells().iter().zip(far.cells()) {
        let scaled = f64::from(*u) * 1e15;
        assert!((f64::from(*f) - scaled).abs() <= scaled * 2e-7, "{u} {f}");
    }
    assert!(flow.slope(&map, 1e15).is_ok());
    assert!(flow.slope(&map, f32::MIN_POSITIVE).is_ok());
}

/// A basin from `-f32::MAX` under a rim at `f32::MAX` is finite and fills:
/// its depth saturates at `f32::MAX` (it came out infinite, and the fill of a
/// finite map was refused as non-finite).
#[test]
fn a_basin_deeper_than_f32_can_hold_fills_with_a_saturated_depth() {
    use hydraulic_erosion::analysis::{Fill, fill_depressions};
    let map = hydraulic_erosion::Heightmap::from_fn(8, 8, |x, y| {
        if x == 0 || y == 0 || x == 7 || y == 7 { f32::MAX } else { -f32::MAX }
    })
    .unwrap();
    for mode in [Fill::Flat, Fill::Epsilon] {
        let filled = fill_depressions(&map, mode).unwrap();
        assert_eq!(filled.depth[(3, 4)], f32::MAX, "{mode:?}");
        assert_eq!(filled.depth[(0, 0)], 0.0, "{mode:?}");
        assert!(filled.surface.cells().iter().all(|h| h.is_finite()), "{mode:?}");
    }
}

/// Points that share one `x` give no fit, as documented: the mean could
/// round an ulp off that `x`, leaving a spread of 1e-33 and a fit made of
/// rounding (an exponent of 0.33 from `(0.9, 0), (0.9, 0), (0.9, 1)`).
#[test]
fn a_fit_of_points_that_share_one_x_is_none() {
    for x in [0.9, 0.1, 1.7, -3.3, 1e-7, 123.456] {
        for n in 2..22 {
            let points: Vec<(f64, f64)> = (0..n).map(|k| (x, (k % 3) as f64)).collect();
            assert_eq!(PowerLawFit::of_logs(&points), None, "x {x}, {n} points");
        }
    }
    // One point apart is a fit.
    let fit = PowerLawFit::of_logs(&[(0.9, 0.0), (0.9, 0.0), (1.9, 1.0)]).unwrap();
    assert!((fit.exponent - 1.0).abs() < 1e-12, "{fit:?}");
}

/// A value on a bin's edge opens that bin: bins a decade from 50 hold
/// `[50, 500)`, `[500, 5 000)`, ..., and an `x_max` on an edge keeps its
/// point. (`log10` taken as `ln / ln 10` put 500 and 1 000 an ulp below their
/// edges: these two fits had no point, and one point fewer.)
#[test]
fn binned_fits_put_an_edge_value_in_the_bin_it_opens() {
    let fit = PowerLawFit::binned([(50.0, 1.0), (500.0, 100.0)].into_iter(), (50.0, 1e4), 1, 1).unwrap();
    assert_eq!(fit.points, 2);
    assert!((fit.exponent - 2.0).abs() < 1e-12, "{fit:?}");
    let fit =
        PowerLawFit::binned([(1.0, 1.0), (999.0, 1.0), (1000.0, 1e6)].into_iter(), (1.0, 1e4), 1, 1).unwrap();
    assert_eq!(fit.points, 3, "{fit:?}");
    let fit = PowerLawFit::binned([(1.0, 1.0), (10.0, 10.0), (1000.0, 1e3)].into_iter(), (1.0, 1000.0), 1, 1)
        .unwrap();
    assert_eq!(fit.points, 3, "{fit:?}");
    // Every power of ten from 1 to 10^22 (each an `f64`) as an edge, at 1, 2
    // and 5 bins a decade: each value alone in the bin it opens, and the
    // last, on `x_max`, kept.
    for per in [1u32, 2, 5] {
        let pairs: Vec<(f64, f64)> = (0..=22).map(|k| (10f64.powi(k), 1.0 + f64::from(k * k))).collect();
        let fit = PowerLawFit::binned(pairs.iter().copied(), (1.0, 1e22), per, 1).unwrap();
        assert_eq!(fit.points, 23, "{per} a decade");
    }
}

/// The drainage-area exceedance counts an area on a threshold at that
/// threshold: a tilted plane one cell high, 1 001 cells long, drains each
/// cell into the next, so the areas are 1 to 1 000 once each (and the
/// outlet's), P(A >= a) is `(1 001 - a) / cells` exactly, and the fit over
/// thresholds 1, 10, 100, 1 000 is the fit of those four points. (1 000 fell
/// into the bin below, and the 1 000 threshold off the range: β 0.291
/// against the exact 0.273 on a similar plane.)
#[test]
fn the_exceedance_counts_an_area_on_a_threshold_at_it() {
    let (w, h) = (1003, 3);
    // A trough along the middle row falling to x = 0; the rows beside it
    // drain into it.
    let map = Heightmap::from_fn(w, h, |x, y| x as f32 + if y == 1 { 0.0 } else { 10_000.0 }).unwrap();
    let options = AnalysisOptions {
        exceedance_min_area: 1.0,
        exceedance_max_fraction: 1.0,
        bins_per_decade: 1,
        ..AnalysisOptions::default()
    };
    let stats = TerrainStats::measure(&map, &options).unwrap();
    let flow = FlowField::d8(&fill_depressions(&map, Fill::Epsilon).unwrap().surface).unwrap();
    let areas: Vec<f64> = flow.drainage_area().unwrap().cells().iter().map(|&a| f64::from(a)).collect();
    let n = areas.len() as f64;
    let exact: Vec<(f64, f64)> = [1.0f64, 10.0, 100.0, 1000.0]
        .iter()
        .map(|&a| (a.log10(), (areas.iter().filter(|&&x| x >= a).count() as f64 / n).log10()))
        .collect();
    let fit = PowerLawFit::of_logs(&exact).unwrap();
    let measured = stats.area_exceedance.expect("an exceedance fit");
    assert_eq!(measured.points, 4, "{measured:?}");
    assert!((measured.exponent - fit.exponent).abs() < 1e-12, "{measured:?} against {fit:?}");
}

/// `fill_depressions_to` asks `outlet` at most once a cell in either mode
/// (the epsilon fill's two floods asked twice).
#[test]
fn an_epsilon_fill_asks_each_outlet_once() {
    use std::cell::Cell;
    let map = fbm_terrain(24, 17, 3).unwrap();
    for mode in [Fill::Flat, Fill::Epsilon] {
        let asked: Vec<Cell<u32>> = (0..map.len()).map(|_| Cell::new(0)).collect();
        let filled = fill_depressions_to(&map, mode, |i| {
            asked[i].set(asked[i].get() + 1);
            i % 7 == 0
        })
        .unwrap();
        assert!(asked.iter().all(|c| c.get() <= 1), "{mode:?}");
        assert!(asked.iter().any(|c| c.get() == 1), "{mode:?}");
        // The answers still count: the same fill as from a mask read twice.
        let again = fill_depressions_to(&map, mode, |i| i % 7 == 0).unwrap();
        assert_eq!(filled, again, "{mode:?}");
    }
}
