//! A window onto a larger buffer: a sub-rectangle with a row stride, so an
//! engine's world array can be eroded in place, part by part.

use rand_core::Rng;

use crate::error::{Error, GridError};
use crate::grid::{Grid, Heightmap, cell_count, try_filled};
use crate::simulator::{RunOptions, Simulator};

/// A `width` x `height` rectangle of a row-major buffer whose rows are
/// `stride` cells apart, starting at column `x`, row `y` of the buffer: a game
/// engine's world heightmap, say, eroded one region at a time.
///
/// Every [`Simulator`] runs on it ([`run_with`](GridWindow::run_with)), and
/// [`to_heightmap`](GridWindow::to_heightmap) gives the analysis functions
/// and previews their input. A run works on a contiguous copy of the window
/// (the simulators' cells are row-contiguous), allocated fallibly, and writes
/// it back only when the run succeeds: the window is untouched on error, the
/// rest of the buffer always is, and the bits are those of the same run on a
/// [`Heightmap`] of the window's cells.
///
/// ```
/// use hydraulic_erosion::{ErosionParams, GridWindow, Physical, RunOptions, Simulator};
/// use hydraulic_erosion::rand_core::SeedableRng;
///
/// // A 256 x 128 world; erode the 64 x 64 region at column 100, row 30.
/// let mut world: Vec<f32> = (0..256 * 128).map(|i| ((i % 256) as f32 * 0.01).sin()).collect();
/// let mut window = GridWindow::new(&mut world, 256, 100, 30, 64, 64)?;
/// let mut physical = Physical::new(ErosionParams { droplets: 2_000, ..ErosionParams::default() })?;
/// let mut rng = rand_xoshiro::Xoshiro256StarStar::seed_from_u64(1);
/// let report = window.run_with(&mut physical, &mut rng, RunOptions::default())?;
/// assert_eq!(report.droplets, 2_000);
/// # Ok::<(), hydraulic_erosion::Error>(())
/// ```
#[derive(Debug)]
pub struct GridWindow<'a> {
    buffer: &'a mut [f32],
    stride: usize,
    x: usize,
    y: usize,
    width: usize,
    height: usize,
}

impl<'a> GridWindow<'a> {
    /// The `width` x `height` window at column `x`, row `y` of `buffer`, whose
    /// rows are `stride` cells apart.
    ///
    /// # Errors
    /// [`GridError::Empty`] for a zero side; [`GridError::OutsideMap`] if the
    /// window does not fit in a row (`x + width > stride`) or in the buffer
    /// (its last cell is past the end); [`GridError::TooLarge`] if the sizes
    /// overflow.
    pub fn new(
        buffer: &'a mut [f32],
        stride: usize,
        x: usize,
        y: usize,
        width: usize,
        height: usize,
    ) -> Result<Self, GridError> {
        if width == 0 || height == 0 {
            return Err(GridError::Empty { width, height });
        }
        let too_large = GridError::TooLarge { width, height };
        let right = x.checked_add(width).ok_or(too_large)?;
        let last_row = y.checked_add(height - 1).ok_or(too_large)?;
        let end = last_row.checked_mul(stride).and_then(|r| r.checked_add(right)).ok_or(too_large)?;
        if right > stride || end > buffer.len() {
            return Err(GridError::OutsideMap);
        }
        cell_count(width, height)?;
        Ok(Self { buffer, stride, x, y, width, height })
    }

    /// Width in cells.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Height in cells.
    pub fn height(&self) -> usize {
        self.height
    }

    /// The buffer index of window cell `(0, 0)`.
    fn origin(&self) -> usize {
        self.y * self.stride + self.x
    }

    /// The window's rows, top to bottom.
    fn rows(&self) -> impl Iterator<Item = &[f32]> {
        let (origin, width) = (self.origin(), self.width);
        (0..self.height).map(move |r| &self.buffer[origin + r * self.stride..][..width])
    }

    /// The window's cells as a [`Heightmap`] of its own (for the analysis
    /// functions, previews and files).
    ///
    /// # Errors
    /// [`GridError::OutOfMemory`] if the copy cannot be allocated,
    /// [`GridError::NonFinite`] for a NaN or infinite cell.
    pub fn to_heightmap(&self) -> Result<Heightmap, GridError> {
        let mut cells = try_filled(self.width * self.height, 0.0)?;
        for (line, row) in cells.chunks_exact_mut(self.width).zip(self.rows()) {
            line.copy_from_slice(row);
        }
        Heightmap::from_cells(self.width, self.height, cells)
    }

    /// Writes `grid`'s cells into the window.
    ///
    /// # Errors
    /// [`GridError::SizeMismatch`] unless `grid` is the window's size.
    pub fn copy_from<S: AsRef<[f32]>>(&mut self, grid: &Grid<S>) -> Result<(), GridError> {
        if (grid.width(), grid.height()) != (self.width, self.height) {
            return Err(GridError::size_mismatch((self.width, self.height), (grid.width(), grid.height())));
        }
        let origin = self.origin();
        for (r, line) in grid.cells().chunks_exact(self.width).enumerate() {
            self.buffer[origin + r * self.stride..][..self.width].copy_from_slice(line);
        }
        Ok(())
    }

    /// Runs `model` on the window, as [`Simulator::run_with`] on a map of the
    /// window's cells.
    ///
    /// # Errors
    /// As [`Simulator::run_with`], and [`GridError::OutOfMemory`] if the
    /// window's copy cannot be allocated; the window is untouched on error.
    pub fn run_with<M: Simulator + ?Sized>(
        &mut self,
        model: &mut M,
        rng: &mut dyn Rng,
        options: RunOptions<'_>,
    ) -> Result<M::Report, Error> {
        let mut copy = self.to_heightmap()?;
        let report = model.run_with(copy.view_mut(), rng, options)?;
        self.copy_from(&copy)?;
        Ok(report)
    }
}
