//! Uses the crate from a `no_std` context; see Cargo.toml for why.
#![no_std]

extern crate alloc;

use hydraulic_erosion::{ErosionParams, HeightRange, Heightmap, decode_r16, encode_r16, erode_seeded};

/// Erodes a small map, so the simulator is type-checked in `no_std`.
pub fn erode_small() -> Option<u64> {
    let mut map = Heightmap::from_fn(16, 16, |x, y| (x * y) as f32 * 0.01).ok()?;
    let params = ErosionParams { droplets: 10, ..ErosionParams::default() };
    erode_seeded(&mut map, &params, 1).ok().map(|r| r.steps)
}

/// Round-trips a map through r16, so the file core is type-checked in `no_std`.
pub fn r16_round_trip() -> Option<usize> {
    let map = Heightmap::from_fn(4, 4, |x, y| (x + y) as f32 * 0.1).ok()?;
    let bytes = encode_r16(&map, HeightRange::UNIT).ok()?;
    decode_r16(&bytes, 4, 4, HeightRange::UNIT).ok().map(|m| m.len())
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    loop {}
}
