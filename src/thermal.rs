//! Thermal erosion: material on slopes steeper than the angle of repose slides
//! to the neighbours below (a talus pass), mass-conserving and deterministic.

use alloc::vec::Vec;

use rand_core::Rng;

use crate::controls::Gate;
use crate::error::{Error, ParamError, check, check_above};
use crate::grid::{Grid, GridMut, try_filled};
use crate::layers;
use crate::neighbours::{NEIGHBOURS, for_each_neighbour};
use crate::progress::{Control, Progress, Silent};
use crate::report::ErosionReport;
use crate::simulator::{RunOptions, Simulator};

/// Parameters of [`thermal`].
///
/// ```
/// use hydraulic_erosion::ThermalParams;
///
/// assert!(ThermalParams { repose_angle: 30.0, ..ThermalParams::default() }.validate().is_ok());
/// assert_eq!(ThermalParams { repose_angle: 90.0, ..ThermalParams::default() }.validate().unwrap_err().field(), "repose_angle");
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default, deny_unknown_fields))]
pub struct ThermalParams {
    /// Angle of repose in degrees: material rests on slopes up to it and slides
    /// off steeper ones. Slopes are in world units: height over `cell_size`
    /// per cell. Default 35; range `(0, 89]`.
    pub repose_angle: f32,
    /// Horizontal size of a cell, in the heights' unit. Default 1; range
    /// `(0, 1e9]`.
    pub cell_size: f32,
    /// Share of a cell's excess (its height above the repose slope to its
    /// steepest neighbour) that moves per iteration, half of it at 1 (which
    /// levels that pair to the repose slope). Default 0.5; range `(0, 1]`.
    pub rate: f32,
    /// Iterations, each reading the previous one's result. Default 50; range
    /// `[0, 100 000]`.
    pub iterations: u32,
}

impl Default for ThermalParams {
    fn default() -> Self {
        Self { repose_angle: 35.0, cell_size: 1.0, rate: 0.5, iterations: 50 }
    }
}

impl ThermalParams {
    /// The largest allowed `iterations`.
    pub const MAX_ITERATIONS: u32 = 100_000;

    /// Checks every field against its documented range.
    ///
    /// # Errors
    /// A [`ParamError`] naming the first field out of range and the range allowed.
    pub fn validate(&self) -> Result<(), ParamError> {
        check_above(self.repose_angle, 0.0, 89.0, "repose_angle", "finite and in (0, 89] degrees")?;
        check_above(self.cell_size, 0.0, 1.0e9, "cell_size", "finite and in (0, 1e9]")?;
        check_above(self.rate, 0.0, 1.0, "rate", "finite and in (0, 1]")?;
        check(self.iterations <= Self::MAX_ITERATIONS, "iterations", "in [0, 100000]")
    }

    /// The height difference at the angle of repose between neighbours one cell
    /// apart: `tan(repose_angle) * cell_size`.
    pub fn talus(&self) -> f64 {
        tan_degrees(f64::from(self.repose_angle)) * f64::from(self.cell_size)
    }
}

/// What a [`thermal`] pass did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct ThermalReport {
    /// Iterations done.
    pub iterations: u32,
    /// Mass that slid, summed over the iterations (height units times cells).
    pub moved: f64,
    /// The steepest slope beyond the angle of repose left on the map, in
    /// height over horizontal distance (0 when every slope rests): how far the
    /// pass is from done.
    pub steepest_excess: f64,
    /// The mass books, as a hydraulic run's ([`MassBalance::of_run`](crate::MassBalance::of_run)
    /// reads them): `eroded` and `deposited` are both `moved`, the mass
    /// taken from the cells above and put on those below; nothing leaves the
    /// map (`outflow` 0) and no droplet runs (`droplets` 0). `cancelled` when
    /// a progress callback stopped the pass (then `iterations` counts those
    /// done).
    pub erosion: ErosionReport,
}

impl AsRef<ErosionReport> for ThermalReport {
    fn as_ref(&self) -> &ErosionReport {
        &self.erosion
    }
}

/// The thermal pass as a [`Simulator`], to run through the same options as
/// the hydraulic models or to alternate with one in a
/// [`Pipeline`](crate::Pipeline).
///
/// It draws nothing from the generator, and ignores `options.mode`. The
/// options' [`Controls`](crate::Controls) gate it: a cell sends material
/// down in proportion to `active * min(erodibility, 1)`, and receives
/// material only if its active value is above 0, so masked cells and
/// bedrock keep their bits (rain does not apply). `options.layers` records
/// its erosion and deposition (no water: the other layers stay as they are).
/// `options.progress` is told after each iteration (`done` and `total` in
/// iterations) and may stop the pass there.
///
/// ```
/// use hydraulic_erosion::{Heightmap, MassBalance, Simulator, Thermal, ThermalParams};
///
/// let before = Heightmap::from_fn(32, 32, |x, _| if x < 16 { 10.0 } else { 0.0 }).unwrap();
/// let mut map = before.clone();
/// let report = Thermal::new(ThermalParams::default())?.run_seeded(&mut map, 0)?;
/// assert!(MassBalance::of_run(&before, &map, &report.erosion).is_conserved());
/// assert!(report.erosion.eroded > 0.0);
/// # Ok::<(), hydraulic_erosion::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Thermal {
    params: ThermalParams,
}

impl Thermal {
    /// A thermal pass with `params`.
    ///
    /// # Errors
    /// A [`ParamError`] if `params` fails [`ThermalParams::validate`].
    pub fn new(params: ThermalParams) -> Result<Self, ParamError> {
        params.validate()?;
        Ok(Self { params })
    }

    /// The validated parameters.
    pub fn params(&self) -> &ThermalParams {
        &self.params
    }
}

impl Simulator for Thermal {
    type Report = ThermalReport;

    /// Runs the pass on `map` (see [`Thermal`] and [`thermal`]).
    ///
    /// # Errors
    /// As [`thermal`], and as [`Controls::validate`](crate::Controls::validate)
    /// for the controls; the map is untouched on error.
    fn run_with(
        &mut self,
        mut map: GridMut<'_>,
        _rng: &mut dyn Rng,
        options: RunOptions<'_>,
    ) -> Result<ThermalReport, Error> {
        let RunOptions { progress, layers, controls, .. } = options;
        controls.validate(map.width(), map.height())?;
        let mut silent = Silent;
        let progress = progress.unwrap_or(&mut silent);
        let gate = Gate::of(&controls);
        layers::record(layers, &mut map, |_| 0, |map, _| talus(map, &self.params, &gate, progress))
    }
}

/// Cells per chunk: each chunk carries its own rounding remainder, so the result
/// is the same whichever thread runs which chunk.
const CHUNK: usize = 1 << 14;

/// A thermal (talus) pass over `map`, the border included (cells beyond the
/// map are not there: nothing slides off it).
///
/// Each iteration reads the map as it was: every cell whose height exceeds a
/// neighbour's by more than the repose slope (`tan(repose_angle) * cell_size`
/// per cell of distance, `sqrt(2)` on diagonals) sends `rate * excess_max / 2`
/// down, shared among those neighbours in proportion to their excess. The new
/// heights are computed in `f64` and what `f32` cannot hold is carried to the
/// next cell, so the map's sum does not change (to
/// [`MassBalance`](crate::MassBalance)); a pass is deterministic, and with the
/// `parallel` feature its chunks run on the current rayon pool with the same
/// bits for any thread count.
///
/// Slopes converge to the repose angle, at a pace that grows with the slope's
/// length (the pass spreads excess one cell an iteration): on a 45-degree cone
/// 24 cells high with a repose of 30 degrees, the steepest excess falls from
/// 0.42 to 0.27, 0.13, 0.043 and 0.0069 after 100, 200, 400 and 800 iterations
/// at rate 0.5, and to 0.0002 after 800 at rate 1 (`tests/thermal.rs` holds it
/// under 1 % of the start).
///
/// ```
/// use hydraulic_erosion::{Heightmap, MassBalance, ThermalParams, thermal};
///
/// let before = Heightmap::from_fn(32, 32, |x, _| if x < 16 { 10.0 } else { 0.0 }).unwrap();
/// let mut map = before.clone();
/// let report = thermal(&mut map, &ThermalParams { iterations: 300, ..Default::default() })?;
/// assert!(MassBalance::new(&before, &map, 0.0).is_conserved());
/// assert!(report.steepest_excess < 0.05);
/// # Ok::<(), hydraulic_erosion::Error>(())
/// ```
///
/// # Errors
/// [`Error::Param`] if `params` is out of range, [`Error::Grid`] if a cell is not
/// finite or the working buffers cannot be allocated; the map is untouched on
/// error.
pub fn thermal<S: AsRef<[f32]> + AsMut<[f32]>>(
    map: &mut Grid<S>,
    params: &ThermalParams,
) -> Result<ThermalReport, Error> {
    params.validate()?;
    talus(&mut map.view_mut(), params, &Gate::default(), &mut Silent)
}

/// [`thermal`] on validated params, behind `gate` (see [`Thermal`]), telling
/// `progress` after each iteration.
fn talus<P: Progress + ?Sized>(
    map: &mut GridMut<'_>,
    params: &ThermalParams,
    gate: &Gate<'_>,
    progress: &mut P,
) -> Result<ThermalReport, Error> {
    map.check_finite()?;
    let (width, height) = (map.width(), map.height());
    let talus = params.talus();
    let mut old = try_filled(map.len(), 0.0f32)?;
    // What each cell sends to each of its 8 neighbours this iteration.
    let mut flux = try_filled(map.len().saturating_mul(8), 0.0f32)?;
    let cells = map.cells_mut();
    let mut report = ThermalReport::default();
    let mut remainder = 0.0;
    let total = u64::from(params.iterations);
    for done in 1..=params.iterations {
        old.copy_from_slice(cells);
        let mut moved = fluxes(&old, width, height, talus, f64::from(params.rate), &mut flux);
        if !gate.is_open() {
            moved = gate_fluxes(&mut flux, width, height, gate);
        }
        report.moved += moved;
        remainder += match gate.is_open() {
            true => apply::<false>(cells, &old, &flux, width, height, gate),
            false => apply::<true>(cells, &old, &flux, width, height, gate),
        };
        report.iterations = done;
        if progress.update(u64::from(done), total) == Control::Stop && done < params.iterations {
            report.erosion.cancelled = true;
            break;
        }
    }
    // The sub-ulp remainders go to the (admitted) cell that resolves them best.
    let _ = gate.flush(cells, remainder);
    (report.erosion.eroded, report.erosion.deposited) = (report.moved, report.moved);
    report.steepest_excess = steepest_excess(cells, width, height, talus) / f64::from(params.cell_size);
    Ok(report)
}

/// Excess of cell `i` over neighbour `j`, `dist` cells away: its height above
/// the repose slope, or 0.
#[inline(always)]
fn excess(old: &[f32], i: usize, j: usize, dist: f64, talus: f64) -> f64 {
    (f64::from(old[i]) - f64::from(old[j]) - talus * dist).max(0.0)
}

/// Runs `f` on chunks of `CHUNK` cells of `out` (`stride` values a cell), on
/// the current rayon pool with the `parallel` feature, and returns the results
/// in chunk order.
fn chunked<T: Send, R: Send>(
    out: &mut [T],
    stride: usize,
    f: impl Fn(usize, &mut [T]) -> R + Sync,
) -> Vec<R> {
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        out.par_chunks_mut(CHUNK * stride).enumerate().map(|(c, part)| f(c * CHUNK, part)).collect()
    }
    #[cfg(not(feature = "parallel"))]
    {
        out.chunks_mut(CHUNK * stride).enumerate().map(|(c, part)| f(c * CHUNK, part)).collect()
    }
}

/// Each cell's flows to its 8 neighbours (in [`NEIGHBOURS`] order; 0 to cells
/// off the map): `rate * max / 2` shared in proportion to the excess. Returns
/// the mass moved. Stored as `f32`: the sender and the receiver read the same
/// value, so the flows conserve exactly whatever their rounding.
fn fluxes(old: &[f32], width: usize, height: usize, talus: f64, rate: f64, flux: &mut [f32]) -> f64 {
    let moved = chunked(flux, 8, |start, part| {
        let mut moved = 0.0f64;
        let (mut x, mut y) = (start % width, start / width);
        for (k, out) in part.chunks_exact_mut(8).enumerate() {
            let i = start + k;
            let mut e = [0.0f64; 8];
            if x > 0 && y > 0 && x + 1 < width && y + 1 < height {
                let here = f64::from(old[i]);
                for (n, (dx, dy, d)) in NEIGHBOURS.into_iter().enumerate() {
                    let j = (i as isize + dy * width as isize + dx) as usize;
                    e[n] = (here - f64::from(old[j]) - talus * d).max(0.0);
                }
            } else {
                for (n, (dx, dy, d)) in NEIGHBOURS.into_iter().enumerate() {
                    let (nx, ny) = (x as isize + dx, y as isize + dy);
                    if nx >= 0 && ny >= 0 && (nx as usize) < width && (ny as usize) < height {
                        e[n] = excess(old, i, ny as usize * width + nx as usize, d, talus);
                    }
                }
            }
            let total: f64 = e.iter().sum();
            let max = e.iter().fold(0.0f64, |m, &v| m.max(v));
            let share = if total > 0.0 { rate * max * 0.5 / total } else { 0.0 };
            for (o, &v) in out.iter_mut().zip(&e) {
                *o = (share * v) as f32;
                moved += f64::from(*o);
            }
            // The next cell's column and row, without a division.
            x += 1;
            if x == width {
                (x, y) = (0, y + 1);
            }
        }
        moved
    });
    moved.iter().sum()
}

/// Scales each flow by its sender's weight (`active * min(erodibility, 1)`)
/// and by whether its receiver is admitted; returns the mass now moved.
fn gate_fluxes(flux: &mut [f32], width: usize, height: usize, gate: &Gate<'_>) -> f64 {
    let moved = chunked(flux, 8, |start, part| {
        let mut moved = 0.0f64;
        for (k, out) in part.chunks_exact_mut(8).enumerate() {
            let i = start + k;
            let send = gate.weight(i);
            let (x, y) = ((i % width) as isize, (i / width) as isize);
            for ((dx, dy, _), o) in NEIGHBOURS.into_iter().zip(out.iter_mut()) {
                let (nx, ny) = (x + dx, y + dy);
                let inside = nx >= 0 && ny >= 0 && (nx as usize) < width && (ny as usize) < height;
                let admitted = inside && gate.admits(ny as usize * width + nx as usize);
                *o = if admitted { (f64::from(*o) * send) as f32 } else { 0.0 };
                moved += f64::from(*o);
            }
        }
        moved
    });
    moved.iter().sum()
}

/// Applies an iteration's flows, chunk by chunk, carrying what `f32` cannot
/// hold from cell to cell (when `GATED`, past cells the gate does not admit,
/// which keep their bits); returns the sum (in chunk order) of the chunks'
/// last remainders.
fn apply<const GATED: bool>(
    cells: &mut [f32],
    old: &[f32],
    flux: &[f32],
    width: usize,
    height: usize,
    gate: &Gate<'_>,
) -> f64 {
    let remainders = chunked(cells, 1, |start, part| {
        let mut remainder = 0.0f64;
        let (mut x, mut y) = (start % width, start / width);
        for (k, cell) in part.iter_mut().enumerate() {
            let i = start + k;
            let mut change = 0.0f64;
            // What neighbour j sends back along the opposite direction (n ^ 1),
            // less what this cell sends it.
            let mut trade =
                |n: usize, j: usize| change += f64::from(flux[j * 8 + (n ^ 1)]) - f64::from(flux[i * 8 + n]);
            if x > 0 && y > 0 && x + 1 < width && y + 1 < height {
                for (n, (dx, dy, _)) in NEIGHBOURS.into_iter().enumerate() {
                    trade(n, (i as isize + dy * width as isize + dx) as usize);
                }
            } else {
                for (n, (dx, dy, _)) in NEIGHBOURS.into_iter().enumerate() {
                    let (nx, ny) = (x as isize + dx, y as isize + dy);
                    if nx >= 0 && ny >= 0 && (nx as usize) < width && (ny as usize) < height {
                        trade(n, ny as usize * width + nx as usize);
                    }
                }
            }
            x += 1;
            if x == width {
                (x, y) = (0, y + 1);
            }
            if GATED && !gate.admits(i) {
                continue; // no flow in or out: only a remainder to carry past
            }
            let target = f64::from(old[i]) + change + remainder;
            let new = target as f32;
            if new.is_finite() {
                *cell = new;
                remainder = target - f64::from(new);
            } else {
                remainder = target - f64::from(*cell);
            }
        }
        remainder
    });
    remainders.iter().sum()
}

/// The largest excess (height beyond the repose slope over the distance, per
/// cell) between neighbours.
fn steepest_excess(cells: &[f32], width: usize, height: usize, talus: f64) -> f64 {
    let mut steepest = 0.0f64;
    for i in 0..cells.len() {
        for_each_neighbour(i, width, height, |j, d| {
            steepest = steepest.max(excess(cells, i, j, d, talus) / d)
        });
    }
    steepest
}

/// `tan` of an angle in degrees in `(0, 90)`, from exactly rounded operations
/// only (Taylor series of `sin` and `cos`), so every platform and backend gets
/// the same bits.
fn tan_degrees(degrees: f64) -> f64 {
    let x = degrees * (core::f64::consts::PI / 180.0);
    let (mut sin, mut cos) = (0.0, 0.0);
    let (mut term_sin, mut term_cos) = (x, 1.0);
    for k in 0..20 {
        sin += term_sin;
        cos += term_cos;
        let k = f64::from(k);
        term_sin *= -x * x / ((2.0 * k + 2.0) * (2.0 * k + 3.0));
        term_cos *= -x * x / ((2.0 * k + 1.0) * (2.0 * k + 2.0));
    }
    sin / cos
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tan_matches_known_angles() {
        assert!((tan_degrees(45.0) - 1.0).abs() < 1e-15);
        assert!((tan_degrees(30.0) - 1.0 / 3.0f64.sqrt()).abs() < 1e-15);
        assert!((tan_degrees(60.0) - 3.0f64.sqrt()).abs() < 1e-14);
    }
}
