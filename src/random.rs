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
