//! Heightmap files: round trips, exact height mappings, typed errors for bad
//! sizes, truncated and corrupt files, and decoders fed arbitrary bytes.

use hydraulic_erosion::{
    Format, GridError, HeightRange, Heightmap, IoError, ReadOptions, decode_r16, decode_r32, encode_r16,
    encode_r32, fbm_terrain,
};
use proptest::prelude::*;

use crate::common;
use common::{arb_mutation, mutate};

/// Half a 16-bit step of `range`, plus one `f32` rounding of the result.
fn half_step(range: HeightRange) -> f32 {
    (range.max - range.min) / 131_070.0 + range.max.abs().max(range.min.abs()) * f32::EPSILON
}

#[cfg(feature = "std")]
fn temp_path(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("hydraulic-erosion-io-{}-{name}", std::process::id()))
}

#[test]
fn every_sample_survives_height_and_back() {
    for range in
        [HeightRange::UNIT, HeightRange { min: -100.0, max: 900.0 }, HeightRange { min: 0.0, max: 8848.0 }]
    {
        for v in 0..=u16::MAX {
            assert_eq!(range.sample_of(range.height_of(v)), v, "{range:?} sample {v}");
        }
        assert_eq!(range.height_of(0), range.min);
        assert_eq!(range.height_of(u16::MAX), range.max);
    }
}

#[test]
fn samples_round_half_up_and_clamp() {
    let range = HeightRange { min: 0.0, max: 65535.0 };
    assert_eq!(range.sample_of(2.5), 3);
    assert_eq!(range.sample_of(2.4999), 2);
    assert_eq!(range.sample_of(-7.0), 0);
    assert_eq!(range.sample_of(1e9), u16::MAX);
    assert_eq!(range.sample_of(f32::NAN), 0);
    assert_eq!(HeightRange::UNIT.sample_of(0.5), 32768); // 32767.5 rounds up
}

#[test]
fn range_of_a_map_covers_it_and_is_always_valid() {
    let map = fbm_terrain(16, 16, 1).unwrap();
    assert_eq!(HeightRange::of(&map), HeightRange { min: 0.0, max: 1.0 });
    for h in [0.0, -3.0, 1e10, -1e10, f32::MAX, f32::MIN] {
        let flat = Heightmap::filled(2, 2, h).unwrap();
        let range = HeightRange::of(&flat);
        assert!(range.validate().is_ok() && range.min <= h && h <= range.max, "{h}: {range:?}");
    }
    for bad in [
        HeightRange { min: 1.0, max: 1.0 },
        HeightRange { min: 2.0, max: 1.0 },
        HeightRange { min: f32::NAN, max: 1.0 },
        HeightRange { min: 0.0, max: f32::INFINITY },
    ] {
        assert_eq!(bad.validate().unwrap_err().field(), "range");
        assert!(matches!(encode_r16(&map, bad), Err(IoError::Param(_))));
        assert!(matches!(decode_r16(&[0, 0], 1, 1, bad), Err(IoError::Param(_))));
    }
}

#[test]
fn r16_round_trips_within_half_a_step_and_bytes_are_stable() {
    let map = fbm_terrain(67, 45, 3).unwrap();
    for range in [HeightRange::UNIT, HeightRange { min: -2.0, max: 3.0 }] {
        let bytes = encode_r16(&map, range).unwrap();
        assert_eq!(bytes.len(), 67 * 45 * 2);
        let back = decode_r16(&bytes, 67, 45, range).unwrap();
        let worst = map.cells().iter().zip(back.cells()).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
        assert!(worst <= half_step(range), "{worst}");
        assert_eq!(encode_r16(&back, range).unwrap(), bytes);
    }
    // Little-endian, row by row.
    let map = Heightmap::from_cells(2, 1, vec![0.0, 1.0]).unwrap();
    assert_eq!(encode_r16(&map, HeightRange::UNIT).unwrap(), [0x00, 0x00, 0xFF, 0xFF]);
    let map = Heightmap::from_cells(1, 2, vec![256.0, 1.0]).unwrap();
    assert_eq!(encode_r16(&map, HeightRange { min: 0.0, max: 65535.0 }).unwrap(), [0x00, 0x01, 0x01, 0x00]);
}

#[test]
fn r32_round_trips_bit_for_bit() {
    let cells = vec![0.0, -0.0, 1.5, -1e-40, 3.4e38, -7.25, f32::MIN_POSITIVE, 1.0 / 3.0];
    let map = Heightmap::from_cells(4, 2, cells).unwrap();
    let bytes = encode_r32(&map).unwrap();
    assert_eq!(&bytes[8..12], &1.5_f32.to_le_bytes());
    let back = decode_r32(&bytes, 4, 2).unwrap();
    let bits = |m: &Heightmap| m.cells().iter().map(|h| h.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&back), bits(&map));
}

#[test]
fn raw_sizes_are_checked_before_anything_is_allocated() {
    assert!(matches!(
        decode_r16(&[0; 7], 2, 2, HeightRange::UNIT),
        Err(IoError::Truncated { expected: 8, actual: 7 })
    ));
    assert!(matches!(decode_r32(&[0; 20], 2, 2), Err(IoError::TrailingBytes { expected: 16, actual: 20 })));
    assert!(matches!(decode_r32(&[], 0, 5), Err(IoError::Grid(GridError::Empty { width: 0, height: 5 }))));
    // Sizes whose byte count overflows, or over MAX_SIDE: no allocation attempted.
    assert!(matches!(decode_r32(&[0; 4], usize::MAX / 2, 3), Err(IoError::TooLarge { .. })));
    assert!(matches!(decode_r16(&[0; 4], 1 << 25, 1, HeightRange::UNIT), Err(IoError::TooLarge { .. })));
    // A NaN in an r32 file is named, and rejected.
    let mut bytes = encode_r32(&Heightmap::new(3, 2).unwrap()).unwrap();
    bytes[4 * 5..4 * 6].copy_from_slice(&f32::NAN.to_le_bytes());
    assert!(matches!(decode_r32(&bytes, 3, 2), Err(IoError::Grid(GridError::NonFinite { x: 2, y: 1 }))));
    // Non-finite maps are not written.
    let mut map = Heightmap::new(2, 2).unwrap();
    map.cells_mut()[3] = f32::INFINITY;
    assert!(matches!(encode_r32(&map), Err(IoError::Grid(GridError::NonFinite { x: 1, y: 1 }))));
    assert!(matches!(encode_r16(&map, HeightRange::UNIT), Err(IoError::Grid(_))));
}

#[test]
fn formats_dispatch_on_extension_and_infer_square_sizes() {
    assert_eq!(Format::from_extension("R16"), Some(Format::R16));
    assert_eq!(Format::from_extension("raw"), Some(Format::R16));
    assert_eq!(Format::from_extension("f32"), Some(Format::R32));
    assert_eq!(Format::from_extension("png"), Some(Format::Png));
    assert_eq!(Format::from_extension("tiff"), None);
    let map = fbm_terrain(33, 33, 1).unwrap();
    let options = ReadOptions::default();
    let bytes = Format::R32.encode(&map, HeightRange::UNIT).unwrap();
    assert_eq!(Format::R32.decode(&bytes, &options).unwrap(), map);
    assert!(matches!(
        Format::R32.decode(&bytes[..bytes.len() - 4], &options),
        Err(IoError::UnknownSize { bytes: 4352, bytes_per_cell: 4 })
    ));
    assert!(matches!(Format::R16.decode(&[], &options), Err(IoError::UnknownSize { .. })));
    // A given size wins; the cell limit holds for raw files too.
    let sized = ReadOptions { size: Some([11, 99]), ..options };
    assert_eq!(Format::R32.decode(&bytes, &sized).unwrap().width(), 11);
    let small = ReadOptions { max_cells: 1000, ..options };
    assert!(matches!(
        Format::R32.decode(&bytes, &small),
        Err(IoError::TooLarge { width: 33, height: 33, .. })
    ));
}

#[cfg(feature = "std")]
#[test]
fn files_round_trip_through_paths_and_streams() {
    use hydraulic_erosion::{read_heightmap, write_heightmap};
    let map = fbm_terrain(40, 40, 9).unwrap();
    let mut names = vec!["map.r16", "map.raw", "map.r32"];
    if cfg!(feature = "png") {
        names.push("map.png");
    }
    for name in names {
        let path = temp_path(name);
        write_heightmap(&path, &map, HeightRange::UNIT).unwrap();
        let back = read_heightmap(&path, &ReadOptions::default()).unwrap();
        std::fs::remove_file(&path).unwrap();
        let worst = map.cells().iter().zip(back.cells()).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
        assert!(worst <= half_step(HeightRange::UNIT), "{name}: {worst}");
        if name.ends_with("r32") {
            assert_eq!(back, map);
        }
    }
    assert!(matches!(
        write_heightmap(temp_path("map.tga"), &map, HeightRange::UNIT),
        Err(IoError::Unsupported(_))
    ));
    assert!(matches!(read_heightmap(temp_path("missing.r32"), &ReadOptions::default()), Err(IoError::Io(_))));
    // A stream longer than any file within the limit stops at the limit.
    let endless = std::io::repeat(0);
    let options = ReadOptions { max_cells: 64, ..ReadOptions::default() };
    assert!(matches!(Format::R32.read(endless, &options), Err(IoError::InputTooLarge { limit: 256 })));
}

#[cfg(not(feature = "png"))]
#[test]
fn png_without_the_feature_is_a_typed_error() {
    let map = Heightmap::new(2, 2).unwrap();
    assert!(matches!(Format::Png.encode(&map, HeightRange::UNIT), Err(IoError::Unsupported(_))));
    assert!(matches!(Format::Png.decode(&[0; 8], &ReadOptions::default()), Err(IoError::Unsupported(_))));
}

#[cfg(feature = "png")]
mod png_files {
    use super::*;
    use hydraulic_erosion::{DEFAULT_MAX_CELLS, decode_png, encode_png};

    /// CRC-32 (ISO 3309) as PNG chunks use it.
    fn crc32(bytes: &[u8]) -> u32 {
        let mut crc = !0_u32;
        for &b in bytes {
            crc ^= u32::from(b);
            for _ in 0..8 {
                crc = if crc & 1 != 0 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
            }
        }
        !crc
    }

    /// Recomputes every chunk's CRC, so a mutated file reaches the decoder's
    /// deeper layers instead of failing its checksum.
    pub fn fix_crcs(bytes: &mut [u8]) {
        let mut at = 8;
        while at + 12 <= bytes.len() {
            let len = u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
            let Some(end) = (at + 8).checked_add(len).filter(|&e| e + 4 <= bytes.len()) else { return };
            let crc = crc32(&bytes[at + 4..end]);
            bytes[end..end + 4].copy_from_slice(&crc.to_be_bytes());
            at = end + 4;
        }
    }

    /// A PNG written by the `png` crate directly, for the colour types we reject.
    fn raw_png(
        width: u32,
        height: u32,
        colour: png::ColorType,
        depth: png::BitDepth,
        data: &[u8],
    ) -> Vec<u8> {
        let mut out = Vec::new();
        let mut encoder = png::Encoder::new(&mut out, width, height);
        encoder.set_color(colour);
        encoder.set_depth(depth);
        let mut writer = encoder.write_header().unwrap();
        writer.write_image_data(data).unwrap();
        writer.finish().unwrap();
        out
    }

    #[test]
    fn png_round_trips_exactly_like_r16() {
        let map = fbm_terrain(37, 23, 4).unwrap();
        let range = HeightRange { min: -0.5, max: 1.5 };
        let png = encode_png(&map, range).unwrap();
        let back = decode_png(&png, range, DEFAULT_MAX_CELLS).unwrap();
        assert_eq!((back.width(), back.height()), (37, 23));
        // The same samples as r16: PNG only stores them big-endian and compressed.
        assert_eq!(encode_r16(&back, range).unwrap(), encode_r16(&map, range).unwrap());
        assert_eq!(back, decode_r16(&encode_r16(&map, range).unwrap(), 37, 23, range).unwrap());
    }

    #[test]
    fn eight_bit_gray_widens_exactly_and_colour_is_rejected() {
        let png = raw_png(3, 1, png::ColorType::Grayscale, png::BitDepth::Eight, &[0, 128, 255]);
        let map = decode_png(&png, HeightRange::UNIT, DEFAULT_MAX_CELLS).unwrap();
        assert_eq!(map.cells(), [0.0, HeightRange::UNIT.height_of(128 * 257), 1.0]);
        let rgb = raw_png(1, 1, png::ColorType::Rgb, png::BitDepth::Eight, &[1, 2, 3]);
        assert!(matches!(
            decode_png(&rgb, HeightRange::UNIT, DEFAULT_MAX_CELLS),
            Err(IoError::Unsupported(_))
        ));
        let gray4 = raw_png(2, 1, png::ColorType::Grayscale, png::BitDepth::Four, &[0x1F]);
        assert!(matches!(
            decode_png(&gray4, HeightRange::UNIT, DEFAULT_MAX_CELLS),
            Err(IoError::Unsupported(_))
        ));
    }

    /// A tiny valid PNG whose header claims `width` x `height`.
    fn lying_header(width: u32, height: u32) -> Vec<u8> {
        let mut png = encode_png(&Heightmap::new(1, 1).unwrap(), HeightRange::UNIT).unwrap();
        png[16..20].copy_from_slice(&width.to_be_bytes());
        png[20..24].copy_from_slice(&height.to_be_bytes());
        fix_crcs(&mut png);
        png
    }

    #[test]
    fn header_sizes_are_checked_before_the_image_is_allocated() {
        let range = HeightRange::UNIT;
        // Over the cell limit.
        let huge = lying_header(60_000, 60_000);
        assert!(matches!(
            decode_png(&huge, range, DEFAULT_MAX_CELLS),
            Err(IoError::TooLarge { width: 60_000, height: 60_000, .. })
        ));
        // Within the limit, but no file this short can inflate to 200 MB.
        let bomb = lying_header(10_000, 10_000);
        assert!(matches!(decode_png(&bomb, range, DEFAULT_MAX_CELLS), Err(IoError::BadHeader(_))));
        // Plausible, but the data runs out.
        let short = lying_header(8, 8);
        assert!(matches!(decode_png(&short, range, DEFAULT_MAX_CELLS), Err(IoError::Png(_))));
        let small = ReadOptions { max_cells: 100, ..ReadOptions::default() };
        let png = encode_png(&fbm_terrain(11, 10, 1).unwrap(), range).unwrap();
        assert!(matches!(Format::Png.decode(&png, &small), Err(IoError::TooLarge { .. })));
    }

    #[test]
    fn every_truncation_of_a_png_is_a_typed_error() {
        let png = encode_png(&fbm_terrain(16, 16, 2).unwrap(), HeightRange::UNIT).unwrap();
        for len in 0..png.len() {
            let result = decode_png(&png[..len], HeightRange::UNIT, DEFAULT_MAX_CELLS);
            assert!(matches!(result, Err(IoError::Png(_))), "{len}: {result:?}");
        }
    }
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(512)
}

/// Valid files of every format for a small map, to mutate.
fn seed_files() -> Vec<(Format, Vec<u8>)> {
    let map = fbm_terrain(12, 12, 5).unwrap();
    [Format::R16, Format::R32, Format::Png]
        .into_iter()
        .filter_map(|f| f.encode(&map, HeightRange::UNIT).ok().map(|bytes| (f, bytes)))
        .collect()
}

/// A decoded map is never bigger than the file could hold.
fn plausible(result: &Result<Heightmap, IoError>, bytes: &[u8]) -> bool {
    result.as_ref().map_or(true, |map| map.len() <= bytes.len().max(1) * 1032)
}

proptest! {
    // 512 cases each by default (well under a second); PROPTEST_CASES=100000 to soak.
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn decoders_survive_random_bytes(
        bytes in prop::collection::vec(any::<u8>(), 0..2048),
        width in 0_usize..80,
        height in 0_usize..80,
    ) {
        let r16 = decode_r16(&bytes, width, height, HeightRange::UNIT);
        let r32 = decode_r32(&bytes, width, height);
        prop_assert!(plausible(&r16, &bytes) && plausible(&r32, &bytes));
        for format in [Format::R16, Format::R32, Format::Png] {
            let result = format.decode(&bytes, &ReadOptions::default());
            prop_assert!(plausible(&result, &bytes));
        }
        // Random bytes behind a real PNG signature reach the chunk parser.
        let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
        png.extend_from_slice(&bytes);
        prop_assert!(plausible(&Format::Png.decode(&png, &ReadOptions::default()), &png));
    }

    #[test]
    fn decoders_survive_mutated_files(
        which in 0_usize..3,
        mutations in prop::collection::vec(arb_mutation(), 1..6),
        fix in any::<bool>(),
    ) {
        let files = seed_files();
        let (format, mut bytes) = files[which % files.len()].clone();
        mutate(&mut bytes, &mutations);
        #[cfg(feature = "png")]
        if fix && format == Format::Png {
            png_files::fix_crcs(&mut bytes);
        }
        let _ = fix;
        let result = format.decode(&bytes, &ReadOptions::default());
        prop_assert!(plausible(&result, &bytes));
        if let Ok(map) = result {
            prop_assert!(map.cells().iter().all(|h| h.is_finite()));
        }
    }
}
