use glam::{Vec2, Vec3};

use super::{CentralDifference, LaneKernel, NormalSampler};
use crate::grid::GridRef;
use crate::math;

/// Weight of each of the four cardinal facets (seed 000).
const CARDINAL: f32 = 0.15;
/// Weight of each of the four diagonal facets (seed 000).
const DIAGONAL: f32 = 0.10;

/// The 8-facet weighted normal of seed 000, the `Physical` model's default.
///
/// Around an interior cell, each of the 8 neighbours spans a facet with the
/// centre; each facet normal is normalised, the four cardinal ones weighted 0.15
/// and the four diagonal ones 0.10, and the sum is *not* normalised (so `x`/`z`
/// are about half the central-difference slope on gentle ground). Each diagonal
/// facet's `x` and `z` follow its own diagonal, as written in seed 000 (the
/// SimpleErosion copy has three of the four signs wrong, a known directional bias).
///
/// Cells on the 1-cell border band fall back to [`CentralDifference`], as in seed 000.
///
/// On flat ground the result is exactly `(0, 1, 0)`: the `y` components are summed
/// per weight class first, and `0.15 * 4 + 0.10 * 4` rounds to 1 in `f32`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct EightFacet;

impl EightFacet {
    /// The 8-facet normal at cell `(x, y)`; see the type's docs.
    #[inline(always)]
    pub fn at(grid: &GridRef<'_>, x: usize, y: usize, height_scale: f32) -> Vec3 {
        let (w, h) = (grid.width(), grid.height());
        if x == 0 || y == 0 || x + 1 >= w || y + 1 >= h {
            return CentralDifference::at(grid, x, y, height_scale);
        }
        let c = grid.cells();
        let i = y * w + x;
        // Three rows of three (one bounds check each, not nine).
        let row = |start: usize| -> [f32; 3] { c[start..start + 3].try_into().unwrap_or([0.0; 3]) };
        // Names: `p`/`n`/`o` for +1/-1/0 along x, then along y.
        let ([nn, on, pn], [no, centre, po], [np, op, pp]) = (row(i - w - 1), row(i - 1), row(i + w - 1));
        // Neighbours in lane order: +x, -x, +y, -y, then the diagonals (+x+y),
        // (+x-y), (-x+y), (-x-y).
        Self::from_neighbours(centre, [po, no, op, on, pp, pn, np, nn], height_scale)
    }

    /// The 8-facet normal of a cell of height `centre` from its 8 neighbours in
    /// lane order `+x, -x, +y, -y, (+x+y), (+x-y), (-x+y), (-x-y)`.
    ///
    /// Facet `k` rises `e_k = s_k * height_scale * (centre - neighbour_k)` over its
    /// run, with `s_k = 1` for the cardinal facets (normal `(e, 1, 0)` or
    /// `(0, 1, e)` before normalising) and `s_k = 1/2` for the diagonal ones
    /// (`(±a, √2, ±a)` with `a = e·√2` normalises to `(±e, 1, ±e) / √(2e² + 1)`).
    /// The eight lanes are independent and computed as one array (SIMD lanes where
    /// the target has them; IEEE `sqrt` and division are exact in every lane), then
    /// summed in a fixed order, so every code path gives the same bits.
    #[inline(always)]
    pub(crate) fn from_neighbours(centre: f32, around: [f32; 8], height_scale: f32) -> Vec3 {
        let (t, u) = facets(centre, around, height_scale);
        // Signs: lanes 1 and 3 point the other way along their axis; diagonal
        // signs as written in seed 000, each following its own diagonal.
        let nx = (t[0] - t[1]) + ((t[4] + t[5]) - (t[6] + t[7]));
        let nz = (t[2] - t[3]) + ((t[4] - t[5]) + (t[6] - t[7]));
        let ny = ((u[0] + u[1]) + (u[2] + u[3])) + ((u[4] + u[5]) + (u[6] + u[7]));
        Vec3::new(nx, ny, nz)
    }
}

/// Per-facet weighted components `(t, u)`: facet `k`'s horizontal component
/// `w_k * e_k / len_k` and vertical one `w_k / len_k`, where `len_k` is
/// `sqrt(e_k² + 1)` (cardinal) or `sqrt(e_k²·2 + 1)` (diagonal) and `w_k` the
/// facet's weight. Written as one array of eight identical lanes, which compilers
/// turn into SIMD operations; IEEE `sqrt` and division are exact in every lane, so
/// the bits are those of the scalar operations in the same order.
#[inline(always)]
fn facets(centre: f32, around: [f32; 8], height_scale: f32) -> ([f32; 8], [f32; 8]) {
    let mut e = [0.0; 8];
    let mut e_squares = [0.0; 8];
    let mut len = [0.0; 8];
    let mut t = [0.0; 8];
    let mut u = [0.0; 8];
    for k in 0..8 {
        e[k] = (height_scale * SLOPE[k]) * (centre - around[k]);
    }
    // `SQUARES[k] * e` computed from the height difference directly (the factor
    // is a power of two, so this is `squares * e` exactly) to shorten the chain.
    for k in 0..8 {
        e_squares[k] = (height_scale * (SLOPE[k] * SQUARES[k])) * (centre - around[k]);
    }
    for k in 0..8 {
        len[k] = math::sqrt(e[k] * e_squares[k] + 1.0);
    }
    for k in 0..8 {
        t[k] = (WEIGHT[k] * e[k]) / len[k];
    }
    for k in 0..8 {
        u[k] = WEIGHT[k] / len[k];
    }
    (t, u)
}

/// Each facet's run per cell of height difference: 1 for the cardinal facets,
/// 1/2 for the diagonal ones (see [`EightFacet::from_neighbours`]).
pub(crate) const SLOPE: [f32; 8] = [1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.5];
/// How many times `e²` enters each facet's squared length.
pub(crate) const SQUARES: [f32; 8] = [1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0];
/// Each facet's weight (seed 000).
pub(crate) const WEIGHT: [f32; 8] =
    [CARDINAL, CARDINAL, CARDINAL, CARDINAL, DIAGONAL, DIAGONAL, DIAGONAL, DIAGONAL];

impl NormalSampler for EightFacet {
    #[inline]
    fn cell_normal(&self, grid: &GridRef<'_>, x: usize, y: usize, height_scale: f32) -> Vec3 {
        Self::at(grid, x, y, height_scale)
    }

    /// 2: the cell's 8 neighbours, and for a border cell (which falls back to
    /// central differences, taken at its inner neighbour) the inner
    /// neighbour's.
    #[inline]
    fn reach(&self) -> Option<u32> {
        Some(2)
    }

    #[inline(always)]
    fn normal_in_cell(&self, grid: &GridRef<'_>, _: Vec2, x: usize, y: usize, height_scale: f32) -> Vec3 {
        Self::at(grid, x, y, height_scale)
    }

    /// The lockstep mode's 8-facet lanes (bit-equal to [`EightFacet::at`]).
    #[inline]
    fn lane_kernel(&self) -> Option<LaneKernel> {
        Some(LaneKernel::EIGHT_FACET)
    }
}
