//! Previews: shading on known surfaces, overlays, the erosion map, and pictures
//! that are the same bits everywhere.

use hydraulic_erosion::{
    Error, GridError, HeightRange, Heightmap, Hillshade, Overlays, RgbImage, erosion_map, fbm_terrain,
};

fn brightness(p: [u8; 3]) -> u32 {
    p.iter().map(|&c| u32::from(c)).sum()
}

fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xCBF2_9CE4_8422_2325, |x, &b| (x ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01B3))
}

#[test]
fn a_flat_map_is_shaded_evenly() {
    for h in [0.0, 0.5, -20.0] {
        let map = Heightmap::filled(9, 7, h).unwrap();
        let picture: RgbImage = Hillshade::default().render(&map, Overlays::default()).unwrap();
        assert_eq!((picture.width(), picture.height(), picture.get(9, 0)), (9, 7, None));
        assert_eq!(picture.as_bytes().len(), 9 * 7 * 3);
        assert!(picture.pixels().iter().all(|&p| p == picture.pixels()[0]), "{h}");
        // Lowland green, lit by the light's upward share: 0.35 + 0.65 * 1.5 / sqrt(4.25).
        let shade = 0.35 + 0.65 * 1.5 / 4.25_f32.sqrt();
        let expected = [70.0, 110.0, 60.0].map(|c: f32| (c * shade + 0.5) as u8);
        assert_eq!(picture.pixels()[0], expected);
    }
}

#[test]
fn a_slope_facing_the_light_is_brighter_than_one_facing_away() {
    // The default light comes from -x (the left): a map rising to the right faces it.
    let n = 33;
    let facing = Heightmap::from_fn(n, n, |x, _| x as f32 / n as f32).unwrap();
    let away = Heightmap::from_fn(n, n, |x, _| (n - 1 - x) as f32 / n as f32).unwrap();
    let shade = Hillshade { range: Some(HeightRange::UNIT), ..Hillshade::default() };
    let lit = shade.render(&facing, Overlays::default()).unwrap();
    let dark = shade.render(&away, Overlays::default()).unwrap();
    // The middle column has the same height (so the same colour) in both.
    let (x, y) = (16, 16);
    assert_eq!(facing[(x, y)], away[(x, y)]);
    assert!(brightness(lit.get(x, y).unwrap()) > brightness(dark.get(x, y).unwrap()) + 30);
    // A steeper relief exaggerates the difference; none removes it.
    let flat = Hillshade { relief: 0.0, ..shade };
    assert_eq!(
        flat.render(&facing, Overlays::default()).unwrap().get(x, y),
        flat.render(&away, Overlays::default()).unwrap().get(x, y)
    );
}

#[test]
fn overlays_tint_only_their_cells() {
    let map = fbm_terrain(24, 24, 3).unwrap();
    let plain = Hillshade::default().render(&map, Overlays::default()).unwrap();
    let mut water = Heightmap::new(24, 24).unwrap();
    water[(5, 6)] = 0.02;
    let mut streams = Heightmap::new(24, 24).unwrap();
    streams[(10, 3)] = 1.0;
    let overlays = Overlays { water: Some(water.view()), streams: Some(streams.view()) };
    let tinted = Hillshade::default().render(&map, overlays).unwrap();
    let changed: Vec<usize> =
        (0..plain.pixels().len()).filter(|&i| plain.pixels()[i] != tinted.pixels()[i]).collect();
    assert_eq!(changed, [3 * 24 + 10, 6 * 24 + 5]);
    let wet = tinted.get(5, 6).unwrap();
    assert!(wet[2] > wet[0] && wet[2] > wet[1], "{wet:?}");
    // A layer of the wrong size is a typed error.
    let small = Heightmap::new(4, 4).unwrap();
    let result = Hillshade::default().render(&map, Overlays { water: Some(small.view()), streams: None });
    assert!(matches!(
        result.unwrap_err(),
        Error::Grid(GridError::SizeMismatch { actual_width: 4, actual_height: 4, .. })
    ));
}

#[test]
fn the_sea_is_blue_and_params_are_checked() {
    let map = Heightmap::from_fn(8, 1, |x, _| x as f32 - 2.0).unwrap();
    let picture =
        Hillshade { sea_level: Some(0.0), ..Hillshade::default() }.render(&map, Overlays::default()).unwrap();
    for x in 0..8 {
        let [r, g, b] = picture.get(x, 0).unwrap().map(u32::from);
        assert_eq!(b > r + 40 && b > g, x <= 2, "{x}");
    }
    for (bad, field) in [
        (Hillshade { relief: -1.0, ..Hillshade::default() }, "relief"),
        (Hillshade { light: [0.0; 3], ..Hillshade::default() }, "light"),
        (Hillshade { ambient: 2.0, ..Hillshade::default() }, "ambient"),
        (Hillshade { water_depth: 0.0, ..Hillshade::default() }, "water_depth"),
        (Hillshade { range: Some(HeightRange { min: 1.0, max: 0.0 }), ..Hillshade::default() }, "range"),
    ] {
        assert_eq!(bad.validate().unwrap_err().field(), field);
        assert!(matches!(bad.render(&map, Overlays::default()), Err(Error::Param(_))));
    }
}

/// A light of any length but zero lights as its direction: a tiny one (whose
/// `f32` squares underflow) gives the pictures of a unit one.
#[test]
fn a_tiny_light_is_a_direction_too() {
    let map = fbm_terrain(24, 16, 2).unwrap();
    let render =
        |light| Hillshade { light, ..Hillshade::default() }.render(&map, Overlays::default()).unwrap();
    for (tiny, unit) in [([1e-30, 0.0, 0.0], [1.0, 0.0, 0.0]), ([0.0, 1e-40, 0.0], [0.0, 1.0, 0.0])] {
        assert_eq!(render(tiny).pixels(), render(unit).pixels(), "{tiny:?}");
    }
}

#[test]
fn erosion_maps_are_red_where_lost_and_blue_where_gained() {
    let before = Heightmap::filled(4, 1, 1.0).unwrap();
    let after = Heightmap::from_cells(4, 1, vec![0.5, 1.0, 1.5, 1.125]).unwrap();
    let picture = erosion_map(&before, &after, None).unwrap();
    assert_eq!(picture.pixels()[..3], [[255, 0, 0], [255, 255, 255], [0, 0, 255]]);
    // A quarter of the largest change: the square root of 1/4 of the way to blue.
    assert_eq!(picture.pixels()[3], [128, 128, 255]);
    // An explicit scale: half the given scale, clamped past it.
    let scaled = erosion_map(&before, &after, Some(0.25)).unwrap();
    assert_eq!(scaled.pixels()[0], [255, 0, 0]);
    assert_eq!(scaled.pixels()[3], [75, 75, 255]);
    let unchanged = erosion_map(&before, &before, None).unwrap();
    assert!(unchanged.pixels().iter().all(|&p| p == [255; 3]));
    assert_eq!(
        erosion_map(&before, &Heightmap::new(2, 2).unwrap(), None).unwrap_err(),
        GridError::SizeMismatch { expected_width: 4, expected_height: 1, actual_width: 2, actual_height: 2 }
    );
}

#[test]
fn pictures_are_the_same_bits_everywhere() {
    // Pinned: the same under `std` and `libm` (cargo test --no-default-features --features libm --test integration preview::).
    let map = fbm_terrain(64, 64, 7).unwrap();
    let picture = Hillshade::default().render(&map, Overlays::default()).unwrap();
    let shifted = Heightmap::from_fn(64, 64, |x, y| map[(x, y)] * 0.9 + 0.05 * (x as f32 / 64.0)).unwrap();
    let change = erosion_map(&map, &shifted, None).unwrap();
    assert_eq!(
        (fnv(picture.as_bytes()), fnv(change.as_bytes())),
        (17459318925836556687, 8914653548064677715)
    );
}

#[cfg(feature = "png")]
#[test]
fn pictures_encode_as_rgb_png() {
    let picture = Hillshade::default().render(&fbm_terrain(20, 12, 1).unwrap(), Overlays::default()).unwrap();
    let file = picture.encode_png().unwrap();
    let mut reader = png::Decoder::new(std::io::Cursor::new(&file)).read_info().unwrap();
    let mut buffer = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buffer).unwrap();
    assert_eq!(
        (info.width, info.height, info.color_type, info.bit_depth),
        (20, 12, png::ColorType::Rgb, png::BitDepth::Eight)
    );
    assert_eq!(buffer, picture.as_bytes());
}

#[test]
fn own_pixels_make_an_image_only_when_sized_right() {
    use hydraulic_erosion::{GridError, RgbImage};
    let image = RgbImage::from_pixels(2, 3, vec![[1, 2, 3]; 6]).unwrap();
    assert_eq!((image.width(), image.height(), image.get(1, 2)), (2, 3, Some([1, 2, 3])));
    let short = RgbImage::from_pixels(2, 3, vec![[0; 3]; 5]);
    assert!(matches!(short, Err(GridError::LengthMismatch { expected: 6, actual: 5 })));
    assert!(RgbImage::from_pixels(usize::MAX, 2, vec![]).is_err());
}
