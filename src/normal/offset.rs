use glam::{Vec2, Vec3};
use rand_core::Rng;

use super::NormalSampler;
use crate::error::{ParamError, check_range};
use crate::grid::GridRef;
use crate::math;
use crate::random::unit_f32;

/// Reads another sampler at a per-droplet offset, bilinearly (seed 001's snowball
/// sampler).
///
/// Each droplet draws its offset once, uniformly in
/// `[-radius, radius] x [-radius, radius]` (as seed 001 does), and reads the
/// terrain there instead of under itself. That roughens paths and keeps them from
/// all converging into one gully.
///
/// Sampling is bilinear between the inner sampler's cell normals, with cell
/// `(x, y)`'s normal sitting at the point `(x, y)`; cells beyond the border read
/// the nearest border cell. Flat ground still reads exactly `(0, 1, 0)`.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(
        try_from = "OffsetConfig<S>",
        into = "OffsetConfig<S>",
        bound(serialize = "S: Clone + serde::Serialize", deserialize = "S: serde::Deserialize<'de>")
    )
)]
pub struct Offset<S> {
    inner: S,
    radius: f32,
    offset: Vec2,
}

/// What a config file holds of an [`Offset`]: the per-droplet offset is state,
/// not configuration.
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
struct OffsetConfig<S> {
    inner: S,
    radius: f32,
}

#[cfg(feature = "serde")]
impl<S> TryFrom<OffsetConfig<S>> for Offset<S> {
    type Error = ParamError;
    fn try_from(c: OffsetConfig<S>) -> Result<Self, ParamError> {
        Offset::new(c.inner, c.radius)
    }
}

#[cfg(feature = "serde")]
impl<S> From<Offset<S>> for OffsetConfig<S> {
    fn from(o: Offset<S>) -> Self {
        OffsetConfig { inner: o.inner, radius: o.radius }
    }
}

impl<S> Offset<S> {
    /// The largest allowed radius, in cells.
    pub const MAX_RADIUS: f32 = 1.0e6;

    /// Wraps `inner`, drawing offsets within `radius` cells (seed 001 uses 0.8).
    /// The offset is zero until the first droplet spawns.
    ///
    /// # Errors
    /// `radius` must be finite and in `[0, 1e6]`.
    pub fn new(inner: S, radius: f32) -> Result<Self, ParamError> {
        check_range(radius, 0.0, Self::MAX_RADIUS, "radius", "finite and in [0, 1e6] cells")?;
        Ok(Self { inner, radius, offset: Vec2::ZERO })
    }

    /// The wrapped sampler.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// The radius offsets are drawn within, in cells.
    pub fn radius(&self) -> f32 {
        self.radius
    }

    /// The current droplet's offset, in cells.
    pub fn offset(&self) -> Vec2 {
        self.offset
    }

    /// Sets the offset by hand (for tracing one droplet); it is redrawn when the
    /// next droplet spawns.
    ///
    /// # Errors
    /// Each component must be finite and within `[-radius, radius]`.
    pub fn set_offset(&mut self, offset: Vec2) -> Result<(), ParamError> {
        let allowed = "finite, each component within [-radius, radius]";
        check_range(offset.x, -self.radius, self.radius, "offset", allowed)?;
        check_range(offset.y, -self.radius, self.radius, "offset", allowed)?;
        self.offset = offset;
        Ok(())
    }
}

impl<S: NormalSampler> NormalSampler for Offset<S> {
    #[inline]
    fn cell_normal(&self, grid: &GridRef<'_>, x: usize, y: usize, height_scale: f32) -> Vec3 {
        self.inner.cell_normal(grid, x, y, height_scale)
    }

    #[inline(always)]
    fn normal(&self, grid: &GridRef<'_>, position: Vec2, height_scale: f32) -> Vec3 {
        let q = position + self.offset;
        let (fx, fy) = (math::floor(q.x), math::floor(q.y));
        let (tx, ty) = (q.x - fx, q.y - fy);
        // `as isize` saturates, so far-off points clamp to the border like near ones.
        let clamp_x = |v: isize| v.clamp(0, grid.width() as isize - 1) as usize;
        let clamp_y = |v: isize| v.clamp(0, grid.height() as isize - 1) as usize;
        let (x0, y0) = (fx as isize, fy as isize);
        let (xa, xb) = (clamp_x(x0), clamp_x(x0.saturating_add(1)));
        let (ya, yb) = (clamp_y(y0), clamp_y(y0.saturating_add(1)));
        let n = |x, y| self.inner.cell_normal(grid, x, y, height_scale);
        let (n00, n10, n01, n11) = (n(xa, ya), n(xb, ya), n(xa, yb), n(xb, yb));
        let top = n00 + (n10 - n00) * tx;
        let bottom = n01 + (n11 - n01) * tx;
        top + (bottom - top) * ty
    }

    /// The inner sampler's reach, plus the radius rounded up, plus 1 for the
    /// far corner of the bilinear read (`None` if the inner one's is unknown).
    #[inline]
    fn reach(&self) -> Option<u32> {
        let radius = -math::floor(-self.radius) as u32; // rounded up; at most 1e6
        self.inner.reach().map(|r| r.saturating_add(radius).saturating_add(1))
    }

    fn spawn(&mut self, rng: &mut dyn Rng) {
        // Seed 001: (random * 2 - 1) * radius, x first.
        let ox = (unit_f32(rng) * 2.0 - 1.0) * self.radius;
        let oy = (unit_f32(rng) * 2.0 - 1.0) * self.radius;
        self.offset = Vec2::new(ox, oy);
        self.inner.spawn(rng);
    }
}
