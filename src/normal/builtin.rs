use glam::{Vec2, Vec3};
use rand_core::Rng;

use super::{CentralDifference, EightFacet, LaneKernel, NormalSampler, Offset};
use crate::grid::GridRef;

/// The built-in cell samplers, chosen at run time (the inner sampler of an
/// [`Offset`] in a [`Sampler`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum BaseSampler {
    /// [`EightFacet`], seed 000's weighted normal (the default).
    #[default]
    #[cfg_attr(feature = "serde", serde(alias = "EightFacet"))]
    EightFacet,
    /// [`CentralDifference`].
    #[cfg_attr(feature = "serde", serde(alias = "CentralDifference"))]
    CentralDifference,
}

impl NormalSampler for BaseSampler {
    #[inline]
    fn cell_normal(&self, grid: &GridRef<'_>, x: usize, y: usize, height_scale: f32) -> Vec3 {
        match self {
            BaseSampler::EightFacet => EightFacet::at(grid, x, y, height_scale),
            BaseSampler::CentralDifference => CentralDifference::at(grid, x, y, height_scale),
        }
    }

    #[inline]
    fn normal_in_cell(&self, grid: &GridRef<'_>, _: Vec2, x: usize, y: usize, height_scale: f32) -> Vec3 {
        self.cell_normal(grid, x, y, height_scale)
    }

    /// 2, as both built-in cell samplers.
    #[inline]
    fn reach(&self) -> Option<u32> {
        Some(2)
    }
}

/// Every built-in sampler, chosen at run time (from a config file, say).
///
/// ```
/// use hydraulic_erosion::{BaseSampler, ErosionParams, Heightmap, Offset, Physical, Sampler, Simulator};
///
/// let sampler = Sampler::Offset(Offset::new(BaseSampler::CentralDifference, 0.8).unwrap());
/// let params = ErosionParams { droplets: 50, ..ErosionParams::default() };
/// let mut map = Heightmap::from_fn(16, 16, |x, y| (x * y) as f32 * 0.01).unwrap();
/// Physical::with_sampler(params, sampler).unwrap().run_seeded(&mut map, 1).unwrap();
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Sampler {
    /// [`EightFacet`] (the default).
    #[default]
    #[cfg_attr(feature = "serde", serde(alias = "EightFacet"))]
    EightFacet,
    /// [`CentralDifference`].
    #[cfg_attr(feature = "serde", serde(alias = "CentralDifference"))]
    CentralDifference,
    /// [`Offset`] over a built-in cell sampler.
    #[cfg_attr(feature = "serde", serde(alias = "Offset"))]
    Offset(Offset<BaseSampler>),
}

impl From<BaseSampler> for Sampler {
    fn from(base: BaseSampler) -> Self {
        match base {
            BaseSampler::EightFacet => Sampler::EightFacet,
            BaseSampler::CentralDifference => Sampler::CentralDifference,
        }
    }
}

impl From<Offset<BaseSampler>> for Sampler {
    fn from(offset: Offset<BaseSampler>) -> Self {
        Sampler::Offset(offset)
    }
}

impl NormalSampler for Sampler {
    #[inline]
    fn cell_normal(&self, grid: &GridRef<'_>, x: usize, y: usize, height_scale: f32) -> Vec3 {
        match self {
            Sampler::EightFacet => EightFacet::at(grid, x, y, height_scale),
            Sampler::CentralDifference => CentralDifference::at(grid, x, y, height_scale),
            Sampler::Offset(o) => o.cell_normal(grid, x, y, height_scale),
        }
    }

    #[inline]
    fn normal(&self, grid: &GridRef<'_>, position: Vec2, height_scale: f32) -> Vec3 {
        match self {
            Sampler::Offset(o) => o.normal(grid, position, height_scale),
            _ => {
                let (x, y) = grid.cell_at(position);
                self.cell_normal(grid, x, y, height_scale)
            }
        }
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
        match self {
            Sampler::Offset(o) => o.normal(grid, position, height_scale),
            _ => self.cell_normal(grid, x, y, height_scale),
        }
    }

    fn spawn(&mut self, rng: &mut dyn Rng) {
        if let Sampler::Offset(o) = self {
            o.spawn(rng);
        }
    }

    #[inline]
    fn reach(&self) -> Option<u32> {
        match self {
            Sampler::Offset(o) => o.reach(),
            _ => Some(2),
        }
    }

    #[inline]
    fn lane_kernel(&self) -> Option<LaneKernel> {
        match self {
            Sampler::EightFacet => EightFacet.lane_kernel(),
            _ => None,
        }
    }
}
