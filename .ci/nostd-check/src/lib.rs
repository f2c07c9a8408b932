//! Uses the crate from a `no_std` context; see Cargo.toml for why.
#![no_std]

extern crate alloc;

use hydraulic_erosion::{ErosionParams, Heightmap, erode_seeded};

/// Erodes a small map, so the simulator is type-checked in `no_std`.
pub fn erode_small() -> Option<u64> {
    let mut map = Heightmap::from_fn(16, 16, |x, y| (x * y) as f32 * 0.01).ok()?;
    let params = ErosionParams { droplets: 10, ..ErosionParams::default() };
    erode_seeded(&mut map, &params, 1).ok().map(|r| r.steps)
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    loop {}
}
