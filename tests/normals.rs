//! Normal samplers pinned on planes and bowls, where the answer is known in
//! closed form.

use crate::common;

use approx::assert_relative_eq;
use glam::{Vec2, Vec3};
use hydraulic_erosion::rand_core::SeedableRng;
use hydraulic_erosion::{
    BaseSampler, CentralDifference, EightFacet, GridRef, Heightmap, NormalSampler, Offset, Sampler, UP,
};
use rand_xoshiro::Xoshiro256StarStar;

fn plane(size: usize, gx: f32, gy: f32) -> Heightmap {
    Heightmap::from_fn(size, size, |x, y| gx * x as f32 + gy * y as f32).unwrap()
}

fn facet(map: &Heightmap, x: usize, y: usize, scale: f32) -> Vec3 {
    EightFacet.cell_normal(&map.view(), x, y, scale)
}

/// Closed form of the 8-facet normal on the plane `h = g * x`, with `s = scale * g`:
/// cardinal facets `(-s, 1, 0)/√(s²+1)` (x2) and `(0, 1, 0)` (x2), weight 0.15;
/// diagonal facets `(-s/2, 1, ±s/2)/√(s²/2+1)` (x4), weight 0.10.
fn facet_on_x_plane(s: f64) -> (f64, f64) {
    let card = 1.0 / (s * s + 1.0).sqrt();
    let diag = 1.0 / (s * s / 2.0 + 1.0).sqrt();
    let nx = 0.15 * 2.0 * (-s) * card + 0.10 * 4.0 * (-s / 2.0) * diag;
    let ny = 0.15 * (2.0 * card + 2.0) + 0.10 * 4.0 * diag;
    (nx, ny)
}

#[test]
fn flat_ground_is_exactly_up_for_every_sampler() {
    let map = Heightmap::filled(9, 7, 3.25).unwrap();
    let view = map.view();
    for y in 0..7 {
        for x in 0..9 {
            assert_eq!(EightFacet.cell_normal(&view, x, y, 60.0), UP);
            assert_eq!(CentralDifference.cell_normal(&view, x, y, 60.0), UP);
        }
    }
    let mut rng = Xoshiro256StarStar::seed_from_u64(3);
    let mut offset = Offset::new(EightFacet, 0.8).unwrap();
    for i in 0..200 {
        offset.spawn(&mut rng);
        let p = Vec2::new(i as f32 * 0.043, i as f32 * 0.031);
        assert_eq!(offset.normal(&view, p, 60.0), UP);
    }
}

#[test]
fn eight_facet_on_planes_matches_the_closed_form() {
    for (g, scale) in [(0.25_f32, 2.0_f32), (0.5, 1.0), (0.125, 60.0), (-0.25, 4.0)] {
        let (nx, ny) = facet_on_x_plane(f64::from(g * scale));
        // h = g * x: slope along x only.
        let n = facet(&plane(7, g, 0.0), 3, 3, scale);
        assert_relative_eq!(f64::from(n.x), nx, max_relative = 1e-6);
        assert_relative_eq!(f64::from(n.y), ny, max_relative = 1e-6);
        assert_eq!(n.z, 0.0);
        // h = g * y: the same, along z.
        let n = facet(&plane(7, 0.0, g), 3, 3, scale);
        assert_relative_eq!(f64::from(n.z), nx, max_relative = 1e-6);
        assert_relative_eq!(f64::from(n.y), ny, max_relative = 1e-6);
        assert_eq!(n.x, 0.0);
    }
}

#[test]
fn eight_facet_points_downhill_and_grows_with_the_slope() {
    let gentle = facet(&plane(7, 0.01, 0.0), 3, 3, 60.0);
    let steep = facet(&plane(7, 0.05, 0.0), 3, 3, 60.0);
    assert!(gentle.x < 0.0 && steep.x < gentle.x);
    assert!(steep.y < gentle.y && gentle.y < 1.0);
}

#[test]
fn diagonal_signs_follow_each_diagonal() {
    // SimpleErosion's copy gives all four diagonal facets (+a, √2, +a); with the
    // signs of seed 000, a plane along either diagonal points straight down it.
    let n = facet(&plane(7, 0.25, 0.25), 3, 3, 2.0);
    assert!(n.x < 0.0);
    assert_eq!(n.x, n.z);
    let n = facet(&plane(7, 0.25, -0.25), 3, 3, 2.0);
    assert!(n.x < 0.0);
    assert_eq!(n.x, -n.z);
    let n = facet(&plane(7, -0.25, 0.25), 3, 3, 2.0);
    assert!(n.x > 0.0);
    assert_eq!(n.x, -n.z);
}

#[test]
fn rotating_the_map_rotates_the_normal() {
    // An arbitrary 3x3 patch, turned a quarter: (x, y) -> (2 - y, x).
    let patch = [0.3, 0.9, 0.1, 0.5, 0.4, 0.8, 0.2, 0.7, 0.6_f32];
    let map = Heightmap::from_fn(3, 3, |x, y| patch[y * 3 + x]).unwrap();
    let turned = Heightmap::from_fn(3, 3, |x, y| patch[(2 - x) * 3 + y]).unwrap();
    let a = facet(&map, 1, 1, 5.0);
    let b = facet(&turned, 1, 1, 5.0);
    // Turning the map turns the downhill vector: (x, z) -> (-z, x).
    assert_relative_eq!(b.x, -a.z, max_relative = 1e-6);
    assert_relative_eq!(b.z, a.x, max_relative = 1e-6);
    assert_relative_eq!(b.y, a.y, max_relative = 1e-6);
}

#[test]
fn bowl_normals_point_to_the_centre() {
    let map = common::bowl(17, 0.01);
    let centre = facet(&map, 8, 8, 60.0);
    assert_eq!((centre.x, centre.z), (0.0, 0.0));
    for k in 1..7 {
        let east = facet(&map, 8 + k, 8, 60.0);
        assert!(east.x < 0.0, "{east}");
        assert_eq!(east.z, 0.0);
        let north = facet(&map, 8, 8 - k, 60.0);
        assert!(north.z > 0.0, "{north}");
        assert_eq!(north.x, 0.0);
        let farther = facet(&map, 8 + k + 1, 8, 60.0);
        assert!(farther.x < east.x, "steeper further out");
    }
}

#[test]
fn central_difference_matches_the_closed_form() {
    // normalize(-s, 1, -t) with s = scale * gx, t = scale * gy.
    let (gx, gy, scale) = (0.25_f32, -0.5_f32, 3.0_f32);
    let map = plane(6, gx, gy);
    let expected = Vec3::new(-(gx * scale), 1.0, -(gy * scale)).normalize();
    for (x, y) in [(2, 2), (0, 0), (5, 5), (0, 3)] {
        let n = CentralDifference.cell_normal(&map.view(), x, y, scale);
        assert_relative_eq!(n, expected, max_relative = 1e-6);
    }
}

#[test]
fn the_border_falls_back_to_central_differences_of_the_inner_cell() {
    let map = Heightmap::from_fn(6, 5, |x, y| ((x * 7 + y * 13) % 5) as f32 * 0.1).unwrap();
    let view = map.view();
    for (x, y, ix, iy) in [(0, 2, 1, 2), (5, 1, 4, 1), (3, 0, 3, 1), (2, 4, 2, 3), (0, 0, 1, 1), (5, 4, 4, 3)]
    {
        assert_eq!(
            EightFacet.cell_normal(&view, x, y, 10.0),
            CentralDifference.cell_normal(&view, ix, iy, 10.0)
        );
    }
    // Interior cells differ from the fallback in general.
    assert_ne!(EightFacet.cell_normal(&view, 2, 2, 10.0), CentralDifference.cell_normal(&view, 2, 2, 10.0));
}

#[test]
fn grids_without_an_interior_read_flat() {
    let map = Heightmap::from_fn(2, 5, |x, y| (x + y) as f32).unwrap();
    assert_eq!(EightFacet.cell_normal(&map.view(), 1, 2, 1.0), UP);
    assert_eq!(CentralDifference.cell_normal(&map.view(), 0, 4, 1.0), UP);
}

#[test]
fn offset_is_bilinear_between_cell_normals() {
    let map = Heightmap::from_fn(8, 8, |x, y| ((x * x + 3 * y) % 7) as f32 * 0.05).unwrap();
    let view = map.view();
    let cell = |x, y| EightFacet.cell_normal(&view, x, y, 20.0);
    let mut offset = Offset::new(EightFacet, 1.0).unwrap();

    // Zero offset at a cell's own point reads that cell exactly.
    assert_eq!(offset.normal(&view, Vec2::new(3.0, 4.0), 20.0), cell(3, 4));

    // Halfway between two columns: their mean.
    offset.set_offset(Vec2::new(0.5, 0.0)).unwrap();
    let n = offset.normal(&view, Vec2::new(3.0, 4.0), 20.0);
    assert_relative_eq!(n, (cell(3, 4) + cell(4, 4)) * 0.5, max_relative = 1e-6);

    // A quarter of the way in both directions.
    offset.set_offset(Vec2::new(-0.75, 0.25)).unwrap();
    let n = offset.normal(&view, Vec2::new(3.0, 4.0), 20.0);
    // The point (2.25, 4.25): weights (1 - 0.25) and 0.25 on each axis.
    let expected = cell(2, 4) * (0.75 * 0.75)
        + cell(3, 4) * (0.25 * 0.75)
        + cell(2, 5) * (0.75 * 0.25)
        + cell(3, 5) * (0.25 * 0.25);
    assert_relative_eq!(n, expected, epsilon = 1e-6, max_relative = 1e-5);

    // Beyond the border it reads the border cells.
    offset.set_offset(Vec2::new(-1.0, 0.0)).unwrap();
    assert_eq!(offset.normal(&view, Vec2::new(0.0, 0.0), 20.0), cell(0, 0));
}

#[test]
fn offset_draws_within_its_radius_and_validates() {
    let mut rng = Xoshiro256StarStar::seed_from_u64(9);
    let mut offset = Offset::new(CentralDifference, 0.8).unwrap();
    let mut seen = Vec2::ZERO;
    for _ in 0..2000 {
        offset.spawn(&mut rng);
        let o = offset.offset();
        assert!(o.x.abs() <= 0.8 && o.y.abs() <= 0.8, "{o}");
        seen = seen.max(o.abs());
    }
    assert!(seen.x > 0.75 && seen.y > 0.75, "offsets fill the square");
    for radius in [-0.1, f32::NAN, f32::INFINITY, 2.0e6] {
        let err = Offset::new(EightFacet, radius).unwrap_err();
        assert_eq!(err.field(), "radius");
    }
    assert_eq!(offset.set_offset(Vec2::new(0.9, 0.0)).unwrap_err().field(), "offset");
    assert_eq!(offset.radius(), 0.8);
    assert_eq!(*offset.inner(), CentralDifference);
}

#[test]
fn the_run_time_enum_matches_the_concrete_samplers() {
    let map = Heightmap::from_fn(9, 9, |x, y| ((x * 5 + y * 3) % 4) as f32 * 0.2).unwrap();
    let view: GridRef<'_> = map.view();
    let mut rng_a = Xoshiro256StarStar::seed_from_u64(5);
    let mut rng_b = rng_a.clone();
    let mut concrete = Offset::new(EightFacet, 0.8).unwrap();
    let mut dynamic = Sampler::from(Offset::new(BaseSampler::EightFacet, 0.8).unwrap());
    for i in 0..50 {
        concrete.spawn(&mut rng_a);
        dynamic.spawn(&mut rng_b);
        let p = Vec2::new((i % 9) as f32 + 0.3, (i / 6) as f32 + 0.6);
        assert_eq!(concrete.normal(&view, p, 30.0), dynamic.normal(&view, p, 30.0));
        assert_eq!(Sampler::EightFacet.normal(&view, p, 30.0), EightFacet.normal(&view, p, 30.0));
        assert_eq!(
            Sampler::from(BaseSampler::CentralDifference).normal(&view, p, 30.0),
            CentralDifference.normal(&view, p, 30.0)
        );
    }
}

mod reach {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn built_in_samplers_give_their_reach() {
        // Border cells take their inner neighbour's slope: 2.
        assert_eq!(EightFacet.reach(), Some(2));
        assert_eq!(CentralDifference.reach(), Some(2));
        assert_eq!(BaseSampler::CentralDifference.reach(), Some(2));
        assert_eq!(Sampler::EightFacet.reach(), Some(2));
        let offset = |r| Offset::new(BaseSampler::EightFacet, r).unwrap();
        assert_eq!(offset(0.0).reach(), Some(3));
        assert_eq!(offset(0.8).reach(), Some(4));
        assert_eq!(offset(2.0).reach(), Some(5));
        assert_eq!(Sampler::Offset(offset(2.5)).reach(), Some(6));
    }

    /// Changing every cell beyond a sampler's reach of a position's cell
    /// leaves its normal there unchanged, bit for bit.
    fn reads_within_reach<S: NormalSampler>(sampler: &S, heights: &[f32], noise: &[f32], p: Vec2) {
        let (w, h) = (24, 20);
        let grid = Heightmap::from_cells(w, h, heights.to_vec()).unwrap();
        let before = sampler.normal(&grid.view(), p, 30.0);
        let r = sampler.reach().unwrap() as isize;
        // The position's cell, clamped to the grid (as `GridRef::cell_at`).
        let (cx, cy) = grid.cell_at(p);
        let (cx, cy) = (cx as isize, cy as isize);
        let changed = Heightmap::from_fn(w, h, |x, y| {
            let far = (x as isize - cx).abs() > r || (y as isize - cy).abs() > r;
            if far { noise[y * w + x] } else { heights[y * w + x] }
        })
        .unwrap();
        let after = sampler.normal(&changed.view(), p, 30.0);
        assert_eq!(before.to_array().map(f32::to_bits), after.to_array().map(f32::to_bits), "{p}");
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: common::proptest_cases(500), ..ProptestConfig::default() })]

        #[test]
        fn samplers_read_only_within_their_reach(
            heights in prop::collection::vec(0.0f32..1.0, 24 * 20),
            noise in prop::collection::vec(0.0f32..1.0, 24 * 20),
            px in -3.0f32..27.0,
            py in -3.0f32..23.0,
            radius in 0.0f32..4.0,
            ox in -1.0f32..=1.0,
            oy in -1.0f32..=1.0,
        ) {
            let p = Vec2::new(px, py);
            reads_within_reach(&EightFacet, &heights, &noise, p);
            reads_within_reach(&CentralDifference, &heights, &noise, p);
            for base in [BaseSampler::EightFacet, BaseSampler::CentralDifference] {
                let mut offset = Offset::new(base, radius).unwrap();
                offset.set_offset(Vec2::new(ox, oy) * radius).unwrap();
                reads_within_reach(&offset, &heights, &noise, p);
            }
        }
    }
}
