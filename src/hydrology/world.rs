//! The working state of a run: the maps, the constants and the books, with the
//! few operations every phase shares (reading levels, writing pools, putting
//! sediment down, ending a particle).

use glam::Vec2;

use super::flood::FloodScratch;
use super::params::HydrologyParams;
use super::report::HydrologyReport;
use alloc::vec::Vec;

use crate::controls::Gate;
use crate::grid::clamped_cell;
use crate::layers::Track;
use crate::math;
use crate::reach::Reach;

/// Per-run constants derived from validated params, every length in cells
/// ([`HydrologyParams::in_cells`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct Constants {
    pub(super) dt: f32,
    pub(super) density: f32,
    /// `dt * friction`.
    pub(super) dt_friction: f32,
    /// `dt * evaporation_rate`.
    pub(super) dt_evaporation: f32,
    /// `dt * deposition_rate`.
    pub(super) dt_kd: f32,
    pub(super) min_volume: f64,
    pub(super) height_scale: f32,
    pub(super) max_steps: u32,
    pub(super) pit_safe: bool,
    pub(super) entrainment: f32,
    pub(super) volume_factor: f64,
    pub(super) drainage: f64,
    pub(super) exact_flood: bool,
    pub(super) approach: f64,
    pub(super) max_fails: u32,
    pub(super) spill: u32,
    pub(super) stall_stream: f32,
    /// `stall_acceleration²`.
    pub(super) stall_acceleration2: f32,
    pub(super) stall_in_pits: bool,
    pub(super) open_border: bool,
    pub(super) sea_level: Option<f64>,
    pub(super) sea_deltas: bool,
    pub(super) lrate: f32,
    pub(super) channel_area: f32,
    pub(super) outlet_erosion: f64,
    pub(super) spill_speed: f32,
    /// Cells of a run-out: 8 unit lengths.
    pub(super) run_out: usize,
    /// How far, in cells on each axis, from where a particle enters a pool
    /// its load settles: 8 unit lengths.
    pub(super) delta_radius: usize,
    /// Particles between two stream-map updates: `batch` per `cell_size²`.
    pub(super) batch: u32,
}

impl Constants {
    pub(super) fn new(params: &HydrologyParams) -> Self {
        let p = &params.in_cells();
        Self {
            dt: p.dt,
            density: p.density,
            dt_friction: p.dt * p.friction,
            dt_evaporation: p.dt * p.evaporation_rate,
            dt_kd: p.dt * p.deposition_rate,
            min_volume: f64::from(p.min_volume),
            height_scale: p.height_scale,
            max_steps: p.max_steps,
            pit_safe: p.pit_safe,
            entrainment: p.entrainment,
            volume_factor: f64::from(p.volume_factor),
            drainage: f64::from(p.drainage),
            exact_flood: p.exact_flood,
            approach: f64::from(p.approach),
            max_fails: p.max_fails,
            spill: p.spill,
            stall_stream: p.stall_stream,
            stall_acceleration2: p.stall_acceleration * p.stall_acceleration,
            stall_in_pits: p.stall_in_pits,
            open_border: p.open_border,
            sea_level: p.sea_level.map(f64::from),
            sea_deltas: p.sea_deltas,
            lrate: p.lrate,
            channel_area: p.channel_area,
            outlet_erosion: f64::from(p.outlet_erosion),
            spill_speed: p.spill_speed,
            run_out: params.cells_in(8.0),
            delta_radius: params.cells_in(8.0),
            batch: p.batch,
        }
    }
}

/// One particle of water. Its volume is `f64` so the water books balance to the
/// last bit of each change; the motion uses it rounded to `f32`, as `Physical`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Particle {
    pub(super) position: Vec2,
    pub(super) velocity: Vec2,
    pub(super) water: f64,
    pub(super) sediment: f64,
}

impl Particle {
    pub(super) fn new(position: Vec2) -> Self {
        Self { position, velocity: Vec2::ZERO, water: 1.0, sediment: 0.0 }
    }
}

/// How a particle ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum End {
    /// Its volume fell to `min_volume` while descending.
    Evaporated,
    /// It left the map, off the edge or into the sea.
    LeftMap,
    /// The descent's step limit.
    StepLimit,
    /// A step would have been non-finite.
    Unstable,
    /// A flood placed all its water.
    Pooled,
    /// A flood ran out of attempts.
    FloodFailed,
    /// It flooded and spilled `spill` times.
    SpillLimited,
    /// Its next step would have entered a cell the active mask closes: it
    /// stopped at the centre of the cell it was in.
    Masked,
}

/// The maps and books of a run.
pub(super) struct World<'a> {
    pub(super) heights: &'a mut [f32],
    pub(super) pool: &'a mut [f32],
    /// `heights + pool` in `f32`: what the normals and the descent's next-cell
    /// height read, kept in step with every write to either.
    pub(super) surface: &'a mut [f32],
    pub(super) stream: &'a mut [f32],
    pub(super) vegetation: &'a mut [f32],
    /// Water that crossed each cell in this batch (one particle's volume per
    /// step it starts there).
    pub(super) track: &'a mut [f32],
    /// The output layers' tracks, when the run records them.
    pub(super) outputs: Option<&'a mut [Track]>,
    pub(super) scratch: &'a mut FloodScratch,
    pub(super) width: usize,
    pub(super) height: usize,
    pub(super) k: Constants,
    pub(super) report: HydrologyReport,
    /// Sediment a deposit could not place exactly (f32 rounding), put down with
    /// the next one.
    pub(super) carry: f64,
    /// The lowest terrain height when the run started: the level beyond the
    /// border that outlets erode down to (the `Physical` border rule).
    pub(super) base_level: f32,
    /// Where these maps' first cell lies on the map: 0 for the whole map,
    /// a tile's zone's corner for its turn (whole numbers).
    pub(super) origin: Vec2,
    /// Which sides of these maps are the map's edges: all of them, or, for a
    /// tile's turn, those its zone shares with the map. A particle whose next
    /// read would go beyond the others is refused.
    pub(super) reach: Reach,
    /// `[width - 1, height - 1]` as `f32`: [`holds`](Self::holds)'s far
    /// bounds, converted once (a `usize` takes six instructions to convert,
    /// and the particles ask every step).
    pub(super) high: [f32; 2],
    /// Cells a flood in a zone has changed, with their terrain and pool as they
    /// were, so a flood that outgrows the zone can be undone.
    pub(super) undo: Vec<(usize, f32, f32)>,
    /// The controls' active mask and erodibility over these maps' cells (see
    /// [`Controls`](crate::Controls)): cuts go through it, and particles,
    /// floods and deposits stay on the cells it admits.
    pub(super) gate: Gate<'a>,
}

impl World<'_> {
    /// Whether a particle at `position` reads only cells these maps hold.
    #[inline(always)]
    pub(super) fn holds(&self, position: Vec2) -> bool {
        self.reach.holds_inside(1.0, self.high, position.x, position.y)
    }

    /// Settles the single-cell pits the run made on dry ground (see
    /// [`crate::pits::settle_pits`]; `before` is the terrain as the run found
    /// it), after putting the rounding remainder down. Returns how many.
    pub(super) fn settle_pits(&mut self, before: &[f32]) -> u64 {
        self.flush();
        let pool = &*self.pool;
        let (width, height, gate) = (self.width, self.height, self.gate);
        let settled = crate::pits::settle_pits(
            self.heights,
            width,
            height,
            before,
            gate,
            &mut self.report.erosion,
            &mut self.carry,
            |i| pool[i] == 0.0,
        );
        // Only dry cells moved: their surface is their ground.
        for (i, s) in self.surface.iter_mut().enumerate() {
            if self.pool[i] == 0.0 {
                *s = self.heights[i];
            }
        }
        settled
    }

    /// Whether cell `i` is sea: its ground at or below the sea level.
    #[inline]
    pub(super) fn is_sea(&self, i: usize) -> bool {
        self.k.sea_level.is_some_and(|sea| f64::from(self.heights[i]) <= sea)
    }

    /// Index of the cell holding `position`, clamped to the map.
    #[inline]
    pub(super) fn index_of(&self, position: Vec2) -> usize {
        let (x, y) = clamped_cell(position, self.width, self.height);
        y * self.width + x
    }

    /// The water surface (terrain plus pool) of cell `i`, exactly, in `f64`.
    #[inline]
    pub(super) fn level(&self, i: usize) -> f64 {
        level_of(self.heights, self.pool, i)
    }

    /// The pool depth at cell `i` for a water level `level`: rounded to the
    /// nearest `f32`, so the stored level (`f64` height plus `f64` depth) lies
    /// within half an ulp of the depth from `level`; 0 where the ground is
    /// higher.
    #[inline]
    pub(super) fn depth_reaching(&self, i: usize, level: f64) -> f32 {
        math::larger((level - f64::from(self.heights[i])) as f32, 0.0)
    }

    /// Sets the pool depth of cell `i` to `depth` (at least 0), keeping the surface
    /// in step, and books the change. Returns the water added to the pool (negative:
    /// released).
    #[inline]
    pub(super) fn set_pool(&mut self, i: usize, depth: f32) -> f64 {
        let old = self.pool[i];
        // +0 for a depth of -0 (`max` may keep either zero).
        let new = math::larger(depth, 0.0);
        self.pool[i] = new;
        self.surface[i] = self.heights[i] + new;
        let added = (f64::from(new) - f64::from(old)) * self.k.volume_factor;
        self.report.pooled += added;
        self.report.water_moved += added.abs();
        added
    }

    /// Writes terrain height `new` to cell `i` (keeping the surface in step) and
    /// books it; returns the mass taken (negative: put down).
    #[inline]
    pub(super) fn set_height(&mut self, i: usize, new: f32) -> f64 {
        let old = self.heights[i];
        self.heights[i] = new;
        self.surface[i] = new + self.pool[i];
        self.report.erosion.book(old, new)
    }

    /// Puts `load` (plus any carried rounding remainder) down on cell `i`. Under a
    /// pool the sediment displaces water, so the pool's surface stays where it was;
    /// the displaced water joins the particle.
    ///
    /// `i` is a cell the gate admits (a particle only ever stands on one), so
    /// the deposit lands whole, as the gate would let it.
    pub(super) fn deposit(&mut self, i: usize, load: f64, water: &mut f64) {
        let level = self.level(i);
        self.deposit_under(i, load, level, water);
    }

    /// [`deposit`](Self::deposit) under a pool whose level is `level` (the
    /// level a flood set it to): the cell's water is set to reach `level`
    /// itself, so that repeated deposits do not walk its stored level away
    /// from its neighbours' by rounding.
    pub(super) fn deposit_under(&mut self, i: usize, load: f64, level: f64, water: &mut f64) {
        debug_assert!(self.gate.admits(i), "a deposit on masked cell {i}");
        let total = load + self.carry;
        if self.gate.holds_back(i, total) {
            self.carry = total;
        } else {
            let new = (f64::from(self.heights[i]) + total) as f32;
            if !new.is_finite() {
                self.carry = total;
                return;
            }
            self.carry = total + self.set_height(i, new);
        }
        if self.pool[i] > 0.0 {
            let depth = self.depth_reaching(i, level);
            *water -= self.set_pool(i, depth);
        }
    }

    /// Places the carried remainder on the admitted cell of smallest magnitude
    /// (end of a run; masked cells keep their bits). The remainder is below an
    /// `f32` unit in the last place, so any pool there is left as it is.
    pub(super) fn flush(&mut self) {
        let (gate, surface, pool, report) = (self.gate, &mut *self.surface, &*self.pool, &mut self.report);
        let target = |cells: &[f32]| gate.flush_target(cells);
        // As `set_height`: the surface follows the ground.
        self.carry = crate::carry::add_all(self.heights, self.carry, target, |i, old, new| {
            surface[i] = new + pool[i];
            report.erosion.book(old, new);
        });
    }

    /// Ends particle `p`: its load leaves the map or is put down where it stands,
    /// and its water is booked.
    pub(super) fn end(&mut self, p: &mut Particle, end: End) {
        let report = &mut self.report;
        report.erosion.droplets += 1;
        match end {
            End::Evaporated => report.erosion.evaporated += 1,
            End::LeftMap => report.erosion.left_map += 1,
            End::StepLimit => report.erosion.step_limited += 1,
            End::Unstable => report.erosion.unstable += 1,
            End::Pooled => report.ended_in_pool += 1,
            End::FloodFailed => report.flood_failed += 1,
            End::SpillLimited => report.spill_limited += 1,
            End::Masked => report.erosion.masked += 1,
        }
        let load = core::mem::take(&mut p.sediment);
        if end == End::LeftMap {
            self.report.erosion.outflow += load;
            self.report.water_outflow += p.water;
        } else {
            let i = self.index_of(p.position);
            self.deposit(i, load, &mut p.water);
            match end {
                End::Evaporated | End::Pooled => self.report.evaporated += p.water,
                _ => self.report.dropped += p.water,
            }
        }
        self.report.water_moved += p.water.abs();
        p.water = 0.0;
    }
}

/// The water surface of cell `i` of `heights` and `pool`, exactly, in `f64`
/// ([`World::level`] for a loop that holds the maps apart from the world).
#[inline]
pub(super) fn level_of(heights: &[f32], pool: &[f32], i: usize) -> f64 {
    f64::from(heights[i]) + f64::from(pool[i])
}
