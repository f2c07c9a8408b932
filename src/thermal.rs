//! Thermal erosion: material on slopes steeper than the angle of repose slides
//! to the neighbours below (a talus pass), mass-conserving and deterministic.

use alloc::vec::Vec;

use rand_core::Rng;

use crate::controls::Gate;
use crate::error::{Error, ParamError, check, check_above};
use crate::grid::{Grid, GridMut, try_filled};
use crate::layers;
use crate::neighbours::{for_each_neighbour, for_each_neighbour_of};
use crate::physical::simd::{self, Isa};
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
#[non_exhaustive]
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
/// material only if its active value is above 0, so masked cells keep their
/// bits and bedrock (erodibility 0) sends nothing, though talus from above
/// may come to rest on it (rain does not apply). Unlike the hydraulic
/// models it works on maps of any size: a 2 x 2 map's slopes slide too. `options.layers` records
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
        layers::record(
            layers,
            &mut map,
            |_| 0,
            |map, _| talus(map, &self.params, &gate, progress, Isa::detect()),
        )
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
/// down, shared among those neighbours in proportion to their excess, and no
/// cell takes more than `rate / 2` of its largest deficit below a neighbour
/// (the flows into it are scaled down alike: a pit among 8 senders would
/// otherwise take from all and rise past them). The new
/// heights are computed in `f64` and what `f32` cannot hold is carried to the
/// next cell (and from a chunk's last cell into its next iteration, so no
/// remainder builds up over many iterations), so the map's sum does not
/// change (to
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
/// The pass does not drain: where talus fills a channel unevenly it can leave
/// hollows shallower than the repose slope, which the rule then keeps (on the
/// README's eroded 256 x 256 map, which has no single-cell pit, the tool's
/// `--thermal` leaves 90, the deepest 0.005 of a relief of 0.8). Water
/// grades them: a tenth of a droplet a cell after the pass left none there
/// (a [`Pipeline`](crate::Pipeline) with the thermal pass `first` ends with
/// its hydraulic run).
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
    talus(&mut map.view_mut(), params, &Gate::default(), &mut Silent, Isa::detect())
}

/// [`thermal`] on validated params, behind `gate` (see [`Thermal`]), telling
/// `progress` after each iteration, its rows' loops compiled for `isa`'s
/// vectors (the same bits with any).
fn talus<P: Progress + ?Sized>(
    map: &mut GridMut<'_>,
    params: &ThermalParams,
    gate: &Gate<'_>,
    progress: &mut P,
    isa: Isa,
) -> Result<ThermalReport, Error> {
    map.check_finite()?;
    let (width, height) = (map.width(), map.height());
    let slope = Slope { width, height, talus: params.talus(), rate: f64::from(params.rate), isa };
    // The iterations alternate between the map and this buffer, each reading
    // the heights the one before wrote.
    let mut spare = try_filled(map.len(), 0.0f32)?;
    // Each cell's share of its excesses that slides this iteration: the flows
    // are recomputed from it where they are applied (8 bytes a cell where
    // storing the 8 flows took 32; the pass is bound by memory).
    let mut shares = try_filled(map.len(), 0.0f64)?;
    // Each cell's intake scale: what keeps a cell that many neighbours pour
    // into from rising past them.
    let mut intakes = try_filled(map.len(), 0.0f32)?;
    let cells = map.cells_mut();
    let mut report = ThermalReport::default();
    // Each chunk's rounding remainder, carried into its next iteration (see
    // `Slope::apply`).
    let mut carried = try_filled(height.div_ceil(chunk_rows(width)), 0.0f64)?;
    let total = u64::from(params.iterations);
    let mut latest_in_spare = false;
    for done in 1..=params.iterations {
        let (old, new): (&[f32], &mut [f32]) =
            if latest_in_spare { (&spare, &mut *cells) } else { (&*cells, &mut spare) };
        slope.shares(old, &mut shares);
        slope.intakes(old, &shares, &mut intakes);
        let flows = Flows { shares: &shares, intakes: &intakes };
        report.moved += match gate.is_open() {
            true => slope.apply::<false>(old, new, flows, gate, &mut carried),
            false => slope.apply::<true>(old, new, flows, gate, &mut carried),
        };
        latest_in_spare = !latest_in_spare;
        report.iterations = done;
        if progress.update(u64::from(done), total) == Control::Stop && done < params.iterations {
            report.erosion.cancelled = true;
            break;
        }
    }
    if latest_in_spare {
        cells.copy_from_slice(&spare);
    }
    // The chunks' last sub-ulp remainders go to the cell that resolves them
    // best (among those the pass may move: bedrock must not go down).
    let remainder = carried.iter().sum();
    report.erosion.unplaced = gate.flush(cells, remainder, |_, _| {});
    (report.erosion.eroded, report.erosion.deposited) = (report.moved, report.moved);
    report.steepest_excess = steepest_excess(cells, width, height, slope.talus) / f64::from(params.cell_size);
    Ok(report)
}

/// Excess of cell `i` over neighbour `j`, `dist` cells away: its height above
/// the repose slope, or 0.
#[inline(always)]
fn excess(old: &[f32], i: usize, j: usize, dist: f64, talus: f64) -> f64 {
    (f64::from(old[i]) - f64::from(old[j]) - talus * dist).max(0.0)
}

/// Runs `f(chunk index, first row, rows)` on chunks of whole rows of `out` (`width`
/// values a row, about [`CHUNK`] values a chunk), on the current rayon pool
/// with the `parallel` feature, and returns the results in chunk order. The
/// chunks depend on the width only: the same bits for any thread count.
fn chunked<T: Send, R: Send>(
    out: &mut [T],
    width: usize,
    f: impl Fn(usize, usize, &mut [T]) -> R + Sync,
) -> Vec<R> {
    let rows = chunk_rows(width);
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        out.par_chunks_mut(rows * width).enumerate().map(|(c, part)| f(c, c * rows, part)).collect()
    }
    #[cfg(not(feature = "parallel"))]
    {
        out.chunks_mut(rows * width).enumerate().map(|(c, part)| f(c, c * rows, part)).collect()
    }
}

/// Rows per chunk of [`chunked`] on a map `width` cells wide.
fn chunk_rows(width: usize) -> usize {
    (CHUNK / width).max(1)
}

/// Cells of a row whose flows are summed before their rounding is carried
/// (stack buffers, so the sums vectorize and nothing is allocated).
const BLOCK: usize = 256;

/// `v` if positive, else 0 (one `max` instruction: the heights are finite).
#[inline(always)]
fn pos(v: f64) -> f64 {
    if v > 0.0 { v } else { 0.0 }
}

/// The sum of 8 values as a tree (short dependency chains).
#[inline(always)]
fn sum8(v: [f64; 8]) -> f64 {
    ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]))
}

/// A cell's share of its excesses `e` over its neighbours: `rate / 2` of the
/// largest over their sum (0 when it has none), so it sends `rate` times
/// half its largest excess, split in proportion to the excesses.
#[inline(always)]
fn share_of(e: [f64; 8], half_rate: f64) -> f64 {
    let max = pos(e[0].max(e[1]).max(e[2].max(e[3])).max(e[4].max(e[5]).max(e[6].max(e[7]))));
    let total = sum8(e);
    let share = half_rate * max / total;
    if total > 0.0 { share } else { 0.0 }
}

/// A cell's intake scale: the flows its higher neighbours would send it
/// (`intake`) are scaled so that it rises by at most `rate / 2` of its largest
/// deficit below them (`deficit`), as if one neighbour poured into it: a pit
/// among many senders would otherwise take them all and rise past them.
#[inline(always)]
fn intake_scale(intake: f64, deficit: f64, half_rate: f64) -> f32 {
    let cap = half_rate * deficit;
    if intake > cap { (cap / intake) as f32 } else { 1.0 }
}

/// The largest of 8 values (short dependency chains).
#[inline(always)]
fn max8(v: [f64; 8]) -> f64 {
    v[0].max(v[1]).max(v[2].max(v[3])).max(v[4].max(v[5]).max(v[6].max(v[7])))
}

/// An iteration's senders' shares and receivers' intake scales, per cell.
#[derive(Clone, Copy)]
struct Flows<'a> {
    shares: &'a [f64],
    intakes: &'a [f32],
}

/// One iteration's rule on a `width x height` map: the repose slope between
/// neighbours one cell apart (`talus`) and the share of the excess that moves.
struct Slope {
    width: usize,
    height: usize,
    talus: f64,
    rate: f64,
    /// The vectors the rows' loops are compiled for: the pass is a few
    /// `f64` operations a neighbour, four lanes to a vector with AVX2 where
    /// the baseline has two.
    isa: Isa,
}

impl Slope {
    /// Calls `visit(n, j, distance)` for each neighbour `j` of cell `(x, y)`
    /// on the map, `n` its place in [`NEIGHBOURS`](crate::neighbours::NEIGHBOURS).
    #[inline(always)]
    fn neighbours(&self, x: usize, y: usize, visit: impl FnMut(usize, usize, f64)) {
        for_each_neighbour_of(x, y, self.width, self.height, visit);
    }

    /// The flow from a cell of height `from` (and share `share`) to a
    /// neighbour of height `to`, `d` cells away: `share` of the excess, in
    /// `f32`. Sender and receiver compute it from the same values, so each
    /// reads the same bits and the flows conserve whatever their rounding.
    #[inline(always)]
    fn flow(share: f64, from: f64, to: f64, td: f64) -> f64 {
        f64::from((share * pos(from - to - td)) as f32)
    }

    /// A flow scaled by its receiver's intake scale, in `f32` (as it was
    /// when the scale is 1).
    #[inline(always)]
    fn taken(flow: f64, intake: f32) -> f64 {
        f64::from((flow * f64::from(intake)) as f32)
    }

    /// A flow through the gate: scaled by the sender's weight, 0 into a cell
    /// the gate does not admit.
    #[inline(always)]
    fn gated(flow: f64, gate: &Gate<'_>, from: usize, to: usize) -> f64 {
        if gate.admits(to) { f64::from((flow * gate.weight(from)) as f32) } else { 0.0 }
    }

    /// Whether row `y` has cells with all 8 neighbours (its inner cells).
    fn has_inner(&self, y: usize) -> bool {
        y > 0 && y + 1 < self.height && self.width >= 3
    }

    /// Cell `(x, y)`'s share, neighbour by neighbour (any cell).
    fn share_at(&self, old: &[f32], x: usize, y: usize) -> f64 {
        let here = f64::from(old[y * self.width + x]);
        let mut e = [0.0f64; 8];
        self.neighbours(x, y, |n, j, d| e[n] = pos(here - f64::from(old[j]) - self.talus * d));
        share_of(e, self.rate * 0.5)
    }

    /// Fills `out` cell by cell, chunk by chunk: the border's cells with
    /// `at(x, y)`, each row's inner cells (all 8 neighbours on the map) with
    /// `inner(y, cells)`, a loop over three rows that the compiler vectorizes.
    fn per_cell<T: Send>(
        &self,
        out: &mut [T],
        at: impl Fn(usize, usize) -> T + Sync,
        inner: impl Fn(usize, &mut [T]) + Sync,
    ) {
        let w = self.width;
        chunked(out, w, |_, first, part| {
            for (r, row) in part.chunks_mut(w).enumerate() {
                let y = first + r;
                if !self.has_inner(y) {
                    for (x, cell) in row.iter_mut().enumerate() {
                        *cell = at(x, y);
                    }
                    continue;
                }
                row[0] = at(0, y);
                row[w - 1] = at(w - 1, y);
                inner(y, &mut row[1..w - 1]);
            }
        });
    }

    /// Every cell's share ([`share_of`]).
    fn shares(&self, old: &[f32], shares: &mut [f64]) {
        self.per_cell(
            shares,
            |x, y| self.share_at(old, x, y),
            |y, row| {
                simd::widest(
                    self.isa,
                    #[inline(always)]
                    || self.shares_inner(old, y, row),
                )
            },
        );
    }

    /// The shares of row `y`'s inner cells (`row`), in a loop the compiler
    /// vectorizes.
    #[inline(always)]
    fn shares_inner(&self, old: &[f32], y: usize, row: &mut [f64]) {
        let w = self.width;
        let (t1, t2) = (self.talus, self.talus * core::f64::consts::SQRT_2);
        let half_rate = self.rate * 0.5;
        // Cell k + 1 of the row reads columns k to k + 2.
        let (up, mid, down) = (&old[(y - 1) * w..][..w], &old[y * w..][..w], &old[(y + 1) * w..][..w]);
        for (k, share) in row.iter_mut().enumerate() {
            let c = f64::from(mid[k + 1]);
            // In `NEIGHBOURS` order.
            let e = [
                pos(c - f64::from(mid[k + 2]) - t1),
                pos(c - f64::from(mid[k]) - t1),
                pos(c - f64::from(down[k + 1]) - t1),
                pos(c - f64::from(up[k + 1]) - t1),
                pos(c - f64::from(down[k + 2]) - t2),
                pos(c - f64::from(up[k]) - t2),
                pos(c - f64::from(up[k + 2]) - t2),
                pos(c - f64::from(down[k]) - t2),
            ];
            *share = share_of(e, half_rate);
        }
    }

    /// Cell `(x, y)`'s intake scale ([`intake_scale`]), from the flows its
    /// neighbours would send it (ungated: a gate only lowers them).
    fn intake_at(&self, old: &[f32], shares: &[f64], x: usize, y: usize) -> f32 {
        let here = f64::from(old[y * self.width + x]);
        let (mut gains, mut deficits) = ([0.0f64; 8], [0.0f64; 8]);
        self.neighbours(x, y, |n, j, d| {
            let (there, td) = (f64::from(old[j]), self.talus * d);
            let deficit = pos(there - here - td);
            (gains[n], deficits[n]) = (shares[j] * deficit, deficit);
        });
        intake_scale(sum8(gains), max8(deficits), self.rate * 0.5)
    }

    /// Every cell's intake scale ([`intake_scale`]).
    fn intakes(&self, old: &[f32], shares: &[f64], intakes: &mut [f32]) {
        self.per_cell(
            intakes,
            |x, y| self.intake_at(old, shares, x, y),
            |y, row| {
                simd::widest(
                    self.isa,
                    #[inline(always)]
                    || self.intakes_inner(old, shares, y, row),
                )
            },
        );
    }

    /// The intake scales of row `y`'s inner cells (`row`), in a loop the
    /// compiler vectorizes.
    #[inline(always)]
    fn intakes_inner(&self, old: &[f32], shares: &[f64], y: usize, row: &mut [f32]) {
        let w = self.width;
        let (t1, t2) = (self.talus, self.talus * core::f64::consts::SQRT_2);
        let half_rate = self.rate * 0.5;
        let (up, mid, down) = (&old[(y - 1) * w..][..w], &old[y * w..][..w], &old[(y + 1) * w..][..w]);
        let (s_up, s_mid, s_down) =
            (&shares[(y - 1) * w..][..w], &shares[y * w..][..w], &shares[(y + 1) * w..][..w]);
        for (k, intake) in row.iter_mut().enumerate() {
            let c = f64::from(mid[k + 1]);
            let around = [
                (mid[k + 2], s_mid[k + 2], t1),
                (mid[k], s_mid[k], t1),
                (down[k + 1], s_down[k + 1], t1),
                (up[k + 1], s_up[k + 1], t1),
                (down[k + 2], s_down[k + 2], t2),
                (up[k], s_up[k], t2),
                (up[k + 2], s_up[k + 2], t2),
                (down[k], s_down[k], t2),
            ];
            let (mut gains, mut deficits) = ([0.0f64; 8], [0.0f64; 8]);
            for (n, (there, share, td)) in around.into_iter().enumerate() {
                let deficit = pos(f64::from(there) - c - td);
                (gains[n], deficits[n]) = (share * deficit, deficit);
            }
            *intake = intake_scale(sum8(gains), max8(deficits), half_rate);
        }
    }

    /// Cell `(x, y)`'s `(gains, losses)`: what its neighbours send it and
    /// what it sends them, neighbour by neighbour (any cell; through the gate
    /// when `GATED`).
    fn trade_at<const GATED: bool>(
        &self,
        old: &[f32],
        Flows { shares, intakes }: Flows<'_>,
        gate: &Gate<'_>,
        x: usize,
        y: usize,
    ) -> (f64, f64) {
        let i = y * self.width + x;
        let here = f64::from(old[i]);
        let (mut gains, mut losses) = ([0.0f64; 8], [0.0f64; 8]);
        self.neighbours(x, y, |n, j, d| {
            let (there, td) = (f64::from(old[j]), self.talus * d);
            let (mut gain, mut loss) =
                (Self::flow(shares[j], there, here, td), Self::flow(shares[i], here, there, td));
            if GATED {
                (gain, loss) = (Self::gated(gain, gate, j, i), Self::gated(loss, gate, i, j));
            }
            (gains[n], losses[n]) = (Self::taken(gain, intakes[i]), Self::taken(loss, intakes[j]));
        });
        (sum8(gains), sum8(losses))
    }

    /// Writes into `new` the heights `old` takes with the iteration's flows
    /// (computed from the shares by sender and receiver alike), chunk by
    /// chunk, carrying what `f32` cannot hold from cell to cell (when
    /// `GATED`, past cells the gate does not admit, which keep their bits).
    /// Each chunk starts from its entry in `carried` (what it could not
    /// place in the iteration before) and leaves its last remainder there,
    /// so the remainders stay below a rounding each however many iterations
    /// run. Returns the mass the flows moved.
    fn apply<const GATED: bool>(
        &self,
        old: &[f32],
        new: &mut [f32],
        flows: Flows<'_>,
        gate: &Gate<'_>,
        carried: &mut [f64],
    ) -> f64 {
        let w = self.width;
        let starts: &[f64] = carried;
        let books = chunked(new, w, |c, first, part| {
            let mut books = Carry { remainder: starts[c], moved: 0.0 };
            for (r, row) in part.chunks_mut(w).enumerate() {
                let y = first + r;
                let at = |x: usize| self.trade_at::<GATED>(old, flows, gate, x, y);
                if GATED || !self.has_inner(y) {
                    for (x, cell) in row.iter_mut().enumerate() {
                        let i = y * w + x;
                        if GATED && !gate.admits(i) {
                            *cell = old[i]; // no flow in or out: only a remainder to carry past
                        } else {
                            books.settle(cell, old[i], at(x));
                            if GATED && *cell < old[i] && gate.weight(i) <= 0.0 {
                                // Bedrock sends nothing: nor does the carried
                                // rounding lower it (it is carried on instead).
                                books.remainder += f64::from(*cell) - f64::from(old[i]);
                                *cell = old[i];
                            }
                        }
                    }
                    continue;
                }
                books.settle(&mut row[0], old[y * w], at(0));
                let inner = &mut row[1..w - 1];
                simd::widest(
                    self.isa,
                    #[inline(always)]
                    || self.apply_inner(old, flows, y, inner, &mut books),
                );
                books.settle(&mut row[w - 1], old[y * w + w - 1], at(w - 1));
            }
            books
        });
        let mut moved = 0.0;
        for (carry, b) in carried.iter_mut().zip(&books) {
            (*carry, moved) = (b.remainder, moved + b.moved);
        }
        moved
    }

    /// [`apply`](Self::apply) without a gate on the inner cells of row `y`
    /// (`row`: their new heights): the flows of a block of cells summed in a
    /// loop the compiler vectorizes, then their rounding carried in order.
    #[inline(always)]
    fn apply_inner(
        &self,
        old: &[f32],
        Flows { shares, intakes }: Flows<'_>,
        y: usize,
        row: &mut [f32],
        books: &mut Carry,
    ) {
        let w = self.width;
        let (up, mid, down) = (&old[(y - 1) * w..][..w], &old[y * w..][..w], &old[(y + 1) * w..][..w]);
        let (s_up, s_mid, s_down) =
            (&shares[(y - 1) * w..][..w], &shares[y * w..][..w], &shares[(y + 1) * w..][..w]);
        let (i_up, i_mid, i_down) =
            (&intakes[(y - 1) * w..][..w], &intakes[y * w..][..w], &intakes[(y + 1) * w..][..w]);
        let (t1, t2) = (self.talus, self.talus * core::f64::consts::SQRT_2);
        let (mut gained, mut lost) = ([0.0f64; BLOCK], [0.0f64; BLOCK]);
        for (b, cells) in row.chunks_mut(BLOCK).enumerate() {
            let start = b * BLOCK; // inner cell k is column k + 1
            let len = cells.len();
            for (k, (gain, loss)) in gained[..len].iter_mut().zip(&mut lost[..len]).enumerate() {
                let k = start + k;
                let (c, s, intake) = (f64::from(mid[k + 1]), s_mid[k + 1], i_mid[k + 1]);
                // Each neighbour in `NEIGHBOURS` order: its height, share,
                // intake scale and distance.
                let around = [
                    (mid[k + 2], s_mid[k + 2], i_mid[k + 2], t1),
                    (mid[k], s_mid[k], i_mid[k], t1),
                    (down[k + 1], s_down[k + 1], i_down[k + 1], t1),
                    (up[k + 1], s_up[k + 1], i_up[k + 1], t1),
                    (down[k + 2], s_down[k + 2], i_down[k + 2], t2),
                    (up[k], s_up[k], i_up[k], t2),
                    (up[k + 2], s_up[k + 2], i_up[k + 2], t2),
                    (down[k], s_down[k], i_down[k], t2),
                ];
                let (mut gains, mut losses) = ([0.0f64; 8], [0.0f64; 8]);
                for (n, (there, share, its_intake, td)) in around.into_iter().enumerate() {
                    let there = f64::from(there);
                    gains[n] = Self::taken(Self::flow(share, there, c, td), intake);
                    losses[n] = Self::taken(Self::flow(s, c, there, td), its_intake);
                }
                (*gain, *loss) = (sum8(gains), sum8(losses));
            }
            // Two carries, through the first and the second half of the
            // block, interleaved (one chain of roundings is the loop's
            // bound); the second joins the first at the end.
            let half = len / 2;
            let (front, back) = cells.split_at_mut(half);
            let mut second = Carry { remainder: 0.0, moved: 0.0 };
            for (k, (a, b)) in front.iter_mut().zip(back.iter_mut()).enumerate() {
                books.settle(a, mid[start + k + 1], (gained[k], lost[k]));
                let k = half + k;
                second.settle(b, mid[start + k + 1], (gained[k], lost[k]));
            }
            if len % 2 == 1 {
                let k = len - 1;
                second.settle(&mut back[k - half], mid[start + k + 1], (gained[k], lost[k]));
            }
            books.remainder += second.remainder;
            books.moved += second.moved;
        }
    }
}

/// A chunk's books while its cells take their new heights: the rounding
/// carried from cell to cell, and the mass moved.
struct Carry {
    remainder: f64,
    moved: f64,
}

impl Carry {
    /// Sets `cell` to `old` plus `gains - losses` and the carried remainder,
    /// rounded to `f32` (kept at `old` if that is not finite), carrying what
    /// the rounding left.
    #[inline(always)]
    fn settle(&mut self, cell: &mut f32, old: f32, (gains, losses): (f64, f64)) {
        self.moved += losses;
        let target = f64::from(old) + (gains - losses) + self.remainder;
        let rounded = target as f32;
        *cell = if rounded.is_finite() { rounded } else { old };
        self.remainder = target - f64::from(*cell);
    }
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
    use crate::controls::Controls;
    use crate::grid::Heightmap;
    use alloc::vec;

    /// A chunk starts each iteration from the remainder it left in the one
    /// before, so the remainders stay below a rounding however many
    /// iterations run. The same flows applied again and again (the old map
    /// fed back each time) leave the same remainder each time: summed, as
    /// before this carry, they grow with the iterations.
    #[test]
    fn remainders_stay_below_a_rounding_however_many_iterations_run() {
        let (width, height) = (64, 600); // two chunks of 256 rows and one of 88
        let base = crate::terrain::fbm_terrain(width, height, 5).unwrap();
        let old = base.cells();
        let slope = Slope { width, height, talus: 0.01, rate: 0.5, isa: Isa::Baseline };
        let (mut shares, mut intakes) = (vec![0.0; old.len()], vec![0.0; old.len()]);
        slope.shares(old, &mut shares);
        slope.intakes(old, &shares, &mut intakes);
        let flows = Flows { shares: &shares, intakes: &intakes };
        let mut new = vec![0.0f32; old.len()];
        let chunks = height.div_ceil(chunk_rows(width));
        let once = {
            let mut carried = vec![0.0; chunks];
            slope.apply::<false>(old, &mut new, flows, &Gate::default(), &mut carried);
            carried
        };
        assert!(once.iter().any(|&r| r != 0.0), "no remainder to carry: {once:?}");
        let mut carried = vec![0.0; chunks];
        for _ in 0..1000 {
            slope.apply::<false>(old, &mut new, flows, &Gate::default(), &mut carried);
            // Half a unit in the last place of the largest height, at most.
            for r in &carried {
                assert!(r.abs() <= 0.5 * f64::from(f32::EPSILON), "{carried:?}");
            }
        }
        let summed: f64 = once.iter().map(|r| r.abs()).sum::<f64>() * 1000.0;
        assert!(summed > 100.0 * f64::from(f32::EPSILON), "{summed}");
    }

    /// The pass gives the same bits with every instruction set this CPU has
    /// (each compiles the rows' loops for its own vectors), with and without
    /// a gate, and moves material on the way.
    #[test]
    fn every_instruction_set_gives_the_same_bits() {
        let base = crate::terrain::fbm_terrain(67, 45, 3).unwrap();
        // Heights to 20 over 67 cells: slopes well past the repose angle.
        let rugged = Heightmap::from_fn(67, 45, |x, y| base.get(x, y).unwrap() * 20.0).unwrap();
        let active = Heightmap::from_fn(67, 45, |x, _| if x < 20 { 0.0 } else { 0.5 }).unwrap();
        let params = ThermalParams { iterations: 12, ..ThermalParams::default() };
        for gated in [false, true] {
            let controls = Controls { active: gated.then(|| active.view()), ..Controls::default() };
            let gate = Gate::of(&controls);
            let mut results = Vec::new();
            for isa in Isa::available() {
                let mut map = rugged.clone();
                let report = talus(&mut map.view_mut(), &params, &gate, &mut Silent, isa).unwrap();
                let bits: Vec<u32> = map.cells().iter().map(|h| h.to_bits()).collect();
                results.push((isa, bits, report));
            }
            let (_, first_bits, first_report) = &results[0];
            assert!(first_report.moved > 1.0, "{first_report:?}");
            assert!(*first_bits != rugged.cells().iter().map(|h| h.to_bits()).collect::<Vec<_>>());
            for (isa, bits, report) in &results[1..] {
                assert!(bits == first_bits, "{isa:?} differs from the baseline (gated: {gated})");
                assert_eq!(report, first_report, "{isa:?}");
            }
        }
    }

    #[test]
    fn tan_matches_known_angles() {
        assert!((tan_degrees(45.0) - 1.0).abs() < 1e-15);
        assert!((tan_degrees(30.0) - 1.0 / 3.0f64.sqrt()).abs() < 1e-15);
        assert!((tan_degrees(60.0) - 3.0f64.sqrt()).abs() < 1e-14);
    }
}
