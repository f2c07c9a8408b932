//! Turning generator output into the few distributions the simulators need.

use rand_core::Rng;

/// A uniform `f32` in `[0, 1)` with 24 random bits, all exactly representable.
///
/// Takes the top 24 bits of one `next_u64`, as `../shared/refbench` does, so a
/// seeded run draws the same starting positions as the reference.
#[inline]
pub(crate) fn unit_f32<R: Rng + ?Sized>(rng: &mut R) -> f32 {
    (rng.next_u64() >> 40) as f32 * (1.0 / 16_777_216.0)
}

/// The seed of batch, sweep or round `index`'s stream in a tiled or batched
/// run: SplitMix64 finalisers over the run's seed and the index, so
/// neighbouring batches get unrelated streams.
pub(crate) fn stream_seed(seed: u64, index: u64) -> u64 {
    splitmix64(seed ^ splitmix64(index.wrapping_add(0x9E37_79B9_7F4A_7C15)))
}

/// SplitMix64's output function.
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// For unit tests: uniform `f32`s in `[0, 1)` (24 bits each) from a plain
/// linear congruential generator seeded with `state`, where a test wants
/// many numbers and no generator crate.
#[cfg(test)]
pub(crate) fn test_stream(mut state: u64) -> impl FnMut() -> f32 {
    move || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 40) as f32 / (1u64 << 24) as f32
    }
}
