//! Typed errors: what was wrong, which field, and what is allowed.

/// A grid could not be built or used: its size, its buffer or one of its cells is
/// invalid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GridError {
    /// A side is zero.
    #[error("grid size {width}x{height} is empty: both sides must be at least 1")]
    Empty {
        /// Requested width in cells.
        width: usize,
        /// Requested height in cells.
        height: usize,
    },
    /// A side exceeds [`MAX_SIDE`](crate::MAX_SIDE), or `width * height` overflows
    /// `usize`; for the [terrain analysis](crate::analysis), the map has more
    /// than `u32::MAX` cells (it numbers cells in 32 bits).
    #[error(
        "grid size {width}x{height} is too large: each side must be at most 16777216 (2^24), the cell count must fit in usize, and the terrain analysis takes at most 4294967295 cells"
    )]
    TooLarge {
        /// Requested width in cells.
        width: usize,
        /// Requested height in cells.
        height: usize,
    },
    /// The buffer does not hold exactly `width * height` cells.
    #[error("buffer holds {actual} cells, but the grid needs width * height = {expected}")]
    LengthMismatch {
        /// `width * height`.
        expected: usize,
        /// The buffer's length.
        actual: usize,
    },
    /// A cell holds NaN or an infinity.
    #[error("cell ({x}, {y}) is not finite: heights must be finite f32 values")]
    NonFinite {
        /// Column of the first offending cell.
        x: usize,
        /// Row of the first offending cell.
        y: usize,
    },
    /// Two grids that must have the same size do not (for example a map and the
    /// layers of the [`Hydrology`](crate::Hydrology) it is run with).
    #[error("grid is {actual_width}x{actual_height}, but {expected_width}x{expected_height} is needed")]
    SizeMismatch {
        /// The width needed, in cells.
        expected_width: usize,
        /// The height needed, in cells.
        expected_height: usize,
        /// The width given, in cells.
        actual_width: usize,
        /// The height given, in cells.
        actual_height: usize,
    },
    /// A buffer of `bytes` bytes could not be allocated: the grid (or a layer or
    /// working buffer a run needs beside it) is too large for this machine. Nothing
    /// was changed.
    #[error("could not allocate {bytes} bytes for a grid or a run's working buffers")]
    OutOfMemory {
        /// The size of the allocation that failed, in bytes.
        bytes: usize,
    },
    /// A position handed to the simulator lies outside the map or is not finite.
    #[error("position is outside the map: it must be finite and within [0, width) x [0, height)")]
    OutsideMap,
}

impl GridError {
    /// [`GridError::SizeMismatch`]: `actual` (width, height) where `expected` is needed.
    pub(crate) fn size_mismatch(expected: (usize, usize), actual: (usize, usize)) -> Self {
        Self::SizeMismatch {
            expected_width: expected.0,
            expected_height: expected.1,
            actual_width: actual.0,
            actual_height: actual.1,
        }
    }
}

/// A parameter is outside its allowed range.
///
/// The message names the field and the range, for example
/// ``invalid parameter `dt`: must be finite and in (0, 10]``.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid parameter `{field}`: must be {allowed}")]
pub struct ParamError {
    field: &'static str,
    allowed: &'static str,
}

impl ParamError {
    /// The error for `field` (as spelled in its params struct) and the range
    /// it allows, in words (`"finite and in (0, 10]"`): for a
    /// [`Simulator`](crate::Simulator) or [`NormalSampler`](crate::NormalSampler)
    /// of your own to report its params as the crate's do.
    pub const fn new(field: &'static str, allowed: &'static str) -> Self {
        Self { field, allowed }
    }

    /// The name of the offending field, as spelled in the params struct.
    pub const fn field(&self) -> &'static str {
        self.field
    }

    /// The allowed range, in words.
    pub const fn allowed(&self) -> &'static str {
        self.allowed
    }
}

/// Any error the crate's entry points return: every constructor's error
/// ([`ParamError`], [`GridError`]) converts into it with `?`, and every run
/// returns it, so a tool's functions can return `Result<_, Error>` throughout.
/// File reading and writing keep their own [`IoError`](crate::IoError), which
/// carries the `std::io::Error` of a failed read; wrap both in your own error
/// type, or a `Box<dyn Error>`, where a tool does both. Neither `Copy` nor
/// `Eq`, so that a later variant may carry a source.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The map was rejected.
    #[error(transparent)]
    Grid(#[from] GridError),
    /// A parameter was rejected.
    #[error(transparent)]
    Param(#[from] ParamError),
}

/// Checks that `value` is finite and within `[min, max]`.
pub(crate) fn check_range(
    value: f32,
    min: f32,
    max: f32,
    field: &'static str,
    allowed: &'static str,
) -> Result<(), ParamError> {
    // `contains` is false for NaN, so NaN is rejected here too.
    check(value.is_finite() && (min..=max).contains(&value), field, allowed)
}

/// Checks that `value` is finite and within `(min, max]`.
pub(crate) fn check_above(
    value: f32,
    min: f32,
    max: f32,
    field: &'static str,
    allowed: &'static str,
) -> Result<(), ParamError> {
    check(value.is_finite() && value > min && value <= max, field, allowed)
}

/// `Ok` if `ok`, else the error for `field`.
pub(crate) fn check(ok: bool, field: &'static str, allowed: &'static str) -> Result<(), ParamError> {
    if ok { Ok(()) } else { Err(ParamError::new(field, allowed)) }
}
