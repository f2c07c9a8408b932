//! Where a run took material and where it put it down.

use alloc::vec::Vec;

use super::RgbImage;
use crate::error::GridError;
use crate::grid::Grid;
use crate::math;

/// Red where the terrain lost height, blue where it gained, white where it did
/// not change: `after - before` per cell, scaled symmetrically by `scale` (the
/// change drawn at full colour; `None`, or a scale that is not finite and
/// above 0: the largest change on the map).
///
/// The colour's strength is the square root of `|change| / scale` (clamped to 1),
/// so that the many small changes show beside the few large ones.
///
/// # Errors
/// [`GridError::SizeMismatch`] if the maps differ in size,
/// [`GridError::NonFinite`] if a cell of either is not finite.
pub fn erosion_map<A: AsRef<[f32]>, B: AsRef<[f32]>>(
    before: &Grid<A>,
    after: &Grid<B>,
    scale: Option<f32>,
) -> Result<RgbImage, GridError> {
    before.check_same_size(after)?;
    before.check_finite()?;
    after.check_finite()?;
    let changes: Vec<f32> = after.cells().iter().zip(before.cells()).map(|(a, b)| a - b).collect();
    let largest = changes.iter().fold(0.0_f32, |m, d| m.max(d.abs()));
    let scale = scale.filter(|s| s.is_finite() && *s > 0.0).unwrap_or(largest);
    let pixels = changes
        .iter()
        .map(|&d| {
            if d == 0.0 || scale == 0.0 {
                return [255; 3];
            }
            let t = math::sqrt((d.abs() / scale).min(1.0));
            let fade = (255.0 * (1.0 - t) + 0.5) as u8;
            if d < 0.0 { [255, fade, fade] } else { [fade, fade, 255] }
        })
        .collect();
    Ok(RgbImage::new(before.width(), before.height(), pixels))
}
