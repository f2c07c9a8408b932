//! Shaded relief: heights coloured and lit, with optional water and streams.

use alloc::vec::Vec;

use super::RgbImage;
use crate::error::{Error, ParamError, check, check_range};
use crate::grid::{Grid, GridRef};
use crate::io::HeightRange;
use crate::math;

/// Layers drawn over a [`Hillshade`], each the size of the map. Hydrology's pool
/// (water depth) and stream maps plug in here; any grid will do.
#[derive(Clone, Debug, Default)]
pub struct Overlays<'a> {
    /// Standing water depth per cell, in height units (0: dry). Wet cells are
    /// tinted water-blue, more strongly with depth up to
    /// [`Hillshade::water_depth`].
    pub water: Option<GridRef<'a>>,
    /// Stream intensity per cell (Hydrology's stream map: 1 where its
    /// `channel_area` drains, more downstream). Drawn
    /// as bright blue, with an ease-in-out of `stream / Hillshade::stream_full`
    /// as opacity.
    pub streams: Option<GridRef<'a>>,
}

/// Shaded relief: each cell coloured by height (sea blue, lowland green, rock,
/// snow) and lit by a distant light through its central-difference normal.
///
/// A pixel's brightness is `ambient + (1 - ambient) * max(0, n . light)`, with
/// `n` the normal of the surface exaggerated by `relief`. Flat ground is lit
/// evenly; a slope facing the light is brighter than one facing away. Computed
/// with exactly rounded operations only, so pictures are the same everywhere.
///
/// ```
/// use hydraulic_erosion::{Hillshade, Overlays, fbm_terrain};
///
/// let map = fbm_terrain(64, 64, 1)?;
/// let picture = Hillshade::default().render(&map, Overlays::default())?;
/// assert_eq!((picture.width(), picture.height()), (64, 64));
/// # Ok::<(), hydraulic_erosion::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default, deny_unknown_fields))]
pub struct Hillshade {
    /// Direction towards the light, `[x, up, y]` in map axes (`x` columns, `y`
    /// rows, so `-y` is the top of the picture); any length but zero. Default
    /// `[-1, 1.5, -1]`: from the top left, about 46 degrees up, as maps are lit.
    pub light: [f32; 3],
    /// Vertical exaggeration: the height range is drawn `relief` times the map's
    /// longer side tall. Default 0.25; range `[0, 1e6]` (0 lights everything as
    /// flat).
    pub relief: f32,
    /// The heights coloured from lowest to highest (and that `relief` scales).
    /// Default `None`: the map's own range. Give one range to compare pictures of
    /// two maps.
    pub range: Option<HeightRange>,
    /// Cells at or below this height are drawn as sea, darker with depth. Default
    /// `None`: no sea.
    pub sea_level: Option<f32>,
    /// Light on surfaces facing away from it, as a fraction. Default 0.35; range
    /// `[0, 1]`.
    pub ambient: f32,
    /// Water depth drawn fully opaque. Default 0.01 height units; range `(0, 1e30]`.
    pub water_depth: f32,
    /// Stream intensity drawn fully opaque. Default 3 (Hydrology's stream map
    /// where about three times its `channel_area` drains); range `(0, 1e30]`.
    pub stream_full: f32,
}

impl Default for Hillshade {
    fn default() -> Self {
        Self {
            light: [-1.0, 1.5, -1.0],
            relief: 0.25,
            range: None,
            sea_level: None,
            ambient: 0.35,
            water_depth: 0.01,
            stream_full: 3.0,
        }
    }
}

/// Height colours from the lowest land to the highest: (fraction, rgb).
const LAND: [(f32, [f32; 3]); 4] = [
    (0.0, [70.0, 110.0, 60.0]),
    (0.45, [140.0, 150.0, 90.0]),
    (0.75, [130.0, 110.0, 90.0]),
    (1.0, [245.0, 245.0, 250.0]),
];
/// Deep and shallow sea.
const SEA: [[f32; 3]; 2] = [[20.0, 45.0, 100.0], [60.0, 120.0, 170.0]];
/// Standing water and streams.
const WATER: [f32; 3] = [40.0, 90.0, 175.0];
const STREAM: [f32; 3] = [70.0, 150.0, 235.0];

impl Hillshade {
    /// Checks every field against its documented range.
    ///
    /// # Errors
    /// A [`ParamError`] naming the first field out of range.
    pub fn validate(&self) -> Result<(), ParamError> {
        check(
            self.light.iter().all(|c| c.is_finite() && c.abs() <= 1e18)
                && self.light.iter().any(|&c| c != 0.0),
            "light",
            "finite, each component at most 1e18 in size, not all zero",
        )?;
        check_range(self.relief, 0.0, 1e6, "relief", "finite and in [0, 1e6]")?;
        if let Some(range) = self.range {
            range.validate()?;
        }
        check(self.sea_level.is_none_or(f32::is_finite), "sea_level", "finite or None")?;
        check_range(self.ambient, 0.0, 1.0, "ambient", "finite and in [0, 1]")?;
        let positive = |v: f32| v.is_finite() && v > 0.0 && v <= 1e30;
        check(positive(self.water_depth), "water_depth", "finite and in (0, 1e30]")?;
        check(positive(self.stream_full), "stream_full", "finite and in (0, 1e30]")
    }

    /// Draws `map` with `overlays` on top.
    ///
    /// # Errors
    /// [`Error::Param`] if a field is out of range; [`Error::Grid`] if an overlay's
    /// size differs from the map's ([`GridError::SizeMismatch`](crate::GridError::SizeMismatch)) or a cell of the
    /// map or of an overlay is not finite.
    pub fn render<S: AsRef<[f32]>>(&self, map: &Grid<S>, overlays: Overlays<'_>) -> Result<RgbImage, Error> {
        self.validate()?;
        map.check_finite()?;
        for layer in [&overlays.water, &overlays.streams].into_iter().flatten() {
            map.check_same_size(layer)?;
            layer.check_finite()?;
        }
        let range = self.range.unwrap_or_else(|| HeightRange::of(map));
        let (width, height) = (map.width(), map.height());
        let span = range.max - range.min;
        // Cells per height unit, so the range stands `relief` longer sides tall.
        let scale = self.relief * width.max(height) as f32 / span;
        let light = unit(self.light);
        let at = |x: usize, y: usize| map.cells()[y * width + x];
        let (water, streams) =
            (overlays.water.as_ref().map(Grid::cells), overlays.streams.as_ref().map(Grid::cells));
        let mut pixels = Vec::with_capacity(map.len());
        for y in 0..height {
            for x in 0..width {
                // Central differences, one-sided at the edges, in height per cell.
                let (x0, x1) = (x.saturating_sub(1), (x + 1).min(width - 1));
                let (y0, y1) = (y.saturating_sub(1), (y + 1).min(height - 1));
                let dx = if x1 > x0 { (at(x1, y) - at(x0, y)) / (x1 - x0) as f32 } else { 0.0 };
                let dy = if y1 > y0 { (at(x, y1) - at(x, y0)) / (y1 - y0) as f32 } else { 0.0 };
                let normal = [-dx * scale, 1.0, -dy * scale];
                let n = math::sqrt(normal[0] * normal[0] + 1.0 + normal[2] * normal[2]);
                let lit = (normal[0] * light[0] + light[1] + normal[2] * light[2]) / n;
                let shade = self.ambient + (1.0 - self.ambient) * lit.max(0.0);
                let mut colour = self.colour(at(x, y), range).map(|c| c * shade);
                let i = y * width + x;
                if let Some(depth) = water.map(|w| w[i]).filter(|&d| d > 0.0) {
                    let alpha = 0.4 + 0.6 * (depth / self.water_depth).min(1.0);
                    colour = blend(colour, WATER, alpha);
                }
                if let Some(stream) = streams.map(|s| s[i]) {
                    let t = (stream / self.stream_full).clamp(0.0, 1.0);
                    colour = blend(colour, STREAM, 0.9 * t * t * (3.0 - 2.0 * t));
                }
                pixels.push(colour.map(|c| (c.clamp(0.0, 255.0) + 0.5) as u8));
            }
        }
        Ok(RgbImage::new(width, height, pixels))
    }

    /// The unlit colour of height `h`.
    fn colour(&self, h: f32, range: HeightRange) -> [f32; 3] {
        let fraction =
            |h: f32, lo: f32, hi: f32| if hi > lo { ((h - lo) / (hi - lo)).clamp(0.0, 1.0) } else { 1.0 };
        match self.sea_level {
            Some(sea) if h <= sea => blend(SEA[0], SEA[1], fraction(h, range.min, sea)),
            sea => {
                let t = fraction(h, sea.unwrap_or(range.min).max(range.min), range.max);
                let k = LAND.windows(2).position(|s| t <= s[1].0).unwrap_or(LAND.len() - 2);
                let ((t0, c0), (t1, c1)) = (LAND[k], LAND[k + 1]);
                blend(c0, c1, (t - t0) / (t1 - t0))
            }
        }
    }
}

/// `a` moved a fraction `alpha` of the way to `b`.
fn blend(a: [f32; 3], b: [f32; 3], alpha: f32) -> [f32; 3] {
    core::array::from_fn(|i| a[i] + (b[i] - a[i]) * alpha)
}

/// `v` (finite, not all zero) scaled to unit length. In `f32` where its
/// squared length is a normal `f32`; in `f64` where that underflows (a light
/// of `[1e-30, 0, 0]`), which `f32` squares cannot resolve.
fn unit([x, y, z]: [f32; 3]) -> [f32; 3] {
    let squared = x * x + y * y + z * z;
    if squared >= f32::MIN_POSITIVE {
        let length = math::sqrt(squared);
        return [x / length, y / length, z / length];
    }
    let (x, y, z) = (f64::from(x), f64::from(y), f64::from(z));
    let length = math::sqrt_f64(x * x + y * y + z * z);
    [(x / length) as f32, (y / length) as f32, (z / length) as f32]
}
