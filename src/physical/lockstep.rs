//! Lockstep mode: [`LOCKSTEP_LANES`] droplets advance together, one step each per
//! round, their 8-facet normals and motion computed as arrays across the lanes
//! (SIMD lanes where the target has them).

// Lane-indexed loops over several parallel arrays read best as index loops, and
// are the shape the vectoriser wants.
#![allow(clippy::needless_range_loop)]

use glam::Vec2;
use rand_core::Rng;

use super::{Eroder, Motion, Walk};
use crate::droplet::{Droplet, Fate};
use crate::grid::GridRef;
use crate::math;
use crate::normal::eight_facet::{SLOPE, SQUARES, WEIGHT};
use crate::normal::{CentralDifference, EightFacet};
use crate::progress::{Progress, Ticker};
use crate::random::unit_f32;

/// How many droplets [`Physical::run_lockstep`](crate::Physical::run_lockstep)
/// advances together. The result of a lockstep run depends on this width and on
/// nothing else (not on the CPU's features, nor on the thread count).
pub const LOCKSTEP_LANES: usize = 16;

const L: usize = LOCKSTEP_LANES;

/// The lanes: one droplet each, or none (`live` false) once the run is draining.
struct Lanes {
    droplets: [Droplet; L],
    walks: [Walk; L],
    live: [bool; L],
}

/// One round's per-lane working arrays (structure of arrays, so the compiler
/// vectorises across lanes).
struct Round {
    /// Heights of the 8 neighbours, facet-major: `around[k][lane]`.
    around: [[f32; L]; 8],
    centre: [f32; L],
    /// Per-facet weighted horizontal components.
    t: [[f32; L]; 8],
    nx: [f32; L],
    nz: [f32; L],
    cell: [(usize, usize); L],
    /// Lanes on the 1-cell border band (central-difference normal).
    border: [bool; L],
}

impl Round {
    fn new() -> Self {
        Round {
            around: [[0.0; L]; 8],
            centre: [0.0; L],
            t: [[0.0; L]; 8],
            nx: [0.0; L],
            nz: [0.0; L],
            cell: [(0, 0); L],
            border: [false; L],
        }
    }
}

/// Runs `total` droplets in lockstep on `eroder` (an 8-facet Physical run).
///
/// Each round: first, in lane order, every lane whose droplet is spent (out of
/// water or steps) puts its load down and takes the next droplet from `rng`
/// (start `x` then `y`, as the sequential mode draws them); then every live lane
/// reads the map and computes its normal and motion; then, in lane order, each
/// lane trades sediment with the live map (applying its change to what is there,
/// so two lanes on one cell both count) and moves on.
pub(super) fn run<R, P>(
    eroder: &mut Eroder<'_, EightFacet>,
    total: u64,
    rng: &mut R,
    ticker: &mut Ticker<'_, P>,
) where
    R: Rng + ?Sized,
    P: Progress + ?Sized,
{
    let walk = Walk::new(&eroder.k);
    let mut lanes = Lanes { droplets: [Droplet::new(Vec2::ZERO); L], walks: [walk; L], live: [false; L] };
    let mut round = Round::new();
    let (wf, hf) = (eroder.width as f32, eroder.height as f32);
    let mut spawned = 0u64;
    loop {
        if ticker.should_stop(eroder.report.droplets) {
            eroder.report.cancelled = true;
            for l in 0..L {
                if lanes.live[l] {
                    lanes.live[l] = false;
                    eroder.settle(&mut lanes.droplets[l], Fate::Stopped);
                }
            }
            break;
        }
        // Retire spent droplets and refill, in lane order.
        let mut any = false;
        for l in 0..L {
            if lanes.live[l]
                && let Some(fate) = eroder.spent(&lanes.droplets[l], &lanes.walks[l])
            {
                lanes.live[l] = false;
                eroder.settle(&mut lanes.droplets[l], fate);
            }
            if !lanes.live[l] && spawned < total {
                let start = Vec2::new(unit_f32(rng) * wf, unit_f32(rng) * hf);
                lanes.droplets[l] = Droplet::new(start);
                lanes.walks[l] = walk;
                lanes.live[l] = true;
                spawned += 1;
            }
            any |= lanes.live[l];
        }
        if !any {
            break;
        }
        normals(eroder, &lanes, &mut round);

        // Motion, lane by lane with the sequential mode's operations.
        let mut moved = [Motion { px: 0.0, py: 0.0, vx: 0.0, vy: 0.0, speed: 0.0 }; L];
        for l in 0..L {
            moved[l] = Motion::of(&eroder.k, &lanes.droplets[l], &lanes.walks[l], round.nx[l], round.nz[l]);
        }

        // Transfers against the live map, in lane order.
        for l in 0..L {
            if !lanes.live[l] {
                continue;
            }
            eroder.report.steps += 1;
            let (x, y) = round.cell[l];
            let fate = eroder.transfer(
                &mut lanes.droplets[l],
                &mut lanes.walks[l],
                moved[l],
                (x, y),
                round.centre[l],
            );
            if let Some(fate) = fate {
                lanes.live[l] = false;
                eroder.settle(&mut lanes.droplets[l], fate);
            }
        }
    }
}

/// Reads every lane's neighbourhood and computes its normal into `round.nx` and
/// `round.nz`: the 8 facets as arrays across the lanes, with
/// [`EightFacet::from_neighbours`]'s operations in the same order, so each lane
/// gets the bits the sequential mode would.
#[inline(always)]
fn normals(eroder: &Eroder<'_, EightFacet>, lanes: &Lanes, round: &mut Round) {
    let (w, h) = (eroder.width, eroder.height);
    let cells = &*eroder.cells;
    for l in 0..L {
        let (x, y) = eroder.cell_of(lanes.droplets[l].position);
        round.cell[l] = (x, y);
        let i = y * w + x;
        round.centre[l] = cells[i];
        let border = x == 0 || y == 0 || x + 1 >= w || y + 1 >= h;
        round.border[l] = border;
        if border {
            // Any values do: the lane's normal is replaced below.
            for k in 0..8 {
                round.around[k][l] = cells[i];
            }
            continue;
        }
        let row = |start: usize| -> [f32; 3] { cells[start..start + 3].try_into().unwrap_or([0.0; 3]) };
        let ([nn, on, pn], [no, _, po], [np, op, pp]) = (row(i - w - 1), row(i - 1), row(i + w - 1));
        for (k, value) in [po, no, op, on, pp, pn, np, nn].into_iter().enumerate() {
            round.around[k][l] = value;
        }
    }
    let scale = eroder.k.height_scale;
    for k in 0..8 {
        let (slope, squares, weight) = (scale * SLOPE[k], SQUARES[k], WEIGHT[k]);
        for l in 0..L {
            let e = slope * (round.centre[l] - round.around[k][l]);
            let len = math::sqrt(e * e * squares + 1.0);
            round.t[k][l] = (weight * e) / len;
        }
    }
    let t = &round.t;
    for l in 0..L {
        round.nx[l] = (t[0][l] - t[1][l]) + ((t[4][l] + t[5][l]) - (t[6][l] + t[7][l]));
        round.nz[l] = (t[2][l] - t[3][l]) + ((t[4][l] - t[5][l]) + (t[6][l] - t[7][l]));
    }
    for l in 0..L {
        if round.border[l] {
            let (x, y) = round.cell[l];
            let grid = GridRef::new_unchecked(w, h, cells);
            let n = CentralDifference::at(&grid, x, y, scale);
            (round.nx[l], round.nz[l]) = (n.x, n.z);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::Heightmap;
    use crate::params::ErosionParams;
    use crate::physical::Constants;

    /// The lanes' array code gives each lane exactly the sequential normal.
    #[test]
    fn lane_normals_are_bit_equal_to_the_scalar_sampler() {
        let mut state = 0x1234_5678_u64;
        let mut next = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 40) as f32 / (1u64 << 24) as f32
        };
        let mut map = Heightmap::from_fn(23, 17, |_, _| 0.0).unwrap();
        for cell in map.cells_mut() {
            *cell = next() * 3.0 - 1.0;
        }
        let reference = map.clone();
        let params = ErosionParams::default();
        let eroder = Eroder::new(map.view_mut(), Constants::new(&params), EightFacet);
        let walk = Walk::new(&eroder.k);
        for _ in 0..50 {
            let mut lanes =
                Lanes { droplets: [Droplet::new(Vec2::ZERO); L], walks: [walk; L], live: [true; L] };
            for d in &mut lanes.droplets {
                // Border cells included.
                d.position = Vec2::new(next() * 23.0, next() * 17.0);
            }
            let mut round = Round::new();
            normals(&eroder, &lanes, &mut round);
            for l in 0..L {
                let (x, y) = reference.cell_at(lanes.droplets[l].position);
                let n = EightFacet::at(&reference.view(), x, y, params.height_scale);
                assert_eq!((round.nx[l].to_bits(), round.nz[l].to_bits()), (n.x.to_bits(), n.z.to_bits()));
            }
        }
    }
}
