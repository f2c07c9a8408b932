//! Surface normals: how a droplet feels the slope under it.

mod builtin;
mod central_difference;
pub(crate) mod eight_facet;
mod offset;

pub use builtin::{BaseSampler, Sampler};
pub use central_difference::CentralDifference;
pub use eight_facet::EightFacet;
pub use offset::Offset;

use alloc::boxed::Box;

use glam::{Vec2, Vec3};
use rand_core::Rng;

use crate::grid::GridRef;

/// The normal of flat ground, `(0, 1, 0)`.
pub const UP: Vec3 = Vec3::Y;

/// Maps a position on a grid to the terrain's surface normal there.
///
/// The result points up (`y > 0`); its `x` and `z` components point downhill along
/// map `x` and map `y` and grow with the slope; on flat ground it is exactly
/// `(0, 1, 0)`. Heights are multiplied by `height_scale` before slopes are taken,
/// so a cell-to-cell rise of `dh` is a slope of `height_scale * dh` per cell.
///
/// # Implementing this
///
/// Provide [`cell_normal`](NormalSampler::cell_normal); override
/// [`normal`](NormalSampler::normal) if the sampler looks between cells, and
/// [`spawn`](NormalSampler::spawn) if it keeps per-droplet state. Samplers are
/// cloned once per run, so per-droplet state never leaks between runs.
///
/// ```
/// use glam::Vec3;
/// use hydraulic_erosion::{ErosionParams, GridRef, Heightmap, NormalSampler, Physical, Simulator};
///
/// /// Forward difference: the slope towards the next column and row.
/// #[derive(Clone, Copy)]
/// struct Forward;
///
/// impl NormalSampler for Forward {
///     fn cell_normal(&self, grid: &GridRef<'_>, x: usize, y: usize, scale: f32) -> Vec3 {
///         let h = grid[(x, y)];
///         let hx = grid.get(x + 1, y).unwrap_or(h);
///         let hy = grid.get(x, y + 1).unwrap_or(h);
///         Vec3::new(scale * (h - hx), 1.0, scale * (h - hy)).normalize()
///     }
/// }
///
/// let mut map = Heightmap::from_fn(32, 32, |x, _| x as f32 * 0.1).unwrap();
/// let params = ErosionParams { droplets: 100, ..ErosionParams::default() };
/// let mut physical = Physical::with_sampler(params, Forward).unwrap();
/// let report = physical.run_seeded(&mut map, 7).unwrap();
/// assert_eq!(report.droplets, 100);
/// ```
pub trait NormalSampler {
    /// The normal of cell `(x, y)`; `x < width` and `y < height` hold.
    fn cell_normal(&self, grid: &GridRef<'_>, x: usize, y: usize, height_scale: f32) -> Vec3;

    /// The normal at a continuous `position` (in cells). The default reads the cell
    /// that holds it (positions outside the grid read the nearest cell).
    #[inline]
    fn normal(&self, grid: &GridRef<'_>, position: Vec2, height_scale: f32) -> Vec3 {
        let (x, y) = grid.cell_at(position);
        self.cell_normal(grid, x, y, height_scale)
    }

    /// The normal at `position`, which lies in cell `(x, y)` (`(x, y)` is
    /// [`GridRef::cell_at`] of `position`). Simulators call this: they know the
    /// cell already. The default calls [`normal`](NormalSampler::normal); samplers
    /// that read whole cells override it to read cell `(x, y)` directly.
    #[inline]
    fn normal_in_cell(
        &self,
        grid: &GridRef<'_>,
        position: Vec2,
        x: usize,
        y: usize,
        height_scale: f32,
    ) -> Vec3 {
        let _ = (x, y);
        self.normal(grid, position, height_scale)
    }

    /// Called once as each droplet is spawned, after its position is drawn.
    /// Samplers with per-droplet state draw it here; the default does nothing and
    /// draws no random numbers.
    #[inline]
    fn spawn(&mut self, rng: &mut dyn Rng) {
        let _ = rng;
    }

    /// How far the sampler reads: every cell that [`normal`](NormalSampler::normal)
    /// at a position, or [`cell_normal`](NormalSampler::cell_normal) of a cell,
    /// reads lies within this many cells of that position's cell (clamped to
    /// the grid, as [`GridRef::cell_at`]) or of that cell, along `x` and along
    /// `y`. `None`
    /// (the default) if unknown. Tiled parallel runs need it to know which part
    /// of the map a droplet's next step reads; the built-in samplers give it,
    /// and an [`Offset`] adds its radius.
    #[inline]
    fn reach(&self) -> Option<u32> {
        None
    }

    /// The lane kernel [`Mode::Lockstep`](crate::Mode::Lockstep) (and so the
    /// default [`Mode::Fast`](crate::Mode::Fast)) computes this sampler's normals
    /// with across SIMD lanes, if it has one. Only the crate makes
    /// [`LaneKernel`]s: the 8-facet sampler has one, as does
    /// [`Sampler::EightFacet`]. With the default, `None`, those modes still run
    /// in lanes, each lane asking its own copy of the sampler for its normal (and
    /// a `Parallel` run uses batches instead of tiles). A sampler that returns
    /// a kernel runs as that kernel's sampler ([`EightFacet`]) in every mode of
    /// [`Physical`](crate::Physical), [`Mode::Sequential`](crate::Mode::Sequential)
    /// included: its normals are that sampler's, bit for bit.
    #[inline]
    fn lane_kernel(&self) -> Option<LaneKernel> {
        None
    }
}

/// A [`NormalSampler`] chosen at run time, boxed: `Box<dyn DynSampler>` is
/// itself a sampler (cloned per run like any other), so a user's sampler picked
/// from a config file runs in every mode, as the built-in
/// [`Sampler`] enum does for the crate's own.
///
/// Every `NormalSampler + Clone + Send + Sync + 'static` is one.
///
/// ```
/// use hydraulic_erosion::{CentralDifference, DynSampler, EightFacet, ErosionParams, Physical, Simulator, fbm_terrain};
///
/// let pick = |name: &str| -> Box<dyn DynSampler> {
///     if name == "central" { Box::new(CentralDifference) } else { Box::new(EightFacet) }
/// };
/// let mut map = fbm_terrain(32, 32, 1)?;
/// let params = ErosionParams { droplets: 500, ..ErosionParams::default() };
/// let report = Physical::with_sampler(params, pick("central"))?.run_seeded(&mut map, 1)?;
/// assert_eq!(report.droplets, 500);
/// # Ok::<(), hydraulic_erosion::Error>(())
/// ```
pub trait DynSampler: NormalSampler + Send + Sync {
    /// A boxed copy (what `Clone` for `Box<dyn DynSampler>` calls).
    fn clone_box(&self) -> Box<dyn DynSampler>;
}

impl<T: NormalSampler + Clone + Send + Sync + 'static> DynSampler for T {
    fn clone_box(&self) -> Box<dyn DynSampler> {
        Box::new(self.clone())
    }
}

impl Clone for Box<dyn DynSampler> {
    fn clone(&self) -> Self {
        (**self).clone_box()
    }
}

impl core::fmt::Debug for dyn DynSampler {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("dyn DynSampler")
    }
}

impl NormalSampler for Box<dyn DynSampler> {
    #[inline]
    fn cell_normal(&self, grid: &GridRef<'_>, x: usize, y: usize, height_scale: f32) -> Vec3 {
        (**self).cell_normal(grid, x, y, height_scale)
    }

    #[inline]
    fn normal(&self, grid: &GridRef<'_>, position: Vec2, height_scale: f32) -> Vec3 {
        (**self).normal(grid, position, height_scale)
    }

    #[inline]
    fn normal_in_cell(
        &self,
        grid: &GridRef<'_>,
        position: Vec2,
        x: usize,
        y: usize,
        height_scale: f32,
    ) -> Vec3 {
        (**self).normal_in_cell(grid, position, x, y, height_scale)
    }

    fn spawn(&mut self, rng: &mut dyn Rng) {
        (**self).spawn(rng);
    }

    fn reach(&self) -> Option<u32> {
        (**self).reach()
    }

    fn lane_kernel(&self) -> Option<LaneKernel> {
        (**self).lane_kernel()
    }
}

/// A sampler's kernel for the lockstep mode (see
/// [`NormalSampler::lane_kernel`]): an opaque token, so only the crate's
/// samplers whose lane code matches their scalar code bit for bit claim one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LaneKernel(Kernel);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Kernel {
    EightFacet,
}

impl LaneKernel {
    /// The 8-facet sampler's lanes.
    pub(crate) const EIGHT_FACET: Self = Self(Kernel::EightFacet);
}
