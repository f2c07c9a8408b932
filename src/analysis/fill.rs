//! Priority-flood depression filling (Barnes, Lehman & Mulla 2014, the
//! "improved" variant: cells inside a depression go through a plain queue, only
//! the rest through the priority queue).

use alloc::collections::{BinaryHeap, VecDeque};
use alloc::vec::Vec;
use core::cmp::Reverse;

use super::{for_each_neighbour, on_border};
use crate::error::GridError;
use crate::grid::{Grid, Heightmap, try_filled};

/// How [`fill_depressions`] raises closed depressions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Fill {
    /// Exactly to their spill level: lakes become flat.
    #[default]
    #[cfg_attr(feature = "serde", serde(alias = "Flat"))]
    Flat,
    /// Each filled cell one `f32` step (the next representable value) above the
    /// cell it was reached from, so every cell has a strictly descending path to
    /// the border: what flow routing needs (Barnes et al.'s Priority-Flood+ε).
    /// Except at the top of `f32`'s range: a cell that would rise past
    /// `f32::MAX` stays there, level with the cell it was reached from, so a
    /// depression whose spill level is within a few steps of `f32::MAX` is
    /// filled flat and does not drain.
    #[cfg_attr(feature = "serde", serde(alias = "Epsilon"))]
    Epsilon,
}

/// A filled surface and the depth of the closed depressions.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct FilledSurface {
    /// The surface with every closed depression filled (as [`Fill`] says).
    pub surface: Heightmap,
    /// How far each cell lies below its depression's spill level (the flat
    /// fill's rise; 0 outside closed depressions), in height units: the lake
    /// that would stand there, whatever the fill mode. At most `f32::MAX`
    /// (a depth between heights near `±f32::MAX` saturates).
    pub depth: Heightmap,
}

/// Fills the closed depressions of `map`, the border being the outlet.
///
/// `O(n log n)`; no recursion. Ties in the priority queue break by cell index,
/// so the result is deterministic. The same as [`fill_depressions_to`] with no
/// outlet but the border.
///
/// # Errors
/// [`GridError::NonFinite`] for the first NaN or infinite cell,
/// [`GridError::OutOfMemory`] if the working buffers cannot be allocated,
/// [`GridError::TooLarge`] if the map has more than `u32::MAX` cells.
pub fn fill_depressions<S: AsRef<[f32]>>(map: &Grid<S>, mode: Fill) -> Result<FilledSurface, GridError> {
    fill_depressions_to(map, mode, |_| false)
}

/// Fills the closed depressions of `map` that drain to none of its outlets: the
/// border, and every cell `i` (index `y * width + x`) for which `outlet(i)` is
/// true, wherever it lies: the sea below a sea level
/// (`|i| map.cells()[i] <= level`), say, or a lake taken as base level.
///
/// Outlet cells keep their height (they are never raised, and their depth is
/// 0), and a hollow that spills into one is open, not closed: it is filled
/// only up to where it would overflow the lowest way out, border or outlet.
/// With `outlet` false everywhere this is [`fill_depressions`], bit for bit.
///
/// `O(n log n)`; no recursion; `outlet` is called at most once per
/// cell. Ties in the
/// priority queue break by cell index, so the result is deterministic.
///
/// # Errors
/// [`GridError::NonFinite`] for the first NaN or infinite cell,
/// [`GridError::OutOfMemory`] if the working buffers cannot be allocated,
/// [`GridError::TooLarge`] if the map has more than `u32::MAX` cells.
pub fn fill_depressions_to<S: AsRef<[f32]>>(
    map: &Grid<S>,
    mode: Fill,
    outlet: impl Fn(usize) -> bool,
) -> Result<FilledSurface, GridError> {
    map.check_finite()?;
    if mode == Fill::Epsilon {
        // Two floods (the flat one for the depth): ask `outlet` once a cell
        // and let both read the answers.
        let (w, h) = (map.width(), map.height());
        super::indexable(w, h)?;
        let mut marks = try_filled(map.len(), false)?;
        for (i, mark) in marks.iter_mut().enumerate().filter(|&(i, _)| !on_border(i, w, h)) {
            *mark = outlet(i);
        }
        return fill_both(map, mode, &|i| marks[i]);
    }
    fill_both(map, mode, &outlet)
}

/// [`fill_depressions_to`] once `outlet` may be called again for a cell.
fn fill_both<S: AsRef<[f32]>>(
    map: &Grid<S>,
    mode: Fill,
    outlet: &impl Fn(usize) -> bool,
) -> Result<FilledSurface, GridError> {
    let flat = flood(map, Fill::Flat, outlet)?;
    // In f64, saturating: between heights near -f32::MAX and f32::MAX the
    // depth passes f32's range (it came out infinite, and `from_cells`
    // refused a finite map's fill as non-finite).
    let depth: Vec<f32> = flat
        .iter()
        .zip(map.cells())
        .map(|(&f, &h)| ((f64::from(f) - f64::from(h)) as f32).min(f32::MAX))
        .collect();
    let surface = if mode == Fill::Flat { flat } else { flood(map, Fill::Epsilon, outlet)? };
    let (w, h) = (map.width(), map.height());
    Ok(FilledSurface {
        surface: Heightmap::from_cells(w, h, surface)?,
        depth: Heightmap::from_cells(w, h, depth)?,
    })
}

/// A cell's place in the priority queue, lowest first, then lowest index: its
/// height's bits in [`f32::total_cmp`]'s order, above its index, so the queue
/// compares one integer (comparing the pair took a third of a fill's
/// instructions).
fn open_key(height: f32, index: usize) -> u64 {
    let bits = height.to_bits();
    // `total_cmp`'s key (negative values' magnitude bits flipped), with the
    // sign bit flipped so that unsigned order is its signed order.
    let ordered = (bits ^ ((((bits as i32) >> 31) as u32) >> 1)) ^ 0x8000_0000;
    (u64::from(ordered) << 32) | index as u64
}

/// The cell index of an [`open_key`].
fn open_index(key: u64) -> usize {
    (key & 0xffff_ffff) as usize
}

/// The next `f32` above `v`, or `v` itself past the largest finite value.
fn next_up(v: f32) -> f32 {
    let next = if v == 0.0 {
        f32::from_bits(1)
    } else if v > 0.0 {
        f32::from_bits(v.to_bits() + 1)
    } else {
        f32::from_bits(v.to_bits() - 1)
    };
    if next.is_finite() { next } else { v }
}

/// The priority flood from the border and the cells `outlet` marks: the filled
/// heights, outlets untouched.
pub(super) fn flood<S: AsRef<[f32]>>(
    map: &Grid<S>,
    mode: Fill,
    outlet: &impl Fn(usize) -> bool,
) -> Result<Vec<f32>, GridError> {
    let (w, h) = (map.width(), map.height());
    let n = map.len();
    super::indexable(w, h)?;
    let mut out = try_filled(n, 0.0f32)?;
    out.copy_from_slice(map.cells());
    let mut closed = try_filled(n, false)?;
    let mut open = BinaryHeap::new();
    let mut pit = VecDeque::new();
    for i in (0..n).filter(|&i| on_border(i, w, h) || outlet(i)) {
        closed[i] = true;
        open.push(Reverse(open_key(out[i], i)));
    }
    loop {
        let c = match pit.pop_front() {
            Some(c) => c,
            None => match open.pop() {
                Some(Reverse(key)) => open_index(key),
                None => break,
            },
        };
        let level = out[c];
        let fill_to = if mode == Fill::Flat { level } else { next_up(level) };
        for_each_neighbour(c, w, h, |j, _| {
            if closed[j] {
                return;
            }
            closed[j] = true;
            if out[j] <= fill_to {
                out[j] = fill_to;
                pit.push_back(j);
            } else {
                open.push(Reverse(open_key(out[j], j)));
            }
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::{open_index, open_key};
    use alloc::vec::Vec;

    /// The queue's integer keys order cells as `f32::total_cmp` on their
    /// heights, then by index, and give the index back: on signed zeros,
    /// subnormals, the extremes, infinities and NaNs of both signs.
    #[test]
    fn keys_order_as_total_cmp_then_index() {
        let heights: Vec<f32> = [
            0.0,
            -0.0,
            f32::from_bits(1),
            -f32::from_bits(1),
            f32::MIN_POSITIVE,
            -f32::MIN_POSITIVE,
            1.0,
            -1.0,
            1.5,
            -1.5,
            f32::MAX,
            f32::MIN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            -f32::NAN,
        ]
        .into();
        let indices = [0usize, 1, 7, 65_535, u32::MAX as usize - 1];
        for &a in &heights {
            for &b in &heights {
                for &i in &indices {
                    for &j in &indices {
                        let expected = a.total_cmp(&b).then(i.cmp(&j));
                        assert_eq!(open_key(a, i).cmp(&open_key(b, j)), expected, "{a:?}@{i} vs {b:?}@{j}");
                    }
                }
            }
            for &i in &indices {
                assert_eq!(open_index(open_key(a, i)), i);
            }
        }
    }
}
