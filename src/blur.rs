//! Seed 001's 3 x 3 Gaussian blur, as a mass-conserving post-process.

use alloc::vec::Vec;

use crate::carry;
use crate::controls::Gate;
use crate::error::{Error, GridError, ParamError, check, check_range};
use crate::grid::{Grid, try_filled};

/// Parameters of [`blur`].
///
/// ```
/// use hydraulic_erosion::BlurParams;
///
/// assert!(BlurParams { passes: 3, ..BlurParams::default() }.validate().is_ok());
/// assert_eq!(BlurParams { amount: 2.0, ..BlurParams::default() }.validate().unwrap_err().field(), "amount");
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default, deny_unknown_fields))]
pub struct BlurParams {
    /// Passes of the kernel, each reading the previous pass's result. Default 1
    /// (seed 001 blurs once); range `[0, 1000]`.
    pub passes: u32,
    /// Strength of a pass: 1 is the full Gaussian, 0 changes nothing, values
    /// between blend the two (the original program's `postBlur` amount).
    /// Default 1; range `[0, 1]`.
    pub amount: f32,
}

impl Default for BlurParams {
    fn default() -> Self {
        Self { passes: 1, amount: 1.0 }
    }
}

impl BlurParams {
    /// The largest allowed `passes`.
    pub const MAX_PASSES: u32 = 1000;

    /// Checks every field against its documented range.
    ///
    /// # Errors
    /// A [`ParamError`] naming the first field out of range and the range allowed.
    pub fn validate(&self) -> Result<(), ParamError> {
        check(self.passes <= Self::MAX_PASSES, "passes", "in [0, 1000]")?;
        check_range(self.amount, 0.0, 1.0, "amount", "finite and in [0, 1]")
    }
}

/// What a [`blur`] did. Masses are in height units (one unit is one cell raised
/// by 1), summed in `f64` from the height changes actually applied.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
// Fields added later read as their default from older files.
#[cfg_attr(feature = "serde", serde(default))]
#[non_exhaustive]
pub struct BlurReport {
    /// Passes done.
    pub passes: u32,
    /// Total mass taken from cells that went down, over all passes.
    pub lowered: f64,
    /// Total mass added to cells that went up, over all passes; equal to
    /// `lowered` up to the rounding of the sums: nothing leaves the map.
    pub raised: f64,
    /// The rounding remainder no cell could take, as
    /// [`ErosionReport::unplaced`](crate::ErosionReport::unplaced): below half
    /// a unit in the last place of the finest cell the blur may change.
    pub unplaced: f64,
}

/// Blurs `map` with seed 001's 3 x 3 Gaussian (`[1 2 1; 2 4 2; 1 2 1] / 16`),
/// written so that it conserves mass: the sum of the map does not change.
///
/// A pass is a flux between neighbours: each cell gains `amount / 8` of its
/// height difference to each of its 4 edge neighbours and `amount / 16` to each
/// of its 4 corner neighbours, so what one cell gains its neighbour loses. Inside
/// the map and with `amount` 1 this is exactly the Gaussian; on the border a cell
/// simply has fewer neighbours to exchange with (the original leaves the border
/// unblurred, which is not conservative). A pass reads only the heights before
/// it, so the result does not depend on the order of cells.
///
/// Each new height is computed in `f64`; what rounding to `f32` leaves over is
/// carried to the next cell, and the last remainder goes to the cell of smallest
/// magnitude, so `MassBalance::new(&before, &after, 0.0)` holds
/// ([`MassBalance::TOLERANCE`](crate::MassBalance::TOLERANCE)). The error left is
/// below half an ulp of that cell; only on maps of a few cells, none of them near
/// zero, can that exceed the tolerance (the sum of such a map cannot move in
/// finer steps). Usable after any simulator, on any map size (a 1 x 1 map is
/// unchanged). A constant map is unchanged bit for bit.
///
/// ```
/// use hydraulic_erosion::{BlurParams, Heightmap, MassBalance, blur};
///
/// let before = Heightmap::from_fn(16, 16, |x, y| ((x * 7 + y * 3) % 5) as f32).unwrap();
/// let mut after = before.clone();
/// blur(&mut after, &BlurParams::default())?;
/// assert!(MassBalance::new(&before, &after, 0.0).is_conserved());
/// # Ok::<(), hydraulic_erosion::Error>(())
/// ```
///
/// # Errors
/// [`Error::Param`] if `params` is out of range, [`Error::Grid`] if a cell is not
/// finite. The map is untouched on error.
pub fn blur<S: AsRef<[f32]> + AsMut<[f32]>>(
    map: &mut Grid<S>,
    params: &BlurParams,
) -> Result<BlurReport, Error> {
    params.validate()?;
    map.check_finite()?;
    let (width, height) = (map.width(), map.height());
    let mut scratch = blur_scratch(map.len())?;
    Ok(blur_cells(map.cells_mut(), width, height, params, 0.0, &mut scratch, &Gate::default()))
}

/// The buffer [`blur_cells`] copies each pass into, allocated fallibly before
/// anything changes: a map-sized copy may be more than the machine holds.
pub(crate) fn blur_scratch(cells: usize) -> Result<Vec<f32>, GridError> {
    try_filled(cells, 0.0)
}

/// [`blur`] on validated params and finite cells. `remainder` is a sub-ulp
/// leftover of the caller's books, carried along with the blur's own and placed
/// by its final flush, so a run and its blur leave a single rounding error.
///
/// A closed `gate` (a run's [`Controls`](crate::Controls)) weighs each
/// exchange between two cells by the smaller of their weights, a cell's weight
/// being `active * min(erodibility, 1)`: masked cells and bedrock keep their
/// bits, and what one cell gains its neighbour still loses. The remainder goes
/// to admitted cells only.
pub(crate) fn blur_cells(
    cells: &mut [f32],
    width: usize,
    height: usize,
    params: &BlurParams,
    remainder: f64,
    old: &mut Vec<f32>,
    gate: &Gate<'_>,
) -> BlurReport {
    let mut report = BlurReport { passes: params.passes, ..BlurReport::default() };
    let remainder = if params.passes == 0 || params.amount == 0.0 || cells.len() < 2 {
        remainder
    } else if gate.is_open() {
        passes(cells, width, height, params, remainder, old, &mut report, |_| 1.0)
    } else {
        passes(cells, width, height, params, remainder, old, &mut report, |i| gate.weight(i))
    };
    report.unplaced =
        gate.flush(cells, remainder, |before, after| book(&mut report, f64::from(after) - f64::from(before)));
    report
}

/// The blur's passes, each exchange weighed by the smaller `weight` of its two
/// cells (in `[0, 1]`; a cell of weight 0 is not written); returns the
/// remainder still to place.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn passes(
    cells: &mut [f32],
    width: usize,
    height: usize,
    params: &BlurParams,
    mut remainder: f64,
    old: &mut Vec<f32>,
    report: &mut BlurReport,
    weight: impl Fn(usize) -> f64,
) -> f64 {
    let amount = f64::from(params.amount);
    let (edge, corner) = (amount * 0.125, amount * 0.0625);
    // Rounding to f32 leaves a sub-ulp remainder, carried to the next cell (and
    // from the last cell of a pass to the first of the next).
    for _ in 0..params.passes {
        old.clear();
        old.extend_from_slice(cells);
        for y in 0..height {
            for x in 0..width {
                let i = y * width + x;
                let own = weight(i);
                if own == 0.0 {
                    continue;
                }
                let here = f64::from(old[i]);
                // Difference to the neighbour at (dx, dy), 0 beyond the map.
                let diff = |dx: isize, dy: isize| {
                    let (nx, ny) = (x.wrapping_add_signed(dx), y.wrapping_add_signed(dy));
                    if nx < width && ny < height {
                        let j = ny * width + nx;
                        (f64::from(old[j]) - here) * own.min(weight(j))
                    } else {
                        0.0
                    }
                };
                let edges = (diff(-1, 0) + diff(1, 0)) + (diff(0, -1) + diff(0, 1));
                let corners = (diff(-1, -1) + diff(1, -1)) + (diff(-1, 1) + diff(1, 1));
                let change = edge * edges + corner * corners + remainder;
                remainder = change;
                if let Some((before, after)) = carry::add(cells, i, change) {
                    let applied = f64::from(after) - f64::from(before);
                    remainder -= applied;
                    book(report, applied);
                }
            }
        }
    }
    remainder
}

/// Counts an applied change as lowered or raised mass.
fn book(report: &mut BlurReport, applied: f64) {
    if applied < 0.0 {
        report.lowered -= applied;
    } else {
        report.raised += applied;
    }
}
