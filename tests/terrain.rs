//! The built-in terrains: ranges, shapes and determinism.

use hydraulic_erosion::{Heightmap, island_falloff, island_terrain};

#[test]
fn island_is_land_in_a_flat_sea_at_zero() {
    let map = island_terrain(96, 80, 4).unwrap();
    let (lo, hi) = map.min_max();
    assert_eq!((lo, hi), (0.0, 1.0));
    for x in 0..96 {
        assert_eq!(map[(x, 0)], 0.0);
        assert_eq!(map[(x, 79)], 0.0);
    }
    for y in 0..80 {
        assert_eq!(map[(0, y)], 0.0);
        assert_eq!(map[(95, y)], 0.0);
    }
    let land = map.cells().iter().filter(|&&h| h > 0.0).count();
    assert!((0.2..0.7).contains(&(land as f64 / map.len() as f64)), "land {land}");
    assert_eq!(map, island_terrain(96, 80, 4).unwrap());
    assert_ne!(map, island_terrain(96, 80, 5).unwrap());
}

#[test]
fn island_falloff_keeps_the_centre_and_sinks_the_edge() {
    let mut map = Heightmap::filled(20, 20, 1.0).unwrap();
    // A level that is not finite is refused, the map unchanged (a NaN one
    // flattened it to 0 before).
    for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let err = island_falloff(&mut map, bad).unwrap_err();
        assert_eq!(err.field(), "sea_level");
        assert!(map.cells().iter().all(|&h| h == 1.0));
    }
    island_falloff(&mut map, 0.25).unwrap();
    // The sea is +0, even where a negative height meets a sea level of 0.
    let mut negative = Heightmap::filled(8, 8, -1.0).unwrap();
    island_falloff(&mut negative, 0.0).unwrap();
    assert!(negative.cells().iter().all(|c| c.to_bits() == 0));
    // Inside half the radius the falloff is 1: only the sea level comes off.
    assert_eq!(map[(10, 10)], 0.75);
    assert_eq!(map[(9, 9)], 0.75);
    // At the edge midpoints and corners the falloff has reached 0.
    assert_eq!(map[(0, 10)], 0.0);
    assert_eq!(map[(0, 0)], 0.0);
    // Monotone from the centre outwards along a row.
    let row: Vec<f32> = (10..20).map(|x| map[(x, 10)]).collect();
    assert!(row.windows(2).all(|w| w[0] >= w[1]), "{row:?}");
}

#[test]
fn island_of_a_single_cell_is_valid() {
    // One cell is all centre: land, scaled to 1.
    let map = island_terrain(1, 1, 0).unwrap();
    assert_eq!(map.cells(), &[1.0]);
    assert!(island_terrain(0, 5, 0).is_err());
}
