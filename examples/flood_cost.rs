//! Measures what one Hydrology flood costs against the size of its pool, on
//! maps of different sizes: the table of docs/performance.md.
//!
//! ```text
//! cargo run --release --example flood_cost
//! ```
//!
//! Each scene is a flat map (height 1) with one square basin (height 0.5) of
//! side `s` in its middle; particles are dropped on the basin's centre one after
//! another (a fixed start, so every run floods the same pool) with a water
//! volume that fills the whole basin, without erosion or trees. Printed per
//! scene: the floods, the cells the flood fills visited per flood, and the flood
//! time per flood and per visited cell (from [`PhaseTimes`], the median of 5
//! runs). If the flood's cost followed the map, the same basin would cost more
//! on the larger map; it costs the same.

use std::convert::Infallible;

use hydraulic_erosion::Simulator;
use hydraulic_erosion::rand_core::TryRng;
use hydraulic_erosion::{Heightmap, Hydrology, HydrologyParams, PhaseTimes};

/// Replays one word: its top 24 bits put every particle's `x` and `y` at the
/// centre of the map's middle cell (the scenes are symmetric).
struct Start(u64);

impl TryRng for Start {
    type Error = Infallible;
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok(self.try_next_u64()? as u32)
    }
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        Ok(self.0)
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        dst.fill(0);
        Ok(())
    }
}

/// One scene: `(floods, flood cells, flood seconds)`.
fn scene(map_side: usize, basin_side: usize, particles: u32) -> (u64, u64, f64) {
    let lo = (map_side - basin_side) / 2;
    let inside = |c: usize| (lo..lo + basin_side).contains(&c);
    let mut map =
        Heightmap::from_fn(map_side, map_side, |x, y| if inside(x) && inside(y) { 0.5 } else { 1.0 })
            .unwrap();
    // Enough water per particle to fill the basin to its rim several times over.
    let volume_factor = (basin_side * basin_side) as f32;
    let params = HydrologyParams {
        particles,
        volume_factor,
        deposition_rate: 0.0,
        stall_stream: 0.0,
        trees: false,
        ..HydrologyParams::default()
    };
    let mut hydrology = Hydrology::new(params, map_side, map_side).unwrap();
    let centre = map_side / 2;
    let word = (((centre as u64 * 2 + 1) << 24) / (2 * map_side as u64)) << 40;
    let report = hydrology.run(&mut map, &mut Start(word)).unwrap();
    let PhaseTimes { flood_seconds, .. } = hydrology.phase_times();
    (report.floods, report.flood_cells, flood_seconds)
}

fn main() {
    println!(
        "| map | basin (cells) | floods | cells visited per flood | µs per flood | ns per visited cell |"
    );
    println!("|---|---|---|---|---|---|");
    for basin_side in [8, 32, 128] {
        for map_side in [256, 1024, 2048] {
            let mut runs: Vec<(u64, u64, f64)> = (0..5).map(|_| scene(map_side, basin_side, 20)).collect();
            runs.sort_by(|a, b| a.2.total_cmp(&b.2));
            let (floods, cells, seconds) = runs[2];
            let floods_f = floods.max(1) as f64;
            println!(
                "| {map_side}² | {basin_side}² = {} | {floods} | {:.0} | {:.1} | {:.2} |",
                basin_side * basin_side,
                cells as f64 / floods_f,
                seconds / floods_f * 1e6,
                seconds / cells.max(1) as f64 * 1e9,
            );
        }
    }
}
