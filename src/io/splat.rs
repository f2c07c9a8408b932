//! RGBA splat maps: four layers, each on its own range, in the four 8-bit
//! channels of one picture.

use alloc::vec::Vec;

use super::{HeightRange, IoError};
use crate::grid::{Grid, try_filled};

/// Packs four layers into 8-bit RGBA pixels, the splat (blend) map terrain
/// shaders read: red from `layers[0]`, green from `layers[1]`, blue from
/// `layers[2]`, alpha from `layers[3]`, each cell through its own range with
/// [`HeightRange::sample8_of`] (clamped, `round(255 * (v - min) / (max - min))`).
///
/// Returns `width * height * 4` bytes, row by row from the top, `[r, g, b, a]`
/// for each cell (cell `(x, y)` at byte `4 * (y * width + x)`): the layout of an
/// engine's RGBA8 texture. `encode_splat_png` (feature `png`) writes the same
/// bytes as a PNG. Repeat a layer, or pass a flat one, for
/// a channel you do not need.
///
/// ```
/// use hydraulic_erosion::{HeightRange, Heightmap, splat_rgba8};
///
/// let unit = HeightRange::UNIT;
/// let flux = Heightmap::from_cells(2, 1, vec![0.0, 1.0])?;
/// let wet = Heightmap::from_cells(2, 1, vec![0.5, 0.25])?;
/// let zero = Heightmap::new(2, 1)?;
/// let rgba = splat_rgba8([(&flux, unit), (&wet, unit), (&zero, unit), (&flux, unit)])?;
/// assert_eq!(rgba, [0, 128, 0, 0, 255, 64, 0, 255]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`IoError::Param`] for an invalid range;
/// [`IoError::Grid`] with [`GridError::SizeMismatch`](crate::GridError::SizeMismatch)
/// if a layer is not the size of `layers[0]` (the size expected), with
/// [`GridError::NonFinite`](crate::GridError::NonFinite) for a cell that is not
/// finite, or with [`GridError::OutOfMemory`](crate::GridError::OutOfMemory).
pub fn splat_rgba8<S: AsRef<[f32]>>(layers: [(&Grid<S>, HeightRange); 4]) -> Result<Vec<u8>, IoError> {
    let first = layers[0].0;
    for (layer, range) in layers {
        range.validate()?;
        first.check_same_size(layer)?;
        layer.check_finite()?;
    }
    // The layers' `f32` cells already take 4 bytes a cell, so this cannot overflow.
    let mut rgba = try_filled(first.len() * 4, 0_u8)?;
    for (channel, (layer, range)) in layers.into_iter().enumerate() {
        for (pixel, &v) in rgba.chunks_exact_mut(4).zip(layer.cells()) {
            pixel[channel] = range.sample8_of(v);
        }
    }
    Ok(rgba)
}
