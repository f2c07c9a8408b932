//! Single-channel EXR heightmaps (`f32` or `f16`) through the `exr` crate.

use alloc::string::ToString;
use alloc::vec::Vec;
use std::io::Cursor;

use exr::image::write::WritableImage;
use exr::image::{Encoding, Image, Layer, SpecificChannels};
use exr::math::Vec2;
use exr::meta::attribute::{ChannelList, Text};
use exr::meta::header::LayerAttributes;
use exr::prelude::{Compression, ReadChannels, ReadLayers, ReadSpecificChannel, f16};

use super::{IoError, checked_cells};
use crate::error::GridError;
use crate::grid::{Grid, Heightmap, try_filled};

/// The most bytes of samples one byte of an EXR file can decode to, over the
/// compressions [`decode_exr`] reads: PXR24's 3-byte `f32`s through deflate's
/// largest ratio (1032, a 258-byte match in two bits), `1032 * 4 / 3`. ZIP and
/// PIZ (Huffman codes of at least 9 bits for a run of 255 `u16`s, about 453)
/// stay below it, RLE (64) and uncompressed data (1) far below.
const MAX_RATIO: usize = 1376;

/// The samples [`encode_exr`] writes.
///
/// Either way the file holds one channel named `Y`, OpenEXR's name for a
/// grayscale (luminance) image, ZIP-compressed (lossless) in blocks of 16 rows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum ExrSample {
    /// 32-bit floats: every height exactly, bit for bit, 4 bytes a cell before
    /// compression. The default.
    #[default]
    F32,
    /// 16-bit half floats, 2 bytes a cell: each height rounded to the nearest
    /// half (ties to even), within `|h| * 2^-11` of it (and within `2^-25` below
    /// `2^-14`, where halves are subnormal); so 1 000 m is kept to 0.25 m.
    /// Heights beyond ±65504 (half's largest) are refused.
    F16,
}

/// Writes `map` as a single-channel EXR: one channel `Y` of `f32` or `f16`
/// samples (see [`ExrSample`]), the heights as they are (no range: EXR stores
/// floats), ZIP-compressed, row 0 at the top.
///
/// `Y` is OpenEXR's channel for a grayscale image, and what OpenEXR's RGBA
/// interface reads as luminance. Godot 4's EXR loader reads a lone `Y` channel
/// as gray, red, green and blue each the height: the RGB float image that
/// Terrain3D's importer (which loads through Godot) asks for. Godot 3's loader
/// needs `R`, `G` and `B` channels and refuses the file.
///
/// ```
/// use hydraulic_erosion::{DEFAULT_MAX_CELLS, ExrSample, Heightmap, decode_exr, encode_exr};
///
/// let map = Heightmap::from_cells(2, 2, vec![-12.5, 0.0, 1234.567, 8848.0])?;
/// let exr = encode_exr(&map, ExrSample::F32)?;
/// assert_eq!(decode_exr(&exr, DEFAULT_MAX_CELLS)?, map); // bit for bit
/// # Ok::<(), hydraulic_erosion::IoError>(())
/// ```
///
/// # Errors
/// [`IoError::Grid`] if a cell is not finite; [`IoError::Unsupported`] for
/// [`ExrSample::F16`] with a height beyond ±65504; [`IoError::Exr`] if the
/// encoder fails.
pub fn encode_exr<S: AsRef<[f32]>>(map: &Grid<S>, sample: ExrSample) -> Result<Vec<u8>, IoError> {
    map.check_finite()?;
    let (width, cells) = (map.width(), map.cells());
    if sample == ExrSample::F16 && cells.iter().any(|&h| f16::from_f32(h).is_infinite()) {
        return Err(IoError::Unsupported("a height beyond ±65504 does not fit f16: write ExrSample::F32"));
    }
    let size = (width, map.height());
    let height = move |p: Vec2<usize>| cells[p.y() * width + p.x()];
    // One layer, one channel `Y`, ZIP-compressed in blocks of 16 rows, written
    // on this thread. (A macro: a generic function would need the pixel
    // closure, which borrows `map`, to be `'static`.)
    macro_rules! write_y {
        ($pixel:expr) => {{
            let channels = SpecificChannels::build().with_channel("Y").with_pixel_fn($pixel);
            let image = Image::from_layer(Layer::new(
                size,
                LayerAttributes::default(),
                Encoding::SMALL_LOSSLESS,
                channels,
            ));
            let mut out = Vec::new();
            image.write().non_parallel().to_buffered(Cursor::new(&mut out)).map_err(exr_error)?;
            Ok(out)
        }};
    }
    match sample {
        ExrSample::F32 => write_y!(move |p| (height(p),)),
        ExrSample::F16 => write_y!(move |p| (f16::from_f32(height(p)),)),
    }
}

/// Reads an EXR heightmap: one channel of the file's first layer (part), its
/// `f32`, `f16` or `u32` samples converted to `f32` (`f16` exactly, `u32`
/// rounded to the nearest `f32`).
///
/// The channel is `Y` if the layer has one, else `R`, else the layer's only
/// channel; a layer with several channels and neither name is refused. Scan
/// lines and tiles are read, any line order; of a mip- or rip-mapped file the
/// full-resolution level. Every cell must be covered by the file's data: a cell
/// no block of the file writes, like a NaN or infinite sample, is an error.
///
/// The size in the header is checked against `max_cells` (see
/// [`ReadOptions`](crate::ReadOptions)) and [`MAX_SIDE`](crate::MAX_SIDE), and
/// against what the file's length can hold (at most 1376 bytes of samples, all
/// channels of the layer, per byte of file), before anything the size of the
/// image is allocated.
///
/// Compressions read: none, RLE, ZIP (1 and 16 rows), PIZ and PXR24 (lossy for
/// `f32`, exact for `f16`). B44 and DWA are refused: both are lossy, the `exr`
/// crate's B44 decoder overflows on corrupt blocks (found by this crate's fuzz
/// tests), and an empty DWA block decodes to a whole block of zeros, so no size
/// check can bound it. HTJ2K the `exr` crate does not read.
///
/// # Errors
/// [`IoError::TooLarge`] over `max_cells`; [`IoError::BadHeader`] if the header's
/// size needs more data than the file can hold; [`IoError::Unsupported`] for a
/// layer without a `Y`, an `R` or a single channel, for subsampled channels, and
/// for B44, DWAA, DWAB and HTJ2K compression; [`IoError::Grid`] for a non-finite
/// or missing cell (named); [`IoError::Exr`] for anything the `exr` crate
/// rejects (bad magic number, header or chunk, truncation, deep data).
pub fn decode_exr(bytes: &[u8], max_cells: usize) -> Result<Heightmap, IoError> {
    let chunks = exr::block::read(Cursor::new(bytes), false).map_err(exr_error)?;
    let header = chunks.headers().first().ok_or(IoError::BadHeader("an EXR without a layer"))?;
    let (width, height) = (header.layer_size.width(), header.layer_size.height());
    let cells = checked_cells(width, height, max_cells)?;
    match header.compression {
        Compression::Uncompressed
        | Compression::RLE
        | Compression::ZIP1
        | Compression::ZIP16
        | Compression::PIZ
        | Compression::PXR24 => {}
        _ => {
            return Err(IoError::Unsupported(
                "B44, DWAA, DWAB or HTJ2K compression: save heights with ZIP, PIZ or no compression",
            ));
        }
    }
    if header.channels.list.iter().any(|channel| channel.sampling != Vec2(1, 1)) {
        return Err(IoError::Unsupported("subsampled EXR channels: a heightmap has a sample for every cell"));
    }
    let name = channel_to_read(&header.channels)?;
    let needed = cells.saturating_mul(header.channels.bytes_per_pixel);
    if needed / MAX_RATIO > bytes.len() {
        return Err(IoError::BadHeader("the EXR's size needs more data than the file can hold"));
    }
    // Cells start as NaN, so one that no block of the file covers is caught
    // by the finiteness check below.
    let image = exr::prelude::read()
        .no_deep_data()
        .largest_resolution_level()
        .specific_channels()
        .required(name)
        .collect_pixels(
            |_, _| try_filled(cells, f32::NAN),
            move |storage: &mut Result<Vec<f32>, GridError>, at: Vec2<usize>, (h,): (f32,)| {
                let index = at.y().checked_mul(width).and_then(|i| i.checked_add(at.x()));
                if let (Ok(cells), Some(index), true) = (storage, index, at.x() < width) {
                    if let Some(cell) = cells.get_mut(index) {
                        *cell = h;
                    }
                }
            },
        )
        .first_valid_layer()
        .all_attributes()
        .non_parallel()
        .from_chunks(chunks)
        .map_err(exr_error)?;
    let layer = image.layer_data;
    if (layer.size.width(), layer.size.height()) != (width, height) {
        return Err(IoError::BadHeader("the EXR's layer does not match its header"));
    }
    Ok(Heightmap::from_cells(width, height, layer.channel_data.pixels?)?)
}

/// The name of the channel [`decode_exr`] reads: `Y`, else `R`, else the only one.
fn channel_to_read(channels: &ChannelList) -> Result<Text, IoError> {
    let named = |name: &str| channels.list.iter().find(|c| c.name.eq(name));
    let only = || (channels.list.len() == 1).then(|| &channels.list[0]);
    named("Y")
        .or_else(|| named("R"))
        .or_else(only)
        .map(|channel| channel.name.clone())
        .ok_or(IoError::Unsupported("an EXR layer with several channels but no Y or R: which is the height?"))
}

fn exr_error(error: exr::error::Error) -> IoError {
    IoError::Exr(error.to_string())
}
