//! The one place that picks the float backend.
//!
//! Every function here is exactly rounded (IEEE 754 `sqrt` and `floor`), so the
//! `std` and `libm` backends give the same bits on every platform. Nothing in the
//! crate calls a float method that could differ between them (no `mul_add`, no
//! transcendental functions in the simulators).

#[cfg(not(any(feature = "std", feature = "libm")))]
compile_error!("hydraulic-erosion needs a float backend: enable the `std` or the `libm` feature");

/// Square root, correctly rounded.
#[inline(always)]
pub(crate) fn sqrt(x: f32) -> f32 {
    #[cfg(feature = "std")]
    {
        x.sqrt()
    }
    #[cfg(not(feature = "std"))]
    {
        libm::sqrtf(x)
    }
}

/// Square root in double precision, correctly rounded.
#[inline(always)]
pub(crate) fn sqrt_f64(x: f64) -> f64 {
    #[cfg(feature = "std")]
    {
        x.sqrt()
    }
    #[cfg(not(feature = "std"))]
    {
        libm::sqrt(x)
    }
}

/// The larger of `p` and `q`, neither NaN: one comparison, where `f32::max`
/// takes seven instructions on x86-64 (its fix-up for a NaN operand). The
/// runs keep heights finite; a tie of -0 and +0 may resolve either way.
#[inline(always)]
pub(crate) fn larger(p: f32, q: f32) -> f32 {
    if p > q { p } else { q }
}

/// The smaller of `p` and `q`, neither NaN (see [`larger`]).
#[inline(always)]
pub(crate) fn smaller(p: f32, q: f32) -> f32 {
    if q < p { q } else { p }
}

/// Largest integer not greater than `x`: IEEE `floor`, bit for bit (NaN,
/// infinities and -0 included), through an integer conversion. The baseline
/// x86-64 target has no rounding instruction (`roundss` is SSE4.1), so
/// `f32::floor` is a call to `floorf`, about 24 instructions; a Snowball step
/// takes two (its sampler's cell and its deposit's), a ninth of its run.
#[inline(always)]
pub(crate) fn floor(x: f32) -> f32 {
    // At 2^31 and beyond every float is an integer; NaN stays NaN.
    if x.is_nan() || abs(x) >= 2_147_483_648.0 {
        return x;
    }
    // Toward zero, exactly (an integer below 2^31 converts back exactly).
    let toward_zero = crate::physical::simd::truncate(x) as f32;
    // One below where that rounded up; else with `x`'s sign, so -0 stays -0
    // and -0.5 gives -1, not 0.
    if toward_zero > x { toward_zero - 1.0 } else { toward_zero.copysign(x) }
}

/// `|x|`, by clearing the sign bit.
#[inline(always)]
fn abs(x: f32) -> f32 {
    f32::from_bits(x.to_bits() & 0x7fff_ffff)
}

/// Largest integer not greater than `x`, in double precision.
#[inline(always)]
pub(crate) fn floor_f64(x: f64) -> f64 {
    #[cfg(feature = "std")]
    {
        x.floor()
    }
    #[cfg(not(feature = "std"))]
    {
        libm::floor(x)
    }
}

/// Base-10 logarithm in double precision (the terrain analysis' fits only:
/// the simulators use no transcendental function, so their bits never depend
/// on it; `std` and `libm` may differ in its last bit). Exact at powers of
/// ten, where `ln(x) / ln(10)` came out an ulp off.
#[inline(always)]
pub(crate) fn log10_f64(x: f64) -> f64 {
    #[cfg(feature = "std")]
    {
        x.log10()
    }
    #[cfg(not(feature = "std"))]
    {
        libm::log10(x)
    }
}

/// `10^x` in double precision (the analysis' fits only, as [`log10_f64`]).
#[inline(always)]
pub(crate) fn exp10_f64(x: f64) -> f64 {
    #[cfg(feature = "std")]
    {
        (x * core::f64::consts::LN_10).exp()
    }
    #[cfg(not(feature = "std"))]
    {
        libm::exp(x * core::f64::consts::LN_10)
    }
}

#[cfg(test)]
mod tests {
    use super::{larger, smaller};

    /// `floor` gives `f32::floor`'s bits: on the special values, on each
    /// side of every power of two (by ulps, both signs), and on a million
    /// bit patterns spread over the whole range (NaNs compared as NaN).
    #[cfg(feature = "std")]
    #[test]
    fn floor_is_ieee_floor() {
        let check = |x: f32| {
            let (ours, std) = (super::floor(x), x.floor());
            assert!(
                ours.to_bits() == std.to_bits() || (ours.is_nan() && std.is_nan()),
                "floor({x:e}) = {ours:e}, not {std:e}"
            );
        };
        for x in [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, f32::MIN_POSITIVE, -1e-45, f32::MAX, f32::MIN] {
            check(x);
        }
        for x in [f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 2_147_483_648.0, -2_147_483_648.0] {
            check(x);
        }
        for e in -30..40 {
            let p = 2.0f32.powi(e);
            let mut v = f32::from_bits(p.to_bits() - 3);
            for _ in 0..7 {
                check(v);
                check(-v);
                v = f32::from_bits(v.to_bits() + 1);
            }
        }
        let mut bits = 0x1234_5678u32;
        for _ in 0..1_000_000 {
            bits = bits.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            check(f32::from_bits(bits));
        }
    }

    /// The plain comparisons give `f32::max` and `f32::min`'s bits on pairs
    /// of non-NaN values, infinities and subnormals included (a -0/+0 tie,
    /// which may resolve either way, left out).
    #[test]
    fn plain_comparisons_agree_with_max_and_min() {
        let values = [f32::NEG_INFINITY, -3.5, -1e-38, 0.0, 1e-45, 0.25, 7.0, 3.0e38, f32::INFINITY];
        for &p in &values {
            for &q in &values {
                assert_eq!(larger(p, q).to_bits(), p.max(q).to_bits(), "larger({p}, {q})");
                assert_eq!(smaller(p, q).to_bits(), p.min(q).to_bits(), "smaller({p}, {q})");
            }
        }
    }
}
