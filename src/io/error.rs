//! What can go wrong reading or writing a heightmap file.

#[cfg(any(feature = "png", feature = "exr"))]
use alloc::string::String;

use crate::error::{GridError, ParamError};

/// A heightmap could not be read or written.
///
/// Every decoder returns one of these for bad input, never panics, and checks
/// sizes before it allocates, so a truncated, corrupt or hostile file costs at
/// most a buffer the size of the file itself (raw formats) or of the size its
/// header claims within the limit (PNG, EXR).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IoError {
    /// The data ends before the `expected` bytes that the format and size need.
    #[error("data is truncated: {actual} bytes, but the size needs {expected}")]
    Truncated {
        /// Bytes the size needs.
        expected: usize,
        /// Bytes present.
        actual: usize,
    },
    /// The data is longer than the size needs: wrong dimensions, or not this format.
    #[error("data has trailing bytes: {actual} bytes, but the size needs {expected}")]
    TrailingBytes {
        /// Bytes the size needs.
        expected: usize,
        /// Bytes present.
        actual: usize,
    },
    /// A raw file was given no size and its length is not a square of cells.
    #[error("a raw file of {bytes} bytes is not a square of {bytes_per_cell}-byte cells: give its size")]
    UnknownSize {
        /// The file's length.
        bytes: usize,
        /// Bytes per cell of the format.
        bytes_per_cell: usize,
    },
    /// A header that contradicts itself or the data around it.
    #[error("bad header: {0}")]
    BadHeader(&'static str),
    /// A well-formed file of a kind this crate does not read or write.
    #[error("unsupported: {0}")]
    Unsupported(&'static str),
    /// The size is over the caller's cell limit (see
    /// [`ReadOptions::max_cells`](crate::ReadOptions::max_cells)) or over
    /// [`MAX_SIDE`](crate::MAX_SIDE).
    #[error("{width}x{height} cells is over the limit of {max_cells} cells (or a side is over 2^24)")]
    TooLarge {
        /// Width in cells.
        width: usize,
        /// Height in cells.
        height: usize,
        /// The limit in force.
        max_cells: usize,
    },
    /// An input stream is longer than any file within the cell limit could be.
    #[error("input is over {limit} bytes, more than any file within the cell limit")]
    InputTooLarge {
        /// The byte limit in force.
        limit: u64,
    },
    /// The size or the cells are not a valid grid (an empty size, a NaN or
    /// infinite `f32` in an r32 or EXR file, a cell an EXR file leaves out, a
    /// map with non-finite cells to write, or layers of different sizes for a
    /// splat map).
    #[error(transparent)]
    Grid(#[from] GridError),
    /// The [`HeightRange`](crate::HeightRange) is invalid.
    #[error(transparent)]
    Param(#[from] ParamError),
    /// The `png` crate rejected the file (or could not encode), with its message.
    #[cfg(feature = "png")]
    #[error("png: {0}")]
    Png(String),
    /// The `exr` crate rejected the file (or could not encode), with its message.
    #[cfg(feature = "exr")]
    #[error("exr: {0}")]
    Exr(String),
    /// Reading or writing the file failed.
    #[cfg(feature = "std")]
    #[error(transparent)]
    Io(#[from] std::io::Error),
}
