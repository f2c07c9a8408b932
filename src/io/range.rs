//! The explicit mapping between heights and 16- and 8-bit samples.

use crate::error::{ParamError, check};
use crate::grid::Grid;
use crate::math;

/// The heights that 16-bit formats (r16, PNG) map onto their samples: `min` is
/// sample 0 and `max` is sample 65535, linearly in between.
///
/// Writing maps a height `h` to `round(65535 * (h - min) / (max - min))`, rounding
/// half up, after clamping `h` into `[min, max]` (heights outside the range are
/// clamped, not rejected: pick the range to cover the map, e.g. with
/// [`HeightRange::of`]). Reading maps sample `v` to `min + (max - min) * v / 65535`,
/// computed in `f64` and rounded once to `f32`. So a height read back is within half
/// a step, `(max - min) / 131070`, of the height written (plus one `f32` rounding),
/// and every sample survives read-then-write unchanged when the range's `f32`
/// spacing is finer than a step (for example `[0, 1]`).
///
/// Default `[0, 1]`: the range of the crate's generators and of the
/// [`ErosionParams`](crate::ErosionParams) defaults.
///
/// ```
/// use hydraulic_erosion::HeightRange;
///
/// let range = HeightRange { min: -10.0, max: 500.0 };
/// assert_eq!(range.sample_of(-10.0), 0);
/// assert_eq!(range.sample_of(500.0), 65535);
/// assert_eq!(range.height_of(65535), 500.0);
/// assert!((range.height_of(range.sample_of(123.4)) - 123.4).abs() <= 510.0 / 131070.0);
/// ```
///
/// 8-bit formats (`encode_png8` with the `png` feature, the channels of
/// [`splat_rgba8`](crate::splat_rgba8)) map the same range onto `[0, 255]`:
/// [`sample8_of`](Self::sample8_of) writes `round(255 * (h - min) / (max - min))`,
/// half up, after the same clamping, and `decode_png` reads 8-bit sample `v` back
/// as `height_of(v * 257)`, which is `min + (max - min) * v / 255`: within half an
/// 8-bit step, `(max - min) / 510`, of the height written (plus one `f32`
/// rounding).
///
/// ```
/// use hydraulic_erosion::HeightRange;
///
/// let range = HeightRange { min: 0.0, max: 100.0 };
/// assert_eq!(range.sample8_of(0.0), 0);
/// assert_eq!(range.sample8_of(100.0), 255);
/// assert_eq!(range.sample8_of(50.0), 128); // 127.5 rounds up
/// assert_eq!(range.sample8_of(-3.0), 0); // clamped
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default, deny_unknown_fields))]
pub struct HeightRange {
    /// The height of sample 0. Default 0.
    pub min: f32,
    /// The height of sample 65535 (and of 8-bit sample 255); must be above `min`.
    /// Default 1.
    pub max: f32,
}

impl Default for HeightRange {
    fn default() -> Self {
        Self::UNIT
    }
}

impl HeightRange {
    /// `[0, 1]`.
    pub const UNIT: Self = Self { min: 0.0, max: 1.0 };

    /// The largest sample, 65535.
    const TOP: f64 = 65535.0;

    /// The smallest range that holds every cell of `map`: its `[min, max]`. A flat
    /// map at height `h` gets `[h, h + 1]`; where `h + 1` rounds to `h`, `[h,
    /// 2h]` for a positive `h` and `[h, 0]` for a negative one (`[h - |h|, h]`
    /// where `2h` would overflow), so the range of a finite map is always valid.
    pub fn of<S: AsRef<[f32]>>(map: &Grid<S>) -> Self {
        let (min, max) = map.min_max();
        if min < max {
            return Self { min, max };
        }
        let step = if min + 1.0 > min { 1.0 } else { min.abs() };
        if (min + step).is_finite() {
            Self { min, max: min + step }
        } else {
            Self { min: min - step, max: min }
        }
    }

    /// The union of two ranges.
    pub fn union(self, other: Self) -> Self {
        Self { min: self.min.min(other.min), max: self.max.max(other.max) }
    }

    /// Checks that both ends are finite and `min < max`.
    ///
    /// # Errors
    /// A [`ParamError`] for field `range`.
    pub fn validate(&self) -> Result<(), ParamError> {
        check(
            self.min.is_finite() && self.max.is_finite() && self.min < self.max,
            "range",
            "finite, with min < max",
        )
    }

    /// The sample for height `h`: clamped into the range, scaled to `[0, 65535]`,
    /// rounded half up. NaN maps to 0. Assumes a valid range.
    #[inline]
    pub fn sample_of(&self, h: f32) -> u16 {
        let span = f64::from(self.max) - f64::from(self.min);
        let t = ((f64::from(h) - f64::from(self.min)) / span).clamp(0.0, 1.0);
        // `as` saturates, and sends NaN to 0.
        math::floor_f64(t * Self::TOP + 0.5) as u16
    }

    /// The 8-bit sample for height `h`: clamped into the range, scaled to
    /// `[0, 255]`, rounded half up. NaN maps to 0. Assumes a valid range.
    #[inline]
    pub fn sample8_of(&self, h: f32) -> u8 {
        let span = f64::from(self.max) - f64::from(self.min);
        let t = ((f64::from(h) - f64::from(self.min)) / span).clamp(0.0, 1.0);
        // `as` saturates, and sends NaN to 0.
        math::floor_f64(t * 255.0 + 0.5) as u8
    }

    /// The height of sample `v`: `min + (max - min) * v / 65535`, in `f64`, rounded
    /// once to `f32`. Sample 0 gives `min` and 65535 gives `max` exactly.
    #[inline]
    pub fn height_of(&self, v: u16) -> f32 {
        let (min, max) = (f64::from(self.min), f64::from(self.max));
        if v == u16::MAX {
            return self.max;
        }
        (min + (max - min) * f64::from(v) / Self::TOP) as f32
    }
}
