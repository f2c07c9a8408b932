//! Engine exports: 8-bit samples and RGBA splat maps (exact bytes, channel
//! order, size checks), 8-bit and splat PNGs (feature `png`), and EXR
//! heightmaps (feature `exr`): exact `f32` and half-precision round trips,
//! channel choice, header sizes refused before allocation, and the decoder fed
//! random and mutated bytes.

use hydraulic_erosion::{
    EngineSize, Format, GridError, HeightRange, Heightmap, IoError, ReadOptions, encode_r16, fbm_terrain,
    pad, resample, splat_rgba8,
};

/// A map whose cell `i` is `cells[i]`, `width` wide.
fn map(width: usize, cells: &[f32]) -> Heightmap {
    Heightmap::from_cells(width, cells.len() / width, cells.to_vec()).unwrap()
}

#[test]
fn eight_bit_samples_round_half_up_and_clamp() {
    let range = HeightRange { min: 0.0, max: 255.0 };
    assert_eq!(range.sample8_of(0.0), 0);
    assert_eq!(range.sample8_of(255.0), 255);
    assert_eq!(range.sample8_of(2.5), 3);
    assert_eq!(range.sample8_of(2.4999), 2);
    assert_eq!(range.sample8_of(-7.0), 0);
    assert_eq!(range.sample8_of(1e9), 255);
    assert_eq!(range.sample8_of(f32::NAN), 0);
    assert_eq!(HeightRange::UNIT.sample8_of(0.5), 128); // 127.5 rounds up
    assert_eq!(HeightRange { min: -1.0, max: 1.0 }.sample8_of(0.0), 128);
    // Every 8-bit sample survives being read (as `v * 257`, PNG's widening) and
    // written again, and reads within half a step of a height written.
    for range in
        [HeightRange::UNIT, HeightRange { min: -100.0, max: 900.0 }, HeightRange { min: 3.0, max: 3.5 }]
    {
        for v in 0..=u8::MAX {
            let h = range.height_of(u16::from(v) * 257);
            assert_eq!(range.sample8_of(h), v, "{range:?} sample {v}");
        }
        // Half a step, plus one `f32` rounding of the height read.
        let step = (range.max - range.min) / 510.0 + range.max.abs().max(range.min.abs()) * f32::EPSILON;
        for i in 0..=1000 {
            let h = range.min + (range.max - range.min) * i as f32 / 1000.0;
            let back = range.height_of(u16::from(range.sample8_of(h)) * 257);
            assert!((back - h).abs() <= step, "{range:?}: {h} read back as {back}");
        }
    }
}

#[test]
fn splat_packs_four_layers_in_rgba_order_row_by_row() {
    let unit = HeightRange::UNIT;
    let red = map(3, &[0.0, 0.5, 1.0, 0.25, 2.0, -1.0]);
    let green = map(3, &[1.0, 0.0, 0.0, 0.0, 0.0, 0.75]);
    let blue = map(3, &[10.0, 20.0, 30.0, 40.0, 50.0, 60.0]);
    let alpha = map(3, &[0.2, 0.4, 0.6, 0.8, 1.0, 0.0]);
    let tens = HeightRange { min: 10.0, max: 60.0 };
    let rgba = splat_rgba8([(&red, unit), (&green, unit), (&blue, tens), (&alpha, unit)]).unwrap();
    assert_eq!(rgba.len(), 3 * 2 * 4);
    #[rustfmt::skip]
    let expected = [
        0, 255, 0, 51,      128, 0, 51, 102,   255, 0, 102, 153,
        64, 0, 153, 204,    255, 0, 204, 255,  0, 191, 255, 0,
    ];
    assert_eq!(rgba, expected);
    // Channel order follows the array, not the layers' contents.
    let swapped = splat_rgba8([(&alpha, unit), (&blue, tens), (&green, unit), (&red, unit)]).unwrap();
    for (a, b) in rgba.chunks_exact(4).zip(swapped.chunks_exact(4)) {
        assert_eq!([a[3], a[2], a[1], a[0]], [b[0], b[1], b[2], b[3]]);
    }
}

#[test]
fn splat_refuses_layers_of_another_size_bad_ranges_and_non_finite_cells() {
    let unit = HeightRange::UNIT;
    let a = Heightmap::new(4, 3).unwrap();
    let wide = Heightmap::new(5, 3).unwrap();
    for at in 1..4 {
        let mut layers = [(&a, unit); 4];
        layers[at].0 = &wide;
        assert!(
            matches!(
                splat_rgba8(layers),
                Err(IoError::Grid(GridError::SizeMismatch {
                    expected_width: 4,
                    expected_height: 3,
                    actual_width: 5,
                    actual_height: 3,
                }))
            ),
            "layer {at}"
        );
    }
    let mut layers = [(&a, unit); 4];
    layers[2].1 = HeightRange { min: 1.0, max: 1.0 };
    assert!(matches!(splat_rgba8(layers), Err(IoError::Param(e)) if e.field() == "range"));
    let mut nan = Heightmap::new(4, 3).unwrap();
    nan.cells_mut()[6] = f32::NAN;
    assert!(matches!(
        splat_rgba8([(&a, unit), (&a, unit), (&a, unit), (&nan, unit)]),
        Err(IoError::Grid(GridError::NonFinite { x: 2, y: 1 }))
    ));
}

#[test]
fn exr_dispatches_on_its_extension() {
    assert_eq!(Format::from_extension("exr"), Some(Format::Exr));
    assert_eq!(Format::from_extension("EXR"), Some(Format::Exr));
    assert_eq!(Format::Exr.bytes_per_cell(), 4);
}

#[cfg(not(feature = "exr"))]
#[test]
fn exr_without_the_feature_is_a_typed_error() {
    let map = Heightmap::new(2, 2).unwrap();
    assert!(matches!(Format::Exr.encode(&map, HeightRange::UNIT), Err(IoError::Unsupported(_))));
    assert!(matches!(Format::Exr.decode(&[0; 8], &ReadOptions::default()), Err(IoError::Unsupported(_))));
}

/// A map resized for an engine: Unity's 513 (2^9 + 1) by resampling, and
/// Unreal's 505 by padding, as each engine's importer expects them.
fn engine_maps() -> [(EngineSize, Heightmap); 2] {
    let terrain = fbm_terrain(300, 300, 3).unwrap();
    let unity = EngineSize::Unity.side_for(300).unwrap();
    let unreal = EngineSize::Unreal.side_for(300).unwrap();
    assert_eq!((unity, unreal), (513, 505));
    [
        (EngineSize::Unity, resample(&terrain, unity, unity).unwrap()),
        (EngineSize::Unreal, pad(&terrain, unreal, unreal).unwrap()),
    ]
}

#[test]
fn r16_at_engine_sizes_is_little_endian_row_by_row() {
    // Unity's and Unreal's raw importers read `side * side` 16-bit samples,
    // row 0 first, "Windows" (little-endian) byte order.
    for (engine, map) in engine_maps() {
        let side = map.width();
        let range = HeightRange::of(&map);
        let bytes = encode_r16(&map, range).unwrap();
        assert_eq!(bytes.len(), side * side * 2, "{engine:?}");
        for (x, y) in [(0, 0), (side - 1, 0), (7, 3), (side - 1, side - 1)] {
            let at = 2 * (y * side + x);
            let sample = u16::from_le_bytes([bytes[at], bytes[at + 1]]);
            assert_eq!(sample, range.sample_of(map[(x, y)]), "{engine:?} ({x}, {y})");
        }
        // The full range is used: the lowest cell is 0, the highest 65535.
        let samples: Vec<u16> = bytes.chunks(2).map(|b| u16::from_le_bytes([b[0], b[1]])).collect();
        assert_eq!((samples.iter().min(), samples.iter().max()), (Some(&0), Some(&65_535)), "{engine:?}");
    }
}

#[cfg(feature = "png")]
mod png_layers {
    use super::*;
    use hydraulic_erosion::{DEFAULT_MAX_CELLS, decode_png, encode_png8, encode_splat_png, fbm_terrain};

    /// The PNG's colour type, bit depth and samples, through the `png` crate.
    fn samples(file: &[u8]) -> (png::ColorType, png::BitDepth, Vec<u8>) {
        let mut reader = png::Decoder::new(std::io::Cursor::new(file)).read_info().unwrap();
        let mut data = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut data).unwrap();
        (info.color_type, info.bit_depth, data)
    }

    #[test]
    fn png8_holds_the_mapped_samples() {
        let range = HeightRange { min: -2.0, max: 3.0 };
        let layer = map(3, &[-2.0, 3.0, 0.5, -9.0, 1e6, 0.49]);
        let (colour, depth, data) = samples(&encode_png8(&layer, range).unwrap());
        assert_eq!((colour, depth), (png::ColorType::Grayscale, png::BitDepth::Eight));
        // 0.5 is 127.5 (rounds up), 0.49 is 126.99.
        assert_eq!(data, [0, 255, 128, 0, 255, 127]);
        assert!(matches!(encode_png8(&layer, HeightRange { min: 3.0, max: -2.0 }), Err(IoError::Param(_))));
        let mut bad = layer.clone();
        bad.cells_mut()[4] = f32::INFINITY;
        assert!(matches!(encode_png8(&bad, range), Err(IoError::Grid(GridError::NonFinite { x: 1, y: 1 }))));
    }

    #[test]
    fn png8_round_trips_within_half_an_eight_bit_step() {
        let terrain = fbm_terrain(41, 29, 6).unwrap();
        for range in [HeightRange::UNIT, HeightRange { min: -0.5, max: 2.0 }] {
            let png = encode_png8(&terrain, range).unwrap();
            let back = decode_png(&png, range, DEFAULT_MAX_CELLS).unwrap();
            assert_eq!((back.width(), back.height()), (41, 29));
            let half_step =
                (range.max - range.min) / 510.0 + range.max.abs().max(range.min.abs()) * f32::EPSILON;
            let worst =
                terrain.cells().iter().zip(back.cells()).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
            assert!(worst <= half_step, "{range:?}: {worst} > {half_step}");
            // Read back and written again: the same file.
            assert_eq!(encode_png8(&back, range).unwrap(), png);
        }
    }

    #[test]
    fn png16_at_engine_sizes_has_the_header_and_samples_importers_read() {
        // The IHDR chunk right after the signature: width and height
        // (big-endian), bit depth 16, colour type 0 (grayscale); samples are
        // big-endian, as PNG stores every 16-bit sample.
        for (engine, map) in engine_maps() {
            let side = map.width() as u32;
            let range = HeightRange::of(&map);
            let file = hydraulic_erosion::encode_png(&map, range).unwrap();
            assert_eq!(&file[..8], b"\x89PNG\r\n\x1a\n");
            assert_eq!(&file[12..16], b"IHDR");
            assert_eq!(u32::from_be_bytes(file[16..20].try_into().unwrap()), side, "{engine:?}");
            assert_eq!(u32::from_be_bytes(file[20..24].try_into().unwrap()), side, "{engine:?}");
            assert_eq!((file[24], file[25]), (16, 0), "{engine:?}");
            let (colour, depth, data) = samples(&file);
            assert_eq!((colour, depth), (png::ColorType::Grayscale, png::BitDepth::Sixteen));
            let last = (side * side - 1) as usize;
            let sample = |i: usize| u16::from_be_bytes([data[2 * i], data[2 * i + 1]]);
            assert_eq!(sample(0), range.sample_of(map.cells()[0]), "{engine:?}");
            assert_eq!(sample(last), range.sample_of(map.cells()[last]), "{engine:?}");
        }
    }

    #[test]
    fn splat_png_holds_the_rgba_bytes() {
        let unit = HeightRange::UNIT;
        let a = fbm_terrain(13, 7, 1).unwrap();
        let b = fbm_terrain(13, 7, 2).unwrap();
        let layers = [(&a, unit), (&b, unit), (&b, HeightRange { min: 0.25, max: 0.75 }), (&a, unit)];
        let (colour, depth, data) = samples(&encode_splat_png(layers).unwrap());
        assert_eq!((colour, depth), (png::ColorType::Rgba, png::BitDepth::Eight));
        assert_eq!(data, splat_rgba8(layers).unwrap());
        let short = Heightmap::new(13, 6).unwrap();
        assert!(matches!(
            encode_splat_png([(&a, unit), (&a, unit), (&short, unit), (&a, unit)]),
            Err(IoError::Grid(GridError::SizeMismatch { actual_height: 6, .. }))
        ));
    }
}

#[cfg(feature = "exr")]
mod exr_files {
    use super::*;
    use crate::common::{arb_mutation, mutate};
    use exr::prelude as x;
    use exr::prelude::WritableImage as _;
    use hydraulic_erosion::{DEFAULT_MAX_CELLS, ExrSample, decode_exr, encode_exr, fbm_terrain};
    use proptest::prelude::*;
    use std::io::Cursor;

    fn bits(map: &Heightmap) -> Vec<u32> {
        map.cells().iter().map(|h| h.to_bits()).collect()
    }

    /// An EXR of one layer with `channels`, written by the `exr` crate itself.
    fn custom_exr(
        size: (usize, usize),
        encoding: x::Encoding,
        channels: Vec<(&str, x::FlatSamples)>,
    ) -> Vec<u8> {
        let list = channels.into_iter().map(|(name, samples)| x::AnyChannel::new(name, samples)).collect();
        let layer = x::Layer::new(size, x::LayerAttributes::default(), encoding, x::AnyChannels::sort(list));
        let mut out = Vec::new();
        x::Image::from_layer(layer).write().non_parallel().to_buffered(Cursor::new(&mut out)).unwrap();
        out
    }

    /// The first layer's channels: names and sample types.
    fn channels(file: &[u8]) -> Vec<(String, x::SampleType)> {
        let meta = x::MetaData::read_from_buffered(Cursor::new(file), false).unwrap();
        meta.headers[0].channels.list.iter().map(|c| (c.name.to_string(), c.sample_type)).collect()
    }

    /// The byte offset of the `i32` at `index` (0 to 3: x min, y min, x max,
    /// y max) of the data window in `file`'s header.
    fn data_window(file: &[u8], index: usize) -> usize {
        let key = b"dataWindow\0box2i\0";
        let at = file.windows(key.len()).position(|w| w == key).unwrap();
        at + key.len() + 4 + 4 * index
    }

    /// A tiny valid EXR whose header claims `width` x `height` (and the chunk
    /// count that size needs in blocks of 16 rows, so the header agrees with
    /// itself).
    fn lying_header(width: i32, height: i32) -> Vec<u8> {
        let mut file = encode_exr(&Heightmap::new(1, 1).unwrap(), ExrSample::F32).unwrap();
        let (x_max, y_max) = (data_window(&file, 2), data_window(&file, 3));
        file[x_max..x_max + 4].copy_from_slice(&(width - 1).to_le_bytes());
        file[y_max..y_max + 4].copy_from_slice(&(height - 1).to_le_bytes());
        let key = b"chunkCount\0int\0\x04\0\0\0";
        let at = file.windows(key.len()).position(|w| w == key).unwrap() + key.len();
        file[at..at + 4].copy_from_slice(&((height + 15) / 16).to_le_bytes());
        file
    }

    #[test]
    fn exr_at_engine_sizes_is_one_y_channel_of_the_heights() {
        // What Godot's EXR loader (tinyexr) reads: the magic number, version 2
        // single-part scan lines, one channel "Y" (read into red, green and
        // blue alike), and a data window of the map's size; heights as they
        // are (no range), little-endian like every EXR value.
        for (engine, map) in engine_maps() {
            let side = map.width() as i32;
            for (sample, kind) in [(ExrSample::F32, x::SampleType::F32), (ExrSample::F16, x::SampleType::F16)]
            {
                let file = encode_exr(&map, sample).unwrap();
                assert_eq!(&file[..4], &[0x76, 0x2f, 0x31, 0x01], "{engine:?}");
                assert_eq!(file[4], 2, "{engine:?}: version");
                assert_eq!(file[5] & 0x02, 0, "{engine:?}: not tiled");
                assert_eq!(channels(&file), vec![("Y".to_string(), kind)], "{engine:?}");
                let window =
                    |i: usize| i32::from_le_bytes(file[data_window(&file, i)..][..4].try_into().unwrap());
                assert_eq!([window(0), window(1), window(2), window(3)], [0, 0, side - 1, side - 1]);
                let back = decode_exr(&file, DEFAULT_MAX_CELLS).unwrap();
                if sample == ExrSample::F32 {
                    assert_eq!(bits(&back), bits(&map), "{engine:?}");
                }
            }
        }
    }

    #[test]
    fn exr_f32_round_trips_bit_for_bit() {
        let specials =
            [0.0, -0.0, 1.5, -1e-40, 3.4e38, -3.4e38, -7.25, f32::MIN_POSITIVE, 1.0 / 3.0, -8848.86];
        let mut terrain = fbm_terrain(37, 23, 4).unwrap();
        for (cell, (i, &h)) in terrain.cells_mut().iter_mut().zip(specials.iter().enumerate().cycle()) {
            *cell = *cell * 1e4 - 5e3 + if i % 3 == 0 { h } else { 0.0 };
        }
        terrain.cells_mut()[..specials.len()].copy_from_slice(&specials);
        let exr = encode_exr(&terrain, ExrSample::F32).unwrap();
        assert_eq!(channels(&exr), [("Y".to_string(), x::SampleType::F32)]);
        let back = decode_exr(&exr, DEFAULT_MAX_CELLS).unwrap();
        assert_eq!((back.width(), back.height()), (37, 23));
        assert_eq!(bits(&back), bits(&terrain));
        // The default sample, and the format's own encoder, are f32.
        assert_eq!(ExrSample::default(), ExrSample::F32);
        assert_eq!(Format::Exr.encode(&terrain, HeightRange::UNIT).unwrap(), exr);
        assert_eq!(bits(&Format::Exr.decode(&exr, &ReadOptions::default()).unwrap()), bits(&terrain));
    }

    #[test]
    fn exr_f16_is_within_half_precision() {
        let terrain = fbm_terrain(30, 20, 8).unwrap();
        let mut cells: Vec<f32> = terrain.cells().iter().map(|h| h * 9000.0 - 500.0).collect();
        cells[..6].copy_from_slice(&[65504.0, -65504.0, 1e-6, -3e-5, 0.0, 1234.567]);
        let map = Heightmap::from_cells(30, 20, cells).unwrap();
        let exr = encode_exr(&map, ExrSample::F16).unwrap();
        assert_eq!(channels(&exr), [("Y".to_string(), x::SampleType::F16)]);
        let back = decode_exr(&exr, DEFAULT_MAX_CELLS).unwrap();
        for (&h, &b) in map.cells().iter().zip(back.cells()) {
            assert_eq!(b, x::f16::from_f32(h).to_f32(), "{h}");
            assert!((b - h).abs() <= (h.abs() * 2.0_f32.powi(-11)).max(2.0_f32.powi(-25)), "{h} -> {b}");
        }
        // Half the bytes of the f32 samples (both compress; these are noisy).
        assert!(exr.len() < encode_exr(&map, ExrSample::F32).unwrap().len());
        // Beyond half's range: refused, not written as infinity.
        let tall = map.cells().iter().map(|h| h + 60_000.0).collect();
        let tall = Heightmap::from_cells(30, 20, tall).unwrap();
        assert!(matches!(encode_exr(&tall, ExrSample::F16), Err(IoError::Unsupported(_))));
        assert!(encode_exr(&tall, ExrSample::F32).is_ok());
    }

    #[test]
    fn exr_refuses_non_finite_cells_both_ways() {
        let mut map = Heightmap::new(3, 2).unwrap();
        map.cells_mut()[4] = f32::NEG_INFINITY;
        for sample in [ExrSample::F32, ExrSample::F16] {
            assert!(matches!(
                encode_exr(&map, sample),
                Err(IoError::Grid(GridError::NonFinite { x: 1, y: 1 }))
            ));
        }
        let mut samples = vec![1.0_f32; 6];
        samples[5] = f32::NAN;
        let file = custom_exr((3, 2), x::Encoding::UNCOMPRESSED, vec![("Y", x::FlatSamples::F32(samples))]);
        assert!(matches!(
            decode_exr(&file, DEFAULT_MAX_CELLS),
            Err(IoError::Grid(GridError::NonFinite { x: 2, y: 1 }))
        ));
    }

    #[test]
    fn exr_reads_y_else_r_else_the_only_channel() {
        let size = (4, 3);
        let f32s = |v: f32| x::FlatSamples::F32((0..12).map(|i| v + i as f32).collect());
        let read =
            |channels| decode_exr(&custom_exr(size, x::Encoding::UNCOMPRESSED, channels), DEFAULT_MAX_CELLS);
        let first = |channels| read(channels).unwrap().cells()[0];
        assert_eq!(first(vec![("R", f32s(1.0)), ("Y", f32s(2.0)), ("A", f32s(3.0))]), 2.0);
        assert_eq!(first(vec![("B", f32s(1.0)), ("R", f32s(5.0)), ("G", f32s(3.0))]), 5.0);
        assert_eq!(first(vec![("height", f32s(7.0))]), 7.0);
        // f16 and u32 samples, converted to f32.
        let halves = x::FlatSamples::F16((0..12).map(|i| x::f16::from_f32(i as f32 * 0.5)).collect());
        assert_eq!(read(vec![("Y", halves)]).unwrap().cells()[11], 5.5);
        let ints = x::FlatSamples::U32((0..12).map(|i| 16_777_217 + i).collect());
        let back = read(vec![("Z", ints)]).unwrap();
        assert_eq!(back.cells()[0], 16_777_216.0); // nearest f32
        assert_eq!(back.cells()[3], 16_777_220.0);
        assert!(matches!(read(vec![("A", f32s(1.0)), ("B", f32s(1.0))]), Err(IoError::Unsupported(_))));
    }

    #[test]
    fn exr_reads_tiles_and_every_lossless_compression() {
        let terrain = fbm_terrain(45, 33, 3).unwrap();
        let samples = x::FlatSamples::F32(terrain.cells().to_vec());
        for compression in [
            x::Compression::Uncompressed,
            x::Compression::RLE,
            x::Compression::ZIP1,
            x::Compression::ZIP16,
            x::Compression::PIZ,
        ] {
            for blocks in [x::Blocks::ScanLines, x::Blocks::Tiles(x::Vec2(16, 8))] {
                let encoding = x::Encoding { compression, blocks, line_order: x::LineOrder::Increasing };
                let file = custom_exr((45, 33), encoding, vec![("Y", samples.clone())]);
                let back = decode_exr(&file, DEFAULT_MAX_CELLS).unwrap();
                assert_eq!(bits(&back), bits(&terrain), "{compression:?} {blocks:?}");
            }
        }
    }

    #[test]
    fn exr_header_sizes_are_checked_before_the_image_is_allocated() {
        // Over the cell limit: 3.6e9 cells, 14 GB of f32, refused from the header.
        assert!(matches!(
            decode_exr(&lying_header(60_000, 60_000), DEFAULT_MAX_CELLS),
            Err(IoError::TooLarge { width: 60_000, height: 60_000, .. })
        ));
        // A side over MAX_SIDE, whatever the cell limit.
        assert!(matches!(
            decode_exr(&lying_header(1 << 25, 1), usize::MAX),
            Err(IoError::TooLarge { width: 33_554_432, height: 1, .. })
        ));
        // Within the limit, but no file this short can hold 400 MB of samples.
        let bomb = lying_header(10_000, 10_000);
        assert!(bomb.len() < 1000);
        assert!(matches!(decode_exr(&bomb, DEFAULT_MAX_CELLS), Err(IoError::BadHeader(_))));
        // Plausible, but the data runs out.
        assert!(matches!(decode_exr(&lying_header(8, 8), DEFAULT_MAX_CELLS), Err(IoError::Exr(_))));
        // The caller's limit, through the format too.
        let exr = encode_exr(&fbm_terrain(11, 10, 1).unwrap(), ExrSample::F32).unwrap();
        assert!(matches!(
            decode_exr(&exr, 109),
            Err(IoError::TooLarge { width: 11, height: 10, max_cells: 109 })
        ));
        assert!(decode_exr(&exr, 110).is_ok());
        let small = ReadOptions { max_cells: 100, ..ReadOptions::default() };
        assert!(matches!(Format::Exr.decode(&exr, &small), Err(IoError::TooLarge { .. })));
    }

    #[test]
    fn a_cell_the_file_leaves_out_is_an_error() {
        // 32 rows in ZIP blocks of 16: two chunks. Point both offsets at the
        // first, so rows 16 to 31 are never written.
        let exr = encode_exr(&fbm_terrain(5, 32, 2).unwrap(), ExrSample::F32).unwrap();
        let u64_at = |at: usize| u64::from_le_bytes(exr[at..at + 8].try_into().unwrap());
        let table = (0..exr.len() - 16).find(|&at| u64_at(at) == at as u64 + 16).unwrap();
        let mut doubled = exr.clone();
        doubled.copy_within(table..table + 8, table + 8);
        assert!(matches!(
            decode_exr(&doubled, DEFAULT_MAX_CELLS),
            Err(IoError::Grid(GridError::NonFinite { x: 0, y: 16 }))
        ));
    }

    #[test]
    fn lossy_and_subsampled_exrs_are_refused_by_name() {
        let samples = x::FlatSamples::F16(vec![x::f16::ONE; 64]);
        for compression in [x::Compression::B44, x::Compression::B44A] {
            let encoding = x::Encoding { compression, ..x::Encoding::UNCOMPRESSED };
            let file = custom_exr((8, 8), encoding, vec![("Y", samples.clone())]);
            assert!(matches!(decode_exr(&file, DEFAULT_MAX_CELLS), Err(IoError::Unsupported(_))));
        }
        // DWAB and subsampling: the header's bytes, patched (the exr crate
        // writes neither).
        let file = custom_exr((8, 8), x::Encoding::UNCOMPRESSED, vec![("Y", samples)]);
        assert_eq!(decode_exr(&file, DEFAULT_MAX_CELLS).unwrap().cells(), [1.0; 64]);
        let key = b"compression\0compression\0\x01\0\0\0";
        let at = file.windows(key.len()).position(|w| w == key).unwrap() + key.len();
        let mut dwab = file.clone();
        dwab[at] = 9;
        // DWAB blocks are 256 rows: one chunk.
        let key = b"chunkCount\0int\0\x04\0\0\0";
        let at = dwab.windows(key.len()).position(|w| w == key).unwrap() + key.len();
        dwab[at..at + 4].copy_from_slice(&1_i32.to_le_bytes());
        assert!(matches!(decode_exr(&dwab, DEFAULT_MAX_CELLS), Err(IoError::Unsupported(_))));
        // Channel `Y`: name, type (4), linear flag and 3 reserved bytes (4), then
        // x and y sampling.
        let key = b"chlist\0";
        let at = file.windows(key.len()).position(|w| w == key).unwrap() + key.len() + 4 + 2 + 8;
        let mut subsampled = file.clone();
        subsampled[at] = 2;
        subsampled[at + 4] = 2;
        // (The exr crate refuses it first; the crate's own check stands behind.)
        let result = decode_exr(&subsampled, DEFAULT_MAX_CELLS);
        assert!(matches!(result, Err(IoError::Unsupported(_) | IoError::Exr(_))), "{result:?}");
    }

    #[test]
    fn every_truncation_of_an_exr_is_a_typed_error() {
        let exr = encode_exr(&fbm_terrain(16, 20, 2).unwrap(), ExrSample::F16).unwrap();
        for len in 0..exr.len() {
            let result = decode_exr(&exr[..len], DEFAULT_MAX_CELLS);
            assert!(matches!(result, Err(IoError::Exr(_) | IoError::BadHeader(_))), "{len}: {result:?}");
        }
    }

    #[test]
    fn exr_files_round_trip_through_paths() {
        use hydraulic_erosion::{read_heightmap, write_heightmap};
        let terrain = fbm_terrain(24, 24, 9).unwrap();
        let path = std::env::temp_dir().join(format!("hydraulic-erosion-export-{}.exr", std::process::id()));
        write_heightmap(&path, &terrain, HeightRange::UNIT).unwrap();
        let back = read_heightmap(&path, &ReadOptions::default()).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(bits(&back), bits(&terrain));
    }

    fn cases() -> u32 {
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(512)
    }

    /// Valid files to mutate: the crate's own (ZIP, f32 and f16), and the `exr`
    /// crate's in every other compression it writes, scan lines and tiles.
    fn seed_files() -> &'static [Vec<u8>] {
        static FILES: std::sync::OnceLock<Vec<Vec<u8>>> = std::sync::OnceLock::new();
        FILES.get_or_init(|| {
            let terrain = fbm_terrain(12, 12, 5).unwrap();
            let f32s = x::FlatSamples::F32(terrain.cells().to_vec());
            let f16s = x::FlatSamples::F16(terrain.cells().iter().map(|&h| x::f16::from_f32(h)).collect());
            let mut files = vec![
                encode_exr(&terrain, ExrSample::F32).unwrap(),
                encode_exr(&terrain, ExrSample::F16).unwrap(),
            ];
            let tiles = x::Blocks::Tiles(x::Vec2(8, 8));
            for (compression, blocks, samples) in [
                (x::Compression::Uncompressed, x::Blocks::ScanLines, &f32s),
                (x::Compression::RLE, tiles, &f32s),
                (x::Compression::PIZ, tiles, &f16s),
                (x::Compression::PXR24, x::Blocks::ScanLines, &f32s),
                (x::Compression::ZIP1, tiles, &f32s),
            ] {
                let encoding = x::Encoding { compression, blocks, line_order: x::LineOrder::Increasing };
                files.push(custom_exr((12, 12), encoding, vec![("Y", samples.clone()), ("A", f16s.clone())]));
            }
            files
        })
    }

    /// A decoded map is never bigger than the file could hold, nor holds a
    /// non-finite cell.
    fn plausible(result: &Result<Heightmap, IoError>, bytes: &[u8]) -> bool {
        result.as_ref().map_or(true, |map| {
            map.len() <= bytes.len().max(1) * 1376 && map.cells().iter().all(|h| h.is_finite())
        })
    }

    proptest! {
        // 512 cases each by default (about a second); PROPTEST_CASES=100000 to soak.
        #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

        #[test]
        fn exr_decoder_survives_random_bytes(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
            prop_assert!(plausible(&decode_exr(&bytes, DEFAULT_MAX_CELLS), &bytes));
            // Random bytes behind a real magic number and version reach the
            // header parser.
            let mut exr = vec![0x76, 0x2f, 0x31, 0x01, 2, 0, 0, 0];
            exr.extend_from_slice(&bytes);
            prop_assert!(plausible(&decode_exr(&exr, DEFAULT_MAX_CELLS), &exr));
        }

        #[test]
        fn exr_decoder_survives_mutated_files(
            which in 0_usize..7,
            mutations in prop::collection::vec(arb_mutation(), 1..6),
        ) {
            let files = seed_files();
            let mut bytes = files[which % files.len()].clone();
            mutate(&mut bytes, &mutations);
            prop_assert!(plausible(&decode_exr(&bytes, DEFAULT_MAX_CELLS), &bytes));
            prop_assert!(plausible(&Format::Exr.decode(&bytes, &ReadOptions::default()), &bytes));
        }
    }
}
