//! Maps that steer a run: where it may change the terrain (an active mask),
//! where rain falls, and how easily each cell erodes.

use alloc::vec::Vec;

use glam::Vec2;
use rand_core::Rng;

use crate::carry;
use crate::error::{Error, GridError, ParamError};
use crate::grid::{GridRef, try_filled};
use crate::layers::Track;
use crate::random::unit_f32;

/// Maps that steer a run, each optional and each the map's size; pass them
/// with [`RunOptions::with_controls`](crate::RunOptions::with_controls).
/// Without any (the default) a run is exactly as before.
///
/// - **`active`**, in `[0, 1]` a cell: the artist's mask, a blend of the
///   erosion. Every cut a droplet makes in a cell is scaled by its value;
///   deposits land whole on any cell above 0 (scaling them too would leave
///   droplets loaded until one final deposit made a spike). No droplet starts
///   on a cell of 0, and a droplet about to enter one stops and puts its load
///   down in the cell it is in (fate [`Fate::Masked`](crate::Fate::Masked)),
///   so the sediment stays booked. Cells of 0 keep their bits. Rounding
///   remainders go to active cells only.
/// - **`rain`**, `>= 0` a cell (any scale): droplets start on a cell with a
///   probability proportional to its value (times whether it is active), at a
///   uniform point inside it. A map of zeros starts no droplet.
/// - **`erodibility`**, `>= 0` a cell (1: the params' erosion, 0: bedrock, 2:
///   twice as soft): scales every cut made in the cell. Deposits are not
///   scaled.
///
/// Every model honours them, in every mode and `Parallel` layout:
/// [`Physical`](crate::Physical) droplets as above; [`Snowball`](crate::Snowball)s
/// likewise (a snowball that rolls onto a masked cell puts its load down in
/// the cell it came from), and its blur weighs each exchange between two
/// cells by the smaller of their `active * min(erodibility, 1)`, so masked
/// cells and bedrock keep their bits; the [`Thermal`](crate::Thermal) pass
/// sends material from a cell in proportion to that weight and only to
/// active cells (it has no rain); [`Hydrology`](crate::Hydrology)'s particles
/// as `Physical`'s droplets, and its floods treat masked cells as walls, so
/// no pool covers them.
///
/// Conservation is exact with any of them ([`MassBalance`](crate::MassBalance)):
/// a droplet is credited with each change as applied.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Controls<'a> {
    /// Where the run may change the terrain, `[0, 1]` a cell; `None`: everywhere.
    pub active: Option<GridRef<'a>>,
    /// Where droplets start, weights `>= 0`; `None`: uniformly.
    pub rain: Option<GridRef<'a>>,
    /// How easily each cell erodes, `>= 0` (1 as the params say); `None`: 1 everywhere.
    pub erodibility: Option<GridRef<'a>>,
}

impl Controls<'_> {
    /// Whether no map is set.
    pub fn is_empty(&self) -> bool {
        self.active.is_none() && self.rain.is_none() && self.erodibility.is_none()
    }

    /// Checks that every map has the size `width x height` and valid cells.
    ///
    /// # Errors
    /// [`GridError::SizeMismatch`] for a map of another size; a [`ParamError`]
    /// (fields `controls.active`, `controls.rain`, `controls.erodibility`) for a
    /// cell out of its range or not finite.
    pub fn validate(&self, width: usize, height: usize) -> Result<(), Error> {
        let maps = [
            (self.active.as_ref(), "controls.active", "every cell finite and in [0, 1]", 1.0),
            (self.rain.as_ref(), "controls.rain", "every cell finite and >= 0", f32::MAX),
            (self.erodibility.as_ref(), "controls.erodibility", "every cell finite and >= 0", f32::MAX),
        ];
        for (map, field, allowed, max) in maps {
            let Some(map) = map else { continue };
            if (map.width(), map.height()) != (width, height) {
                return Err(GridError::size_mismatch((width, height), (map.width(), map.height())).into());
            }
            if !map.cells().iter().all(|&v| (0.0..=max).contains(&v)) {
                return Err(ParamError::new(field, allowed).into());
            }
        }
        Ok(())
    }
}

/// What a run records and obeys besides its params: the output layers'
/// tracks, and the [`Controls`]' gate and starts.
#[derive(Debug, Default)]
pub struct Extras<'a> {
    pub(crate) tracks: Option<&'a mut [Track]>,
    pub(crate) gate: Gate<'a>,
    /// `None`: uniform starts (the draws of a run without controls).
    pub(crate) starts: Option<&'a Starts>,
}

/// What a kernel reads of the [`Controls`] while it changes cells: the
/// active mask and the erodibility, over the cells it works on (the map, or
/// a tile's zone).
#[derive(Clone, Copy, Debug)]
pub struct Gate<'a> {
    pub(crate) active: Option<&'a [f32]>,
    pub(crate) erodibility: Option<&'a [f32]>,
    /// Neither map: the one test the droplet loops make (a flag, not two
    /// options, costs a lockstep step nothing measurable).
    open: bool,
}

impl Default for Gate<'_> {
    fn default() -> Self {
        Gate::new(None, None)
    }
}

impl<'a> Gate<'a> {
    /// A gate over these cells (the map's, or a zone's copies).
    pub(crate) fn new(active: Option<&'a [f32]>, erodibility: Option<&'a [f32]>) -> Self {
        Gate { active, erodibility, open: active.is_none() && erodibility.is_none() }
    }

    /// The gate of `controls` over the whole map.
    pub(crate) fn of(controls: &Controls<'a>) -> Self {
        let cells = |m: GridRef<'a>| m.into_parts().2;
        Gate::new(controls.active.clone().map(cells), controls.erodibility.clone().map(cells))
    }

    /// This gate's cells of `zone` (on a map `width` cells a row), copied for
    /// a tile's turn; [`ZoneGate::gate`] reads them.
    pub(crate) fn copy_zone(&self, zone: &crate::tiles::Zone, width: usize) -> ZoneGate {
        let copy = |cells: &[f32]| zone.copy_in(cells, width);
        ZoneGate { active: self.active.map(copy), erodibility: self.erodibility.map(copy) }
    }

    /// Whether the gate changes nothing (no active mask, no erodibility).
    #[inline(always)]
    pub(crate) fn is_open(&self) -> bool {
        self.open
    }

    /// Whether the gate has an active mask (cells a droplet may not enter).
    #[inline(always)]
    pub(crate) fn masks(&self) -> bool {
        self.active.is_some()
    }

    /// Whether a droplet may enter cell `i` (its active value is above 0).
    #[inline(always)]
    pub(crate) fn admits(&self, i: usize) -> bool {
        self.open || self.active.is_none_or(|a| a[i] > 0.0)
    }

    /// The share of an exchange between neighbours (a blur's, a talus
    /// slide's) that cell `i` takes part in: `active * min(erodibility, 1)`.
    #[inline]
    pub(crate) fn weight(&self, i: usize) -> f64 {
        let active = self.active.map_or(1.0, |a| a[i]);
        f64::from(active * self.erodibility.map_or(1.0, |e| e[i].min(1.0)))
    }

    /// Whether a deposit of `total` (a load plus the carried rounding) on cell
    /// `i` must wait in the carry: a total a hair below 0 (deposits' `f32`
    /// shares rounded up) would lower the cell without the gate's scaling,
    /// which only a fully movable cell (weight 1) may take; elsewhere bedrock
    /// would go down an ulp. What waits reaches
    /// [`flush_target`](Self::flush_target) at the run's end.
    #[inline]
    pub(crate) fn holds_back(&self, i: usize, total: f64) -> bool {
        total < 0.0 && self.weight(i) < 1.0
    }

    /// Where a run's rounding remainder goes: the first cell of smallest
    /// magnitude ([`carry::smallest_magnitude`]) among those a run may move
    /// (`weight > 0`: admitted and erodible, so a negative remainder lowers no
    /// bedrock), else among the admitted ones; with an open gate, over all.
    pub(crate) fn flush_target(&self, cells: &[f32]) -> usize {
        let movable = carry::smallest_magnitude(cells, (0..cells.len()).filter(|&i| self.weight(i) > 0.0));
        if self.weight(movable) > 0.0 {
            movable
        } else {
            carry::smallest_magnitude(cells, (0..cells.len()).filter(|&i| self.admits(i)))
        }
    }

    /// Places `remainder` (the sub-ulp leftover of exact books) on
    /// [`flush_target`](Self::flush_target), calling `book(old, new)` for
    /// each cell it changes: what an add rounds off across a binade goes to
    /// the target after it ([`carry::add_all`]). Returns what no add could
    /// place (the report's `unplaced`).
    #[must_use]
    pub(crate) fn flush(&self, cells: &mut [f32], remainder: f64, mut book: impl FnMut(f32, f32)) -> f64 {
        carry::add_all(cells, remainder, |cells| self.flush_target(cells), |_, old, new| book(old, new))
    }

    /// The height cell `i` (now `current`) takes when a droplet would set it
    /// to `proposed`: a cut scaled by the cell's active value and its
    /// erodibility, a deposit whole (none on a masked cell). A scale of 0
    /// keeps `current`'s bits.
    #[inline(always)]
    pub(crate) fn apply(&self, i: usize, current: f32, proposed: f32) -> f32 {
        if self.is_open() {
            return proposed;
        }
        let change = proposed - current;
        let active = self.active.map_or(1.0, |a| a[i]);
        // Deposits are scaled only to keep masked cells as they are: a
        // partial mask that also held deposits back would leave droplets
        // loaded until their final deposit made a spike.
        let scale = if change < 0.0 {
            active * self.erodibility.map_or(1.0, |e| e[i])
        } else if active > 0.0 {
            1.0
        } else {
            0.0
        };
        if scale == 1.0 {
            proposed
        } else if scale == 0.0 {
            current
        } else {
            current + change * scale
        }
    }
}

/// A gate's cells of one tile's zone (see [`Gate::copy_zone`]).
pub(crate) struct ZoneGate {
    active: Option<Vec<f32>>,
    erodibility: Option<Vec<f32>>,
}

impl ZoneGate {
    /// The gate over the zone's cells.
    pub(crate) fn gate(&self) -> Gate<'_> {
        Gate::new(self.active.as_deref(), self.erodibility.as_deref())
    }
}

/// Up to `count` droplet starts for a tiled sweep (see [`draw_start`]): fewer
/// only when no droplet can start (the controls' rain falls nowhere).
pub(crate) fn sweep_starts<'r, R: Rng + ?Sized>(
    starts: Option<&'r Starts>,
    rng: &'r mut R,
    count: u64,
    (width, height): (usize, usize),
) -> impl Iterator<Item = Vec2> + 'r {
    (0..count).map_while(move |_| draw_start(starts, rng, width, height))
}

/// A droplet's start on a `width x height` map: from `starts` (see
/// [`Starts::draw`]), or uniformly without them (`x` then `y`, one `next_u64`
/// each); `None` when no droplet can start.
#[inline]
pub(crate) fn draw_start<R: Rng + ?Sized>(
    starts: Option<&Starts>,
    rng: &mut R,
    width: usize,
    height: usize,
) -> Option<Vec2> {
    match starts {
        Some(starts) => starts.draw(rng),
        None => Some(Vec2::new(unit_f32(rng) * width as f32, unit_f32(rng) * height as f32)),
    }
}

/// Where droplets start: uniformly on the map (no rain map, no active mask:
/// the draws of a run without controls), or on cells drawn with the weights
/// `rain * (active > 0)`.
#[derive(Clone, Debug)]
pub struct Starts {
    width: usize,
    height: usize,
    /// Running sums of the weights, cell by cell; empty: uniform.
    cumulative: Vec<f64>,
}

impl Starts {
    /// The starts for `controls` on a `width x height` map.
    ///
    /// # Errors
    /// [`GridError::OutOfMemory`] if the table cannot be allocated.
    pub(crate) fn new(controls: &Controls<'_>, width: usize, height: usize) -> Result<Self, GridError> {
        if controls.rain.is_none() && controls.active.is_none() {
            return Ok(Starts { width, height, cumulative: Vec::new() });
        }
        let mut cumulative = try_filled(width * height, 0.0)?;
        let mut sum = 0.0;
        for (i, total) in cumulative.iter_mut().enumerate() {
            let rain = controls.rain.as_ref().map_or(1.0, |r| f64::from(r.cells()[i]));
            let open = controls.active.as_ref().is_none_or(|a| a.cells()[i] > 0.0);
            sum += if open { rain } else { 0.0 };
            *total = sum;
        }
        Ok(Starts { width, height, cumulative })
    }

    /// A droplet's start. Uniform: `x` then `y` from one `next_u64` each (top
    /// 24 bits). Weighted: a cell from one `next_u64` (53 bits, the first cell
    /// whose running sum exceeds that fraction of the total), then `x` and `y`
    /// inside it as above. `None` when no droplet can start.
    #[inline]
    pub(crate) fn draw<R: Rng + ?Sized>(&self, rng: &mut R) -> Option<Vec2> {
        let (wf, hf) = (self.width as f32, self.height as f32);
        let Some(&total) = self.cumulative.last() else {
            return Some(Vec2::new(unit_f32(rng) * wf, unit_f32(rng) * hf));
        };
        if total <= 0.0 {
            return None;
        }
        let target = (rng.next_u64() >> 11) as f64 * (1.0 / 9_007_199_254_740_992.0) * total;
        let i = self.cumulative.partition_point(|&c| c <= target).min(self.cumulative.len() - 1);
        // Rounding can land on a cell of weight 0 (its sum equal to the last
        // open one's): step back to the cell that raised the sum.
        let c = &self.cumulative;
        let i = (0..=i).rev().find(|&j| c[j] > if j == 0 { 0.0 } else { c[j - 1] }).unwrap_or(i);
        let (x, y) = ((i % self.width) as f32, (i / self.width) as f32);
        // Inside the cell: `x + fraction` can round up to the next cell.
        // (The float below `at + 1`, a positive whole number: its bits less one.)
        let inside = |at: f32, fraction: f32| (at + fraction).min(f32::from_bits((at + 1.0).to_bits() - 1));
        Some(Vec2::new(inside(x, unit_f32(rng)), inside(y, unit_f32(rng))))
    }
}
