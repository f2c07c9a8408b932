//! 16-bit grayscale PNG heightmaps, 8-bit grayscale layers and RGBA splat maps
//! (and the previews' RGB PNGs) through the `png` crate.

use alloc::string::ToString;
use alloc::vec;
use alloc::vec::Vec;
use std::io::Cursor;

use super::{HeightRange, IoError, checked_cells, splat_rgba8};
use crate::grid::{Grid, Heightmap, try_filled};

/// Deflate's largest compression ratio (a 258-byte match in two bits): no PNG can
/// decode to more than this many bytes per byte of file.
const DEFLATE_MAX_RATIO: usize = 1032;

/// Bytes the `png` decoder may take for its own buffers (rows, text and colour
/// profile chunks); the image itself is allocated here, after the size checks.
const DECODER_LIMIT: usize = 16 << 20;

/// Reads a grayscale PNG heightmap, mapping samples to heights through `range`
/// (see [`HeightRange`]).
///
/// 16-bit grayscale is read as it is (PNG stores samples big-endian). 8-bit
/// grayscale is widened explicitly, sample `v` to `v * 257`, so 0 and 255 map to
/// `range.min` and `range.max` exactly. Colour, alpha, palette and 1-, 2- and
/// 4-bit images are rejected: a heightmap is one channel. Interlaced images are
/// fine; of an animated PNG the default image is read. The file must be whole, up
/// to its end chunk.
///
/// The size in the header is checked against `max_cells` (see
/// [`ReadOptions`](crate::ReadOptions)) and against what the file's length can
/// hold before the image is allocated.
///
/// # Errors
/// [`IoError::Param`] for an invalid `range`; [`IoError::Grid`] for an empty size;
/// [`IoError::TooLarge`] over `max_cells`; [`IoError::BadHeader`] if the header's
/// size needs more data than the file can hold; [`IoError::Unsupported`] for a
/// colour type or bit depth other than 8- or 16-bit grayscale; [`IoError::Png`]
/// for anything the `png` crate rejects (bad signature, checksum, truncation).
pub fn decode_png(bytes: &[u8], range: HeightRange, max_cells: usize) -> Result<Heightmap, IoError> {
    range.validate()?;
    let limits = png::Limits { bytes: DECODER_LIMIT };
    let mut decoder = png::Decoder::new_with_limits(Cursor::new(bytes), limits);
    decoder.set_transformations(png::Transformations::IDENTITY);
    let info = decoder.read_header_info().map_err(png_error)?;
    let (width, height) = (info.width as usize, info.height as usize);
    let wide = match (info.color_type, info.bit_depth) {
        (png::ColorType::Grayscale, png::BitDepth::Sixteen) => true,
        (png::ColorType::Grayscale, png::BitDepth::Eight) => false,
        (png::ColorType::Grayscale, _) => {
            return Err(IoError::Unsupported("1-, 2- and 4-bit grayscale PNG: use 8 or 16 bits"));
        }
        _ => {
            return Err(IoError::Unsupported(
                "colour, alpha or palette PNG: a heightmap is 16-bit grayscale",
            ));
        }
    };
    let cells = checked_cells(width, height, max_cells)?;
    let bytes_per_cell = if wide { 2 } else { 1 };
    // Rows start with a filter byte; a file cannot inflate beyond deflate's ratio.
    let image_bytes = cells * bytes_per_cell;
    let needed = image_bytes.saturating_add(height);
    if needed / DEFLATE_MAX_RATIO > bytes.len() {
        return Err(IoError::BadHeader("the PNG's size needs more data than the file can hold"));
    }
    let mut reader = decoder.read_info().map_err(png_error)?;
    if reader.output_buffer_size() != Some(image_bytes) {
        return Err(IoError::BadHeader("the PNG's image data does not match its size"));
    }
    let mut buffer = vec![0_u8; image_bytes];
    reader.next_frame(&mut buffer).map_err(png_error)?;
    // Read on to the end chunk, so a truncated file is an error even when its
    // image data happens to be complete.
    reader.finish().map_err(png_error)?;
    let cells: Vec<f32> = if wide {
        buffer.chunks_exact(2).map(|b| range.height_of(u16::from_be_bytes([b[0], b[1]]))).collect()
    } else {
        buffer.iter().map(|&v| range.height_of(u16::from(v) * 257)).collect()
    };
    Ok(Heightmap::from_cells(width, height, cells)?)
}

/// Writes `map` as a 16-bit grayscale PNG: each height clamped into `range` and
/// rounded to the nearest of 65536 levels (as [`encode_r16`](crate::encode_r16)),
/// stored big-endian as PNG requires.
///
/// # Errors
/// [`IoError::Param`] for an invalid `range`, [`IoError::Grid`] if a cell is not
/// finite, [`IoError::Png`] if the encoder fails.
pub fn encode_png<S: AsRef<[f32]>>(map: &Grid<S>, range: HeightRange) -> Result<Vec<u8>, IoError> {
    range.validate()?;
    map.check_finite()?;
    let data: Vec<u8> = map.cells().iter().flat_map(|&h| range.sample_of(h).to_be_bytes()).collect();
    encode(map.width(), map.height(), png::ColorType::Grayscale, png::BitDepth::Sixteen, &data)
}

/// Writes `map` as an 8-bit grayscale PNG: each value clamped into `range` and
/// rounded to the nearest of 256 levels, `round(255 * (v - min) / (max - min))`
/// half up ([`HeightRange::sample8_of`]). For layers and masks (flux, wetness,
/// erosion) that an engine reads as an 8-bit texture; heights want the 65536
/// levels of [`encode_png`]. [`decode_png`] reads it back within half an 8-bit
/// step, `(max - min) / 510` (plus one `f32` rounding).
///
/// ```
/// use hydraulic_erosion::{DEFAULT_MAX_CELLS, HeightRange, Heightmap, decode_png, encode_png8};
///
/// let range = HeightRange { min: 0.0, max: 10.0 };
/// let layer = Heightmap::from_cells(3, 1, vec![0.0, 2.5, 12.0])?; // 12 is clamped to 10
/// let png = encode_png8(&layer, range)?;
/// let back = decode_png(&png, range, DEFAULT_MAX_CELLS)?;
/// assert_eq!(back.cells()[0], 0.0);
/// assert!((back.cells()[1] - 2.5).abs() <= 10.0 / 510.0); // sample 64: 2.5098
/// assert_eq!(back.cells()[2], 10.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`IoError::Param`] for an invalid `range`, [`IoError::Grid`] if a cell is not
/// finite, [`IoError::Png`] if the encoder fails.
pub fn encode_png8<S: AsRef<[f32]>>(map: &Grid<S>, range: HeightRange) -> Result<Vec<u8>, IoError> {
    range.validate()?;
    map.check_finite()?;
    let mut data = try_filled(map.len(), 0_u8)?;
    for (sample, &v) in data.iter_mut().zip(map.cells()) {
        *sample = range.sample8_of(v);
    }
    encode(map.width(), map.height(), png::ColorType::Grayscale, png::BitDepth::Eight, &data)
}

/// Writes four layers as an 8-bit RGBA PNG splat map: the pixels of
/// [`splat_rgba8`] (red from `layers[0]` through alpha from `layers[3]`, each on
/// its own range). PNG stores alpha straight (not premultiplied), so the colour
/// channels keep their values where alpha is 0.
///
/// ```
/// use hydraulic_erosion::{HeightRange, Heightmap, encode_splat_png};
///
/// let flux = Heightmap::from_fn(8, 8, |x, _| x as f32)?;
/// let wet = Heightmap::from_fn(8, 8, |_, y| y as f32)?;
/// let on = |layer| (layer, HeightRange { min: 0.0, max: 7.0 });
/// let png = encode_splat_png([on(&flux), on(&wet), on(&flux), on(&wet)])?;
/// assert_eq!(&png[1..4], b"PNG");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// As [`splat_rgba8`], and [`IoError::Png`] if the encoder fails.
pub fn encode_splat_png<S: AsRef<[f32]>>(layers: [(&Grid<S>, HeightRange); 4]) -> Result<Vec<u8>, IoError> {
    let (width, height) = (layers[0].0.width(), layers[0].0.height());
    let rgba = splat_rgba8(layers)?;
    encode(width, height, png::ColorType::Rgba, png::BitDepth::Eight, &rgba)
}

/// An 8-bit RGB PNG of `width * height` pixels, 3 bytes each, row by row.
pub(crate) fn encode_rgb8(width: usize, height: usize, rgb: &[u8]) -> Result<Vec<u8>, IoError> {
    encode(width, height, png::ColorType::Rgb, png::BitDepth::Eight, rgb)
}

fn encode(
    width: usize,
    height: usize,
    colour: png::ColorType,
    depth: png::BitDepth,
    data: &[u8],
) -> Result<Vec<u8>, IoError> {
    // Grid sides are at most 2^24, so they fit PNG's u32 sizes.
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, width as u32, height as u32);
    encoder.set_color(colour);
    encoder.set_depth(depth);
    let mut writer = encoder.write_header().map_err(png_error)?;
    writer.write_image_data(data).map_err(png_error)?;
    writer.finish().map_err(png_error)?;
    Ok(out)
}

fn png_error(error: impl ToString) -> IoError {
    IoError::Png(error.to_string())
}
