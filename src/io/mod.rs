//! Heightmap files: raw r16 and r32 by hand (no `std` needed), 16-bit PNG with the
//! `png` feature, EXR with the `exr` feature, and path and stream helpers with
//! `std`; layers as 8-bit PNGs and RGBA splat maps for engines.

mod error;
#[cfg(feature = "exr")]
mod exr;
#[cfg(feature = "png")]
mod png;
mod range;
mod raw;
mod splat;

use alloc::vec::Vec;

pub use error::IoError;
#[cfg(feature = "exr")]
pub use exr::{ExrSample, decode_exr, encode_exr};
#[cfg(feature = "png")]
pub(crate) use png::encode_rgb8;
#[cfg(feature = "png")]
pub use png::{decode_png, encode_png, encode_png8, encode_splat_png};
pub use range::HeightRange;
pub use raw::{decode_r16, decode_r32, encode_r16, encode_r32};
pub use splat::splat_rgba8;

use crate::error::GridError;
use crate::grid::{Grid, Heightmap, MAX_SIDE};

/// The default [`ReadOptions::max_cells`]: 2^28 cells (16384 x 16384), 1 GiB of
/// `f32` heights.
pub const DEFAULT_MAX_CELLS: usize = 1 << 28;

/// A heightmap file format.
///
/// | format | bytes a cell | byte order | heights |
/// | --- | --- | --- | --- |
/// | `R16` | 2, `u16` | little-endian | `[min, max]` of a [`HeightRange`] on `[0, 65535]` |
/// | `R32` | 4, IEEE 754 `f32` | little-endian | as they are, lossless |
/// | `Png` | 16-bit grayscale | big-endian (PNG's) | as `R16`; 8-bit gray is read as `v * 257` |
/// | `Exr` | one channel `Y`, `f32` (or `f16`) | little-endian (EXR's) | as they are; `f32` lossless |
///
/// Raw formats have no header: their size is given, or taken as a square.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
#[non_exhaustive]
pub enum Format {
    /// Raw little-endian `u16` ([`decode_r16`]); extensions `r16` and `raw`.
    R16,
    /// Raw little-endian `f32` ([`decode_r32`]); extensions `r32` and `f32`.
    R32,
    /// 16-bit grayscale PNG (`decode_png`, needs the `png` feature); extension `png`.
    Png,
    /// Single-channel EXR (`decode_exr`, needs the `exr` feature): written as
    /// `f32`, read from `f32`, `f16` or `u32` samples; extension `exr`.
    Exr,
}

impl Format {
    /// The format for a file extension (without the dot, any case): `r16` and `raw`
    /// (Unity's and Unreal's 16-bit raw), `r32` and `f32`, `png`, `exr`.
    pub fn from_extension(extension: &str) -> Option<Self> {
        let is = |name: &str| extension.eq_ignore_ascii_case(name);
        if is("r16") || is("raw") {
            Some(Self::R16)
        } else if is("r32") || is("f32") {
            Some(Self::R32)
        } else if is("png") {
            Some(Self::Png)
        } else if is("exr") {
            Some(Self::Exr)
        } else {
            None
        }
    }

    /// The format for a path's extension (see [`from_extension`](Self::from_extension)).
    #[cfg(feature = "std")]
    pub fn from_path(path: &std::path::Path) -> Option<Self> {
        path.extension().and_then(|e| e.to_str()).and_then(Self::from_extension)
    }

    /// Bytes a cell takes in the raw formats (2 for PNG's samples, 4 for EXR's
    /// `f32` samples as written).
    pub const fn bytes_per_cell(self) -> usize {
        match self {
            Self::R16 | Self::Png => 2,
            Self::R32 | Self::Exr => 4,
        }
    }

    /// Reads a heightmap in this format from `bytes`.
    ///
    /// # Errors
    /// As the format's decoder; [`IoError::UnknownSize`] for a raw file without
    /// [`ReadOptions::size`] that is not square; [`IoError::TooLarge`] over
    /// [`ReadOptions::max_cells`]; [`IoError::Unsupported`] for PNG without the `png`
    /// feature and for EXR without the `exr` feature.
    pub fn decode(self, bytes: &[u8], options: &ReadOptions) -> Result<Heightmap, IoError> {
        if self == Self::Png {
            #[cfg(feature = "png")]
            return decode_png(bytes, options.range, options.max_cells);
            #[cfg(not(feature = "png"))]
            return Err(IoError::Unsupported("PNG needs the `png` feature"));
        }
        if self == Self::Exr {
            #[cfg(feature = "exr")]
            return decode_exr(bytes, options.max_cells);
            #[cfg(not(feature = "exr"))]
            return Err(IoError::Unsupported("EXR needs the `exr` feature"));
        }
        let (width, height) = match options.size {
            Some([width, height]) => (width, height),
            None => {
                let side = raw::square_side(bytes.len(), self.bytes_per_cell())?;
                (side, side)
            }
        };
        checked_cells(width, height, options.max_cells)?;
        match self {
            Self::R16 => decode_r16(bytes, width, height, options.range),
            _ => decode_r32(bytes, width, height),
        }
    }

    /// Writes `map` in this format (`range` is used by R16 and PNG, ignored by R32
    /// and EXR, which is written as `f32`: `ExrSample::F32`).
    ///
    /// # Errors
    /// As the format's encoder; [`IoError::Unsupported`] for PNG without the `png`
    /// feature and for EXR without the `exr` feature.
    pub fn encode<S: AsRef<[f32]>>(self, map: &Grid<S>, range: HeightRange) -> Result<Vec<u8>, IoError> {
        match self {
            Self::R16 => encode_r16(map, range),
            Self::R32 => encode_r32(map),
            #[cfg(feature = "png")]
            Self::Png => encode_png(map, range),
            #[cfg(not(feature = "png"))]
            Self::Png => Err(IoError::Unsupported("PNG needs the `png` feature")),
            #[cfg(feature = "exr")]
            Self::Exr => encode_exr(map, ExrSample::F32),
            #[cfg(not(feature = "exr"))]
            Self::Exr => Err(IoError::Unsupported("EXR needs the `exr` feature")),
        }
    }

    /// The most bytes a file of this format within `max_cells` cells can take: the
    /// raw size, plus for PNG room for incompressible data and chunks, and for EXR
    /// room for four uncompressed `f32` channels (RGBA), headers and offset tables.
    #[cfg(feature = "std")]
    fn byte_limit(self, max_cells: usize) -> u64 {
        let raw = (max_cells as u64).saturating_mul(self.bytes_per_cell() as u64);
        match self {
            Self::Png => raw.saturating_add(raw / 64).saturating_add(1 << 24),
            Self::Exr => raw.saturating_mul(4).saturating_add(raw / 64).saturating_add(1 << 24),
            _ => raw,
        }
    }

    /// Reads a heightmap in this format from `reader`, stopping with
    /// [`IoError::InputTooLarge`] past the most bytes a file within
    /// [`ReadOptions::max_cells`] can take.
    ///
    /// # Errors
    /// As [`decode`](Self::decode), [`IoError::InputTooLarge`] and [`IoError::Io`].
    #[cfg(feature = "std")]
    pub fn read<R: std::io::Read>(self, reader: R, options: &ReadOptions) -> Result<Heightmap, IoError> {
        use std::io::Read as _;
        let limit = self.byte_limit(options.max_cells);
        let mut bytes = Vec::new();
        reader.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
        if bytes.len() as u64 > limit {
            return Err(IoError::InputTooLarge { limit });
        }
        self.decode(&bytes, options)
    }

    /// Writes `map` in this format to `writer`.
    ///
    /// # Errors
    /// As [`encode`](Self::encode), and [`IoError::Io`].
    #[cfg(feature = "std")]
    pub fn write<S: AsRef<[f32]>, W: std::io::Write>(
        self,
        mut writer: W,
        map: &Grid<S>,
        range: HeightRange,
    ) -> Result<(), IoError> {
        writer.write_all(&self.encode(map, range)?)?;
        Ok(writer.flush()?)
    }
}

/// How to read a heightmap file.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default, deny_unknown_fields))]
pub struct ReadOptions {
    /// `[width, height]` of a raw (r16, r32) file, which has no header. Default
    /// `None`: the file is taken as a square, its side from its length. PNG and
    /// EXR ignore it (their headers have the size).
    pub size: Option<[usize; 2]>,
    /// The heights of 16-bit samples (r16 and PNG); r32 and EXR (floats) ignore
    /// it. Default `[0, 1]`.
    pub range: HeightRange,
    /// The most cells a file may have, checked before anything is allocated.
    /// Default [`DEFAULT_MAX_CELLS`].
    pub max_cells: usize,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self { size: None, range: HeightRange::UNIT, max_cells: DEFAULT_MAX_CELLS }
    }
}

/// Reads the heightmap at `path`, its format from its extension (see
/// [`Format::from_extension`]).
///
/// ```no_run
/// use hydraulic_erosion::{ReadOptions, read_heightmap};
///
/// let map = read_heightmap("terrain.r16", &ReadOptions { size: Some([1025, 1025]), ..Default::default() })?;
/// # Ok::<(), hydraulic_erosion::IoError>(())
/// ```
///
/// # Errors
/// [`IoError::Unsupported`] for an unknown extension, otherwise as [`Format::read`].
#[cfg(feature = "std")]
pub fn read_heightmap(
    path: impl AsRef<std::path::Path>,
    options: &ReadOptions,
) -> Result<Heightmap, IoError> {
    let path = path.as_ref();
    let format = Format::from_path(path)
        .ok_or(IoError::Unsupported("unknown extension: use r16, raw, r32, f32, png or exr"))?;
    format.read(std::io::BufReader::new(std::fs::File::open(path)?), options)
}

/// Writes `map` to `path`, its format from its extension (see
/// [`Format::from_extension`]); `range` maps heights for r16 and PNG (EXR is
/// written as `f32`, without one).
///
/// # Errors
/// [`IoError::Unsupported`] for an unknown extension, otherwise as [`Format::write`].
#[cfg(feature = "std")]
pub fn write_heightmap<S: AsRef<[f32]>>(
    path: impl AsRef<std::path::Path>,
    map: &Grid<S>,
    range: HeightRange,
) -> Result<(), IoError> {
    let path = path.as_ref();
    let format = Format::from_path(path)
        .ok_or(IoError::Unsupported("unknown extension: use r16, raw, r32, f32, png or exr"))?;
    format.write(std::io::BufWriter::new(std::fs::File::create(path)?), map, range)
}

/// Checks a size read from a file or given for one, and returns its cell count.
pub(crate) fn checked_cells(width: usize, height: usize, max_cells: usize) -> Result<usize, IoError> {
    if width == 0 || height == 0 {
        return Err(GridError::Empty { width, height }.into());
    }
    let too_large = IoError::TooLarge { width, height, max_cells };
    if width > MAX_SIDE || height > MAX_SIDE {
        return Err(too_large);
    }
    width.checked_mul(height).filter(|&cells| cells <= max_cells).ok_or(too_large)
}
