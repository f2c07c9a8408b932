use glam::Vec3;

use super::{CentralDifference, NormalSampler};
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
    #[inline]
    pub fn at(grid: &GridRef<'_>, x: usize, y: usize, height_scale: f32) -> Vec3 {
        let (w, h) = (grid.width(), grid.height());
        if x == 0 || y == 0 || x + 1 >= w || y + 1 >= h {
            return CentralDifference::at(grid, x, y, height_scale);
        }
        let c = grid.cells();
        let i = y * w + x;
        let h00 = c[i];
        let vs = height_scale;

        // Cardinal facet (d, 1, 0) or (0, 1, d), with d the height drop towards +axis.
        let dpx = vs * (h00 - c[i + 1]);
        let dnx = vs * (c[i - 1] - h00);
        let dpy = vs * (h00 - c[i + w]);
        let dny = vs * (c[i - w] - h00);
        let ipx = 1.0 / math::sqrt(dpx * dpx + 1.0);
        let inx = 1.0 / math::sqrt(dnx * dnx + 1.0);
        let ipy = 1.0 / math::sqrt(dpy * dpy + 1.0);
        let iny = 1.0 / math::sqrt(dny * dny + 1.0);

        // Diagonal facet (±a, √2, ±a) with a = vs·Δh/√2 normalises to
        // (±b, 1, ±b)/√(2b² + 1) with b = vs·Δh/2: no division by √2 needed.
        let bpp = (vs * (h00 - c[i + w + 1])) * 0.5;
        let bpn = (vs * (h00 - c[i - w + 1])) * 0.5;
        let bnp = (vs * (h00 - c[i + w - 1])) * 0.5;
        let bnn = (vs * (h00 - c[i - w - 1])) * 0.5;
        let jpp = 1.0 / math::sqrt(bpp * bpp + bpp * bpp + 1.0);
        let jpn = 1.0 / math::sqrt(bpn * bpn + bpn * bpn + 1.0);
        let jnp = 1.0 / math::sqrt(bnp * bnp + bnp * bnp + 1.0);
        let jnn = 1.0 / math::sqrt(bnn * bnn + bnn * bnn + 1.0);
        let (tpp, tpn, tnp, tnn) = (bpp * jpp, bpn * jpn, bnp * jnp, bnn * jnn);

        // Diagonal signs (seed 000): pp (+,+), pn (+,-), np (-,+), nn (-,-).
        let nx = CARDINAL * (dpx * ipx + dnx * inx) + DIAGONAL * ((tpp + tpn) - (tnp + tnn));
        let nz = CARDINAL * (dpy * ipy + dny * iny) + DIAGONAL * ((tpp - tpn) + (tnp - tnn));
        let ny = CARDINAL * ((ipx + inx) + (ipy + iny)) + DIAGONAL * ((jpp + jpn) + (jnp + jnn));
        Vec3::new(nx, ny, nz)
    }
}

impl NormalSampler for EightFacet {
    #[inline]
    fn cell_normal(&self, grid: &GridRef<'_>, x: usize, y: usize, height_scale: f32) -> Vec3 {
        Self::at(grid, x, y, height_scale)
    }
}
