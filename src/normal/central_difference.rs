use glam::{Vec2, Vec3};

use super::{NormalSampler, UP};
use crate::grid::GridRef;
use crate::math;

/// Central-difference normal, seed 000's border fallback:
/// `normalize(-dh/dx, 1, -dh/dy)` with `dh/dx = height_scale * (h[x+1] - h[x-1]) / 2`.
///
/// Indices are clamped to the interior (`1..=width-2`), so a border cell reads
/// the slope of its inner neighbour. Grids narrower than 3 cells on either side
/// have no interior and read as flat, `(0, 1, 0)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CentralDifference;

impl CentralDifference {
    /// The central-difference normal at cell `(x, y)`; see the type's docs.
    #[inline(always)]
    pub fn at(grid: &GridRef<'_>, x: usize, y: usize, height_scale: f32) -> Vec3 {
        let (w, h) = (grid.width(), grid.height());
        if w < 3 || h < 3 {
            return UP;
        }
        let ix = x.clamp(1, w - 2);
        let iy = y.clamp(1, h - 2);
        let c = grid.cells();
        let i = iy * w + ix;
        // Seed 000: ((h[x+1] - h[x-1]) * 0.5) * vertical_scale.
        let dhdx = ((c[i + 1] - c[i - 1]) * 0.5) * height_scale;
        let dhdy = ((c[i + w] - c[i - w]) * 0.5) * height_scale;
        let inv = 1.0 / math::sqrt(dhdx * dhdx + 1.0 + dhdy * dhdy);
        Vec3::new(-dhdx * inv, inv, -dhdy * inv)
    }
}

impl NormalSampler for CentralDifference {
    #[inline(always)]
    fn cell_normal(&self, grid: &GridRef<'_>, x: usize, y: usize, height_scale: f32) -> Vec3 {
        Self::at(grid, x, y, height_scale)
    }

    /// 2: the cell's 8 neighbours, and for a border cell (which takes the
    /// slope of its inner neighbour) the inner neighbour's.
    #[inline]
    fn reach(&self) -> Option<u32> {
        Some(2)
    }

    #[inline]
    fn normal_in_cell(&self, grid: &GridRef<'_>, _: Vec2, x: usize, y: usize, height_scale: f32) -> Vec3 {
        Self::at(grid, x, y, height_scale)
    }
}
