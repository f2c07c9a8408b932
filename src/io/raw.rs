//! Raw heightmaps without a header: r16 (Unity's and Unreal's 16-bit raw import)
//! and r32 (`f32`), both little-endian, row by row.

use alloc::vec::Vec;

use super::{HeightRange, IoError, checked_cells};
use crate::grid::{Grid, Heightmap};

/// Bytes per cell of r16.
const R16_BYTES: usize = 2;
/// Bytes per cell of r32.
const R32_BYTES: usize = 4;

/// Reads an r16 heightmap: `width * height` little-endian `u16` samples, row by
/// row (cell `(x, y)` at byte `2 * (y * width + x)`), mapped to heights through
/// `range` (sample 0 is `range.min`, 65535 is `range.max`; see [`HeightRange`]).
///
/// This is the `.raw`/`.r16` format Unity and Unreal import and export (16-bit,
/// byte order "Windows", little-endian). Row 0 is the file's first row; engines
/// differ in which edge of the terrain that is (Unity offers a flip on import).
///
/// # Errors
/// [`IoError::Param`] for an invalid `range`; [`IoError::Grid`] for an empty
/// size; [`IoError::TooLarge`] if a side is over [`MAX_SIDE`](crate::MAX_SIDE);
/// [`IoError::Truncated`] or [`IoError::TrailingBytes`] if `bytes` is not exactly
/// `2 * width * height` long. Nothing is allocated before these checks.
pub fn decode_r16(
    bytes: &[u8],
    width: usize,
    height: usize,
    range: HeightRange,
) -> Result<Heightmap, IoError> {
    range.validate()?;
    check_len(bytes, width, height, R16_BYTES)?;
    let cells =
        bytes.chunks_exact(R16_BYTES).map(|b| range.height_of(u16::from_le_bytes([b[0], b[1]]))).collect();
    Ok(Heightmap::from_cells(width, height, cells)?)
}

/// Writes `map` as r16 (see [`decode_r16`]): each height clamped into `range` and
/// rounded to the nearest of 65536 levels.
///
/// # Errors
/// [`IoError::Param`] for an invalid `range`, [`IoError::Grid`] if a cell is not
/// finite.
pub fn encode_r16<S: AsRef<[f32]>>(map: &Grid<S>, range: HeightRange) -> Result<Vec<u8>, IoError> {
    range.validate()?;
    map.check_finite()?;
    Ok(map.cells().iter().flat_map(|&h| range.sample_of(h).to_le_bytes()).collect())
}

/// Reads an r32 heightmap: `width * height` little-endian IEEE 754 `f32`, row by
/// row (cell `(x, y)` at byte `4 * (y * width + x)`), heights as they are (no
/// range mapping). The format of `../shared/refbench`'s `--write-map` and of
/// [`encode_r32`]; lossless.
///
/// # Errors
/// As [`decode_r16`] (with 4 bytes a cell), and [`IoError::Grid`] naming the first
/// NaN or infinite value.
pub fn decode_r32(bytes: &[u8], width: usize, height: usize) -> Result<Heightmap, IoError> {
    check_len(bytes, width, height, R32_BYTES)?;
    let cells = bytes.chunks_exact(R32_BYTES).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
    Ok(Heightmap::from_cells(width, height, cells)?)
}

/// Writes `map` as r32 (see [`decode_r32`]): the exact bits of every height.
///
/// # Errors
/// [`IoError::Grid`] if a cell is not finite.
pub fn encode_r32<S: AsRef<[f32]>>(map: &Grid<S>) -> Result<Vec<u8>, IoError> {
    map.check_finite()?;
    Ok(map.cells().iter().flat_map(|h| h.to_le_bytes()).collect())
}

/// The side of a square raw file of `len` bytes, `bytes_per_cell` a cell.
pub(super) fn square_side(len: usize, bytes_per_cell: usize) -> Result<usize, IoError> {
    let unknown = IoError::UnknownSize { bytes: len, bytes_per_cell };
    if len == 0 || len % bytes_per_cell != 0 {
        return Err(unknown);
    }
    let cells = len / bytes_per_cell;
    let side = cells.isqrt();
    if side * side == cells { Ok(side) } else { Err(unknown) }
}

/// Checks that `bytes` holds exactly `width * height` cells of `bytes_per_cell`.
fn check_len(bytes: &[u8], width: usize, height: usize, bytes_per_cell: usize) -> Result<(), IoError> {
    let cells = checked_cells(width, height, usize::MAX)?;
    let too_large = IoError::TooLarge { width, height, max_cells: usize::MAX };
    let expected = cells.checked_mul(bytes_per_cell).ok_or(too_large)?;
    let actual = bytes.len();
    if actual < expected {
        Err(IoError::Truncated { expected, actual })
    } else if actual > expected {
        Err(IoError::TrailingBytes { expected, actual })
    } else {
        Ok(())
    }
}
