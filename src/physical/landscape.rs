//! The landscape kernel: the seeds' droplet with the channel-forming mechanisms
//! of [`Channels`] (discharge and momentum maps, an erosion brush with bilinear
//! deposit, one-cell steps), in sequential and interleaved (lockstep) order.

use alloc::vec::Vec;

use glam::Vec2;
use rand_core::Rng;

use super::simd::{self, Isa};
use super::{Eroder, Refused};
use crate::channels::Channels;
use crate::controls::Gate;
use crate::droplet::{Droplet, Fate};
use crate::error::GridError;
use crate::grid::{GridRef, try_filled};
use crate::math;
use crate::normal::{LaneKernel, NormalSampler};
use crate::progress::{Progress, Ticker};

/// Droplets the interleaved (lockstep) order advances together, their
/// headings taken together each round: few, since each droplet's
/// neighbourhood of the maps must stay in cache (32 lanes ran 40 % slower
/// than 4), and eight, the width of the 8-facet normals' AVX2 kernel (512²
/// fBm 1 on a Zen 3: 7.9-8.8 s against four lanes' 11.3-13.1, which took
/// their normals one at a time; before that kernel 8 lanes were within the
/// noise of 4).
const LANES: usize = 8;

/// `erf(x)` for `x >= 0` to within 5e-4 (Abramowitz and Stegun 7.1.27), from
/// additions, multiplications and one division only, so its bits are the same
/// with `std` or `libm` on every platform.
#[inline(always)]
pub(crate) fn erf(x: f32) -> f32 {
    let x = x.max(0.0);
    let p = 1.0 + x * (0.278_393 + x * (0.230_389 + x * (0.000_972 + x * 0.078_108)));
    let p2 = p * p;
    1.0 - 1.0 / (p2 * p2)
}

/// One cell of the discharge and momentum maps, with what the droplets left
/// there since the last refresh: everything a step reads and writes of them
/// side by side, on one half of a cache line (the maps outgrow the caches;
/// separate arrays cost a line each per step).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C, align(32))]
pub(super) struct FlowCell {
    /// The channel factor `erf(discharge * cell_size / channel_area)` as of
    /// the last refresh, in `[0, 1)`.
    channel: f32,
    /// The water that crossed the cell since the last refresh.
    water: f32,
    /// The capacity gain `discharge_gain * channel * r` as of the last
    /// refresh (`r` the river growth, see [`Channels::river_area`]): the
    /// capacity is multiplied by `1 + gain`.
    gain: f32,
    /// The discharge: water per droplet of rain per cell (moving average).
    discharge: f32,
    /// The mean flow: water times velocity on the discharge's scale (moving
    /// average); 0 when `momentum` is 0.
    flow: [f32; 2],
    /// The water times velocity since the last refresh; 0 when `momentum` is 0.
    track: [f32; 2],
}

impl FlowCell {
    /// A cell just refreshed to these maps, its counts cleared.
    #[inline(always)]
    fn refreshed(discharge: f32, channel: f32, gain: f32, flow: [f32; 2]) -> Self {
        FlowCell { channel, water: 0.0, gain, discharge, flow, track: [0.0; 2] }
    }
}

/// The most a turn may bend a droplet's path for it to hold for a second
/// cell in a channel ([`Channels::stride`]): the squared sine of 5 degrees.
/// Held through bends as well, the turns loosened the slope-area fits more
/// (53 of 80 sweep runs met every target against 56; docs/landscape.md).
const STRAIGHT: f32 = 0.0076;

/// Where a droplet stands for one cell of its step: the cell, its index, and
/// the flow maps' channel factor and capacity gain there.
#[derive(Clone, Copy)]
struct Stand {
    cell: (usize, usize),
    index: usize,
    channel: f32,
    gain: f32,
}

/// The discharge and momentum maps, the water counted since their last
/// refresh, and the erosion brush.
#[derive(Debug)]
pub(super) struct FlowMaps {
    c: Channels,
    /// Per cell: the maps and the water and flow counted since the last
    /// refresh.
    cells: Vec<FlowCell>,
    /// The brush: cell offsets and weights (summing to 1), the droplet's own
    /// cell first.
    brush: Vec<(isize, isize, f32)>,
    /// The brush's reach in cells on each side.
    reach: usize,
    /// The weights of the brush's eight other cells where it is the 3 x 3
    /// block around the droplet's (a radius in (√2, 2]), in [`BLOCK`]'s
    /// order, which is the brush's: cut with fixed offsets, not the loop.
    block: Option<[f32; 8]>,
    /// `cell_size / channel_area`: a cell's discharge as upstream area per
    /// unit width (see [`Channels`]), in channel areas.
    in_channel_areas: f32,
    /// `river_area / channel_area`: where the river growth stops.
    river: f32,
    /// `cell_size`: a cell's width, turning the maps' per-cell discharge and
    /// flow into the unit width's for the steering.
    cell_width: f32,
    /// The sea level (`-inf` without a sea): a droplet on a cell at or below
    /// it ends.
    sea: f32,
    since_refresh: u32,
    /// A tile's view in a tiled run: counts its water, never refreshes (the run
    /// refreshes the whole map's maps between sweeps).
    frozen: bool,
}

impl FlowMaps {
    /// A tile's view for a turn: `cells`, a zone copy of the whole map's
    /// cells, no refreshes.
    pub(super) fn zone(c: Channels, cells: Vec<FlowCell>) -> Self {
        let mut view = Self::new(c, 0).expect("no cells to allocate");
        view.cells = cells;
        view.frozen = true;
        view
    }

    /// A zone view's cells, handed back at the end of its turn.
    pub(super) fn into_cells(self) -> Vec<FlowCell> {
        self.cells
    }

    /// The whole map's cells (see [`zone`](Self::zone)).
    pub(super) fn cells_mut(&mut self) -> &mut [FlowCell] {
        &mut self.cells
    }

    pub(super) fn new(c: Channels, cells: usize) -> Result<Self, GridError> {
        let reach = c.brush_radius.max(0.0) as usize;
        let mut brush = Vec::new();
        if c.brush_radius >= 1.0 {
            let r = reach as isize;
            for dy in -r..=r {
                for dx in -r..=r {
                    let distance = math::sqrt((dx * dx + dy * dy) as f32);
                    if distance < c.brush_radius {
                        brush.push((dx, dy, c.brush_radius - distance));
                    }
                }
            }
            // The droplet's own cell first (it bears the pit-safe guard).
            brush.sort_by_key(|&(dx, dy, _)| (dx * dx + dy * dy, dy, dx));
            let total: f32 = brush.iter().map(|b| b.2).sum();
            brush.iter_mut().for_each(|b| b.2 /= total);
        } else {
            brush.push((0, 0, 1.0));
        }
        let length = c.cell_size;
        let block =
            brush[1..].iter().map(|b| (b.0, b.1)).eq(BLOCK).then(|| core::array::from_fn(|k| brush[k + 1].2));
        Ok(Self {
            // Per step of one cell: the capacity per unit drop over `length`
            // (the slope), the steering per unit length.
            c: Channels { capacity: c.capacity / length, momentum: c.momentum * length, ..c },
            cells: try_filled(cells, FlowCell::default())?,
            reach: if brush.len() > 1 { reach } else { 0 },
            block,
            brush,
            // Per unit width, not per cell area: water that gathers in a
            // valley crosses it on as many cells as the valley is wide, so a
            // cell's count falls with the cell's side (cell_size² here ran
            // 2x less erosion per halving of the cells: docs/landscape.md).
            in_channel_areas: c.cell_size / c.channel_area,
            river: c.river_area / c.channel_area,
            cell_width: c.cell_size,
            sea: c.sea_level.unwrap_or(f32::NEG_INFINITY),
            since_refresh: 0,
            frozen: false,
        })
    }

    /// Counts a finished droplet; every `refresh` droplets moves the maps towards
    /// the water counted since the last refresh.
    fn droplet_done(&mut self) {
        self.since_refresh += 1;
        if self.since_refresh >= self.c.refresh && !self.frozen {
            self.since_refresh = 0;
            self.refresh(1);
        }
    }

    /// `n` refreshes at once: moves the maps towards the water counted since
    /// the last refresh, as water per droplet per cell (the count times `cells /
    /// (n * refresh)`), `1 - (1 - discharge_rate)^n` of the way. `n = 1` is one
    /// refresh; a tiled run refreshes once a sweep, for the droplets it ended.
    pub(super) fn refresh(&mut self, n: u32) {
        // `(1 - rate)^n` by squaring: multiplications only, the same bits with
        // `std` or `libm`.
        let (mut keep, mut base, mut e) = (1.0f32, 1.0 - self.c.discharge_rate, n);
        while e > 0 {
            if e & 1 == 1 {
                keep *= base;
            }
            base *= base;
            e >>= 1;
        }
        let cells = self.cells.len() as f32;
        let gain = if n == 1 {
            self.c.discharge_rate * (cells / self.c.refresh as f32)
        } else {
            (1.0 - keep) * (f64::from(cells) / (f64::from(n) * f64::from(self.c.refresh))) as f32
        };
        let rule = Refresh {
            keep,
            gain,
            in_channel_areas: self.in_channel_areas,
            river: self.river,
            discharge_gain: self.c.discharge_gain,
        };
        let cells = &mut self.cells;
        // A refresh walks every cell (1.25 cells a droplet's step in a 256²
        // `Mode::Fast` run of `landscape_for`, at any size), so it runs in the widest
        // vectors: 7.5 % of that run's time one cell at a time, 5.4 % now
        // (the rest is memory; `perf`, Zen 3).
        simd::widest(
            Isa::detect(),
            #[inline(always)]
            move || rule.cells(cells),
        );
    }
}

/// What a refresh does to each cell (see [`FlowMaps::refresh`]).
#[derive(Clone, Copy)]
struct Refresh {
    /// How much of the maps a refresh keeps.
    keep: f32,
    /// The weight of the water counted since the last refresh.
    gain: f32,
    /// `cell_size / channel_area`: turns a cell's discharge into channel areas.
    in_channel_areas: f32,
    /// `river_area / channel_area`: where the river growth stops (none at 1
    /// or below).
    river: f32,
    /// [`Channels::discharge_gain`].
    discharge_gain: f32,
}

impl Refresh {
    /// Refreshes `cells`: eight at a time as arrays of each field (which the
    /// compiler puts in vectors; one at a time, an array of `FlowCell`s is
    /// not), the rest one by one, with the same operations in the same order.
    #[inline(always)]
    fn cells(self, cells: &mut [FlowCell]) {
        const N: usize = 8;
        let mut chunks = cells.chunks_exact_mut(N);
        for chunk in &mut chunks {
            let mut fields = [[0.0f32; N]; 6];
            for (i, c) in chunk.iter().enumerate() {
                let field = [c.discharge, c.water, c.flow[0], c.flow[1], c.track[0], c.track[1]];
                for (f, v) in fields.iter_mut().zip(field) {
                    f[i] = v;
                }
            }
            let [discharge, water, flow_x, flow_y, track_x, track_y] = fields;
            let mut out = [[0.0f32; N]; 5];
            for i in 0..N {
                let (d, c, g, fx, fy) =
                    self.one(discharge[i], water[i], [flow_x[i], flow_y[i]], [track_x[i], track_y[i]]);
                (out[0][i], out[1][i], out[2][i], out[3][i], out[4][i]) = (d, c, g, fx, fy);
            }
            for (i, c) in chunk.iter_mut().enumerate() {
                *c = FlowCell::refreshed(out[0][i], out[1][i], out[2][i], [out[3][i], out[4][i]]);
            }
        }
        for c in chunks.into_remainder() {
            *c = self.cell(c);
        }
    }

    /// `cell` refreshed on its own.
    #[inline(always)]
    fn cell(self, cell: &FlowCell) -> FlowCell {
        let (discharge, channel, gain, fx, fy) = self.one(cell.discharge, cell.water, cell.flow, cell.track);
        FlowCell::refreshed(discharge, channel, gain, [fx, fy])
    }

    /// One cell's new discharge, channel factor, capacity gain and flow.
    #[inline(always)]
    fn one(self, discharge: f32, water: f32, flow: [f32; 2], track: [f32; 2]) -> (f32, f32, f32, f32, f32) {
        let discharge = self.keep * discharge + self.gain * water;
        let area = discharge * self.in_channel_areas;
        let channel = erf(area);
        // `r` stays 1 (the gain of `e` alone) up to `channel_area`, and
        // everywhere when `river_area` is no larger.
        let river = if self.river > 1.0 { math::sqrt(area.max(1.0).min(self.river)) } else { 1.0 };
        let gain = self.discharge_gain * channel * river;
        let fx = self.keep * flow[0] + self.gain * track[0];
        let fy = self.keep * flow[1] + self.gain * track[1];
        (discharge, channel, gain, fx, fy)
    }
}

/// A droplet's course for one step (see [`Eroder::heading`]): its velocity,
/// speed, and one-cell step.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Heading {
    vx: f32,
    vy: f32,
    speed: f32,
    step_x: f32,
    step_y: f32,
}

/// The [`Heading`]s of `N` lanes (see [`Eroder::headings`]), lane by lane
/// in each field, for the vectors.
#[derive(Clone, Copy, Debug)]
pub(super) struct Headings<const N: usize> {
    vx: [f32; N],
    vy: [f32; N],
    speed: [f32; N],
    step_x: [f32; N],
    step_y: [f32; N],
}

impl<const N: usize> Default for Headings<N> {
    fn default() -> Self {
        Headings { vx: [0.0; N], vy: [0.0; N], speed: [0.0; N], step_x: [0.0; N], step_y: [0.0; N] }
    }
}

impl<const N: usize> Headings<N> {
    /// Lane `l`'s heading.
    #[inline(always)]
    pub(super) fn get(&self, l: usize) -> Heading {
        Heading {
            vx: self.vx[l],
            vy: self.vy[l],
            speed: self.speed[l],
            step_x: self.step_x[l],
            step_y: self.step_y[l],
        }
    }
}

/// A droplet's step count and cell.
#[derive(Clone, Copy, Debug)]
pub(super) struct Walk {
    pub(super) age: u32,
    pub(super) cell: (usize, usize),
}

impl<S: NormalSampler> Eroder<'_, S> {
    /// One step of the landscape droplet; `None` while it goes on.
    ///
    /// Seed 000's Newton step with the [`Channels`] mechanisms: the momentum map
    /// steers the velocity, the droplet moves one cell along it (two cells on
    /// one turn in a channel above [`Channels::stride`], each crossed as a
    /// one-cell step of its own), the capacity is
    /// `capacity * water * drop * (1 + gain * channel)`, erosion is spread by the brush (the
    /// pit-safe guard on the droplet's cell), deposits split bilinearly (or fill
    /// the cell when going uphill), and friction and evaporation are lowered in
    /// channels.
    #[inline(always)]
    pub(super) fn landscape_step(
        &mut self,
        flow: &mut FlowMaps,
        sampler: &S,
        d: &mut Droplet,
        walk: &mut Walk,
    ) -> Option<Fate> {
        self.landscape_step_if(flow, sampler, d, walk, |_, _| true)
            .unwrap_or_else(|Refused| unreachable!("every move is allowed"))
    }

    /// [`landscape_step`](Self::landscape_step), unless the droplet would move
    /// to a position `allowed` refuses: then `Err(Refused)`, with the droplet,
    /// the map and the maps' counts as they were (tiles stop droplets at their
    /// zone's edge).
    #[inline(always)]
    pub(super) fn landscape_step_if(
        &mut self,
        flow: &mut FlowMaps,
        sampler: &S,
        d: &mut Droplet,
        walk: &mut Walk,
        allowed: impl Fn(f32, f32) -> bool,
    ) -> Result<Option<Fate>, Refused> {
        let heading = self.heading(flow, sampler, d, walk.cell);
        self.headed_step_if(flow, d, walk, heading, allowed)
    }

    /// The step of a droplet whose [`heading`](Self::heading) is taken:
    /// unless it ends first (in the sea, out of water or out of steps), its
    /// [`headed_step`](Self::headed_step), through the gate when there are
    /// controls (without them the loop runs the ungated copy, one
    /// well-predicted test a step instead of one for each cell the step
    /// changes).
    #[inline(always)]
    pub(super) fn headed_step_if(
        &mut self,
        flow: &mut FlowMaps,
        d: &mut Droplet,
        walk: &mut Walk,
        heading: Heading,
        allowed: impl Fn(f32, f32) -> bool,
    ) -> Result<Option<Fate>, Refused> {
        if let Some(fate) = self.ends_before_step(flow, d, walk) {
            return Ok(Some(fate));
        }
        if self.gate.is_open() {
            self.headed_step::<false>(flow, d, walk, heading, allowed)
        } else {
            self.headed_step::<true>(flow, d, walk, heading, allowed)
        }
    }

    /// How a droplet ends before it steps, if it does: in the sea, out of
    /// water or out of steps.
    #[inline(always)]
    fn ends_before_step(&self, flow: &FlowMaps, d: &Droplet, walk: &Walk) -> Option<Fate> {
        let (x, y) = walk.cell;
        // The droplet's cell as the step begins (an earlier lane of the
        // round may have changed it since the round's headings).
        if self.cells[y * self.width + x] <= flow.sea {
            // In the sea: the load goes with the water, as off the map.
            return Some(Fate::LeftMap);
        }
        self.spent_water(d.water, walk.age)
    }

    /// The velocity a droplet at `cell` takes on its step, its speed and the
    /// one-cell step along it: the push of the surface's normal, then the
    /// momentum map's steering. It changes nothing (see [`headings`](Self::headings)).
    #[inline(always)]
    pub(super) fn heading(&self, flow: &FlowMaps, sampler: &S, d: &Droplet, cell: (usize, usize)) -> Heading {
        self.headings(Isa::Baseline, flow, sampler, [Some((d, cell))]).get(0)
    }

    /// The [`heading`](Self::heading)s of up to `N` droplets (a lane is
    /// `None` where it has none), each lane's operations those of one
    /// droplet alone: the normals one lane after another, the rest across
    /// the lanes (vectors), the steering computed in every lane and kept
    /// where it turns. It changes nothing, so a round of droplets takes its
    /// headings before any of them moves, and their chains of square roots
    /// and divisions overlap.
    #[inline(always)]
    pub(super) fn headings<const N: usize>(
        &self,
        isa: Isa,
        flow: &FlowMaps,
        sampler: &S,
        droplets: [Option<(&Droplet, (usize, usize))>; N],
    ) -> Headings<N> {
        let (k, c, w) = (self.k, flow.c, self.width);
        let grid = GridRef::new_unchecked(w, self.height, &*self.cells);
        // Lanes without a droplet compute from these (their results unused).
        let (mut nx, mut nz, mut vx0, mut vy0) = ([0.0f32; N], [0.0f32; N], [0.0f32; N], [0.0f32; N]);
        let (mut water, mut discharge, mut flow_x, mut flow_y) =
            ([1.0f32; N], [0.0f32; N], [0.0f32; N], [0.0f32; N]);
        // Eight lanes' 8-facet normals across the lanes in AVX2 vectors
        // where the CPU has them (the same bits as one at a time; lanes
        // without a droplet read an inner cell), else one lane after another.
        let across = N == 8 && isa != Isa::Baseline && sampler.lane_kernel() == Some(LaneKernel::EIGHT_FACET);
        let normal = |(d, (x, y)): (&Droplet, (usize, usize))| {
            let n = sampler.normal_in_cell(&grid, d.position, x, y, k.height_scale);
            (n.x, n.z)
        };
        if across {
            let cells = core::array::from_fn(|l| droplets[l].map_or((1, 1), |(_, cell)| cell));
            if let Some((x, z)) = simd::eight_facet_lanes(isa, &grid, cells, k.height_scale) {
                nx[..8].copy_from_slice(&x);
                nz[..8].copy_from_slice(&z);
            } else {
                // The kernel's refusals (the map's last inner cell) in a loop
                // of their own: asked inside the loop below, the check cost
                // the AVX2 copy 5 % more instructions (docs/performance.md).
                for (l, droplet) in droplets.iter().enumerate() {
                    if let Some(droplet) = *droplet {
                        (nx[l], nz[l]) = normal(droplet);
                    }
                }
            }
        }
        for (l, droplet) in droplets.iter().enumerate() {
            if let Some((d, (x, y))) = *droplet {
                if !across {
                    (nx[l], nz[l]) = normal((d, (x, y)));
                }
                let cell = &flow.cells[y * w + x];
                (vx0[l], vy0[l]) = (d.velocity.x, d.velocity.y);
                (water[l], discharge[l], flow_x[l], flow_y[l]) =
                    (d.water, cell.discharge, cell.flow[0], cell.flow[1]);
            }
        }
        let mut out = Headings::default();
        let a = flow.cell_width;
        for l in 0..N {
            let accel = k.dt / (k.density * water[l]);
            let vx = vx0[l] + nx[l] * accel;
            let vy = vy0[l] + nz[l] * accel;
            let own = vx * vx + vy * vy;
            let speed = math::sqrt(own);
            // The step, one cell along the velocity: `v / speed`, as a
            // product: a division taken off the chain of dependent operations
            // from one step's position to the next (with the steering's
            // below, 6 % of a step; docs/performance.md).
            let inv_speed = 1.0 / speed;
            // Turn towards the mean flow `f`, keeping the speed: steering
            // that adds speed feeds on itself (droplets follow the flow, the
            // flow speeds up). The turn adds `momentum * cos / (water +
            // discharge) * f`, `cos` the angle between `v` and `f`: `reach *
            // (f . v) / |v| * f`, with `reach` from the cell and the water
            // alone, so the velocity's own chain is short; the turned
            // direction is taken from `speed` times the turned velocity,
            // `speed * v + reach * (f . v) * f`, which needs no `1 / speed`.
            let (fx, fy, discharge) = (flow_x[l] * a, flow_y[l] * a, discharge[l] * a);
            let mean = fx * fx + fy * fy;
            let reach = c.momentum / (math::sqrt(mean) * (water[l] + discharge));
            let steer = reach * (fx * vx + fy * vy);
            let (sx, sy) = (vx * speed + steer * fx, vy * speed + steer * fy);
            let turned = math::sqrt(sx * sx + sy * sy);
            let inv_turned = 1.0 / turned;
            let (tx, ty) = (sx * inv_turned, sy * inv_turned);
            // A turn where there is a mean flow and a velocity, and not where
            // `speed * v` overflows.
            let turns =
                (c.momentum > 0.0) & (mean > 0.0) & (own > 0.0) & (turned > 0.0) & (turned < f32::INFINITY);
            out.step_x[l] = if turns { tx } else { vx * inv_speed };
            out.step_y[l] = if turns { ty } else { vy * inv_speed };
            out.vx[l] = if turns { tx * speed } else { vx };
            out.vy[l] = if turns { ty * speed } else { vy };
            out.speed[l] = speed;
        }
        out
    }

    /// [`landscape_step_if`](Self::landscape_step_if) from the
    /// droplet's [`heading`](Self::heading) on: the move, the exchanges with
    /// the terrain, and the droplet's end.
    #[inline(always)]
    pub(super) fn headed_step<const GATED: bool>(
        &mut self,
        flow: &mut FlowMaps,
        d: &mut Droplet,
        walk: &mut Walk,
        Heading { vx, vy, speed, step_x, step_y }: Heading,
        allowed: impl Fn(f32, f32) -> bool,
    ) -> Result<Option<Fate>, Refused> {
        let (k, c, w) = (self.k, flow.c, self.width);
        let (x, y) = walk.cell;
        let here = y * w + x;
        let FlowCell { channel, gain, .. } = flow.cells[here];
        // Whether all three are finite, in one test: `x * 0` is 0 for finite
        // `x`, NaN else.
        if speed * 0.0 + (vx * 0.0 + vy * 0.0) != 0.0 {
            return Ok(Some(Fate::Unstable));
        }
        if speed == 0.0 {
            return Ok(Some(Fate::Flat));
        }
        let (mut px, mut py) = (d.position.x + step_x, d.position.y + step_y);
        if !allowed(px, py) {
            return Err(Refused);
        }
        let mut at = Stand { cell: (x, y), index: here, channel, gain };
        let mut v = (vx, vy);
        let (mut next, mut off_map) = self.cross_cell::<GATED>(flow, d, at, (px, py), &mut v);
        walk.age += 1;
        // In a channel, on a straight reach, the turn holds for a second cell
        // (`Channels::stride`): two one-cell exchanges, one normal and one
        // turn. Straight: the step's direction within `STRAIGHT` of the
        // velocity the droplet came with (the sine of the angle between them,
        // squared, from their cross product; a droplet at rest turns nothing).
        if channel > c.stride && !off_map && next != at.cell && walk.age < k.max_steps {
            let (ox, oy) = (d.velocity.x, d.velocity.y);
            let cross = step_x * oy - step_y * ox;
            // The second cell only where a step to it could start: on the
            // land the gate admits, inside what `allowed` lets it reach.
            let n = next.1 * w + next.0;
            let (qx, qy) = (px + step_x, py + step_y);
            if cross * cross <= STRAIGHT * (ox * ox + oy * oy)
                && (!GATED || self.gate.admits(n))
                && self.cells[n] > flow.sea
                && allowed(qx, qy)
            {
                d.position = Vec2::new(px, py);
                (px, py) = (qx, qy);
                let FlowCell { channel, gain, .. } = flow.cells[n];
                at = Stand { cell: next, index: n, channel, gain };
                (next, off_map) = self.cross_cell::<GATED>(flow, d, at, (px, py), &mut v);
                walk.age += 1;
            }
        }
        d.velocity = Vec2::new(v.0, v.1);
        d.position = Vec2::new(px, py);
        if off_map {
            return Ok(Some(Fate::LeftMap));
        }
        if GATED && !self.gate.admits(next.1 * w + next.0) {
            // It would enter a masked cell: it stops in the one it is in.
            d.position = Self::centre(at.cell.0, at.cell.1);
            return Ok(Some(Fate::Masked));
        }
        walk.cell = next;
        Ok(None)
    }

    /// Moves the droplet one cell, from `at` to `(px, py)` on velocity `v`:
    /// counts its water and flow at `at`, applies friction to `v`, trades
    /// sediment with the terrain, evaporates. Returns the cell it moved to
    /// and whether that is off the map.
    #[inline(always)]
    fn cross_cell<const GATED: bool>(
        &mut self,
        flow: &mut FlowMaps,
        d: &mut Droplet,
        at: Stand,
        (px, py): (f32, f32),
        v: &mut (f32, f32),
    ) -> ((usize, usize), bool) {
        let (k, c, w) = (self.k, flow.c, self.width);
        let Stand { cell: (x, y), index: here, channel, gain } = at;
        // No height changed since the step (or its first cell) began.
        let h_here = self.cells[here];
        self.report.steps += 1;
        let cell = &mut flow.cells[here];
        if c.momentum > 0.0 {
            cell.track[0] += d.water * v.0;
            cell.track[1] += d.water * v.1;
        }
        cell.water += d.water;
        let off_map = self.off_map(px, py);
        let next = (simd::truncate(px) as usize, simd::truncate(py) as usize);
        let h_next = if off_map { self.height_beyond(px, py) } else { self.cells[next.1 * w + next.0] };
        let relief = 1.0 - c.channel_relief * channel;
        let keep = 1.0 - k.dt_friction * relief;
        *v = (v.0 * keep, v.1 * keep);
        // The load the droplet can carry: proportional to its water and the drop
        // of its one-cell step, not to its speed (a one-cell step's drop is the
        // slope; speed would count the slope twice and starve slow channels).
        // (`math::larger`: one comparison, and 0 for a NaN as `max` gives.)
        let capacity = math::larger(c.capacity * d.water * (h_here - h_next) * (1.0 + gain), 0.0);
        let change = f64::from(k.dt_kd) * (f64::from(capacity) - d.sediment);
        if change > 0.0 {
            // The next cell on the map is a neighbour (one-cell steps), so the
            // lowest neighbour is at most its height: the floor is the next
            // cell's, unless the droplet stays in its cell (no room either
            // way) or leaves the map.
            let floor = if k.pit_safe && off_map {
                math::larger(h_next, self.lowest_neighbour(x, y))
            } else {
                h_next
            };
            self.erode_brush::<GATED>(flow, (x, y), floor, change as f32, &mut d.sediment);
        } else if k.pit_safe && h_next > h_here && !off_map {
            // Going uphill: fill the cell left towards its spill level (the lower
            // of the next cell and its lowest neighbour), never above it (a fill
            // above the lowest neighbour could leave that neighbour a pit); the
            // rest of the step's deposit goes down as usual.
            let spill = math::smaller(h_next, self.lowest_neighbour(x, y));
            let fill = math::smaller(spill - h_here, d.sediment as f32);
            let mut rest = (-change) as f32;
            if fill > 0.0 {
                let new = self.gated::<GATED>(here, h_here, h_here + fill);
                self.cells[here] = new;
                d.sediment += self.report.book_fill(h_here, new);
                // What was put down (all of `fill` unless the gate scaled it).
                rest -= if new == h_here + fill { fill } else { new - h_here };
            }
            self.deposit_bilinear::<GATED>(d.position, rest, &mut d.sediment);
        } else {
            self.deposit_bilinear::<GATED>(d.position, (-change) as f32, &mut d.sediment);
        }
        if self.tracks.is_some() {
            self.track(here, next.1 * w + next.0, d.water, d.sediment, off_map || next != (x, y));
        }
        d.water *= 1.0 - k.dt_evaporation * relief;
        (next, off_map)
    }

    /// `proposed` for cell `i` (at `current`) through the gate when `GATED`
    /// (see [`Gate::apply`](crate::controls::Gate::apply)); as proposed
    /// otherwise, which is what an open gate gives.
    #[inline(always)]
    fn gated<const GATED: bool>(&self, i: usize, current: f32, proposed: f32) -> f32 {
        through::<GATED>(&self.gate, i, current, proposed)
    }

    /// Takes `amount` from the brush around `(x, y)` (the droplet's cell alone
    /// where the brush crosses the border), no cell cut below `floor`, and
    /// credits `sediment` with what was taken.
    #[inline(always)]
    fn erode_brush<const GATED: bool>(
        &mut self,
        flow: &FlowMaps,
        (x, y): (usize, usize),
        floor: f32,
        amount: f32,
        sediment: &mut f64,
    ) {
        let r = flow.reach;
        let inside = x >= r && y >= r && x + r < self.width && y + r < self.height;
        let brush: &[(isize, isize, f32)] = if inside { &flow.brush } else { &[(0, 0, 1.0)] };
        let centre = brush[0].2;
        // The droplet's cell takes `centre * amount`: never below the floor.
        let room = math::larger(self.cells[y * self.width + x] - floor, 0.0);
        let amount = if centre * amount > room { room / centre } else { amount };
        if amount.is_nan() || amount <= 0.0 {
            return;
        }
        let w = self.width as isize;
        let here = y * self.width + x;
        // The droplet's cell first (the brush's first entry): never below the
        // floor.
        let old = self.cells[here];
        let low = gated_cut::<GATED>(&self.gate, here, old, centre * amount, floor);
        self.cells[here] = low;
        if let (true, Some(weights)) = (inside, &flow.block) {
            let taken = f64::from(old) - f64::from(low);
            self.cut_block::<GATED>(here, weights, amount, low, taken, sediment);
            return;
        }
        *sediment += self.report.book_cut(old, low);
        for &(dx, dy, weight) in &brush[1..] {
            let i = (here as isize + dy * w + dx) as usize;
            let old = self.cells[i];
            // No brush cell is cut below the droplet's cell (its neighbour:
            // a brush of radius up to 2 is the 3 x 3 block), so the brush digs
            // no pits.
            let new = gated_cut::<GATED>(&self.gate, i, old, weight * amount, low);
            self.cells[i] = new;
            *sediment += self.report.book_cut(old, new);
        }
    }

    /// [`erode_brush`](Self::erode_brush)'s loop over the brush's other
    /// cells where the brush is the 3 x 3 block around `here` (an inner cell,
    /// `weights` in [`BLOCK`]'s order): the same cuts in the same order, at
    /// fixed offsets in the block's three rows (6 % of the preset's
    /// instructions went to the loop's index arithmetic and bounds checks).
    /// `centre_taken` is what the droplet's own cell gave; the nine amounts
    /// are booked as one sum (see [`tree_sum`]).
    #[inline(always)]
    fn cut_block<const GATED: bool>(
        &mut self,
        here: usize,
        weights: &[f32; 8],
        amount: f32,
        low: f32,
        centre_taken: f64,
        sediment: &mut f64,
    ) {
        let w = self.width;
        let gate = &self.gate;
        let (top, rest) = self.cells[here - w - 1..].split_at_mut(w);
        let (middle, bottom) = rest.split_at_mut(w);
        let (top, middle, bottom) = (&mut top[..3], &mut middle[..3], &mut bottom[..3]);
        let cut_one = |cell: &mut f32, i: usize, weight: f32| {
            let old = *cell;
            let new = gated_cut::<GATED>(gate, i, old, weight * amount, low);
            *cell = new;
            f64::from(old) - f64::from(new)
        };
        // [`BLOCK`]'s order: north, west, east, south, then the corners.
        let t0 = cut_one(&mut top[1], here - w, weights[0]);
        let t1 = cut_one(&mut middle[0], here - 1, weights[1]);
        let t2 = cut_one(&mut middle[2], here + 1, weights[2]);
        let t3 = cut_one(&mut bottom[1], here + w, weights[3]);
        let t4 = cut_one(&mut top[0], here - w - 1, weights[4]);
        let t5 = cut_one(&mut top[2], here - w + 1, weights[5]);
        let t6 = cut_one(&mut bottom[0], here + w - 1, weights[6]);
        let t7 = cut_one(&mut bottom[2], here + w + 1, weights[7]);
        let taken = centre_taken + tree_sum([t0, t1, t2, t3, t4, t5, t6, t7]);
        *sediment += taken;
        self.report.eroded += taken;
    }

    /// Puts `amount` down split bilinearly between the 4 cells around `p`
    /// (clamped to the map), at most the droplet's load, and takes it from
    /// `sediment` (the four amounts as one sum, see [`tree_sum`]).
    #[inline(always)]
    fn deposit_bilinear<const GATED: bool>(&mut self, p: Vec2, amount: f32, sediment: &mut f64) {
        // (`math::smaller`: `amount` is never NaN here, the step's change
        // being finite or infinite; `min` would differ only for a NaN.)
        let amount = math::smaller(amount, *sediment as f32);
        if amount.is_nan() || amount <= 0.0 {
            return;
        }
        let (gx, gy) = (p.x - 0.5, p.y - 0.5);
        let (fx, fy) = (floor_on_map(gx), floor_on_map(gy));
        let (tx, ty) = (gx - fx as f32, gy - fy as f32);
        // In integers: `as` from a float saturates, five instructions a
        // conversion (sides are at most `MAX_SIDE`, below 2^31).
        let clamp = |v: i32, n: usize| v.clamp(0, n as i32 - 1) as usize;
        let (x0, y0) = (clamp(fx, self.width), clamp(fy, self.height));
        let (x1, y1) = (clamp(fx + 1, self.width), clamp(fy + 1, self.height));
        let w = self.width;
        let mut put = |i: usize, weight: f32| {
            let old = self.cells[i];
            let new = through::<GATED>(&self.gate, i, old, old + weight * amount);
            self.cells[i] = new;
            f64::from(old) - f64::from(new)
        };
        let t0 = put(y0 * w + x0, (1.0 - tx) * (1.0 - ty));
        let t1 = put(y0 * w + x1, tx * (1.0 - ty));
        let t2 = put(y1 * w + x0, (1.0 - tx) * ty);
        let t3 = put(y1 * w + x1, tx * ty);
        let taken = tree_sum([t0, t1, t2, t3]);
        *sediment += taken;
        self.report.deposited -= taken;
    }
}

/// The sum of `taken`, a brush's or a deposit's per-cell height changes, in
/// pairs (`(t0 + t1) + (t2 + t3)`, ...), to be booked to the load and the
/// report once.
///
/// Why: booked one cell after another, the droplet's load waited on a chain
/// of additions (nine for the brush, 3 to 4 cycles each) before the next
/// step's capacity could use it; in pairs the chain is a third as long (the
/// preset 2-3 % faster, docs/performance.md). Each amount is the exact `f64`
/// difference of two `f32` heights, so the sums are exact, and the bits the
/// same as in sequence, whenever the heights' exponents lie within about
/// twenty of each other (every pinned run's do; the books' balance holds to
/// rounding either way).
#[inline(always)]
fn tree_sum<const N: usize>(taken: [f64; N]) -> f64 {
    match N {
        4 => (taken[0] + taken[1]) + (taken[2] + taken[3]),
        8 => {
            ((taken[0] + taken[1]) + (taken[2] + taken[3])) + ((taken[4] + taken[5]) + (taken[6] + taken[7]))
        }
        _ => taken.iter().sum(),
    }
}

/// [`Eroder::gated`] for a borrowed gate (where the map's cells are borrowed
/// apart from the eroder).
#[inline(always)]
fn through<const GATED: bool>(gate: &Gate<'_>, i: usize, current: f32, proposed: f32) -> f32 {
    if GATED { gate.apply(i, current, proposed) } else { proposed }
}

/// The offsets `(dx, dy)` of a 3 x 3 brush's other cells in the brush's
/// order (by distance, then row, then column; see [`FlowMaps::new`]).
const BLOCK: [(isize, isize); 8] = [(0, -1), (-1, 0), (1, 0), (0, 1), (-1, -1), (1, -1), (-1, 1), (1, 1)];

/// `old` lowered by `by`, never below `floor` (nor raised, where `floor` is
/// above `old`): the brush's cut of one cell.
#[inline(always)]
fn cut(old: f32, by: f32, floor: f32) -> f32 {
    math::larger(old - by, math::smaller(floor, old))
}

/// The brush's [`cut`] of cell `i` through the gate when `GATED`, never
/// below `floor` either way. The gate scales the cut by the cell's
/// erodibility; above 1 that takes it past the floor the cut was bounded by
/// (heights ran away to infinities at 10), so the floor bounds it again. At
/// a scale of at most 1 the gated height lies between the cut and `old`,
/// where the floor does not bind: those runs keep their bits.
#[inline(always)]
fn gated_cut<const GATED: bool>(gate: &Gate<'_>, i: usize, old: f32, by: f32, floor: f32) -> f32 {
    let new = through::<GATED>(gate, i, old, cut(old, by, floor));
    if GATED { math::larger(new, math::smaller(floor, old)) } else { new }
}

/// `floor(v)` as an integer, for `v` from -1 up to a map's side (below
/// 2^31): [`math::floor`]'s integer route without its range test, sign copy
/// and conversion back (no such `v` is -0 or out of range).
#[inline(always)]
fn floor_on_map(v: f32) -> i32 {
    let toward_zero = simd::truncate(v);
    if toward_zero as f32 > v { toward_zero - 1 } else { toward_zero }
}

/// A new droplet at rest at a start drawn from `rng` (`x` then `y`), and the
/// sampler's per-droplet state.
fn spawn<S: NormalSampler>(
    eroder: &Eroder<'_, S>,
    sampler: &mut S,
    rng: &mut dyn Rng,
) -> Option<(Droplet, Walk)> {
    let start = eroder.draw_start(rng)?;
    sampler.spawn(rng);
    Some((Droplet::new(start), Walk { age: 0, cell: eroder.cell_of(start) }))
}

/// Runs `total` droplets one after another with the landscape kernel, the
/// loop compiled for `isa`'s vectors (the same bits with any).
#[inline(always)]
pub(super) fn run_sequential<S: NormalSampler + Clone>(
    isa: Isa,
    eroder: &mut Eroder<'_, S>,
    flow: &mut FlowMaps,
    total: u64,
    rng: &mut dyn Rng,
    ticker: &mut Ticker<'_, impl Progress + ?Sized>,
) {
    let mut sampler = eroder.sampler.clone();
    // The loop compiled for the widest vectors: the 8-facet normal is 8 lanes.
    simd::widest(
        isa,
        #[inline(always)]
        || {
            for _ in 0..total {
                // Counted on the report: a landscape run with extra rain
                // comes back here for each round.
                if ticker.should_stop(eroder.report.droplets) {
                    eroder.report.cancelled = true;
                    break;
                }
                let Some((mut droplet, mut walk)) = spawn(eroder, &mut sampler, rng) else { break };
                let fate = loop {
                    if let Some(fate) = eroder.landscape_step(flow, &sampler, &mut droplet, &mut walk) {
                        break fate;
                    }
                };
                eroder.settle_poured(&mut droplet, fate);
                flow.droplet_done();
            }
        },
    );
}

/// Runs `total` droplets interleaved: [`LANES`] droplets take one step each in
/// lane order per round, from headings taken together at the round's start
/// (from the heights as the round found them); a lane whose droplet ends
/// settles it and takes the next (drawing its start as it enters). The maps refresh between droplets, as in
/// the sequential order. The loop is compiled for `isa`'s vectors; a sampler
/// with the 8-facet lane kernel has the round's normals taken across the
/// lanes ([`Eroder::headings`]), any other each lane's own sampler asked.
#[inline(always)]
pub(super) fn run_interleaved<S: NormalSampler + Clone>(
    isa: Isa,
    eroder: &mut Eroder<'_, S>,
    flow: &mut FlowMaps,
    total: u64,
    rng: &mut dyn Rng,
    ticker: &mut Ticker<'_, impl Progress + ?Sized>,
) {
    let mut samplers: [S; LANES] = core::array::from_fn(|_| eroder.sampler.clone());
    let mut lanes: [Option<(Droplet, Walk)>; LANES] = [None; LANES];
    let mut spawned = 0u64;
    let mut stopping = false;
    // The loop compiled for the widest vectors, as in `run_sequential`.
    simd::widest_with(
        isa,
        #[inline(always)]
        |isa| loop {
            let mut live = 0;
            for (lane, sampler) in lanes.iter_mut().zip(&mut samplers) {
                if lane.is_none() && !stopping && spawned < total {
                    if ticker.should_stop(eroder.report.droplets) {
                        eroder.report.cancelled = true;
                        stopping = true;
                    } else {
                        *lane = spawn(eroder, sampler, rng);
                        // No start: the controls' rain falls nowhere.
                        spawned = if lane.is_some() { spawned + 1 } else { total };
                    }
                }
                live += usize::from(lane.is_some());
            }
            // The round's headings first: their chains overlap (see
            // `landscape_tiled`'s turns).
            let headings: [Heading; LANES] = if samplers[0].lane_kernel().is_some() {
                // One sampler for all: a lane kernel's sampler keeps no
                // per-droplet state.
                let all = eroder.headings::<LANES>(
                    isa,
                    flow,
                    &samplers[0],
                    core::array::from_fn(|l| lanes[l].as_ref().map(|(d, walk)| (d, walk.cell))),
                );
                core::array::from_fn(|l| all.get(l))
            } else {
                core::array::from_fn(|l| match &lanes[l] {
                    Some((droplet, walk)) => eroder.heading(flow, &samplers[l], droplet, walk.cell),
                    None => Heading::default(),
                })
            };
            for (lane, heading) in lanes.iter_mut().zip(headings) {
                let Some((droplet, walk)) = lane else { continue };
                let fate = eroder
                    .headed_step_if(flow, droplet, walk, heading, |_, _| true)
                    .unwrap_or_else(|Refused| unreachable!("every move is allowed"));
                if let Some(fate) = fate {
                    eroder.settle_poured(droplet, fate);
                    flow.droplet_done();
                    *lane = None;
                }
            }
            if live == 0 {
                break;
            }
        },
    );
}

#[cfg(test)]
mod tests {
    use super::{FlowMaps, erf, tree_sum};
    use crate::Channels;
    use crate::math;
    use alloc::vec::Vec;

    /// [`tree_sum`]'s claim: booked in pairs, a load that is a sum of height
    /// changes gets the bits it gets booked one by one, for heights whose
    /// exponents lie within twenty of each other (here 2^-10 to 2^10, cut by
    /// up to a tenth or raised by up to one). (Wider ranges do round: with
    /// 2^-40 to 2^10 this test fails.)
    #[test]
    fn booking_in_pairs_gives_the_bits_of_booking_in_turn() {
        let mut next = crate::random::test_stream(0x9e37_79b9_7f4a_7c15_u64);
        let mut load = 0.0f64;
        let mut pairs = 0.0f64;
        for round in 0..20_000 {
            let mut taken = [0.0f64; 8];
            for t in &mut taken {
                let old = (2.0f32).powf(next() * 20.0 - 10.0);
                let new = if round % 3 == 0 { old + next() } else { old - old * 0.1 * next() };
                *t = f64::from(old) - f64::from(new);
            }
            for t in taken {
                load += t;
            }
            pairs += tree_sum(taken);
            assert_eq!(load.to_bits(), pairs.to_bits(), "round {round}");
            let four = [taken[0], taken[1], taken[2], taken[3]];
            let in_turn = ((four[0] + four[1]) + four[2]) + four[3];
            assert_eq!(in_turn.to_bits(), tree_sum(four).to_bits(), "round {round}");
        }
        assert!(load.abs() > 1.0, "{load}");
    }

    /// The capacity gain a refresh sets: `discharge_gain * e * r`, the river
    /// growth `r` 1 up to `channel_area`, then the square root of the area in
    /// channel areas, up to `river_area`.
    #[test]
    fn the_gain_grows_with_the_river_up_to_river_area() {
        let gains = |river_area: f32| {
            // One refresh of rate 1 after one droplet: each cell's discharge is
            // its water times the 4 cells, in channel areas of 1 cell.
            let c = Channels {
                discharge_rate: 1.0,
                refresh: 1,
                channel_area: 1.0,
                river_area,
                ..Channels::default()
            };
            let mut maps = FlowMaps::new(c, 4).unwrap();
            for (cell, water) in maps.cells.iter_mut().zip([0.0, 0.125, 0.5, 2.25]) {
                cell.water = water;
            }
            maps.refresh(1);
            maps.cells.iter().map(|cell| (cell.discharge, cell.gain)).collect::<Vec<_>>()
        };
        let g = Channels::default().discharge_gain;
        assert_eq!(
            gains(4.0),
            [
                (0.0, 0.0),
                (0.5, g * erf(0.5)),
                (2.0, g * erf(2.0) * math::sqrt(2.0)),
                (9.0, g * erf(9.0) * 2.0)
            ]
        );
        // No growth when `river_area` is at most `channel_area`.
        for river_area in [1.0, 0.5] {
            assert_eq!(
                gains(river_area),
                [(0.0, 0.0), (0.5, g * erf(0.5)), (2.0, g * erf(2.0)), (9.0, g * erf(9.0))]
            );
        }
    }

    /// The landscape loops give the same bits with every instruction set this
    /// CPU has (each compiles the step for its own vectors), one droplet after
    /// another and interleaved.
    #[test]
    fn every_instruction_set_gives_the_same_bits() {
        use super::super::simd::Isa;
        use super::super::{Constants, Eroder};
        use crate::ErosionParams;
        use crate::normal::EightFacet;
        use crate::progress::{Silent, Ticker};
        use rand_core::SeedableRng;

        let terrain = crate::terrain::fbm_terrain(96, 80, 2).unwrap();
        let params = ErosionParams { droplets: 4_000, ..ErosionParams::landscape() };
        let channels = params.channels.unwrap();
        for interleaved in [false, true] {
            let mut results = Vec::new();
            for isa in Isa::available() {
                let mut map = terrain.clone();
                let mut flow = FlowMaps::new(channels, 96 * 80).unwrap();
                let mut eroder = Eroder::new(map.view_mut(), Constants::new(&params), EightFacet);
                let mut rng = rand_xoshiro::Xoshiro256StarStar::seed_from_u64(5);
                let mut silent = Silent;
                let mut ticker = Ticker::new(&mut silent, 4_000);
                if interleaved {
                    super::run_interleaved(isa, &mut eroder, &mut flow, 4_000, &mut rng, &mut ticker);
                } else {
                    super::run_sequential(isa, &mut eroder, &mut flow, 4_000, &mut rng, &mut ticker);
                }
                let report = eroder.report;
                let bits: Vec<u32> = map.cells().iter().map(|h| h.to_bits()).collect();
                results.push((isa, bits, report));
            }
            let (_, first_bits, first_report) = &results[0];
            assert!(first_report.steps > 100_000 && first_report.eroded > 0.0, "{first_report:?}");
            assert!(*first_bits != terrain.cells().iter().map(|h| h.to_bits()).collect::<Vec<_>>());
            for (isa, bits, report) in &results[1..] {
                assert!(bits == first_bits, "{isa:?} differs from the baseline (interleaved: {interleaved})");
                assert_eq!(report, first_report, "{isa:?}");
            }
        }
    }

    /// The 3 x 3 brush cut at fixed offsets (`FlowMaps::block`) leaves the
    /// bits of the brush's loop over its offsets, through an open gate and
    /// through an active mask and an erodibility map.
    #[test]
    fn the_block_brush_gives_the_loops_bits() {
        use super::super::simd::Isa;
        use super::super::{Constants, Eroder};
        use crate::ErosionParams;
        use crate::controls::{Extras, Gate};
        use crate::normal::EightFacet;
        use crate::progress::{Silent, Ticker};
        use rand_core::SeedableRng;

        let (w, h) = (96, 80);
        let terrain = crate::terrain::fbm_terrain(w, h, 4).unwrap();
        let params = ErosionParams { droplets: 4_000, ..ErosionParams::landscape() };
        let channels = params.channels.unwrap();
        // Untouched, half-open and open bands; harder and softer ground.
        let active: Vec<f32> = (0..w * h).map(|i| [0.0, 0.5, 1.0, 1.0][(i % w) / 24]).collect();
        let erodibility: Vec<f32> = (0..w * h).map(|i| [0.5, 1.0, 2.0][(i / w) % 3]).collect();
        let mut reports = Vec::new();
        for gated in [false, true] {
            let mut results = Vec::new();
            for block in [true, false] {
                let mut map = terrain.clone();
                let mut flow = FlowMaps::new(channels, w * h).unwrap();
                assert!(flow.block.is_some(), "the preset's brush is the 3 x 3 block");
                if !block {
                    flow.block = None;
                }
                let gate = if gated { Gate::new(Some(&active), Some(&erodibility)) } else { Gate::default() };
                let extras = Extras { gate, ..Extras::default() };
                let mut eroder =
                    Eroder::new(map.view_mut(), Constants::new(&params), EightFacet).with_extras(extras);
                let mut rng = rand_xoshiro::Xoshiro256StarStar::seed_from_u64(9);
                let mut silent = Silent;
                let mut ticker = Ticker::new(&mut silent, 4_000);
                super::run_sequential(Isa::detect(), &mut eroder, &mut flow, 4_000, &mut rng, &mut ticker);
                let report = eroder.report;
                let bits: Vec<u32> = map.cells().iter().map(|h| h.to_bits()).collect();
                results.push((bits, report));
            }
            assert!(results[0].1.eroded > 0.0 && results[0].1.steps > 100_000, "{:?}", results[0].1);
            assert!(results[0] == results[1], "the block's cuts differ from the loop's (gated: {gated})");
            reports.push(results[0].1);
        }
        assert!(reports[0] != reports[1], "the gate changed nothing");
    }

    /// `Channels::stride`: on a cell whose channel factor is above it, one
    /// turn carries the droplet across two cells, each counted and crossed
    /// as a one-cell step (its water on both, the age and the report's steps
    /// two); below it, or with one cell of life left, one cell.
    #[test]
    fn a_turn_in_a_channel_crosses_two_cells() {
        use super::super::{Constants, Eroder};
        use super::Walk;
        use crate::normal::EightFacet;
        use crate::{Droplet, ErosionParams, Heightmap};
        use glam::Vec2;

        let (w, h) = (24, 24);
        // A plane falling along x: the droplet runs straight to +x.
        let plane = Heightmap::from_fn(w, h, |x, _| 1.0 - 0.02 * x as f32).unwrap();
        let params = ErosionParams::landscape();
        let channels = crate::Channels { stride: 0.2, ..params.channels.unwrap() };
        let step = |channel: f32, age: u32, velocity: Vec2| {
            let mut map = plane.clone();
            let mut flow = FlowMaps::new(channels, w * h).unwrap();
            flow.cells.iter_mut().for_each(|c| c.channel = channel);
            let mut eroder = Eroder::new(map.view_mut(), Constants::new(&params), EightFacet);
            let mut d = Droplet { position: Vec2::new(5.5, 12.5), velocity, water: 1.0, sediment: 0.0 };
            let mut walk = Walk { age, cell: (5, 12) };
            assert_eq!(eroder.landscape_step(&mut flow, &EightFacet, &mut d, &mut walk), None);
            let water: Vec<f32> = (5..9).map(|x| flow.cells[12 * w + x].water).collect();
            (walk.age - age, eroder.report.steps, walk.cell, d.position, water)
        };
        let (aged, steps, cell, position, water) = step(0.5, 0, Vec2::ZERO);
        assert_eq!((aged, steps, cell), (2, 2, (7, 12)));
        assert!((position - Vec2::new(7.5, 12.5)).length() < 1e-5, "{position}");
        // Each cell crossed counts the water that crossed it (the second a
        // little less: the first cell's evaporation, lowered in the channel).
        assert!(water[0] == 1.0 && water[1] > 0.98 && water[1] < 1.0 && water[2] == 0.0, "{water:?}");
        // Coming in along the slope: straight on, two cells again.
        assert_eq!(step(0.5, 0, Vec2::new(0.5, 0.0)).2, (7, 12));
        // Below the factor, and where one cell of life is left: one cell.
        for (channel, age) in [(0.2, 0), (0.1, 0), (0.5, params.max_steps - 1)] {
            let (aged, steps, cell, position, water) = step(channel, age, Vec2::ZERO);
            assert_eq!((aged, steps, cell), (1, 1, (6, 12)), "{channel} {age}");
            assert!((position - Vec2::new(6.5, 12.5)).length() < 1e-5, "{position}");
            assert!(water[0] == 1.0 && water[1] == 0.0, "{water:?}");
        }
        // Coming in across the slope, the turn bends the path by more than
        // 5 degrees: one cell.
        let (aged, _, _, position, _) = step(0.5, 0, Vec2::new(0.05, 0.05));
        assert_eq!(aged, 1);
        assert!((position - Vec2::new(5.5, 12.5)).length() < 1.0 + 1e-5, "{position}");
    }

    /// The headings of a round of lanes, steering computed in every lane and
    /// kept where it turns, are each droplet's own: the bits of the step's
    /// branching arithmetic for one droplet alone (written out here), with
    /// empty lanes beside them, on border cells, at rest, with no mean flow,
    /// without momentum, and where the velocity overflows.
    #[test]
    fn headings_across_lanes_are_each_droplets_own() {
        use super::super::{Constants, Eroder};
        use super::Heading;
        use super::simd::Isa;
        use crate::normal::{EightFacet, NormalSampler};
        use crate::{Droplet, ErosionParams, fbm_terrain};
        use glam::Vec2;

        // The step's arithmetic as it was written for one droplet, branches
        // and all.
        fn one(
            eroder: &Eroder<'_, EightFacet>,
            flow: &FlowMaps,
            d: &Droplet,
            (x, y): (usize, usize),
        ) -> Heading {
            let (k, c) = (eroder.k, flow.c);
            let grid = crate::grid::GridRef::new_unchecked(eroder.width, eroder.height, &*eroder.cells);
            let n = EightFacet.normal_in_cell(&grid, d.position, x, y, k.height_scale);
            let cell = flow.cells[y * eroder.width + x];
            let accel = k.dt / (k.density * d.water);
            let (mut vx, mut vy) = (d.velocity.x + n.x * accel, d.velocity.y + n.z * accel);
            let own = vx * vx + vy * vy;
            let speed = math::sqrt(own);
            let inv_speed = 1.0 / speed;
            let (mut step_x, mut step_y) = (vx * inv_speed, vy * inv_speed);
            if c.momentum > 0.0 {
                let a = flow.cell_width;
                let (fx, fy, discharge) = (cell.flow[0] * a, cell.flow[1] * a, cell.discharge * a);
                let mean = fx * fx + fy * fy;
                if mean > 0.0 && own > 0.0 {
                    let reach = c.momentum / (math::sqrt(mean) * (d.water + discharge));
                    let steer = reach * (fx * vx + fy * vy);
                    let (sx, sy) = (vx * speed + steer * fx, vy * speed + steer * fy);
                    let turned = math::sqrt(sx * sx + sy * sy);
                    if turned > 0.0 && turned < f32::INFINITY {
                        (step_x, step_y) = (sx * (1.0 / turned), sy * (1.0 / turned));
                        (vx, vy) = (step_x * speed, step_y * speed);
                    }
                }
            }
            Heading { vx, vy, speed, step_x, step_y }
        }
        let bits = |h: Heading| [h.vx, h.vy, h.speed, h.step_x, h.step_y].map(f32::to_bits);

        let (w, h) = (32, 24);
        let mut map = fbm_terrain(w, h, 3).unwrap();
        let params = ErosionParams::landscape();
        let k = Constants::new(&params);
        for momentum in [params.channels.unwrap().momentum, 0.0] {
            let channels = crate::Channels { momentum, ..params.channels.unwrap() };
            let mut flow = FlowMaps::new(channels, w * h).unwrap();
            for (i, cell) in flow.cells.iter_mut().enumerate() {
                // Every fifth cell without a mean flow.
                let f = if i % 5 == 0 { 0.0 } else { (i % 7) as f32 * 0.3 - 0.9 };
                (cell.discharge, cell.flow) = ((i % 11) as f32 * 0.5, [f, 0.4 - f * 0.5]);
            }
            let eroder = Eroder::new(map.view_mut(), k, EightFacet);
            let droplets = [
                (Vec2::new(5.5, 7.5), Vec2::new(0.3, -0.2), 1.0),
                (Vec2::new(0.5, 3.5), Vec2::new(-0.1, 0.4), 0.7),
                (Vec2::new(31.5, 23.5), Vec2::ZERO, 0.5),
                (Vec2::new(12.5, 12.5), Vec2::ZERO, 1.0),
                (Vec2::new(20.5, 1.5), Vec2::new(1e30, -1e30), 1e-30),
                (Vec2::new(15.5, 10.5), Vec2::new(2.0, 1.0), 0.01),
            ];
            let droplets: Vec<(Droplet, (usize, usize))> = droplets
                .iter()
                .map(|&(position, velocity, water)| {
                    (Droplet { position, velocity, water, sediment: 0.0 }, eroder.cell_of(position))
                })
                .collect();
            // Eight lanes, two of them empty, in two orders.
            // On every instruction set the CPU has (the normals across the
            // lanes in its vectors).
            let orders = [[0, 1, 6, 2, 3, 7, 4, 5], [5, 4, 3, 7, 2, 1, 0, 6]];
            for (order, isa) in
                orders.iter().flat_map(|o| Isa::available().into_iter().map(move |isa| (o, isa)))
            {
                let lanes = order.map(|i| droplets.get(i).map(|(d, cell)| (d, *cell)));
                let headings = eroder.headings(isa, &flow, &EightFacet, lanes);
                for (l, lane) in lanes.iter().enumerate() {
                    if let Some((d, cell)) = lane {
                        assert_eq!(
                            bits(headings.get(l)),
                            bits(one(&eroder, &flow, d, *cell)),
                            "{momentum} {d:?} {isa:?}"
                        );
                        assert_eq!(bits(eroder.heading(&flow, &EightFacet, d, *cell)), bits(headings.get(l)));
                    }
                }
            }
        }
    }

    /// A refresh in vectors, eight cells at a time, on every instruction set
    /// the CPU has, leaves the bits of one cell at a time (the remainder's
    /// path), with and without the river growth.
    #[test]
    fn a_refresh_in_vectors_matches_one_cell_at_a_time() {
        use super::super::simd::{self, Isa};
        use super::{FlowCell, Refresh};
        use rand_core::{Rng, SeedableRng};

        let mut rng = rand_xoshiro::Xoshiro256StarStar::seed_from_u64(3);
        let mut unit = || (rng.next_u32() >> 8) as f32 / (1u32 << 24) as f32;
        // 8 x 5 + 3 cells: five chunks and a remainder.
        let cells: Vec<FlowCell> = (0..43)
            .map(|_| FlowCell {
                channel: unit(),
                water: 40.0 * unit(),
                gain: unit(),
                discharge: 30.0 * unit(),
                flow: [unit() - 0.5, unit() - 0.5],
                track: [4.0 * unit() - 2.0, 4.0 * unit() - 2.0],
            })
            .collect();
        for river in [0.0, 20.0] {
            let rule = Refresh { keep: 0.95, gain: 0.3, in_channel_areas: 0.7, river, discharge_gain: 10.0 };
            let expected: Vec<FlowCell> = cells.iter().map(|c| rule.cell(c)).collect();
            let grown = expected.iter().filter(|c| c.gain > 10.0 * c.channel).count();
            assert_eq!(
                grown > 0,
                river > 1.0,
                "the river growth is on only with a river area: {grown} grown"
            );
            for isa in Isa::available() {
                let mut refreshed = cells.clone();
                simd::widest(isa, || rule.cells(&mut refreshed));
                let bits = |cells: &[FlowCell]| -> Vec<[u32; 8]> {
                    let b = f32::to_bits;
                    cells
                        .iter()
                        .map(|c| {
                            let (f, t) = (c.flow, c.track);
                            [
                                b(c.channel),
                                b(c.water),
                                b(c.gain),
                                b(c.discharge),
                                b(f[0]),
                                b(f[1]),
                                b(t[0]),
                                b(t[1]),
                            ]
                        })
                        .collect()
                };
                assert_eq!(bits(&refreshed), bits(&expected), "{isa:?}, river {river}");
            }
        }
    }

    #[test]
    fn erf_is_within_its_stated_error() {
        assert_eq!(erf(0.0), 0.0);
        assert_eq!(erf(-1.0), 0.0, "negative discharge reads as none");
        // erf to 10 digits (Abramowitz and Stegun, table 7.1).
        for (x, exact) in [
            (0.1, 0.112_462_916_0),
            (0.5, 0.520_499_877_8),
            (1.0, 0.842_700_792_9),
            (2.0, 0.995_322_265_0),
            (3.0, 0.999_977_909_5),
        ] {
            assert!((f64::from(erf(x)) - exact).abs() <= 5e-4, "erf({x}) = {}, not {exact}", erf(x));
        }
        assert!(erf(1e30) == 1.0 && erf(f32::INFINITY) == 1.0);
        let mut last = 0.0;
        for i in 0..1000 {
            let e = erf(i as f32 * 0.005);
            assert!(e >= last, "monotone");
            last = e;
        }
    }
}
