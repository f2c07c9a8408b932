//! D8 flow: receivers, drainage area, longest flow path and slope along the flow.

use alloc::collections::VecDeque;
use alloc::vec::Vec;

use super::{for_each_neighbour, on_border};
use crate::error::{Error, GridError, ParamError, check_above};
use crate::grid::{Grid, Heightmap, try_filled};

/// The receiver of a cell that passes its water to no other: a border cell (it
/// drains off the map), an outlet cell of [`FlowField::d8_to`] (the sea, say)
/// or a cell with no lower neighbour.
pub const NO_RECEIVER: u32 = u32::MAX;

/// D8 flow over a surface: each cell passes its water to its steepest-descent
/// neighbour (drop over distance, diagonals `sqrt(2)` cells away; ties go to
/// the first in the order `+x, -x, +y, -y, (+x, +y), (-x, -y), (+x, -y),
/// (-x, +y)`, `y` growing down the rows), border cells (and the outlets of
/// [`d8_to`](Self::d8_to)) pass it off the map. Built on a
/// surface with a descending path from every cell to the border (a
/// [`Fill::Epsilon`](super::Fill::Epsilon) fill), every drop of rain reaches
/// the border.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowField {
    width: usize,
    height: usize,
    receivers: Vec<u32>,
    /// Distance to the receiver in cells (0 without one).
    steps: Vec<f32>,
    /// A topological order: every cell before its receiver.
    order: Vec<u32>,
}

impl FlowField {
    /// The D8 flow over `surface`, the border being the outlet.
    ///
    /// The same as [`d8_to`](Self::d8_to) with no outlet but the border.
    ///
    /// # Errors
    /// [`GridError::NonFinite`] for the first NaN or infinite cell,
    /// [`GridError::OutOfMemory`] if the buffers cannot be allocated,
    /// [`GridError::TooLarge`] if the map has more than `u32::MAX` cells.
    pub fn d8<S: AsRef<[f32]>>(surface: &Grid<S>) -> Result<Self, GridError> {
        Self::d8_to(surface, |_| false)
    }

    /// The D8 flow over `surface` with outlets besides the border: every cell
    /// `i` (index `y * width + x`) for which `outlet(i)` is true passes its
    /// water to none ([`NO_RECEIVER`]), as a border cell does: the sea, say.
    ///
    /// Other cells keep their steepest-descent receiver, an outlet cell
    /// included: a cell on the shore drains into the sea cell below it, so its
    /// slope and flow length reach the shore. The water stops there: an outlet
    /// cell's drainage area is itself plus what flows straight into it, and no
    /// other cell's area counts an outlet cell. Built on a
    /// [`fill_depressions_to`](super::fill_depressions_to) epsilon fill with the
    /// same outlets, every drop reaches the border or an outlet. With `outlet`
    /// false everywhere this is [`d8`](Self::d8), bit for bit; `outlet` is
    /// called at most once per cell.
    ///
    /// # Errors
    /// [`GridError::NonFinite`] for the first NaN or infinite cell (a NaN
    /// compares as neither higher nor lower, so it would hold its water and
    /// stop its neighbours' silently), [`GridError::OutOfMemory`] if the
    /// buffers cannot be allocated, [`GridError::TooLarge`] if the map has
    /// more than `u32::MAX` cells.
    pub fn d8_to<S: AsRef<[f32]>>(
        surface: &Grid<S>,
        outlet: impl Fn(usize) -> bool,
    ) -> Result<Self, GridError> {
        let (w, h) = (surface.width(), surface.height());
        let n = surface.len();
        super::indexable(w, h)?;
        surface.check_finite()?;
        let z = surface.cells();
        let mut receivers = try_filled(n, NO_RECEIVER)?;
        let mut steps = try_filled(n, 0.0f32)?;
        for i in (0..n).filter(|&i| !on_border(i, w, h) && !outlet(i)) {
            let mut best = (0.0f64, NO_RECEIVER, 0.0f64);
            for_each_neighbour(i, w, h, |j, d| {
                let descent = (f64::from(z[i]) - f64::from(z[j])) / d;
                if descent > best.0 {
                    best = (descent, j as u32, d);
                }
            });
            receivers[i] = best.1;
            steps[i] = best.2 as f32;
        }
        // Kahn's order: donors before receivers, linear in the cells.
        let mut donors = try_filled(n, 0u32)?;
        for &r in receivers.iter().filter(|&&r| r != NO_RECEIVER) {
            donors[r as usize] += 1;
        }
        let mut order = Vec::new();
        order.try_reserve_exact(n).map_err(|_| GridError::OutOfMemory { bytes: n * 4 })?;
        let mut ready: VecDeque<u32> = (0..n as u32).filter(|&i| donors[i as usize] == 0).collect();
        while let Some(i) = ready.pop_front() {
            order.push(i);
            let r = receivers[i as usize];
            if r != NO_RECEIVER {
                donors[r as usize] -= 1;
                if donors[r as usize] == 0 {
                    ready.push_back(r);
                }
            }
        }
        Ok(Self { width: w, height: h, receivers, steps, order })
    }

    /// Width of the surface, in cells.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Height of the surface, in cells.
    pub fn height(&self) -> usize {
        self.height
    }

    /// Each cell's receiver (index `y * width + x`), or [`NO_RECEIVER`].
    pub fn receivers(&self) -> &[u32] {
        &self.receivers
    }

    /// Drainage area: for each cell, the cells whose water passes through it,
    /// itself included (in cells; multiply by the cell's area for map units).
    ///
    /// # Errors
    /// [`GridError::OutOfMemory`] if the result cannot be allocated.
    pub fn drainage_area(&self) -> Result<Heightmap, GridError> {
        self.accumulate(|_| 1.0)
    }

    /// Drainage area weighted by `rain`: for each cell, the rain that falls on
    /// the cells draining through it, itself included. Rain that falls at the
    /// border leaves at once, so the outlets' totals sum to the rain's. A
    /// total beyond `f32`'s range saturates at `±f32::MAX`.
    ///
    /// # Errors
    /// [`GridError::SizeMismatch`] if `rain` is not the surface's size,
    /// [`GridError::NonFinite`] for the first NaN or infinite cell of `rain`,
    /// [`GridError::OutOfMemory`] if the result cannot be allocated.
    pub fn weighted_area<S: AsRef<[f32]>>(&self, rain: &Grid<S>) -> Result<Heightmap, GridError> {
        self.check_size(rain)?;
        rain.check_finite()?;
        self.accumulate(|i| f64::from(rain.cells()[i]))
    }

    /// The longest flow path upstream of each cell, ending there (Hack's
    /// length), in cells times `cell_size` (0 for a cell nothing drains into).
    ///
    /// # Errors
    /// [`Error::Param`] naming `cell_size` unless it is finite and in
    /// `(0, 1e15]`; [`GridError::OutOfMemory`] if the result cannot be
    /// allocated (as [`Error::Grid`]).
    pub fn flow_length(&self, cell_size: f32) -> Result<Heightmap, Error> {
        check_cell_size(cell_size)?;
        let mut length = try_filled(self.receivers.len(), 0.0f64)?;
        for &i in &self.order {
            let r = self.receivers[i as usize];
            if r != NO_RECEIVER {
                let reach = length[i as usize] + f64::from(self.steps[i as usize]);
                length[r as usize] = length[r as usize].max(reach);
            }
        }
        let cells = length.iter().map(|&l| (l * f64::from(cell_size)) as f32).collect();
        Ok(Heightmap::from_cells(self.width, self.height, cells)?)
    }

    /// The slope from each cell to its receiver on `heights` (drop over the
    /// distance, `cell_size` per cell): 0 without a receiver. Pass the flat-filled
    /// surface to read lakes as flat (the "channel flats"), the map itself for
    /// the raw slope along the flow (negative where the flow climbs out of a pit).
    ///
    /// # Errors
    /// [`Error::Param`] naming `cell_size` unless it is finite and in
    /// `(0, 1e15]`; as [`Error::Grid`]: [`GridError::SizeMismatch`] if
    /// `heights` is not the surface's size, [`GridError::NonFinite`] for the
    /// first NaN or infinite cell of `heights`, [`GridError::OutOfMemory`] if
    /// the result cannot be allocated. A drop over the distance beyond
    /// `f32`'s range is `±f32::MAX` (a finite map has a finite slope map).
    pub fn slope<S: AsRef<[f32]>>(&self, heights: &Grid<S>, cell_size: f32) -> Result<Heightmap, Error> {
        check_cell_size(cell_size)?;
        self.check_size(heights)?;
        heights.check_finite()?;
        let z = heights.cells();
        let mut slope = try_filled(z.len(), 0.0f32)?;
        for (i, s) in slope.iter_mut().enumerate() {
            let r = self.receivers[i];
            if r != NO_RECEIVER {
                let run = f64::from(self.steps[i]) * f64::from(cell_size);
                // Saturated: a drop of 1e30 over 1e-9 is no error in the map.
                let steep = (f64::from(z[i]) - f64::from(z[r as usize])) / run;
                *s = steep.clamp(-f64::from(f32::MAX), f64::from(f32::MAX)) as f32;
            }
        }
        Ok(Heightmap::from_cells(self.width, self.height, slope)?)
    }

    /// [`GridError::SizeMismatch`] unless `grid` is the surface's size.
    fn check_size<S: AsRef<[f32]>>(&self, grid: &Grid<S>) -> Result<(), GridError> {
        let actual = (grid.width(), grid.height());
        if actual == (self.width, self.height) {
            Ok(())
        } else {
            Err(GridError::size_mismatch((self.width, self.height), actual))
        }
    }

    /// Sums `weight` down the flow, in topological order.
    fn accumulate(&self, weight: impl Fn(usize) -> f64) -> Result<Heightmap, GridError> {
        let n = self.receivers.len();
        let mut area = try_filled(n, 0.0f64)?;
        for (i, a) in area.iter_mut().enumerate() {
            *a = weight(i);
        }
        for &i in &self.order {
            let r = self.receivers[i as usize];
            if r != NO_RECEIVER {
                area[r as usize] += area[i as usize];
            }
        }
        // Sums past f32's range saturate (as `slope` does): finite rain gives a
        // finite map.
        let max = f64::from(f32::MAX);
        Heightmap::from_cells(
            self.width,
            self.height,
            area.iter().map(|&a| a.clamp(-max, max) as f32).collect(),
        )
    }
}

/// A distance between cell centres the flow's lengths and slopes can use
/// (here and as [`AnalysisOptions::cell_size`](super::AnalysisOptions::cell_size)):
/// finite and in `(0, 1e15]`, else the error names `field`.
pub(super) fn check_cell_size_of(cell_size: f32, field: &'static str) -> Result<(), ParamError> {
    check_above(cell_size, 0.0, 1e15, field, "in (0, 1e15]")
}

/// [`check_cell_size_of`] for the argument `cell_size`.
fn check_cell_size(cell_size: f32) -> Result<(), ParamError> {
    check_cell_size_of(cell_size, "cell_size")
}
