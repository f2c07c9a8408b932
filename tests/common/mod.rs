//! Seeded test utilities shared by the integration tests.
#![allow(dead_code)]

use hydraulic_erosion::{Grid, Heightmap, Hydrology, HydrologyReport, MassBalance};
use proptest::prelude::*;

/// FNV-1a over the cells' bits (the bench example's and refbench's `map_hash`).
pub fn map_hash<S: AsRef<[f32]>>(map: &Grid<S>) -> u64 {
    map.cells()
        .iter()
        .fold(0xCBF2_9CE4_8422_2325, |x, h| (x ^ u64::from(h.to_bits())).wrapping_mul(0x0000_0100_0000_01B3))
}

/// A bowl `scale * ((x - cx)^2 + (y - cy)^2)` centred on the map.
pub fn bowl(size: usize, scale: f32) -> Heightmap {
    let c = (size as f32 - 1.0) / 2.0;
    Heightmap::from_fn(size, size, |x, y| {
        let (dx, dy) = (x as f32 - c, y as f32 - c);
        scale * (dx * dx + dy * dy)
    })
    .unwrap()
}

/// Hydrology params for the lake scenes: 1 500 particles that stall on all
/// but steep ground and move no sediment, so they hop down into a basin and
/// fill it.
pub fn lake_params() -> hydraulic_erosion::HydrologyParams {
    hydraulic_erosion::HydrologyParams {
        particles: 1_500,
        volume_factor: 2.0,
        deposition_rate: 0.0,
        outlet_erosion: 0.0,
        stall_stream: 0.0,
        stall_acceleration: 1.0,
        trees: false,
        ..hydraulic_erosion::HydrologyParams::default()
    }
}

/// A round basin walled in at the border (height 2): a bowl `size` cells
/// across with a flat floor 8 cells across at height 0.2, rising 0.01 a cell.
pub fn basin(size: usize) -> Heightmap {
    let c = (size as f32 - 1.0) / 2.0;
    Heightmap::from_fn(size, size, |x, y| {
        if x == 0 || y == 0 || x == size - 1 || y == size - 1 {
            return 2.0;
        }
        let r = ((x as f32 - c).powi(2) + (y as f32 - c).powi(2)).sqrt();
        0.2 + 0.01 * (r - 4.0).max(0.0)
    })
    .unwrap()
}

/// All cells finite.
pub fn all_finite<S: AsRef<[f32]>>(map: &Grid<S>) -> bool {
    map.cells().iter().all(|h| h.is_finite())
}

/// A smooth terrain: `fbm_terrain` at a quarter of the size, upsampled bilinearly.
pub fn smooth_terrain(size: usize, seed: u64) -> Heightmap {
    let coarse_size = size / 4 + 2;
    let coarse = hydraulic_erosion::fbm_terrain(coarse_size, coarse_size, seed).unwrap();
    Heightmap::from_fn(size, size, |x, y| {
        let (fx, fy) = (x as f32 / 4.0, y as f32 / 4.0);
        let (x0, y0) = (fx as usize, fy as usize);
        let (tx, ty) = (fx - x0 as f32, fy - y0 as f32);
        let top = coarse[(x0, y0)] + (coarse[(x0 + 1, y0)] - coarse[(x0, y0)]) * tx;
        let bottom = coarse[(x0, y0 + 1)] + (coarse[(x0 + 1, y0 + 1)] - coarse[(x0, y0 + 1)]) * tx;
        top + (bottom - top) * ty
    })
    .unwrap()
}

/// Proptest cases: `PROPTEST_CASES` if set, else `default`.
pub fn proptest_cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// A generator that replays fixed words in a loop (to place droplets by hand).
pub struct Replay(pub Vec<u64>, pub usize);

impl hydraulic_erosion::rand_core::TryRng for Replay {
    type Error = core::convert::Infallible;
    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        Ok(self.try_next_u64()? as u32)
    }
    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        self.1 += 1;
        Ok(self.0[(self.1 - 1) % self.0.len()])
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        dst.fill(0);
        Ok(())
    }
}

/// Checks every book of a run: sediment against the terrain, water against the
/// pool layer, and finiteness of every layer.
pub fn assert_books(
    before: &Heightmap,
    after: &Heightmap,
    pool_before: f64,
    h: &Hydrology,
    r: &HydrologyReport,
) {
    let balance = MassBalance::new(before, after, r.erosion.outflow);
    assert!(balance.is_conserved(), "{balance:?} {r:?}");
    assert!(r.is_water_balanced(), "water error {} in {r:?}", r.water_error());
    let pooled = h.pool_volume() - pool_before;
    assert!((pooled - r.pooled).abs() <= 1e-9 * r.rain.max(1.0), "pool layer {pooled} vs books {}", r.pooled);
    assert!(all_finite(after));
    for layer in [h.stream(), h.pool(), h.vegetation()] {
        assert!(all_finite(layer));
    }
    assert!(h.pool().cells().iter().all(|&d| d >= 0.0));
}

/// One edit to a file's bytes, for fuzzing decoders with mutated files.
#[derive(Clone, Debug)]
pub enum Mutation {
    Flip(usize, u8),
    Truncate(usize),
    Insert(usize, Vec<u8>),
}

/// Any [`Mutation`].
pub fn arb_mutation() -> impl proptest::strategy::Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 1..=255_u8).prop_map(|(i, x)| Mutation::Flip(i, x)),
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), prop::collection::vec(any::<u8>(), 1..16)).prop_map(|(i, b)| Mutation::Insert(i, b)),
    ]
}

/// Applies `mutations` in order (positions wrap around the length).
pub fn mutate(bytes: &mut Vec<u8>, mutations: &[Mutation]) {
    for m in mutations {
        let len = bytes.len().max(1);
        match m {
            Mutation::Flip(i, x) if !bytes.is_empty() => bytes[i % len] ^= x,
            Mutation::Truncate(i) => bytes.truncate(i % len),
            Mutation::Insert(i, b) => {
                let at = i % (bytes.len() + 1);
                bytes.splice(at..at, b.iter().copied());
            }
            Mutation::Flip(..) => {}
        }
    }
}

/// `map` with every height times `k`: the input of a run in another height
/// unit (exact for a power of two `k`).
pub fn scaled(map: &Heightmap, k: f32) -> Heightmap {
    Heightmap::from_cells(map.width(), map.height(), map.cells().iter().map(|h| h * k).collect())
        .expect("the same size")
}

/// The bits of each height of `map` times `k`, to compare a run in another
/// height unit with, bit for bit.
pub fn bits_times<S: AsRef<[f32]>>(map: &Grid<S>, k: f32) -> Vec<u32> {
    map.cells().iter().map(|h| (h * k).to_bits()).collect()
}
