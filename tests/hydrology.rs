//! The Hydrology simulator: sediment and water books, determinism and value
//! stability, pools that fill, spill and drain (the article's two lakes, a
//! 100 000-cell lake on a small stack), flood cost, sea level, trees, resuming,
//! cancellation, and typed errors for bad input.

use crate::common;

use common::{Replay, assert_books};
use hydraulic_erosion::analysis::{Fill, fill_depressions};
use hydraulic_erosion::rand_core::SeedableRng;
use hydraulic_erosion::{
    Control, Error, GridError, Heightmap, Hydrology, HydrologyParams, HydrologyReport, MassBalance,
    PROGRESS_INTERVAL, fbm_terrain, island_terrain,
};
use hydraulic_erosion::{Mode, RunOptions, Simulator};
use proptest::prelude::*;
use rand_xoshiro::Xoshiro256StarStar;

/// The words that start a particle in the middle of cell `(x, y)` of a map
/// `size` cells wide and high (`unit_f32` takes the top 24 bits).
fn words_for_cell(x: usize, y: usize, size: usize) -> [u64; 2] {
    let word = |c: usize| (((c as u64 * 2 + 1) << 24) / (2 * size as u64)) << 40;
    [word(x), word(y)]
}

fn params(particles: u32) -> HydrologyParams {
    HydrologyParams { particles, ..HydrologyParams::default() }
}

/// Params for the hand-built scenes: no mass transfer (the terrain stays as
/// built, sills too), no trees, the article's walls at the border, and
/// particles that stall (and move on cell by cell) on all but steep ground.
fn scene(particles: u32, volume_factor: f32) -> HydrologyParams {
    HydrologyParams {
        particles,
        volume_factor,
        deposition_rate: 0.0,
        outlet_erosion: 0.0,
        stall_stream: 0.0,
        stall_acceleration: 1.0,
        trees: false,
        open_border: false,
        ..HydrologyParams::default()
    }
}

#[test]
fn a_seeded_run_balances_sediment_and_water() {
    let before = fbm_terrain(96, 96, 3).unwrap();
    let mut map = before.clone();
    let mut hydrology = Hydrology::new(params(20_000), 96, 96).unwrap();
    let report = hydrology.run_seeded(&mut map, 5).unwrap();
    eprintln!("{report:?}");
    let e = &report.erosion;
    assert_eq!(e.droplets, 20_000);
    assert_eq!(report.rain, 20_000.0);
    assert_eq!(
        e.evaporated
            + e.left_map
            + e.step_limited
            + e.unstable
            + report.ended_in_pool
            + report.flood_failed
            + report.spill_limited,
        20_000
    );
    assert!(e.eroded > 0.0 && e.deposited > 0.0 && e.outflow > 0.0);
    assert!(report.floods > 0 && report.drains > 0 && report.ended_in_pool > 0, "{report:?}");
    assert!(report.evaporated > 0.0 && report.water_outflow > 0.0 && report.pooled > 0.0);
    assert_books(&before, &map, 0.0, &hydrology, &report);
    // Streams formed and trees grew.
    assert!(hydrology.stream().cells().iter().any(|&s| s > 0.5));
    assert!(hydrology.trees().len() > 0);
    assert!(hydrology.pool().cells().iter().filter(|&&d| d > 0.0).count() > 10);
}

#[test]
fn same_seed_same_bits_other_seed_other_bits() {
    let base = fbm_terrain(48, 48, 1).unwrap();
    let run = |seed| {
        let mut map = base.clone();
        let mut h =
            Hydrology::new(HydrologyParams { batch: 50, lrate: 0.1, ..params(2_000) }, 48, 48).unwrap();
        let report = h.run_seeded(&mut map, seed).unwrap();
        let hashes = [&map, h.pool(), h.stream(), h.vegetation()].map(common::map_hash);
        (hashes, report, h.trees().collect::<Vec<_>>())
    };
    let (a, ra, ta) = run(7);
    let (b, rb, tb) = run(7);
    let (c, _, _) = run(8);
    assert_eq!(a, b);
    assert_eq!(ra, rb);
    assert_eq!(ta, tb);
    assert_ne!(a[0], c[0]);
}

#[test]
fn value_stability() {
    // Pinned: a change here is value-breaking (see tests/value_stability.rs). CI
    // runs this file with `std` and with `libm`.
    let mut map = fbm_terrain(48, 40, 3).unwrap();
    let p = HydrologyParams { batch: 100, lrate: 0.1, ..params(3_000) };
    let mut h = Hydrology::new(p, 48, 40).unwrap();
    let report = h.run_seeded(&mut map, 11).unwrap();
    let hashes =
        [&map, h.pool(), h.stream(), h.vegetation()].map(|g| format!("{:016x}", common::map_hash(g)));
    eprintln!("{hashes:?} {report:?}");
    assert_eq!(report.erosion.steps, 39_845);
    assert_eq!(hashes, ["fd2c04dac85dd175", "bb77c98d49a088ba", "e90af77627f5b515", "f829763f98e49ec5"]);
}

#[test]
fn value_stability_with_test_planes() {
    // Pinned as the test above, with the article's test planes (and the
    // spill limit they had as defaults).
    let mut map = fbm_terrain(48, 40, 3).unwrap();
    let p = HydrologyParams { batch: 100, lrate: 0.1, exact_flood: false, spill: 20, ..params(3_000) };
    let mut h = Hydrology::new(p, 48, 40).unwrap();
    let report = h.run_seeded(&mut map, 11).unwrap();
    let hashes =
        [&map, h.pool(), h.stream(), h.vegetation()].map(|g| format!("{:016x}", common::map_hash(g)));
    eprintln!("{hashes:?} {report:?}");
    assert_eq!(report.erosion.steps, 35_765);
    assert_eq!(hashes, ["6f6bedf549cf150a", "f967c9cc36b734d2", "19ac21cb25b64c34", "20ea4579c427f925"]);
}

/// The article's two-lake scene, by hand: an upper basin whose rim has one low
/// point, a channel down from it, and a lower basin.
fn two_basins() -> Heightmap {
    Heightmap::from_fn(48, 16, |x, y| {
        let across = 0.02 * (y as f32 - 7.5).abs(); // a valley along the map's middle row
        let along = match x {
            0..=1 | 46..=47 => 2.0,
            2..=15 => 0.5 + 0.002 * (x as f32 - 8.0).powi(2), // upper basin
            16 => 0.62,                                       // its rim
            17..=27 => 0.58 - 0.028 * (x as f32 - 17.0),      // channel
            _ => 0.1 + 0.002 * (x as f32 - 37.0).powi(2),     // lower basin
        };
        along + across
    })
    .unwrap()
}

#[test]
fn an_upper_lake_spills_into_a_lower_lake() {
    let map0 = two_basins();
    let mut map = map0.clone();
    let p = scene(600, 10.0);
    let mut h = Hydrology::new(p, 48, 16).unwrap();
    let report = h.run_seeded(&mut map, 3).unwrap();
    assert_eq!(report.erosion.droplets, 600);
    assert_eq!(map, map0, "no mass transfer in this scene");
    assert_books(&map0, &map, 0.0, &h, &report);

    // Rain that fell on the lower lake's own catchment (the channel and the lower
    // basin), replaying the generator's draws.
    let mut rng = Xoshiro256StarStar::seed_from_u64(3);
    let mut own_rain = 0.0;
    for _ in 0..600 {
        use hydraulic_erosion::rand_core::Rng;
        let x = (rng.next_u64() >> 40) as f32 / 16_777_216.0 * 48.0;
        let _y = rng.next_u64();
        if x >= 17.0 {
            own_rain += 1.0;
        }
    }

    let surfaces = |xs: core::ops::Range<usize>| {
        let mut levels = Vec::new();
        let mut volume = 0.0;
        for y in 0..16 {
            for x in xs.clone() {
                let d = h.pool()[(x, y)];
                if d > 0.0 {
                    levels.push(map[(x, y)] + d);
                    volume += f64::from(d) * 10.0;
                }
            }
        }
        let lo = levels.iter().copied().fold(f32::INFINITY, f32::min);
        let hi = levels.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        (levels.len(), lo, hi, volume)
    };
    let (upper_cells, upper_lo, upper_hi, _) = surfaces(2..16);
    let (lower_cells, lower_lo, lower_hi, lower_volume) = surfaces(17..46);
    eprintln!(
        "upper: {upper_cells} cells at {upper_lo}..{upper_hi}; lower: {lower_cells} cells at {lower_lo}..{lower_hi}, \
         volume {lower_volume} vs own rain {own_rain}; {report:?}"
    );
    // Two flat lakes at two heights: the upper one full to its outlet (the rim's low
    // point, 0.62 + 0.01), the lower one well below it.
    assert!(upper_cells > 100 && lower_cells > 50);
    assert!(upper_hi - upper_lo < 1e-3 && lower_hi - lower_lo < 1e-3);
    assert!((upper_lo - 0.63).abs() < 0.01, "upper lake at its outlet");
    assert!(lower_hi < upper_lo - 0.1);
    // The upper lake drained into the lower one: it holds more than its own rain.
    assert!(report.drains > 0);
    assert!(lower_volume > own_rain, "{lower_volume} <= {own_rain}");
}

/// A 400 x 400 map: a flat basin of about 107 500 cells at height 0 behind a
/// cliff, with one notch at 0.05 that runs down to the east border.
fn big_basin() -> Heightmap {
    Heightmap::from_fn(400, 400, |x, y| {
        let (dx, dy) = (x as f32 - 199.5, y as f32 - 199.5);
        let r = (dx * dx + dy * dy).sqrt();
        if r <= 185.0 {
            0.0
        } else if (199..=200).contains(&y) && x > 199 {
            0.05 - 0.002 * (x as f32 - 385.0)
        } else {
            0.1 + 0.001 * (r - 185.0)
        }
    })
    .unwrap()
}

#[test]
fn a_100_000_cell_lake_fills_and_drains_on_a_small_stack() {
    // 256 KiB of stack: a recursive flood fill over 100 000 cells would need
    // megabytes.
    let thread = std::thread::Builder::new().stack_size(256 * 1024).spawn(|| {
        let before = big_basin();
        let mut map = before.clone();
        let p = HydrologyParams {
            particles: 40,
            volume_factor: 0.001,
            // The notch stays where it is (erosion would cut it).
            deposition_rate: 0.0,
            outlet_erosion: 0.0,
            stall_stream: 0.0,
            trees: false,
            ..HydrologyParams::default()
        };
        let mut h = Hydrology::new(p, 400, 400).unwrap();
        let report = h.run_seeded(&mut map, 1).unwrap();
        assert_books(&before, &map, 0.0, &h, &report);
        // The basin's cells (pools in the notch's channel aside).
        let in_basin = |i: usize| {
            let (dx, dy) = ((i % 400) as f32 - 199.5, (i / 400) as f32 - 199.5);
            dx * dx + dy * dy <= 185.0 * 185.0
        };
        let wet: Vec<f32> = (0..map.len())
            .filter(|&i| in_basin(i) && h.pool().cells()[i] > 0.0)
            .map(|i| map.cells()[i] + h.pool().cells()[i])
            .collect();
        let lo = wet.iter().copied().fold(f32::INFINITY, f32::min);
        let hi = wet.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        eprintln!("{} wet cells at {lo}..{hi}; {report:?}", wet.len());
        assert!(wet.len() >= 100_000);
        // Full to the notch, and draining through it off the map: a particle
        // raises this lake by up to 1 / (107 500 * 0.001) = 0.0093, but only up
        // to its sill, the notch, and drainage lowers it no further.
        assert!(lo >= 0.05 && hi - 0.05 < 1e-6, "{lo}..{hi}");
        // At its water surface the lake is no closed depression: it drains.
        let surface = Heightmap::from_fn(400, 400, |x, y| map[(x, y)] + h.pool()[(x, y)]).unwrap();
        let filled = fill_depressions(&surface, Fill::Flat).unwrap();
        let closed =
            filled.depth.cells().iter().enumerate().filter(|&(i, &d)| in_basin(i) && d > 0.0).count();
        assert_eq!(closed, 0, "{closed} basin cells below their spill level");
        assert!(report.drains > 0 && report.water_outflow > 0.0);
        // Floods walked the whole lake, again and again (hops off the
        // cliff walk a few cells).
        assert!(report.flood_cells >= 20 * 100_000, "{} cells walked", report.flood_cells);
    });
    thread.unwrap().join().unwrap();
}

#[test]
fn a_flood_costs_in_proportion_to_its_pool_not_the_map() {
    // The same small pit, 10 cells from the corner, on a 32 x 32 and a 1024 x 1024
    // map; one particle placed on it.
    let cost = |size: usize| {
        let mut map = Heightmap::from_fn(size, size, |x, y| {
            if (9..=11).contains(&x) && (9..=11).contains(&y) { 0.9 } else { 1.0 }
        })
        .unwrap();
        let p =
            HydrologyParams { particles: 1, stall_stream: 0.0, trees: false, ..HydrologyParams::default() };
        let mut h = Hydrology::new(p, size, size).unwrap();
        let report = h.run(&mut map, &mut Replay(words_for_cell(10, 10, size).to_vec(), 0)).unwrap();
        assert_eq!(report.ended_in_pool, 1, "{report:?}");
        (report.floods, report.flood_cells)
    };
    let small = cost(32);
    let large = cost(1024);
    eprintln!("flood cost: {small:?} on 32 x 32, {large:?} on 1024 x 1024");
    assert_eq!(small, large);
    assert!(small.1 < 1_000);
}

/// Runs `p` over a copy of `before` (seeded with 2), checks the books, and
/// returns the highest water surface with the report.
fn top_of_water(before: &Heightmap, p: HydrologyParams) -> (f32, HydrologyReport) {
    let mut map = before.clone();
    let mut h = Hydrology::new(p, before.width(), before.height()).unwrap();
    let report = h.run_seeded(&mut map, 2).unwrap();
    assert_books(before, &map, 0.0, &h, &report);
    let top = (0..map.len())
        .filter(|&i| h.pool().cells()[i] > 0.0)
        .map(|i| map.cells()[i] + h.pool().cells()[i])
        .fold(f32::NEG_INFINITY, f32::max);
    (top, report)
}

#[test]
fn with_a_sea_level_water_reaching_the_sea_leaves_instead_of_pooling() {
    // A slope down to the west border, whose 11 western columns lie at or
    // below the sea (0).
    let bowl = Heightmap::from_fn(32, 32, |x, y| -0.1 + 0.01 * x as f32 + 0.001 * (y % 3) as f32).unwrap();
    let run = |sea_level| {
        top_of_water(&bowl, HydrologyParams { sea_level, open_border: false, ..scene(400, 0.01) })
    };
    let (walled, walled_report) = run(None);
    let (sea, sea_report) = run(Some(0.0));
    eprintln!("top of the water: walled {walled}, sea {sea}");
    assert!(walled > 0.05, "walled in by the border");
    // No pool stands in the sea, nor rises above it beside it.
    assert!(sea <= 0.0, "{sea}");
    assert!(sea_report.water_outflow > walled_report.water_outflow);
    assert!(sea_report.erosion.left_map > walled_report.erosion.left_map);
}

/// Rivers build deltas: with `sea_deltas` (the default) sea cells at river
/// mouths take deposits and some become land; without, the sea floor is
/// untouched (but for sub-ulp rounding remainders). Books balanced either
/// way.
#[test]
fn rivers_build_deltas_into_the_sea() {
    let before = island_terrain(96, 96, 4).unwrap();
    let sea = |map: &Heightmap, i: usize| map.cells()[i] <= 0.03;
    let run = |sea_deltas| {
        let p = HydrologyParams { sea_level: Some(0.03), sea_deltas, ..params(20_000) };
        let mut map = before.clone();
        let mut h = Hydrology::new(p, 96, 96).unwrap();
        let report = h.run_seeded(&mut map, 5).unwrap();
        assert_books(&before, &map, 0.0, &h, &report);
        map
    };
    let sea_cells: Vec<usize> = (0..before.len()).filter(|&i| sea(&before, i)).collect();
    let fixed = run(false);
    // (Only the runs' sub-ulp rounding remainders, placed on the cells of
    // smallest magnitude, the sea floor's.)
    let moved = |map: &Heightmap, i: usize| map.cells()[i] - before.cells()[i];
    assert!(sea_cells.iter().all(|&i| moved(&fixed, i).abs() < 1e-6));
    let deltas = run(true);
    let raised = sea_cells.iter().filter(|&&i| moved(&deltas, i) > 1e-4).count();
    let new_land = sea_cells.iter().filter(|&&i| !sea(&deltas, i)).count();
    eprintln!("sea cells {}, raised {raised}, now land {new_land}", sea_cells.len());
    assert!(raised > 20 && new_land > 0, "raised {raised}, new land {new_land}");
    assert!(sea_cells.iter().all(|&i| moved(&deltas, i) > -1e-6), "the sea floor is never cut");
}

/// An island's sea floor lies flat below the sea level: particles reaching it
/// leave at once, never walking the sea as a pool (which took each one a walk
/// of the whole sea: 600 times the run's time on a 128² island).
#[test]
fn a_sea_over_a_flat_floor_costs_no_floods() {
    let before = island_terrain(96, 96, 4).unwrap();
    let p = HydrologyParams { sea_level: Some(0.03), ..params(6_000) };
    let mut map = before.clone();
    let mut h = Hydrology::new(p, 96, 96).unwrap();
    let report = h.run_seeded(&mut map, 3).unwrap();
    assert_books(&before, &map, 0.0, &h, &report);
    let sea = |i: usize| map.cells()[i] <= 0.03;
    assert!(
        (0..map.len()).filter(|&i| sea(i)).all(|i| h.pool().cells()[i] == 0.0),
        "no water stands in the sea"
    );
    assert!(report.erosion.left_map > 1_000, "{report:?}");
    // A flood walks its own pool, not the sea: well under one sea a flood.
    let sea_cells = (0..map.len()).filter(|&i| sea(i)).count() as u64;
    assert!(report.flood_cells < report.floods.max(1) * sea_cells / 10, "{report:?}");
}

#[test]
fn trees_root_where_they_stand_and_can_be_switched_off() {
    let before = fbm_terrain(64, 64, 4).unwrap();
    let p = HydrologyParams { batch: 20, ..params(4_000) };
    let mut map = before.clone();
    let mut h = Hydrology::new(p, 64, 64).unwrap();
    h.run_seeded(&mut map, 1).unwrap();
    let trees: Vec<(usize, usize)> = h.trees().collect();
    assert!(trees.len() > 20, "{} trees", trees.len());
    // The vegetation map is exactly the trees' roots: 1 under each tree, 0.6 on its
    // edges, 0.4 on its corners.
    let mut expected = vec![0.0_f64; 64 * 64];
    for &(x, y) in &trees {
        for ny in y.saturating_sub(1)..(y + 2).min(64) {
            for nx in x.saturating_sub(1)..(x + 2).min(64) {
                expected[ny * 64 + nx] += [1.0, 0.6, 0.4][usize::from(nx != x) + usize::from(ny != y)];
            }
        }
    }
    for (got, want) in h.vegetation().cells().iter().zip(&expected) {
        assert!((f64::from(*got) - want).abs() < 1e-4, "{got} vs {want}");
    }
    // No tree stands in a pool.
    assert!(trees.iter().all(|&(x, y)| h.pool()[(x, y)] == 0.0));

    let mut map = before.clone();
    let mut bare = Hydrology::new(HydrologyParams { trees: false, ..p }, 64, 64).unwrap();
    bare.run_seeded(&mut map, 1).unwrap();
    assert_eq!(bare.trees().len(), 0);
    assert!(bare.vegetation().cells().iter().all(|&v| v == 0.0));
}

#[test]
fn layers_can_be_read_and_set_to_resume_a_run() {
    let p = HydrologyParams { batch: 50, lrate: 0.05, ..params(1_500) };
    let mut map = fbm_terrain(40, 40, 2).unwrap();
    let mut first = Hydrology::new(p, 40, 40).unwrap();
    first.run_seeded(&mut map, 1).unwrap();

    // A fresh simulator given the layers and trees goes on exactly as the first.
    let mut resumed = Hydrology::new(p, 40, 40).unwrap();
    resumed.set_stream(first.stream()).unwrap();
    resumed.set_pool(first.pool()).unwrap();
    resumed.set_vegetation(first.vegetation()).unwrap();
    resumed.set_trees(&first.trees().collect::<Vec<_>>()).unwrap();
    let mut map_a = map.clone();
    let mut map_b = map.clone();
    let pool_before = first.pool_volume();
    let ra = first.run_seeded(&mut map_a, 2).unwrap();
    let rb = resumed.run_seeded(&mut map_b, 2).unwrap();
    assert_eq!(map_a, map_b);
    assert_eq!(ra, rb);
    assert_eq!(first.pool(), resumed.pool());
    assert_eq!(first.stream(), resumed.stream());
    assert_eq!(first.vegetation(), resumed.vegetation());
    assert_books(&map, &map_a, pool_before, &first, &ra);

    // Setters check sizes and values, and change nothing on error.
    let wrong = Heightmap::new(40, 39).unwrap();
    assert!(matches!(resumed.set_stream(&wrong), Err(GridError::SizeMismatch { .. })));
    let mut nan = Heightmap::new(40, 40).unwrap();
    nan[(3, 4)] = f32::NAN;
    assert_eq!(resumed.set_pool(&nan), Err(GridError::NonFinite { x: 3, y: 4 }));
    assert_eq!(resumed.set_vegetation(&nan), Err(GridError::NonFinite { x: 3, y: 4 }));
    assert_eq!(resumed.set_trees(&[(1, 1), (40, 0)]), Err(GridError::OutsideMap));
    assert_eq!(resumed.pool(), first.pool());
    // Negative depths are stored as dry.
    let negative = Heightmap::filled(40, 40, -1.0).unwrap();
    resumed.set_pool(&negative).unwrap();
    assert!(resumed.pool().cells().iter().all(|&d| d == 0.0));
}

#[test]
fn progress_reports_and_cancels_leaving_the_books_balanced() {
    let before = fbm_terrain(48, 48, 3).unwrap();
    let p = HydrologyParams { batch: 100, ..params(10_000) };
    let mut map = before.clone();
    let mut h = Hydrology::new(p, 48, 48).unwrap();
    let mut calls = Vec::new();
    let mut progress = |done: u64, total: u64| {
        calls.push((done, total));
        if done >= 3 * PROGRESS_INTERVAL { Control::Stop } else { Control::Continue }
    };
    let mut rng = Xoshiro256StarStar::seed_from_u64(9);
    let report = h
        .run_with(
            map.view_mut(),
            &mut rng,
            RunOptions::default().with_mode(Mode::Sequential).with_progress(&mut progress),
        )
        .unwrap();
    let n = 3 * PROGRESS_INTERVAL;
    assert!(report.erosion.cancelled);
    assert_eq!(report.erosion.droplets, n);
    assert_eq!(calls, vec![(n / 3, 10_000), (2 * n / 3, 10_000), (n, 10_000), (n, 10_000)]);
    assert_books(&before, &map, 0.0, &h, &report);

    // The cancelled run did exactly what a run of that many particles does.
    let mut partial = before.clone();
    let mut short = Hydrology::new(HydrologyParams { particles: n as u32, ..p }, 48, 48).unwrap();
    let full = short.run_seeded(&mut partial, 9).unwrap();
    assert_eq!(partial, map);
    assert_eq!(short.pool(), h.pool());
    assert_eq!(short.stream(), h.stream());
    assert_eq!(full.erosion.steps, report.erosion.steps);
    assert!(!full.erosion.cancelled);
}

#[test]
fn bad_maps_are_rejected_untouched_and_tiny_maps_erode_to_themselves() {
    let mut h = Hydrology::new(params(100), 16, 16).unwrap();
    let mut map = fbm_terrain(16, 16, 1).unwrap();
    map[(5, 9)] = f32::INFINITY;
    let copy = map.clone();
    assert_eq!(h.run_seeded(&mut map, 1), Err(Error::Grid(GridError::NonFinite { x: 5, y: 9 })));
    assert_eq!(
        map.cells().iter().map(|c| c.to_bits()).collect::<Vec<_>>(),
        copy.cells().iter().map(|c| c.to_bits()).collect::<Vec<_>>()
    );
    let mut other = fbm_terrain(16, 17, 1).unwrap();
    assert!(matches!(h.run_seeded(&mut other, 1), Err(Error::Grid(GridError::SizeMismatch { .. }))));
    assert!(h.stream().cells().iter().all(|&s| s == 0.0));

    for (w, hgt) in [(1, 1), (2, 2), (1, 9), (9, 2)] {
        let before = Heightmap::from_fn(w, hgt, |x, y| (x * 3 + y) as f32).unwrap();
        let mut map = before.clone();
        let mut h = Hydrology::new(params(1_000), w, hgt).unwrap();
        let report = h.run_seeded(&mut map, 1).unwrap();
        assert_eq!(map, before);
        assert_eq!(report, HydrologyReport::default());
    }
    assert!(matches!(Hydrology::new(params(1), 0, 5), Err(Error::Grid(GridError::Empty { .. }))));
}

#[test]
fn bad_params_are_typed_errors_naming_the_field() {
    let d = HydrologyParams::default();
    let cases: Vec<(HydrologyParams, &str)> = vec![
        (HydrologyParams { dt: 0.0, ..d }, "dt"),
        (HydrologyParams { density: f32::NAN, ..d }, "density"),
        (HydrologyParams { friction: 1.0, ..d }, "friction"),
        (HydrologyParams { deposition_rate: -0.1, ..d }, "deposition_rate"),
        (HydrologyParams { evaporation_rate: 0.9, ..d }, "evaporation_rate"),
        (HydrologyParams { min_volume: 0.0, ..d }, "min_volume"),
        (HydrologyParams { height_scale: -1.0, ..d }, "height_scale"),
        (HydrologyParams { batch: 0, ..d }, "batch"),
        (HydrologyParams { lrate: 1.5, ..d }, "lrate"),
        (HydrologyParams { volume_factor: 0.0, ..d }, "volume_factor"),
        (HydrologyParams { drainage: -0.1, ..d }, "drainage"),
        (HydrologyParams { approach: 0.0, ..d }, "approach"),
        (HydrologyParams { max_fails: 0, ..d }, "max_fails"),
        (HydrologyParams { spill: 0, ..d }, "spill"),
        (HydrologyParams { max_steps: 0, ..d }, "max_steps"),
        (HydrologyParams { stall_stream: f32::INFINITY, ..d }, "stall_stream"),
        (HydrologyParams { stall_acceleration: -1.0, ..d }, "stall_acceleration"),
        (HydrologyParams { entrainment: 1e4, ..d }, "entrainment"),
        (HydrologyParams { sea_level: Some(f32::NAN), ..d }, "sea_level"),
        (HydrologyParams { cell_size: 0.0, ..d }, "cell_size"),
        (HydrologyParams { cell_size: -1.0, ..d }, "cell_size"),
        (HydrologyParams { cell_size: f32::NAN, ..d }, "cell_size"),
        (HydrologyParams { cell_size: f32::INFINITY, ..d }, "cell_size"),
        (HydrologyParams { cell_size: 2e6, ..d }, "cell_size"),
        // Valid alone, but friction * dt * cell_size = 1.2 > 1 in cells.
        (HydrologyParams { cell_size: 10.0, ..d }, "cell_size"),
        // 1e4 / 1e-3 steps in cells, past the limit.
        (HydrologyParams { cell_size: 1e-3, ..d }, "cell_size"),
    ];
    for (p, field) in cases {
        let err = p.validate().unwrap_err();
        assert_eq!(err.field(), field, "{p:?}");
        assert!(err.to_string().contains(field) && err.to_string().contains("must be"), "{err}");
        assert_eq!(Hydrology::new(p, 8, 8).unwrap_err(), Error::Param(err));
    }
    let plain =
        HydrologyParams { entrainment: 0.0, pit_safe: false, trees: false, sea_level: Some(-3.0), ..d };
    assert!(plain.validate().is_ok());
}

/// `cell_size` puts lengths, speeds and times in the params' unit (the rest,
/// `channel_area` and the pool rates among them, stay as they are): `in_cells`
/// gives the params a run steps with, and a run with a cell size is, bit for bit, the
/// run with those params by hand (at a size where the run-out and a delta's
/// reach, 8 unit lengths, round to the same 8 cells).
#[test]
fn cell_size_scales_each_length_as_documented() {
    let d = HydrologyParams { sea_level: Some(0.05), ..params(6_000) };
    assert_eq!(d.in_cells(), d, "cell size 1: the params as they are");
    for c in [0.5f32, 1.0625, 2.0] {
        let world = HydrologyParams { cell_size: c, ..d };
        let hand = HydrologyParams {
            dt: d.dt * c,
            density: d.density * c,
            height_scale: d.height_scale / c,
            spill_speed: d.spill_speed / c,
            stall_acceleration: d.stall_acceleration / c,
            max_steps: (d.max_steps as f32 / c).round() as u32,
            batch: (d.batch as f32 / (c * c)).round() as u32,
            ..d
        };
        assert_eq!(world.in_cells(), hand, "{c}");
        assert!(world.validate().is_ok());
    }
    let before = island_terrain(64, 64, 2).unwrap();
    let run = |p: HydrologyParams| {
        let mut map = before.clone();
        let mut h = Hydrology::new(p, 64, 64).unwrap();
        let report = h.run_seeded(&mut map, 3).unwrap();
        assert_books(&before, &map, 0.0, &h, &report);
        assert!(report.erosion.eroded > 0.0 && report.floods > 0, "{report:?}");
        ([&map, h.pool(), h.stream(), h.vegetation()].map(common::map_hash), report)
    };
    let world = HydrologyParams { cell_size: 1.0625, ..d };
    assert_eq!(run(world), run(world.in_cells()));
    // Finer cells: each step is a shorter time, so a particle lives more of them.
    let (coarse, fine) = (run(d), run(HydrologyParams { cell_size: 0.5, ..d }));
    assert_ne!(coarse.0, fine.0);
    assert!(fine.1.erosion.steps > coarse.1.erosion.steps, "{:?} {:?}", fine.1.erosion, coarse.1.erosion);
}

fn arb_map() -> impl Strategy<Value = Heightmap> {
    // At least 8 cells a side: on smaller maps the last sub-ulp remainder of a
    // run's sediment can exceed 1e-9 of the map's total (see MassBalance).
    (8usize..=24, 8usize..=24, -2i32..=3, any::<u64>(), 0u8..3)
        .prop_flat_map(|(w, h, exp, seed, kind)| {
            (Just((w, h, 10f32.powi(exp), seed, kind)), prop::collection::vec(-1.0f32..1.0, w * h))
        })
        .prop_map(|((w, h, scale, seed, kind), noise)| {
            // Rough noise, smooth terrain, or a bowl (which pools).
            let terrain = fbm_terrain(w, h, seed).unwrap();
            Heightmap::from_fn(w, h, |x, y| match kind {
                0 => noise[y * w + x] * scale,
                1 => terrain[(x, y)] * scale,
                _ => {
                    let (dx, dy) = (x as f32 - w as f32 / 2.0, y as f32 - h as f32 / 2.0);
                    (dx * dx + dy * dy) * 0.01 * scale + terrain[(x, y)] * 0.1 * scale
                }
            })
            .unwrap()
        })
}

fn arb_params() -> impl Strategy<Value = HydrologyParams> {
    (
        (0.1f32..=2.0, 0.0f32..=1.0, 0.0f32..=1.0, 0.0f32..=0.05, 0.001f32..=0.5, 0.0f32..=100.0),
        (0u32..=60, 1u32..=30, 0.0f32..=1.0, 0.001f32..=1000.0, 0.0f32..=1.0, 0.05f32..=1.0),
        (1u32..=12, 1u32..=6, 1u32..=3_000, 0.0f32..=1.0, 0.0f32..=20.0),
        (
            any::<bool>(),
            any::<bool>(),
            prop::option::of(-1.0f32..1.0),
            prop_oneof![Just(1.0f32), 0.5f32..3.0],
            any::<bool>(),
        ),
        (any::<bool>(), any::<bool>(), 0.1f32..=1000.0, 0.0f32..=2.0, 0.0f32..=3.0, any::<bool>()),
    )
        .prop_map(|(a, b, c, d, e)| {
            let (dt, friction, kd, ke, min_volume, height_scale) = a;
            let (particles, batch, lrate, volume_factor, drainage, approach) = b;
            let (max_fails, spill, max_steps, stall_stream, entrainment) = c;
            let (pit_safe, trees, sea_level, cell_size, exact_flood) = d;
            let (stall_in_pits, open_border, channel_area, outlet_erosion, spill_speed, sea_deltas) = e;
            HydrologyParams {
                dt,
                density: 1.0,
                friction: friction / dt,
                deposition_rate: kd / dt,
                evaporation_rate: ke / dt,
                min_volume,
                height_scale,
                particles,
                batch,
                lrate,
                volume_factor,
                drainage,
                exact_flood,
                approach,
                max_fails,
                spill,
                max_steps,
                stall_stream,
                stall_acceleration: 0.01,
                stall_in_pits,
                entrainment,
                channel_area,
                outlet_erosion,
                spill_speed,
                pit_safe,
                trees,
                open_border,
                sea_level,
                sea_deltas,
                settle_pits: particles % 2 == 0,
                cell_size,
            }
        })
        // A cell size whose params in cells leave their ranges is drawn as 1.
        .prop_map(|p| if p.validate().is_ok() { p } else { HydrologyParams { cell_size: 1.0, ..p } })
        .prop_filter("valid", |p| p.validate().is_ok())
}

proptest! {
    // 256 cases by default; PROPTEST_CASES=100000 for a long soak.
    #![proptest_config(ProptestConfig { cases: common::proptest_cases(256), ..ProptestConfig::default() })]

    #[test]
    fn sediment_and_water_balance_on_any_map(map in arb_map(), p in arb_params(), seed in any::<u64>()) {
        let mut after = map.clone();
        let mut h = Hydrology::new(p, map.width(), map.height()).unwrap();
        let first = h.run_seeded(&mut after, seed).unwrap();
        // A second run starts from the first's layers.
        let pool_before = h.pool_volume();
        let mut again = after.clone();
        let second = h.run_seeded(&mut again, seed ^ 1).unwrap();
        assert_books(&after, &again, pool_before, &h, &second);
        let balance = MassBalance::new(&map, &after, first.erosion.outflow);
        prop_assert!(balance.is_conserved(), "{:?} {:?}", balance, first);
        prop_assert!(first.is_water_balanced(), "{:?}", first);
        prop_assert!(first.erosion.steps <= u64::from(p.particles) * u64::from(p.in_cells().max_steps));
    }

    #[test]
    fn runs_are_deterministic(map in arb_map(), p in arb_params(), seed in any::<u64>()) {
        let run = || {
            let mut m = map.clone();
            let mut h = Hydrology::new(p, map.width(), map.height()).unwrap();
            let r = h.run_seeded(&mut m, seed).unwrap();
            ([&m, h.pool(), h.stream(), h.vegetation()].map(common::map_hash), r)
        };
        prop_assert_eq!(run(), run());
    }
}

#[test]
fn a_pool_level_off_by_rounding_is_no_drain() {
    // One lake at level 0.3 on a walled 7 x 7 map: a deep middle cell (0.3 of
    // water on ground at 0) and shallow cells around it (1e-6 of water on
    // ground at 0.299999). In f32 the deep cell's stored level is 1.2e-8 above
    // the shallow ones', far more than the shallow cells' own rounding allows
    // but within the deep one's: a particle raining on the deep cell must see
    // one flat lake and fill it, not take a shallow cell for a drain.
    let walls = |x: usize, y: usize| x == 0 || y == 0 || x == 6 || y == 6;
    let shallow = 0.3_f32 - 1e-6;
    let mut map = Heightmap::from_fn(7, 7, |x, y| match (x, y) {
        _ if walls(x, y) => 1.0,
        (3, 3) => 0.0,
        _ => shallow,
    })
    .unwrap();
    let pool = Heightmap::from_fn(7, 7, |x, y| match (x, y) {
        _ if walls(x, y) => 0.0,
        (3, 3) => 0.3,
        _ => (0.3 - f64::from(shallow)) as f32,
    })
    .unwrap();
    let deep = f64::from(pool[(3, 3)]);
    let shallow_level = f64::from(shallow) + f64::from(pool[(2, 3)]);
    assert!(deep - shallow_level > 1e-8 && deep - shallow_level < deep / 4_194_304.0);
    let p = HydrologyParams { particles: 1, trees: false, ..HydrologyParams::default() };
    let mut h = Hydrology::new(p, 7, 7).unwrap();
    h.set_pool(&pool).unwrap();
    let before = map.clone();
    let pool_before = h.pool_volume();
    let report = h.run(&mut map, &mut Replay(words_for_cell(3, 3, 7).to_vec(), 0)).unwrap();
    assert_eq!((report.drains, report.ended_in_pool), (0, 1), "{report:?}");
    assert_books(&before, &map, pool_before, &h, &report);
}

/// A round bowl `size` cells across, walled at the border: 0 in the middle,
/// rising 0.01 a cell (a single lowest cell).
fn round_bowl(size: usize) -> Heightmap {
    let c = (size as f32 - 1.0) / 2.0;
    Heightmap::from_fn(size, size, |x, y| {
        if x == 0 || y == 0 || x == size - 1 || y == size - 1 {
            return 2.0;
        }
        let (dx, dy) = (x as f32 - c, y as f32 - c);
        0.01 * (dx * dx + dy * dy).sqrt()
    })
    .unwrap()
}

#[test]
fn a_particle_in_a_dry_hollow_pools_there_unless_switched_off() {
    // Rain on a bowl; no stream ever counts (stall_stream past any value the
    // map reaches), so only `stall_in_pits` stops a particle rocking at the
    // bottom until it evaporates.
    let before = round_bowl(17);
    let run = |stall_in_pits| {
        let mut map = before.clone();
        let p = HydrologyParams {
            stall_in_pits,
            stall_stream: 1.0e6,
            deposition_rate: 0.0,
            outlet_erosion: 0.0,
            trees: false,
            ..params(50)
        };
        let mut h = Hydrology::new(p, 17, 17).unwrap();
        let report = h.run_seeded(&mut map, 4).unwrap();
        assert_books(&before, &map, 0.0, &h, &report);
        report
    };
    let (pits, article) = (run(true), run(false));
    eprintln!("stall in pits: {pits:?}\narticle: {article:?}");
    assert_eq!(pits.ended_in_pool, 50, "{pits:?}");
    assert!(pits.pooled > 40.0);
    assert_eq!(article.ended_in_pool, 0, "{article:?}");
    assert_eq!(article.pooled, 0.0);
    // Rocking costs steps: each particle of the article runs until it evaporates.
    assert!(
        article.erosion.steps > 100 * pits.erosion.steps,
        "{} vs {}",
        article.erosion.steps,
        pits.erosion.steps
    );
}

#[test]
fn water_that_cannot_reach_the_sill_stays_in_the_basin() {
    // The two-lake scene, one particle raining on the upper basin's floor with
    // a volume factor so large that its water covers a sliver of the basin:
    // the flood's first test planes reach over the rim to the channel, but
    // the water cannot, so it pools where it fell and none spills.
    let before = two_basins();
    let mut map = before.clone();
    let p = HydrologyParams { particles: 1, ..scene(1, 1.0e4) };
    let mut h = Hydrology::new(p, 48, 16).unwrap();
    let report = h.run(&mut map, &mut Replay(words_for_cell(8, 7, 48).to_vec(), 0)).unwrap();
    eprintln!("{report:?}");
    // (It hops down to the floor first: each hop counts as a drain.)
    assert_eq!(report.ended_in_pool, 1, "{report:?}");
    assert_eq!(report.water_outflow, 0.0);
    assert!(h.pool()[(8, 7)] > 0.0);
    assert!((16..48).all(|x| (0..16).all(|y| h.pool()[(x, y)] == 0.0)), "water beyond the rim");
    assert!((h.pool_volume() - 1.0).abs() < 0.02, "{}", h.pool_volume());
    assert_books(&before, &map, 0.0, &h, &report);
}

#[test]
fn an_open_border_lets_pools_spill_off_the_map() {
    // A slope down to the west border: walled (the article), the water piles
    // up against the border; open (the default), it stands no higher than
    // the border cells it reaches and runs off the map.
    let slope = Heightmap::from_fn(32, 32, |x, y| 0.01 * x as f32 + 0.001 * (y % 3) as f32).unwrap();
    let run = |open_border| top_of_water(&slope, HydrologyParams { open_border, ..scene(400, 0.01) });
    let (walled, walled_report) = run(false);
    let (open, open_report) = run(true);
    eprintln!("top of the water: walled {walled}, open {open}; {walled_report:?} {open_report:?}");
    assert!(walled > 0.05, "walled in by the border");
    // Walled, nine tenths of the rain pools (a few particles that spill at
    // the border roll off the map); open, water only stands in the
    // ripples' hollows, at most a ripple deep, and nineteen twentieths of
    // the rain runs off.
    assert!(walled_report.pooled > 0.9 * 400.0, "{walled_report:?}");
    assert!(open < 0.002 + 0.01, "open: {open}");
    assert!(open_report.water_outflow > 0.95 * 400.0, "{open_report:?}");
}

#[test]
fn the_stream_map_grows_with_the_drainage_area() {
    // A V-shaped valley falling east: the water of more and more cells runs
    // down its axis, so the stream map there grows along it, past the 0..1 of
    // a visit count, and reads about 1 where `channel_area` cells drain.
    let valley =
        Heightmap::from_fn(96, 33, |x, y| 0.02 * (y as f32 - 16.0).abs() + 0.005 * (95 - x) as f32).unwrap();
    let mut map = valley.clone();
    let p = HydrologyParams {
        channel_area: 100.0,
        batch: 500,
        lrate: 0.2,
        deposition_rate: 0.0,
        outlet_erosion: 0.0,
        trees: false,
        ..params(20_000)
    };
    let mut h = Hydrology::new(p, 96, 33).unwrap();
    let report = h.run_seeded(&mut map, 8).unwrap();
    assert_books(&valley, &map, 0.0, &h, &report);
    let axis = |x: usize| (15..=17).map(|y| h.stream()[(x, y)]).fold(0.0_f32, f32::max);
    let profile: Vec<f32> = [10, 30, 50, 70, 90].iter().map(|&x| axis(x)).collect();
    eprintln!("stream along the axis: {profile:?}");
    assert!(profile.windows(2).all(|w| w[1] > w[0]), "{profile:?}");
    assert!(profile[4] > 1.0 && profile[4] > 4.0 * profile[0], "{profile:?}");
}

#[test]
fn spilling_water_cuts_the_sill_and_the_lake_drains_with_it() {
    // The two-lake scene with outlet erosion: the upper lake's rim (its sill,
    // 0.62 + 0.01 at the low point) wears down as the lake spills over it, so
    // the lake ends lower than without; no other mass moves.
    let before = two_basins();
    let run = |outlet_erosion| {
        let mut map = before.clone();
        let p = HydrologyParams { outlet_erosion, ..scene(600, 10.0) };
        let mut h = Hydrology::new(p, 48, 16).unwrap();
        let report = h.run_seeded(&mut map, 3).unwrap();
        assert_books(&before, &map, 0.0, &h, &report);
        let top = (0..16)
            .flat_map(|y| (2..16).map(move |x| (x, y)))
            .filter(|&c| h.pool()[c] > 0.0)
            .map(|c| map[c] + h.pool()[c])
            .fold(f32::NEG_INFINITY, f32::max);
        (map, top, report)
    };
    let (kept, kept_top, _) = run(0.0);
    let (cut, cut_top, report) = run(0.5);
    eprintln!("upper lake at {kept_top} without outlet erosion, {cut_top} with; {report:?}");
    assert_eq!(kept, before);
    // The sill is the rim's low point, (16, 7) or (16, 8): both at 0.63.
    let sill = |m: &Heightmap| m[(16, 7)].min(m[(16, 8)]);
    assert!(sill(&cut) < sill(&before), "the sill: {} -> {}", sill(&before), sill(&cut));
    assert!(cut_top < kept_top);
    assert!(report.erosion.eroded > 0.0);
    // Only the rim is cut; what it loses settles on the lower lake's bed.
    let mut settled = Vec::new();
    for x in 0..48 {
        for y in 0..16 {
            let (was, now) = (before[(x, y)], cut[(x, y)]);
            if x == 16 {
                assert!(now <= was, "({x}, {y}) rose");
            } else if now != was {
                // (Up to an ulp either way: the carried rounding remainder.)
                assert!(x >= 28 && now - was > -1e-6, "({x}, {y}): {was} -> {now}");
                if now - was > 1e-6 {
                    settled.push(now - was);
                }
            }
        }
    }
    // Spread over a delta where the channel enters, not heaped on one cell:
    // no cell holds a twentieth of it.
    let total: f32 = settled.iter().sum();
    let hi = settled.iter().copied().fold(0.0_f32, f32::max);
    assert!(settled.len() > 20 && hi < total / 20.0, "{} cells, largest {hi} of {total}", settled.len());
}

/// The dry interior cells lower than all 8 neighbours whose lowest neighbour
/// is dry too, and which the run made (the pit or that neighbour changed).
fn dry_pits_made(before: &Heightmap, after: &Heightmap, pool: &Heightmap) -> usize {
    let (w, h) = (after.width(), after.height());
    let (a, b, p) = (after.cells(), before.cells(), pool.cells());
    let mut count = 0;
    for y in 1..h - 1 {
        for x in 1..w - 1 {
            let i = y * w + x;
            let mut lowest = (f32::INFINITY, i);
            for (dx, dy) in [(-1, -1), (0, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (0, 1), (1, 1)] {
                let j = (y as isize + dy) as usize * w + (x as isize + dx) as usize;
                if a[j] < lowest.0 {
                    lowest = (a[j], j);
                }
            }
            let j = lowest.1;
            let changed = a[i].to_bits() != b[i].to_bits() || a[j].to_bits() != b[j].to_bits();
            if a[i] < lowest.0 && p[i] == 0.0 && p[j] == 0.0 && changed {
                count += 1;
            }
        }
    }
    count
}

#[test]
fn the_run_settles_the_dry_pits_it_made() {
    let before = fbm_terrain(80, 64, 5).unwrap();
    let run = |settle_pits| {
        let mut map = before.clone();
        let mut h = Hydrology::new(HydrologyParams { settle_pits, ..params(6_000) }, 80, 64).unwrap();
        let report = h.run_seeded(&mut map, 4).unwrap();
        assert_books(&before, &map, 0.0, &h, &report);
        let made = dry_pits_made(&before, &map, h.pool());
        (map, made)
    };
    let (kept, made_kept) = run(false);
    let (settled, made_settled) = run(true);
    assert!(made_kept > 5, "the particles leave pits of their own: {made_kept}");
    assert_eq!(made_settled, 0);
    // Only where pits were: most cells keep the unsettled run's bits.
    let same = kept.cells().iter().zip(settled.cells()).filter(|(a, b)| a.to_bits() == b.to_bits()).count();
    assert!(same > kept.len() * 9 / 10, "{same} of {}", kept.len());
}

/// Heights may be in any unit: heights `k` times larger with `height_scale /
/// k`, `volume_factor / k` (the water a unit of pool depth holds) and a sea
/// level `k` times higher give the same run, heights, pools and sediment
/// books `k` times larger and the water books the same; bit for bit with `k`
/// a power of two.
#[test]
fn heights_in_any_unit_scale_the_run_exactly() {
    let before = fbm_terrain(64, 56, 2).unwrap();
    for sea_level in [None, Some(0.25f32)] {
        for k in [4.0f32, 0.25] {
            let p = HydrologyParams { sea_level, ..params(4_000) };
            let scaled_params = HydrologyParams {
                height_scale: p.height_scale / k,
                volume_factor: p.volume_factor / k,
                sea_level: sea_level.map(|s| s * k),
                ..p
            };
            let mut map = before.clone();
            let mut hydrology = Hydrology::new(p, 64, 56).unwrap();
            let report = hydrology.run_seeded(&mut map, 9).unwrap();
            let scaled_before = common::scaled(&before, k);
            let mut after = scaled_before.clone();
            let mut scaled_hydrology = Hydrology::new(scaled_params, 64, 56).unwrap();
            let scaled_report = scaled_hydrology.run_seeded(&mut after, 9).unwrap();
            let what = format!("k {k}, sea {sea_level:?}");
            use common::bits_times;
            assert_eq!(bits_times(&after, 1.0), bits_times(&map, k), "{what}: heights");
            assert_eq!(
                bits_times(scaled_hydrology.pool(), 1.0),
                bits_times(hydrology.pool(), k),
                "{what}: pools"
            );
            assert_eq!(
                bits_times(scaled_hydrology.stream(), 1.0),
                bits_times(hydrology.stream(), 1.0),
                "{what}: streams"
            );
            let (e, s) = (&report.erosion, &scaled_report.erosion);
            assert!(e.eroded > 0.0 && report.pooled > 0.0, "{what}: the run erodes and pools");
            let k = f64::from(k);
            assert_eq!(
                (s.eroded, s.deposited, s.outflow),
                (e.eroded * k, e.deposited * k, e.outflow * k),
                "{what}"
            );
            assert_eq!(
                (scaled_report.pooled, scaled_report.water_outflow),
                (report.pooled, report.water_outflow),
                "{what}: the water books"
            );
            assert_eq!((s.steps, scaled_report.floods), (e.steps, report.floods), "{what}");
            assert!(MassBalance::of_run(&scaled_before, &after, s).is_conserved(), "{what}");
        }
    }
}

/// Pools as deep as `f32` allows (`set_pool` takes any finite depth) leave a
/// finite stream map: the batch's track overflowed, and the map held an
/// infinity (an audit's case).
#[test]
fn pools_near_f32_max_leave_the_stream_map_finite() {
    let mut hydrology =
        Hydrology::new(HydrologyParams { particles: 60, ..HydrologyParams::default() }, 24, 24).unwrap();
    let pools = Heightmap::from_fn(24, 24, |x, y| if (x + y) % 3 == 0 { f32::MAX } else { 0.0 }).unwrap();
    hydrology.set_pool(&pools).unwrap();
    let mut map = hydraulic_erosion::fbm_terrain(24, 24, 3).unwrap();
    hydrology.run_seeded(&mut map, 5).unwrap();
    assert!(hydrology.stream().cells().iter().all(|s| s.is_finite() && *s >= 0.0));
    assert!(map.cells().iter().all(|h| h.is_finite()));
}
