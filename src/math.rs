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

/// Largest integer not greater than `x`.
#[inline(always)]
pub(crate) fn floor(x: f32) -> f32 {
    #[cfg(feature = "std")]
    {
        x.floor()
    }
    #[cfg(not(feature = "std"))]
    {
        libm::floorf(x)
    }
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

/// Natural logarithm in double precision (the terrain analysis' fits only: the
/// simulators use no transcendental function, so their bits never depend on
/// it; `std` and `libm` may differ in its last bit).
#[inline(always)]
pub(crate) fn ln_f64(x: f64) -> f64 {
    #[cfg(feature = "std")]
    {
        x.ln()
    }
    #[cfg(not(feature = "std"))]
    {
        libm::log(x)
    }
}

/// `10^x` in double precision (the analysis' fits only, as [`ln_f64`]).
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
