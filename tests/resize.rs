//! Engine sizes: resampling and padding keep what they promise, and bad
//! targets are typed errors.

use hydraulic_erosion::{EngineSize, Error, GridError, Heightmap, MAX_SIDE, fbm_terrain, pad, resample};
use proptest::prelude::*;

#[test]
fn engine_sides_are_the_documented_ones() {
    assert_eq!(EngineSize::Unity.sides(), [33, 65, 129, 257, 513, 1025, 2049, 4097]);
    assert_eq!(EngineSize::Unreal.sides(), [127, 253, 505, 1009, 2017, 4033, 8129]);
    assert_eq!(EngineSize::Unity.side_for(0), Some(33));
    assert_eq!(EngineSize::Unity.side_for(513), Some(513));
    assert_eq!(EngineSize::Unity.side_for(514), Some(1025));
    assert_eq!(EngineSize::Unity.side_for(4098), None);
    assert_eq!(EngineSize::Unreal.side_for(8129), Some(8129));
    assert_eq!(EngineSize::Unreal.side_for(8130), None);
}

#[test]
fn resampling_to_the_same_size_keeps_every_bit() {
    let map = fbm_terrain(37, 23, 5).unwrap();
    assert_eq!(resample(&map, 37, 23).unwrap().cells(), map.cells());
}

#[test]
fn resampling_keeps_corners_and_planes() {
    let plane = Heightmap::from_fn(9, 5, |x, y| 0.25 * x as f32 - 0.5 * y as f32).unwrap();
    let fine = resample(&plane, 33, 17).unwrap();
    // Target cell (x, y) sits at source (x / 4, y / 4), exactly: a plane stays a plane.
    for y in 0..17 {
        for x in 0..33 {
            let expected = 0.25 * (x as f32 / 4.0) - 0.5 * (y as f32 / 4.0);
            assert_eq!(fine.get(x, y), Some(expected), "({x}, {y})");
        }
    }
    let map = fbm_terrain(50, 40, 3).unwrap();
    let small = resample(&map, 7, 3).unwrap();
    for (sx, sy, tx, ty) in [(0, 0, 0, 0), (49, 0, 6, 0), (0, 39, 0, 2), (49, 39, 6, 2)] {
        assert_eq!(small.get(tx, ty), map.get(sx, sy));
    }
    // One cell: the first corner.
    assert_eq!(resample(&map, 1, 1).unwrap().cells(), &[map.cells()[0]]);
    // From one cell: a constant.
    let one = Heightmap::from_fn(1, 1, |_, _| 0.7).unwrap();
    assert!(resample(&one, 4, 3).unwrap().cells().iter().all(|&h| h == 0.7));
}

#[test]
fn padding_keeps_the_map_and_continues_its_edges() {
    let map = fbm_terrain(20, 12, 9).unwrap();
    let padded = pad(&map, 33, 33).unwrap();
    for y in 0..33 {
        for x in 0..33 {
            assert_eq!(padded.get(x, y), map.get(x.min(19), y.min(11)), "({x}, {y})");
        }
    }
    assert_eq!(pad(&map, 20, 12).unwrap().cells(), map.cells());
}

#[test]
fn bad_targets_are_typed_errors() {
    let map = fbm_terrain(20, 12, 9).unwrap();
    assert!(matches!(pad(&map, 19, 33), Err(Error::Param(p)) if p.field() == "width"));
    assert!(matches!(pad(&map, 33, 11), Err(Error::Param(p)) if p.field() == "height"));
    assert!(matches!(resample(&map, 0, 5), Err(Error::Grid(GridError::Empty { .. }))));
    assert!(matches!(resample(&map, MAX_SIDE + 1, 5), Err(Error::Grid(GridError::TooLarge { .. }))));
    assert!(matches!(pad(&map, MAX_SIDE + 1, 12), Err(Error::Grid(GridError::TooLarge { .. }))));
}

proptest! {
    #[test]
    fn resampled_heights_stay_within_the_map(w in 1usize..40, h in 1usize..40, tw in 1usize..80, th in 1usize..80, seed in any::<u64>()) {
        let map = fbm_terrain(w, h, seed).unwrap();
        let (lo, hi) = map.cells().iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)));
        let out = resample(&map, tw, th).unwrap();
        prop_assert!(out.cells().iter().all(|&v| v >= lo && v <= hi));
    }
}
