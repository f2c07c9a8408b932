//! Descend: the `Physical` droplet with effective parameters from the stream and
//! vegetation maps (seed 002), until it leaves the map, evaporates, or stops into
//! a flood.

use glam::Vec2;

use super::erf::erf;
use super::world::{End, Particle, World};
use crate::grid::{GridRef, clamped_cell};
use crate::layers;
use crate::math;
use crate::normal::EightFacet;
use crate::physical::simd::{self, Isa, truncate};
use crate::transfer::{self, no_overshoot, pit_safe};

/// How a descent ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Descent {
    /// The particle entered a pool, or stalled on a stream: flood where it stands.
    Flood,
    /// The particle is done (it has not been booked yet).
    End(End),
    /// Its next step would read beyond the cells the world holds (a tile's
    /// zone): it stands as it stood before that step, which is not taken.
    Refused,
}

impl World<'_> {
    /// Moves particle `p` downhill, eroding and depositing, and records the cells
    /// it visits in the batch's track (its water, each step).
    ///
    /// Each step is `Physical`'s (seed 000's equations; the normal and the next
    /// cell's height read the water surface), with, from the maps at the cell the
    /// step starts on (stream and vegetation clamped to `[0, 1]`):
    /// friction `× (1 - 0.5 stream)`, evaporation `× (1 - 0.2 stream)`, mass
    /// transfer `× (1 - vegetation)`, capacity `× (1 + entrainment erf(0.4 stream))`.
    ///
    /// `steps_left` is the particle's step budget (`max_steps` for its whole
    /// life); each step takes one, and running out ends the particle.
    ///
    /// With controls, each cut goes through the gate (scaled by the cell's
    /// active value and erodibility; deposits whole), and a step into a cell
    /// the mask closes ends the particle at the centre of its cell
    /// ([`End::Masked`]), where its load goes down.
    pub(super) fn descend(&mut self, p: &mut Particle, steps_left: &mut u32) -> Descent {
        // The loop compiled for the widest vectors the CPU has (the 8-facet
        // normal is one vector of eight lanes with AVX2): the same bits.
        simd::widest(
            Isa::detect(),
            #[inline(always)]
            || self.descend_with(p, steps_left),
        )
    }

    /// [`descend`](Self::descend), compiled for the vectors of its caller.
    #[inline(always)]
    fn descend_with(&mut self, p: &mut Particle, steps_left: &mut u32) -> Descent {
        let k = self.k;
        if !self.holds(p.position) {
            // Spilled to a drain at the zone's edge.
            return Descent::Refused;
        }
        let start = self.index_of(p.position);
        if self.is_sea(start) {
            // Rain on the sea.
            return Descent::End(End::LeftMap);
        }
        if self.pool[start] > 0.0 {
            // Rain on a lake, or a spill into a lower pool.
            return Descent::Flood;
        }
        // The sides as `f32` once (a `usize` takes six instructions to convert).
        let extent = [self.width as f32, self.height as f32];
        while *steps_left > 0 {
            *steps_left -= 1;
            if p.water <= k.min_volume {
                return Descent::End(End::Evaporated);
            }
            // The cell, then its index (not the index, then a division).
            let (x, y) = clamped_cell(p.position, self.width, self.height);
            let here = y * self.width + x;
            // The particle is never on a pool here, so the surface is the terrain.
            let h_here = self.heights[here];
            let lowest = if k.pit_safe || k.stall_in_pits { self.lowest_neighbour(x, y) } else { h_here };
            if k.stall_in_pits && lowest >= h_here {
                // In a hollow: the step is not taken.
                *steps_left += 1;
                return Descent::Flood;
            }
            let flow = self.stream[here].max(0.0);
            let stream = flow.min(1.0);
            let roots = self.vegetation[here].clamp(0.0, 1.0);
            let grid = GridRef::new_unchecked(self.width, self.height, &*self.surface);
            let n = EightFacet::at(&grid, x, y, k.height_scale);

            // Newton with forward Euler; friction after the move (seed 000's order).
            let water = p.water as f32;
            let inv_mass = 1.0 / (k.density * water);
            let (ax, az) = (n.x * inv_mass, n.z * inv_mass);
            let vx = p.velocity.x + ax * k.dt;
            let vy = p.velocity.y + az * k.dt;
            let px = p.position.x + vx * k.dt;
            let py = p.position.y + vy * k.dt;
            let friction_keep = 1.0 - k.dt_friction * (1.0 - 0.5 * stream);
            let (vx, vy) = (vx * friction_keep, vy * friction_keep);
            if !self.holds(Vec2::new(px, py)) {
                // (A non-finite step is refused too; on the whole map it ends
                // the particle as unstable.)
                *steps_left += 1;
                return Descent::Refused;
            }
            self.track[here] += p.water as f32;
            self.report.erosion.steps += 1;
            // All four finite, in one test: `x * 0` is 0 for finite `x`, NaN else.
            if (px * 0.0 + py * 0.0) + (vx * 0.0 + vy * 0.0) != 0.0 {
                return Descent::End(End::Unstable);
            }
            let previous = p.position;
            p.velocity = Vec2::new(vx, vy);
            p.position = Vec2::new(px, py);
            let off_map = !(px >= 0.0 && py >= 0.0 && px < extent[0] && py < extent[1]);
            // On the map, so the conversions need no saturation (sides < 2^31).
            let next =
                if off_map { None } else { Some(truncate(py) as usize * self.width + truncate(px) as usize) };
            // A particle never enters a cell the mask closes: it trades as if it
            // went on, then stops at the centre of its own (`Physical`'s rule).
            let masked = next.is_some_and(|j| !self.gate.admits(j));
            if masked {
                p.position = Vec2::new(x as f32 + 0.5, y as f32 + 0.5);
            }

            // Mass transfer towards the graded capacity, at the cell the step
            // started on; a pool ahead counts at its surface, so shores do not cut
            // below the water.
            let h_next = match (next, k.sea_level) {
                // The sea at its level (`sea_level` is finite when set).
                (Some(j), Some(sea)) if k.sea_deltas && self.is_sea(j) => self.surface[j].max(sea as f32),
                (Some(j), _) => self.surface[j],
                (None, _) => self.height_beyond(px, py),
            };
            let speed = math::sqrt(vx * vx + vy * vy);
            let grade = if k.entrainment > 0.0 { 1.0 + k.entrainment * erf(0.4 * flow) } else { 1.0 };
            let mut capacity = water * speed * (h_here - h_next) * grade;
            if capacity < 0.0 {
                capacity = 0.0;
            }
            let concentration = p.sediment as f32 / water;
            let drop_by = water * (k.dt_kd * (1.0 - roots)) * (capacity - concentration);
            // The controls scale a cut before the guards (which only hold it
            // back); without them the proposal passes as it is.
            let proposed = self.gate.apply(here, h_here, h_here - drop_by);
            let h_new = if k.pit_safe {
                let floor = h_next.max(lowest);
                pit_safe(proposed, h_here, h_next, floor, p.sediment)
            } else {
                no_overshoot(proposed, h_here, h_next)
            };
            if h_new.is_finite() {
                p.sediment += self.set_height(here, h_new);
            } else if !off_map {
                return Descent::End(End::Unstable);
            }
            if let Some(outputs) = self.outputs.as_deref_mut() {
                // A particle stopped by the mask did not cross (as `Physical`'s).
                let crossed = !masked && next != Some(here);
                layers::pass(outputs, here, next.unwrap_or(here), water, k.dt, p.sediment, crossed);
            }
            let Some(next) = next else {
                return Descent::End(End::LeftMap);
            };
            if masked {
                return Descent::End(End::Masked);
            }
            if self.is_sea(next) {
                if k.sea_deltas {
                    self.build_delta(here, next, &mut p.sediment);
                }
                // Into the sea, water and (the rest of its) load.
                return Descent::End(End::LeftMap);
            }

            // Evaporation keeps the load (its concentration rises).
            let keep = 1.0 - k.dt_evaporation * (1.0 - 0.2 * stream);
            let left = p.water * f64::from(keep);
            self.report.evaporated += p.water - left;
            self.report.water_moved += (p.water - left).abs();
            p.water = left;

            if self.pool[next] > 0.0 {
                if self.surface[next] > self.heights[here] {
                    // Below the pool's surface, the particle is in a hollow beside
                    // it (often the drain it just spilled to): flood here, which
                    // fills the hollow up to the pool, not back into the pool.
                    p.position = previous;
                }
                return Descent::Flood;
            }
            if self.stream[next] >= k.stall_stream && (ax * ax + az * az) < k.stall_acceleration2 {
                return Descent::Flood;
            }
        }
        Descent::End(End::StepLimit)
    }

    /// A delta: a particle from cell `from` entering sea cell `sea` puts down
    /// what one step in still water deposits (`dt * deposition_rate` of its
    /// `load`, all of it past 1) on the sea cell, raising it no higher than
    /// `from`.
    fn build_delta(&mut self, from: usize, sea: usize, load: &mut f64) {
        let old = self.heights[sea];
        let room = self.heights[from] - old;
        let amount = (self.k.dt_kd.min(1.0) * *load as f32).min(room);
        if amount.is_nan() || amount <= 0.0 {
            return;
        }
        let new = self.gate.apply(sea, old, old + amount);
        // Never more than the load: `f32` may round the new height up.
        if f64::from(new) - f64::from(old) <= *load {
            *load += self.set_height(sea, new);
        }
    }

    /// The lowest water surface among the (up to 8) neighbours of cell `(x, y)`.
    fn lowest_neighbour(&self, x: usize, y: usize) -> f32 {
        transfer::lowest_neighbour(self.surface, self.width, self.height, x, y)
    }

    /// The ghost cell's height at `(px, py)` off the map: `Physical`'s border rule,
    /// read on the water surface.
    fn height_beyond(&self, px: f32, py: f32) -> f32 {
        transfer::height_beyond(self.surface, self.width, self.height, self.base_level, px, py)
    }
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;

    use super::super::{Hydrology, HydrologyParams};
    use crate::controls::Gate;

    const W: usize = 5;

    /// A 5 x 5 map: land at 0.5 in the three western columns, sea floor at
    /// 0.0 in the two eastern ones, under a sea at 0.25.
    fn coast() -> Vec<f32> {
        (0..W * W).map(|i| if i % W < 3 { 0.5 } else { 0.0 }).collect()
    }

    /// Builds the delta of a particle from cell (2, 2) into sea cell (3, 2)
    /// with `load`; returns the heights, the load left and the books'
    /// deposit.
    fn delta(load: f64, sea_floor: f32, gate: Gate<'_>) -> (Vec<f32>, f64, f64) {
        let params = HydrologyParams { sea_level: Some(0.25), ..Default::default() };
        let mut heights = coast();
        heights[2 * W + 3] = sea_floor;
        let mut sim = Hydrology::new(params, W, W).unwrap();
        sim.rebuild_surface(&heights);
        let (mut world, _, _) = sim.whole_map(&mut heights, 0.0, gate);
        let mut left = load;
        world.build_delta(2 * W + 2, 2 * W + 3, &mut left);
        let deposited = world.report.erosion.deposited;
        (heights, left, deposited)
    }

    /// One step's still-water deposit, `dt * deposition_rate` of the load
    /// (1.2 x 0.08), lands on the sea cell, booked to the last bit.
    #[test]
    fn a_delta_takes_one_still_water_step_of_the_load() {
        let (heights, left, deposited) = delta(1.0, 0.0, Gate::default());
        let rise = 1.2f32 * 0.08;
        assert_eq!(heights[2 * W + 3], rise);
        assert_eq!(left, 1.0 - f64::from(rise));
        assert_eq!(deposited, f64::from(rise));
        // Nothing else moved.
        let mut expected = coast();
        expected[2 * W + 3] = rise;
        assert_eq!(heights, expected);
    }

    /// A delta rises no higher than the cell the particle came from.
    #[test]
    fn a_delta_stops_at_the_height_of_the_river_mouth() {
        let (heights, left, _) = delta(100.0, 0.45, Gate::default());
        assert_eq!(heights[2 * W + 3], 0.5);
        assert_eq!(left, 100.0 - (0.5 - f64::from(0.45f32)));
        // Already level with it: nothing.
        let (heights, left, deposited) = delta(100.0, 0.5, Gate::default());
        assert_eq!((heights[2 * W + 3], left, deposited), (0.5, 100.0, 0.0));
    }

    /// A masked sea cell takes nothing, and a load too small for `f32` to
    /// add is kept whole.
    #[test]
    fn a_masked_or_too_small_deposit_moves_nothing() {
        let mut active = alloc::vec![1.0f32; W * W];
        active[2 * W + 3] = 0.0;
        let closed = Gate::new(Some(&active), None);
        let (heights, left, deposited) = delta(1.0, 0.0, closed);
        assert_eq!((heights, left, deposited), (coast(), 1.0, 0.0));
        // 1e-12 of load on a floor at 0.125: below half an ulp, no change.
        let (heights, left, _) = delta(1e-12, 0.125, Gate::default());
        assert_eq!((heights[2 * W + 3], left), (0.125, 1e-12));
    }
}
