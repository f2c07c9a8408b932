//! Map sizes that engines import: resampling, edge padding, and the side
//! lengths Unity and Unreal want.

use alloc::vec::Vec;

use crate::error::{Error, ParamError};
use crate::grid::{Grid, Heightmap};

/// An engine's terrain sizes.
///
/// ```
/// use hydraulic_erosion::EngineSize;
///
/// assert_eq!(EngineSize::Unity.side_for(1000), Some(1025));
/// assert_eq!(EngineSize::Unreal.side_for(1000), Some(1009));
/// assert_eq!(EngineSize::Unity.side_for(5000), None); // over 4097
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum EngineSize {
    /// Unity's terrain heightmaps: `2^n + 1` cells a side, 33 to 4 097.
    #[cfg_attr(feature = "serde", serde(alias = "Unity"))]
    Unity,
    /// Unreal's recommended landscape sizes (whole components): 127, 253, 505,
    /// 1 009, 2 017, 4 033 and 8 129 cells a side.
    #[cfg_attr(feature = "serde", serde(alias = "Unreal"))]
    Unreal,
}

impl EngineSize {
    /// Every side this engine takes, smallest first.
    pub fn sides(self) -> Vec<usize> {
        match self {
            Self::Unity => (5..=12).map(|n| (1 << n) + 1).collect(),
            Self::Unreal => [127, 253, 505, 1009, 2017, 4033, 8129].to_vec(),
        }
    }

    /// The smallest side this engine takes that is at least `side`, or `None`
    /// past the largest.
    pub fn side_for(self, side: usize) -> Option<usize> {
        self.sides().into_iter().find(|&s| s >= side)
    }
}

/// `map` resampled to `width` x `height` by bilinear interpolation, corners
/// aligned: the first and last rows and columns keep their places, so the
/// border's heights (and the four corners exactly) are kept, and a plane stays
/// a plane. Interpolated in `f64`, one rounding a cell; the same bits on every
/// platform. Resampling does not conserve the map's sum: it is a post-process,
/// not part of a run's mass balance.
///
/// ```
/// use hydraulic_erosion::{Heightmap, resample};
///
/// let ramp = Heightmap::from_fn(3, 3, |x, _| x as f32)?; // 0, 1, 2 across
/// let fine = resample(&ramp, 5, 5)?;
/// assert_eq!(&fine.cells()[..5], &[0.0, 0.5, 1.0, 1.5, 2.0]);
/// # Ok::<(), hydraulic_erosion::Error>(())
/// ```
///
/// # Errors
/// [`GridError::Empty`](crate::GridError::Empty) or [`GridError::TooLarge`](crate::GridError::TooLarge) for a bad target size,
/// [`GridError::OutOfMemory`](crate::GridError::OutOfMemory) if it cannot be allocated.
pub fn resample<S: AsRef<[f32]>>(map: &Grid<S>, width: usize, height: usize) -> Result<Heightmap, Error> {
    let target = Heightmap::new(width, height)?;
    let (w, h) = (map.width(), map.height());
    let cells = map.cells();
    // Source coordinate of target index `i` of `n` along a side of `m`.
    let source = |i: usize, n: usize, m: usize| -> (usize, usize, f64) {
        if n == 1 || m == 1 {
            return (0, 0, 0.0);
        }
        let t = i as f64 * (m - 1) as f64 / (n - 1) as f64;
        let i0 = (t as usize).min(m - 2);
        (i0, i0 + 1, t - i0 as f64)
    };
    let columns: Vec<(usize, usize, f64)> = (0..width).map(|x| source(x, width, w)).collect();
    let mut out = target.into_cells();
    for (y, row) in out.chunks_exact_mut(width).enumerate() {
        let (y0, y1, fy) = source(y, height, h);
        for (cell, &(x0, x1, fx)) in row.iter_mut().zip(&columns) {
            let at = |x: usize, y: usize| f64::from(cells[y * w + x]);
            let top = at(x0, y0) + (at(x1, y0) - at(x0, y0)) * fx;
            let bottom = at(x0, y1) + (at(x1, y1) - at(x0, y1)) * fx;
            *cell = (top + (bottom - top) * fy) as f32;
        }
    }
    Ok(Heightmap::from_cells(width, height, out)?)
}

/// `map` padded to `width` x `height` (each at least the map's own) by
/// repeating its last column and row: the map's cells are kept as they are, in
/// the top-left corner, and the padding continues the edges flat, so no cliff
/// appears at the seam.
///
/// ```
/// use hydraulic_erosion::{EngineSize, Heightmap, pad};
///
/// let map = Heightmap::from_fn(500, 500, |x, y| (x + y) as f32)?;
/// let side = EngineSize::Unreal.side_for(500).unwrap(); // 505
/// let padded = pad(&map, side, side)?;
/// assert_eq!(padded.get(499, 499), Some(998.0));
/// assert_eq!(padded.get(504, 504), Some(998.0));
/// # Ok::<(), hydraulic_erosion::Error>(())
/// ```
///
/// # Errors
/// A [`ParamError`] for `width` or `height` below the map's own,
/// [`GridError::TooLarge`](crate::GridError::TooLarge) or [`GridError::OutOfMemory`](crate::GridError::OutOfMemory) for a target that
/// cannot be made.
pub fn pad<S: AsRef<[f32]>>(map: &Grid<S>, width: usize, height: usize) -> Result<Heightmap, Error> {
    let (w, h) = (map.width(), map.height());
    if width < w {
        return Err(ParamError::new("width", "at least the map's width").into());
    }
    if height < h {
        return Err(ParamError::new("height", "at least the map's height").into());
    }
    let mut out = Heightmap::new(width, height)?.into_cells();
    let cells = map.cells();
    for (y, row) in out.chunks_exact_mut(width).enumerate() {
        let source = &cells[y.min(h - 1) * w..][..w];
        row[..w].copy_from_slice(source);
        row[w..].fill(source[w - 1]);
    }
    Ok(Heightmap::from_cells(width, height, out)?)
}
