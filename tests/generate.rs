//! Noise terrains: deterministic, normalised, sized in cells, islands with a sea
//! border, and params checked.
#![cfg(feature = "noise")]

use crate::common;

use hydraulic_erosion::{Error, NoiseKind, NoiseTerrain};

#[test]
fn terrains_are_normalised_deterministic_and_sized_in_cells() {
    for kind in [NoiseKind::Fbm, NoiseKind::Ridged] {
        let terrain = NoiseTerrain { kind, ..NoiseTerrain::default() };
        let map = terrain.generate(96, 40, 11).unwrap();
        assert_eq!((map.width(), map.height()), (96, 40));
        assert_eq!(map.min_max(), (0.0, 1.0), "{kind:?}");
        assert_eq!(map, terrain.generate(96, 40, 11).unwrap());
        assert_ne!(map, terrain.generate(96, 40, 12).unwrap());
        // Seeds near the top of u64 are fine (the noise crate adds octaves to its seed).
        assert!(terrain.generate(8, 8, u64::MAX).is_ok());
    }
    // A single cell has no range: all zeros.
    assert_eq!(NoiseTerrain::default().generate(1, 1, 3).unwrap().cells(), [0.0]);
}

#[test]
fn the_same_terrain_at_twice_the_resolution() {
    // Cell centres of the small map fall between four cells of the large one; the
    // large map's 2x2 means follow the small map closely (before normalisation both
    // see the same noise field).
    let terrain = NoiseTerrain { octaves: 3, ..NoiseTerrain::default() };
    let (small, large) = (terrain.generate(32, 32, 5).unwrap(), terrain.generate(64, 64, 5).unwrap());
    let mut worst = 0.0_f32;
    for y in 0..32 {
        for x in 0..32 {
            let mean = (large[(2 * x, 2 * y)]
                + large[(2 * x + 1, 2 * y)]
                + large[(2 * x, 2 * y + 1)]
                + large[(2 * x + 1, 2 * y + 1)])
                / 4.0;
            worst = worst.max((mean - small[(x, y)]).abs());
        }
    }
    assert!(worst < 0.1, "{worst}");
}

#[test]
fn islands_have_a_flat_sea_border() {
    let terrain = NoiseTerrain { kind: NoiseKind::Ridged, island: Some(0.3), ..NoiseTerrain::default() };
    let map = terrain.generate(64, 48, 2).unwrap();
    assert_eq!(map.min_max(), (0.0, 1.0));
    for x in 0..64 {
        assert_eq!((map[(x, 0)], map[(x, 47)]), (0.0, 0.0));
    }
    for y in 0..48 {
        assert_eq!((map[(0, y)], map[(63, y)]), (0.0, 0.0));
    }
    let land = map.cells().iter().filter(|&&h| h > 0.0).count();
    assert!(land > 64 * 48 / 10 && land < 64 * 48 * 8 / 10, "{land}");
}

#[test]
fn params_and_sizes_are_checked() {
    for (bad, field) in [
        (NoiseTerrain { frequency: 0.0, ..NoiseTerrain::default() }, "frequency"),
        (NoiseTerrain { octaves: 0, ..NoiseTerrain::default() }, "octaves"),
        (NoiseTerrain { octaves: 33, ..NoiseTerrain::default() }, "octaves"),
        (NoiseTerrain { lacunarity: f32::NAN, ..NoiseTerrain::default() }, "lacunarity"),
        (NoiseTerrain { persistence: 1.5, ..NoiseTerrain::default() }, "persistence"),
        (NoiseTerrain { island: Some(1.0), ..NoiseTerrain::default() }, "island"),
    ] {
        assert_eq!(bad.validate().unwrap_err().field(), field);
        assert!(matches!(bad.generate(8, 8, 1), Err(Error::Param(_))));
    }
    assert!(matches!(NoiseTerrain::default().generate(0, 8, 1), Err(Error::Grid(_))));
}

#[test]
fn values_are_stable() {
    // Pinned: a change here is value-breaking (see the reproducibility policy).
    let fbm = NoiseTerrain::default().generate(64, 64, 1).unwrap();
    let ridged = NoiseTerrain { kind: NoiseKind::Ridged, island: Some(0.2), ..NoiseTerrain::default() }
        .generate(64, 64, 1)
        .unwrap();
    assert_eq!(
        (common::map_hash(&fbm), common::map_hash(&ridged)),
        (7307970703568577815, 255515746343420138)
    );
}
