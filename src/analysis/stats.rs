//! The one-call summary: the figures that tell carved terrain from noise.

use alloc::vec::Vec;

use super::fill::{Fill, flood};
use super::fit::{self, PowerLawFit, log10};
use super::flow::{FlowField, NO_RECEIVER, check_cell_size_of};
use super::{for_each_neighbour, on_border};
use crate::error::{Error, GridError, ParamError, check, check_range};
use crate::grid::{Grid, GridRef, Heightmap};

/// What [`TerrainStats::measure`] measures over. Areas are in cells.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default, deny_unknown_fields))]
pub struct AnalysisOptions {
    /// Horizontal size of a cell, in the heights' unit (slopes are height over
    /// `cell_size` per cell). Default 1; range `(0, 1e15]`.
    pub cell_size: f32,
    /// Drainage area from which a cell counts as a channel, in cells. Default
    /// 50; range `(0, 1e30]`.
    pub channel_area: f64,
    /// The largest drainage area the slope-area and Hack fits use, as a
    /// fraction of the map's cells (beyond it the few large basins only add
    /// scatter). Default 0.05; range `(0, 1]`.
    pub max_area_fraction: f64,
    /// The smallest drainage area the exceedance fit uses, in cells (below it,
    /// ridge cells of area 1 and 2 dominate). Default 10; range `(0, 1e30]`.
    pub exceedance_min_area: f64,
    /// The largest drainage area the exceedance fit uses, as a fraction of
    /// the (land) cells. Default 0.01 (range `(0, 1]`): above about 1 % of the map the largest
    /// basins a map can hold cut the distribution off and the curve steepens.
    /// A stream-power landscape at steady state (Braun and Willett's implicit
    /// scheme, `m / n = 0.5`, all four borders outlets; θ measures 0.50, r² 1)
    /// measures β 0.50 (r² 0.999) at 512², 0.51 at 256² with this default,
    /// and 0.62 (r² 0.94), 0.64 and 0.70 (128²) up to 0.05 of the map, where
    /// noise measures 0.63-0.72.
    pub exceedance_max_fraction: f64,
    /// Bins per decade of drainage area in the binned fits. Default 10; range
    /// `[1, 1000]`.
    pub bins_per_decade: u32,
    /// Cells a bin needs to count as a point of a binned fit. Default 5; at
    /// least 1.
    pub min_per_bin: usize,
    /// A channel cell whose slope to its receiver (on the flat-filled surface)
    /// is at most this, in height units per horizontal unit, is flat: a lake or
    /// a filled basin. Default 1e-6; range `[0, 1e30]`.
    pub flat_slope: f32,
    /// The sea level, in the map's height units: every cell at or below it is
    /// sea, wherever it lies (an inland hollow that low included). The sea is an
    /// outlet like the border: a hollow that spills into it is no closed
    /// depression, water stops on reaching it, and every figure covers the land
    /// cells (above the level) only, areas counting land cells only. Default
    /// `None`: no sea, every cell is land and the border the only outlet (the
    /// figures as without this option, bit for bit). Not NaN when set (an
    /// infinite level: all sea, or all land).
    pub sea_level: Option<f32>,
}

impl AnalysisOptions {
    /// Checks every field against its documented range ([`TerrainStats::measure`]
    /// and [`LakeStats::measure`](super::LakeStats::measure) call it first).
    ///
    /// # Errors
    /// A [`ParamError`] naming the first field out of range (a NaN is out of
    /// every range).
    pub fn validate(&self) -> Result<(), ParamError> {
        check_cell_size_of(self.cell_size, "analysis.cell_size")?;
        let positive = |v: f64| v > 0.0 && v <= 1e30;
        check(positive(self.channel_area), "analysis.channel_area", "in (0, 1e30]")?;
        let fraction = |v: f64| v > 0.0 && v <= 1.0;
        check(fraction(self.max_area_fraction), "analysis.max_area_fraction", "in (0, 1]")?;
        check(positive(self.exceedance_min_area), "analysis.exceedance_min_area", "in (0, 1e30]")?;
        check(fraction(self.exceedance_max_fraction), "analysis.exceedance_max_fraction", "in (0, 1]")?;
        check((1..=1000).contains(&self.bins_per_decade), "analysis.bins_per_decade", "in [1, 1000]")?;
        check(self.min_per_bin >= 1, "analysis.min_per_bin", "at least 1")?;
        check_range(self.flat_slope, 0.0, 1e30, "analysis.flat_slope", "finite and in [0, 1e30]")?;
        check(self.sea_level.is_none_or(|level| !level.is_nan()), "analysis.sea_level", "not NaN when set")
    }
}

impl Default for AnalysisOptions {
    fn default() -> Self {
        Self {
            cell_size: 1.0,
            channel_area: 50.0,
            max_area_fraction: 0.05,
            exceedance_min_area: 10.0,
            exceedance_max_fraction: 0.01,
            bins_per_decade: 10,
            min_per_bin: 5,
            flat_slope: 1e-6,
            sea_level: None,
        }
    }
}

/// The drainage figures of a terrain (see the [module docs](super)).
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct TerrainStats {
    /// Width of the map, in cells.
    pub width: usize,
    /// Height of the map, in cells.
    pub height: usize,
    /// The land cells every other figure covers: those above
    /// [`sea_level`](AnalysisOptions::sea_level), all cells without one.
    pub land_cells: u64,
    /// Share of the land cells inside closed depressions (depth > 0 after a
    /// flat fill), in `[0, 1]` (0 without land). A few percent in real
    /// landscapes.
    pub depression_fraction: f64,
    /// Single-cell pits: interior land cells strictly lower than all 8
    /// neighbours (a cell beside the sea never is one: the sea lies lower).
    pub pits: u64,
    /// `pits` over the interior land cells (0 without any).
    pub pit_fraction: f64,
    /// Channel cells: land cells with a drainage area of at least
    /// `channel_area` that pass their water on (not on the border).
    pub channel_cells: u64,
    /// Share of the channel cells that are flat (slope at most `flat_slope` on
    /// the flat-filled surface): lakes and filled basins.
    pub channel_flat_fraction: f64,
    /// Flint's law over the channel cells up to `max_area_fraction` (of the
    /// land cells): slope against drainage area; the concavity θ is
    /// `-exponent` ([`concavity`](Self::concavity)), the steepness
    /// `coefficient`.
    pub slope_area: Option<PowerLawFit>,
    /// `P(A >= a)` against `a` over the land cells, from `exceedance_min_area`
    /// to `exceedance_max_fraction`; β is `-exponent` ([`exceedance`](Self::exceedance)).
    pub area_exceedance: Option<PowerLawFit>,
    /// Hack's law over the channel cells: the longest flow path upstream
    /// against drainage area; h is `exponent` ([`hack`](Self::hack)).
    pub hack_fit: Option<PowerLawFit>,
}

impl TerrainStats {
    /// Measures `map`: the border is the outlet, and with a
    /// [`sea_level`](AnalysisOptions::sea_level) the sea too, the figures then
    /// covering the land only. A map with no land measures as land without
    /// channels: every count and fraction 0, no fits. With the `parallel`
    /// feature its two depression fills (most of its time) run side by side
    /// on the current rayon pool; the figures are the same.
    ///
    /// # Errors
    /// [`Error::Param`] for options out of range
    /// ([`AnalysisOptions::validate`]); [`GridError::NonFinite`] for the
    /// first NaN or infinite cell; [`GridError::OutOfMemory`] if the working
    /// buffers cannot be allocated, [`GridError::TooLarge`] if the map has
    /// more than `u32::MAX` cells (as [`Error::Grid`]).
    pub fn measure<S: AsRef<[f32]>>(map: &Grid<S>, options: &AnalysisOptions) -> Result<Self, Error> {
        options.validate()?;
        map.check_finite()?;
        let sea = sea_of(map, options);
        let (w, h) = (map.width(), map.height());
        let n = map.len();
        let land = (0..n).filter(|&i| !sea(i)).count();
        let Drainage { flat, flow, area, slope, channels } = Drainage::of(map, options, &sea)?;
        // The fill never raises the sea: every raised cell is land.
        let depressed = flat.cells().iter().zip(map.cells()).filter(|(f, h)| f > h).count();
        let length = flow.flow_length(options.cell_size)?;
        let max_area = (options.max_area_fraction * land as f64).max(options.channel_area);
        let flats = channels.iter().filter(|&&i| slope.cells()[i] <= options.flat_slope).count();
        let range = (options.channel_area, max_area);
        let pairs = |ys: &[f32]| {
            let area = area.cells();
            channels.iter().map(move |&i| (f64::from(area[i]), f64::from(ys[i]))).collect::<Vec<_>>()
        };
        let bins = options.bins_per_decade;
        let slope_area = PowerLawFit::binned(
            pairs(slope.cells()).into_iter().filter(|&(_, s)| s > f64::from(options.flat_slope)),
            range,
            bins,
            options.min_per_bin,
        );
        let hack_fit =
            PowerLawFit::binned(pairs(length.cells()).into_iter(), range, bins, options.min_per_bin);
        let land_areas = (0..n).filter(|&i| !sea(i)).map(|i| area.cells()[i]);
        let exceedance_max = options.exceedance_max_fraction * land as f64;
        let area_exceedance =
            exceedance(land_areas, land, (options.exceedance_min_area, exceedance_max), bins);
        let (pits, interior) = pits_on(map, &sea);
        Ok(Self {
            width: w,
            height: h,
            land_cells: land as u64,
            depression_fraction: if land > 0 { depressed as f64 / land as f64 } else { 0.0 },
            pits,
            pit_fraction: if interior > 0 { pits as f64 / interior as f64 } else { 0.0 },
            channel_cells: channels.len() as u64,
            channel_flat_fraction: if channels.is_empty() {
                0.0
            } else {
                flats as f64 / channels.len() as f64
            },
            slope_area,
            area_exceedance,
            hack_fit,
        })
    }

    /// The concavity θ of Flint's law (`-exponent` of the slope-area fit).
    pub fn concavity(&self) -> Option<f64> {
        self.slope_area.map(|f| -f.exponent)
    }

    /// The drainage-area exceedance exponent β (`-exponent` of its fit).
    pub fn exceedance(&self) -> Option<f64> {
        self.area_exceedance.map(|f| -f.exponent)
    }

    /// Hack's exponent h.
    pub fn hack(&self) -> Option<f64> {
        self.hack_fit.map(|f| f.exponent)
    }
}

/// What the figures of a map are measured on: its flat fill, the D8 flow
/// over its epsilon fill, the drainage area, the slope along the flow (on
/// the flat fill) and the channel cells.
pub(super) struct Drainage {
    /// The flat-filled surface: closed depressions raised to their spill level.
    pub(super) flat: Heightmap,
    /// D8 directions over the epsilon fill.
    pub(super) flow: FlowField,
    /// Drainage area, in cells.
    pub(super) area: Heightmap,
    /// Slope to the receiver on the flat fill (0 without one).
    pub(super) slope: Heightmap,
    /// The cells draining at least `channel_area` that have a receiver (no
    /// channel is at sea), in index order.
    pub(super) channels: Vec<usize>,
}

impl Drainage {
    /// Measures `map` with the outlets the border and `sea`.
    pub(super) fn of<S: AsRef<[f32]>>(
        map: &Grid<S>,
        options: &AnalysisOptions,
        sea: &(impl Fn(usize) -> bool + Sync),
    ) -> Result<Self, Error> {
        let (w, h) = (map.width(), map.height());
        let (flat, epsilon) = both_fills(&map.view(), sea);
        let flat = Heightmap::from_cells(w, h, flat?)?;
        let epsilon = Heightmap::from_cells(w, h, epsilon?)?;
        let flow = FlowField::d8_to(&epsilon, sea)?;
        let area = flow.drainage_area()?;
        let slope = flow.slope(&flat, options.cell_size)?;
        let receivers = flow.receivers();
        let channels = (0..map.len())
            .filter(|&i| f64::from(area.cells()[i]) >= options.channel_area && receivers[i] != NO_RECEIVER)
            .collect();
        Ok(Self { flat, flow, area, slope, channels })
    }
}

/// The outlets [`TerrainStats::measure`] takes for `options` on `map`: the
/// cells at or below its sea level, if it has one (validated: not NaN).
pub(super) fn sea_of<'a, S: AsRef<[f32]>>(
    map: &'a Grid<S>,
    options: &AnalysisOptions,
) -> impl Fn(usize) -> bool + Sync + 'a {
    let level = options.sea_level;
    let z = map.cells();
    move |i| level.is_some_and(|level| z[i] <= level)
}

/// `P(A >= a)` against `a` at `bins_per_decade` thresholds a decade over
/// `[a_min, a_max]`, fitted in log-log space: one pass over the `cells` areas
/// into a histogram of `log10 A`, then cumulative counts from the top.
fn exceedance(
    area: impl Iterator<Item = f32>,
    cells: usize,
    (a_min, a_max): (f64, f64),
    bins_per_decade: u32,
) -> Option<PowerLawFit> {
    if cells == 0 || !(a_min > 0.0 && a_max > a_min) || bins_per_decade == 0 {
        return None;
    }
    let per = f64::from(bins_per_decade);
    // Bins a decade from an area of 1 (`fit::bin_of`: an area on a bin's
    // edge, 1 000 say, counts in the bin it opens).
    let bin = |a: f64| fit::bin_of(a, log10(a), 1.0, per) as usize;
    let top = bin(a_max) + 1;
    let mut counts = alloc::vec![0u64; top + 1];
    for a in area {
        if a >= 1.0 {
            counts[bin(f64::from(a)).min(top)] += 1;
        }
    }
    let n = cells as f64;
    let mut above = 0u64;
    let mut points = Vec::new();
    for b in (0..=top).rev() {
        above += counts[b];
        let threshold = b as f64 / per; // log10 of the bin's lower edge
        let a = fit::bin_edge(1.0, b as u64, per);
        if a >= a_min && a <= a_max && above > 0 {
            points.push((threshold, log10(above as f64 / n)));
        }
    }
    PowerLawFit::of_logs(&points)
}

/// Single-cell pits of `map`: interior cells strictly lower than all 8
/// neighbours. Returns `(pits, interior cells)`.
///
/// # Errors
/// [`GridError::NonFinite`] for the first NaN or infinite cell (a NaN
/// compares as neither higher nor lower: it would be no pit, and keep its
/// neighbours from being ones).
pub fn count_pits<S: AsRef<[f32]>>(map: &Grid<S>) -> Result<(u64, u64), GridError> {
    map.check_finite()?;
    Ok(pits_on(map, |_| false))
}

/// [`count_pits`] over the interior cells `sea` does not mark.
fn pits_on<S: AsRef<[f32]>>(map: &Grid<S>, sea: impl Fn(usize) -> bool) -> (u64, u64) {
    let (w, h) = (map.width(), map.height());
    let z = map.cells();
    let (mut pits, mut interior) = (0u64, 0u64);
    for i in (0..z.len()).filter(|&i| !on_border(i, w, h) && !sea(i)) {
        interior += 1;
        let mut lowest = true;
        for_each_neighbour(i, w, h, |j, _| lowest &= z[j] > z[i]);
        pits += u64::from(lowest);
    }
    (pits, interior)
}

/// The flat and the epsilon fill of `map` (outlets the border and `sea`):
/// most of a measurement's time, two independent priority floods, so with
/// the `parallel` feature they run side by side on the current rayon pool.
fn both_fills(
    map: &GridRef<'_>,
    sea: &(impl Fn(usize) -> bool + Sync),
) -> (Result<Vec<f32>, GridError>, Result<Vec<f32>, GridError>) {
    let fill = |mode| flood(map, mode, sea);
    #[cfg(feature = "parallel")]
    {
        rayon::join(|| fill(Fill::Flat), || fill(Fill::Epsilon))
    }
    #[cfg(not(feature = "parallel"))]
    {
        (fill(Fill::Flat), fill(Fill::Epsilon))
    }
}
