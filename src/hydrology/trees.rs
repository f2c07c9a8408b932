//! Trees: spawn, spread and die, holding the ground together with their roots
//! (seed 002's `World::grow`, run once per batch).

use alloc::vec::Vec;

use rand_core::Rng;

use super::world::World;
use crate::grid::GridRef;
use crate::math;
use crate::normal::EightFacet;
use crate::random::unit_f32;

/// Chance per batch that a tree seeds a neighbour (the original's 1 in 50).
const SPREAD_CHANCE: f32 = 1.0 / 50.0;
/// Chance per batch that a tree dies anyway (the original's 1 in 1000).
const DEATH_CHANCE: f32 = 1.0 / 1000.0;
/// A seed lands up to this many cells away along each axis.
const SPREAD_RADIUS: f32 = 4.0;
/// Trees neither grow nor live where the stream map exceeds this.
const MAX_STREAM: f32 = 0.2;
/// Trees grow only where the normal's up component exceeds this (gentle slopes).
const MIN_NORMAL_Y: f32 = 0.8;
/// Root density a tree adds to its cell, its 4 edge neighbours and its 4 corner
/// neighbours.
const ROOTS: [f32; 3] = [1.0, 0.6, 0.4];

impl World<'_> {
    /// One round of tree growth. Draws, in order: a random cell (`x` then `y`) and a
    /// number to test it; then, for each tree alive at the start of the round, in
    /// order, its spread chance (and, when it spreads, the seed's offsets `x` then
    /// `y` and a number to test the cell) and its death chance.
    ///
    /// A tree takes root on a cell without pool, with a stream map below 0.2, a
    /// gentle slope (normal up component above 0.8) and a uniform draw above the
    /// cell's root density (crowded ground takes fewer seeds). It dies in a pool,
    /// on a stream above 0.2, or by a 1-in-1000 chance per round. A tree adds 1 to
    /// the vegetation map at its cell, 0.6 at its edge neighbours and 0.4 at its
    /// corner neighbours, and takes it away when it dies.
    pub(super) fn grow_trees<R: Rng + ?Sized>(&mut self, trees: &mut Vec<usize>, rng: &mut R) {
        let (w, h) = (self.width, self.height);
        let x = ((unit_f32(rng) * w as f32) as usize).min(w - 1);
        let y = ((unit_f32(rng) * h as f32) as usize).min(h - 1);
        let mut born = Vec::new();
        if self.fertile(y * w + x, unit_f32(rng)) {
            born.push(y * w + x);
        }
        let mut alive = 0;
        for t in 0..trees.len() {
            let i = trees[t];
            if unit_f32(rng) < SPREAD_CHANCE {
                let offset =
                    |u: f32| math::floor(u * (2.0 * SPREAD_RADIUS + 1.0)) as isize - SPREAD_RADIUS as isize;
                let sx = (i % w).wrapping_add_signed(offset(unit_f32(rng)));
                let sy = (i / w).wrapping_add_signed(offset(unit_f32(rng)));
                let u = unit_f32(rng);
                if sx < w && sy < h && self.fertile(sy * w + sx, u) {
                    born.push(sy * w + sx);
                }
            }
            let dies = self.pool[i] > 0.0 || self.stream[i] > MAX_STREAM || unit_f32(rng) < DEATH_CHANCE;
            if dies {
                self.root(i, -1.0);
            } else {
                trees[alive] = i;
                alive += 1;
            }
        }
        trees.truncate(alive);
        for i in born {
            // The list never outgrows the map.
            if trees.len() < self.heights.len() {
                self.root(i, 1.0);
                trees.push(i);
            }
        }
    }

    /// Whether a seed takes root on cell `i`, given a uniform draw `u`.
    fn fertile(&self, i: usize, u: f32) -> bool {
        if self.pool[i] > 0.0 || self.stream[i] >= MAX_STREAM || u <= self.vegetation[i] {
            return false;
        }
        let grid = GridRef::new_unchecked(self.width, self.height, &*self.surface);
        EightFacet::at(&grid, i % self.width, i / self.width, self.k.height_scale).y > MIN_NORMAL_Y
    }

    /// Adds `sign` times a tree's roots around cell `i`, clipped to the map.
    fn root(&mut self, i: usize, sign: f32) {
        let (w, h) = (self.width, self.height);
        let (x, y) = (i % w, i / w);
        for ny in y.saturating_sub(1)..(y + 2).min(h) {
            for nx in x.saturating_sub(1)..(x + 2).min(w) {
                let ring = usize::from(nx != x) + usize::from(ny != y);
                self.vegetation[ny * w + nx] += sign * ROOTS[ring];
            }
        }
    }
}
