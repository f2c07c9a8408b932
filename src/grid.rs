//! The grid every layer lives on: heights, and later stream, pool and vegetation
//! maps.

use alloc::vec::Vec;
use core::ops::{Index, IndexMut};

use glam::Vec2;

use crate::error::GridError;

/// The largest side a grid may have, in cells: 2^24.
///
/// Droplet positions are `f32`; beyond 2^24 cells a position can no longer tell
/// two neighbouring cells apart.
pub const MAX_SIDE: usize = 1 << 24;

/// A rectangular grid of finite `f32` cells, stored row by row.
///
/// Cell `(x, y)` (column `x`, row `y`) lives at index `y * width + x`. The storage
/// `S` is what holds the cells: an owned `Vec<f32>` ([`Heightmap`]), a borrowed
/// `&mut [f32]` ([`GridMut`], to erode a game engine's buffer in place) or a
/// borrowed `&[f32]` ([`GridRef`]). Every simulator accepts any of them.
///
/// Construction checks the size and that every cell is finite; simulators check
/// finiteness again before they run, since [`cells_mut`](Grid::cells_mut) lets a
/// caller write anything.
///
/// ```
/// use hydraulic_erosion::{Grid, Heightmap};
///
/// let map = Heightmap::from_fn(4, 3, |x, y| (x + y) as f32).unwrap();
/// assert_eq!(map[(3, 2)], 5.0);
///
/// // A caller's buffer, viewed in place:
/// let mut buffer = vec![0.0_f32; 12];
/// let mut view = Grid::from_cells(4, 3, &mut buffer[..]).unwrap();
/// view[(1, 1)] = 2.0;
/// assert_eq!(buffer[4 + 1], 2.0);
/// ```
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Grid<S = Vec<f32>> {
    width: usize,
    height: usize,
    cells: S,
}

/// An owned grid of heights (or of any other layer).
pub type Heightmap = Grid<Vec<f32>>;

/// A grid over a borrowed mutable buffer.
pub type GridMut<'a> = Grid<&'a mut [f32]>;

/// A grid over a borrowed buffer.
pub type GridRef<'a> = Grid<&'a [f32]>;

/// Checks a size and returns its cell count.
pub(crate) fn cell_count(width: usize, height: usize) -> Result<usize, GridError> {
    if width == 0 || height == 0 {
        return Err(GridError::Empty { width, height });
    }
    if width > MAX_SIDE || height > MAX_SIDE {
        return Err(GridError::TooLarge { width, height });
    }
    width.checked_mul(height).ok_or(GridError::TooLarge { width, height })
}

/// A vector of `len` copies of `value`, or [`GridError::OutOfMemory`] where the
/// allocator refuses (instead of aborting the process): every map-sized buffer
/// the crate allocates goes through here.
pub(crate) fn try_filled<T: Clone>(len: usize, value: T) -> Result<Vec<T>, GridError> {
    let mut cells = Vec::new();
    let bytes = len.saturating_mul(core::mem::size_of::<T>());
    cells.try_reserve_exact(len).map_err(|_| GridError::OutOfMemory { bytes })?;
    cells.resize(len, value);
    Ok(cells)
}

/// A copy of `cells`, or [`GridError::OutOfMemory`] (see [`try_filled`]).
pub(crate) fn try_copy<T: Clone>(cells: &[T]) -> Result<Vec<T>, GridError> {
    let mut copy = Vec::new();
    let bytes = core::mem::size_of_val(cells);
    copy.try_reserve_exact(cells.len()).map_err(|_| GridError::OutOfMemory { bytes })?;
    copy.extend_from_slice(cells);
    Ok(copy)
}

/// The cell of a `width` x `height` grid holding `position`, clamped to the grid.
#[inline]
pub(crate) fn clamped_cell(position: Vec2, width: usize, height: usize) -> (usize, usize) {
    // `as i32` saturates (NaN becomes 0) and is cheaper than `as usize`; sides
    // are at most `MAX_SIDE` < 2^31.
    let clamp = |p: f32, side: usize| (p as i32).clamp(0, side as i32 - 1) as usize;
    (clamp(position.x, width), clamp(position.y, height))
}

/// Index of the first non-finite value, as `(x, y)`.
fn first_non_finite(cells: &[f32], width: usize) -> Option<(usize, usize)> {
    cells.iter().position(|h| !h.is_finite()).map(|i| (i % width, i / width))
}

impl<S> Grid<S> {
    /// Builds a grid whose size and cells the caller has already checked.
    #[inline]
    pub(crate) fn new_unchecked(width: usize, height: usize, cells: S) -> Self {
        Self { width, height, cells }
    }

    /// Takes the grid apart into `(width, height, cells)`.
    #[inline]
    pub(crate) fn into_parts(self) -> (usize, usize, S) {
        (self.width, self.height, self.cells)
    }
}

impl<S: AsRef<[f32]>> Grid<S> {
    /// Wraps `cells` as a `width` x `height` grid.
    ///
    /// # Errors
    /// [`GridError::Empty`] if a side is zero, [`GridError::TooLarge`] if a side
    /// exceeds [`MAX_SIDE`] or the cell count overflows, [`GridError::LengthMismatch`]
    /// if `cells` does not hold exactly `width * height` values, and
    /// [`GridError::NonFinite`] for the first NaN or infinite cell.
    pub fn from_cells(width: usize, height: usize, cells: S) -> Result<Self, GridError> {
        let expected = cell_count(width, height)?;
        let actual = cells.as_ref().len();
        if actual != expected {
            return Err(GridError::LengthMismatch { expected, actual });
        }
        let grid = Self { width, height, cells };
        grid.check_finite()?;
        Ok(grid)
    }

    /// Width in cells (the number of columns, `x` range).
    #[inline]
    pub fn width(&self) -> usize {
        self.width
    }

    /// Height in cells (the number of rows, `y` range).
    #[inline]
    pub fn height(&self) -> usize {
        self.height
    }

    /// Number of cells, `width * height`; never zero.
    #[inline]
    pub fn len(&self) -> usize {
        self.width * self.height
    }

    /// Always `false`: a grid has at least one cell. Present for API symmetry with
    /// slices.
    #[inline]
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The cells, row by row.
    #[inline]
    pub fn cells(&self) -> &[f32] {
        self.cells.as_ref()
    }

    /// The cell at column `x`, row `y`, or `None` outside the grid.
    #[inline]
    pub fn get(&self, x: usize, y: usize) -> Option<f32> {
        (x < self.width && y < self.height).then(|| self.cells()[y * self.width + x])
    }

    /// A borrowed view of this grid.
    #[inline]
    pub fn view(&self) -> GridRef<'_> {
        Grid { width: self.width, height: self.height, cells: self.cells.as_ref() }
    }

    /// A copy of this grid that owns its cells.
    pub fn to_heightmap(&self) -> Heightmap {
        Grid { width: self.width, height: self.height, cells: self.cells().to_vec() }
    }

    /// Checks that every cell is finite.
    ///
    /// # Errors
    /// [`GridError::NonFinite`] naming the first offending cell.
    pub fn check_finite(&self) -> Result<(), GridError> {
        match first_non_finite(self.cells(), self.width) {
            Some((x, y)) => Err(GridError::NonFinite { x, y }),
            None => Ok(()),
        }
    }

    /// Checks that `other` is as wide and as high as this grid.
    ///
    /// # Errors
    /// [`GridError::SizeMismatch`] naming both sizes (this grid's is the one
    /// expected).
    pub fn check_same_size<T>(&self, other: &Grid<T>) -> Result<(), GridError> {
        if (other.width, other.height) == (self.width, self.height) {
            return Ok(());
        }
        Err(GridError::size_mismatch((self.width, self.height), (other.width, other.height)))
    }

    /// Sum of all cells, accumulated in `f64` in index order (deterministic).
    pub fn sum(&self) -> f64 {
        self.cells().iter().map(|&h| f64::from(h)).sum()
    }

    /// Sum of the absolute values of all cells, in `f64` in index order: the scale
    /// that [`MassBalance`](crate::MassBalance) measures errors against.
    pub fn sum_abs(&self) -> f64 {
        self.cells().iter().map(|&h| f64::from(h.abs())).sum()
    }

    /// Smallest and largest cell, `(min, max)`.
    pub fn min_max(&self) -> (f32, f32) {
        self.cells().iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &h| (lo.min(h), hi.max(h)))
    }

    /// Whether `position` (in cells) lies in `[0, width) x [0, height)`.
    #[inline]
    pub fn contains(&self, position: Vec2) -> bool {
        position.x >= 0.0
            && position.y >= 0.0
            && position.x < self.width as f32
            && position.y < self.height as f32
    }

    /// The cell holding `position`, clamped to the grid (NaN maps to column or row 0).
    #[inline]
    pub fn cell_at(&self, position: Vec2) -> (usize, usize) {
        clamped_cell(position, self.width, self.height)
    }
}

impl<S: AsRef<[f32]> + AsMut<[f32]>> Grid<S> {
    /// The cells, row by row, for writing. Simulators reject non-finite cells, so
    /// writing NaN or infinity here makes the next run fail with
    /// [`GridError::NonFinite`].
    #[inline]
    pub fn cells_mut(&mut self) -> &mut [f32] {
        self.cells.as_mut()
    }

    /// The cell at column `x`, row `y` for writing, or `None` outside the grid.
    #[inline]
    pub fn get_mut(&mut self, x: usize, y: usize) -> Option<&mut f32> {
        let width = self.width;
        (x < width && y < self.height).then(move || &mut self.cells.as_mut()[y * width + x])
    }

    /// A mutable borrowed view of this grid, which every simulator accepts.
    #[inline]
    pub fn view_mut(&mut self) -> GridMut<'_> {
        Grid { width: self.width, height: self.height, cells: self.cells.as_mut() }
    }

    /// Copies the cells of `other`, which must have the same size.
    ///
    /// # Errors
    /// [`GridError::SizeMismatch`] if the sizes differ.
    pub fn copy_from<T: AsRef<[f32]>>(&mut self, other: &Grid<T>) -> Result<(), GridError> {
        self.check_same_size(other)?;
        self.cells_mut().copy_from_slice(other.cells());
        Ok(())
    }
}

impl Heightmap {
    /// A `width` x `height` grid of zeros.
    ///
    /// # Errors
    /// [`GridError::Empty`] or [`GridError::TooLarge`] for a bad size,
    /// [`GridError::OutOfMemory`] if the allocator refuses the cells (a valid but
    /// huge size, such as [`MAX_SIDE`] x [`MAX_SIDE`]: a typed error, never an
    /// abort).
    pub fn new(width: usize, height: usize) -> Result<Self, GridError> {
        Self::filled(width, height, 0.0)
    }

    /// A `width` x `height` grid with every cell set to `value`.
    ///
    /// # Errors
    /// As [`Heightmap::new`], and [`GridError::NonFinite`] if `value` is not finite.
    pub fn filled(width: usize, height: usize, value: f32) -> Result<Self, GridError> {
        let len = cell_count(width, height)?;
        if !value.is_finite() {
            return Err(GridError::NonFinite { x: 0, y: 0 });
        }
        Ok(Grid { width, height, cells: try_filled(len, value)? })
    }

    /// A grid whose cell `(x, y)` is `f(x, y)`.
    ///
    /// # Errors
    /// As [`Heightmap::new`], and [`GridError::NonFinite`] if `f` returns a
    /// non-finite value.
    pub fn from_fn(
        width: usize,
        height: usize,
        mut f: impl FnMut(usize, usize) -> f32,
    ) -> Result<Self, GridError> {
        let len = cell_count(width, height)?;
        let mut cells = Vec::new();
        cells.try_reserve_exact(len).map_err(|_| GridError::OutOfMemory { bytes: len.saturating_mul(4) })?;
        for y in 0..height {
            for x in 0..width {
                cells.push(f(x, y));
            }
        }
        Self::from_cells(width, height, cells)
    }

    /// Gives back the cells, row by row.
    pub fn into_cells(self) -> Vec<f32> {
        self.cells
    }
}

impl<S: AsRef<[f32]>> Index<(usize, usize)> for Grid<S> {
    type Output = f32;

    /// The cell at `(x, y)`.
    ///
    /// # Panics
    /// If `x >= width` or `y >= height`, like slice indexing; use
    /// [`get`](Grid::get) for a checked read.
    #[inline]
    fn index(&self, (x, y): (usize, usize)) -> &f32 {
        assert!(x < self.width && y < self.height, "cell ({x}, {y}) is outside the grid");
        &self.cells.as_ref()[y * self.width + x]
    }
}

impl<S: AsRef<[f32]> + AsMut<[f32]>> IndexMut<(usize, usize)> for Grid<S> {
    #[inline]
    fn index_mut(&mut self, (x, y): (usize, usize)) -> &mut f32 {
        assert!(x < self.width && y < self.height, "cell ({x}, {y}) is outside the grid");
        let width = self.width;
        &mut self.cells.as_mut()[y * width + x]
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for Heightmap {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Unknown fields refused, as the params' are: a misspelt one is an
        // error, not a field silently dropped.
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Raw {
            width: usize,
            height: usize,
            cells: Vec<f32>,
        }
        let raw = Raw::deserialize(deserializer)?;
        Heightmap::from_cells(raw.width, raw.height, raw.cells).map_err(serde::de::Error::custom)
    }
}
