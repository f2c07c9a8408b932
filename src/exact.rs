//! Exact sums of floats: a wide fixed-point accumulator, so the mass balance is
//! measured, not estimated.
//!
//! Every finite `f64` (and so every `f32`) is an integer multiple of 2^-1074 below
//! 2^1024: a 2 098-bit fixed-point number. The accumulator holds such numbers as
//! base-2^32 digits in `i64` limbs, which leaves 31 bits of headroom per limb for
//! carries that are only propagated now and then: adding a value is three
//! branch-free limb additions, and the sum is exact whatever the order, the signs
//! or the magnitudes.

/// Bit position of 2^-1074 (the least significant bit of any `f64`) is 0.
const LIMB_BITS: u32 = 32;
/// 2 098 bits of value (2^-1074 up to 2^1024) in 66 digits, one limb for the
/// mantissa's spill over the top digit and one for the sign and the carries.
const LIMBS: usize = 68;
/// Additions a limb can take before its headroom could overflow: each adds less
/// than 2^32 to a limb holding less than 2^32 after a carry pass, and an `i64`
/// holds 2^63.
const ADDS_BETWEEN_CARRIES: u32 = 1 << 30;

/// An exact sum of finite floats.
#[derive(Clone, Debug)]
pub(crate) struct ExactSum {
    limbs: [i64; LIMBS],
    adds: u32,
}

impl Default for ExactSum {
    fn default() -> Self {
        Self { limbs: [0; LIMBS], adds: 0 }
    }
}

impl ExactSum {
    /// Adds `value`; non-finite values are ignored (grids hold none).
    #[inline]
    pub(crate) fn add(&mut self, value: f64) {
        self.add_signed(value, false);
    }

    /// Subtracts `value`; non-finite values are ignored.
    #[inline]
    pub(crate) fn sub(&mut self, value: f64) {
        self.add_signed(value, true);
    }

    #[inline]
    fn add_signed(&mut self, value: f64, negate: bool) {
        if !value.is_finite() || value == 0.0 {
            return;
        }
        let bits = value.to_bits();
        let exponent = ((bits >> 52) & 0x7FF) as u32;
        let fraction = bits & ((1 << 52) - 1);
        // Normal numbers have the implicit leading one; subnormals share the
        // exponent of the smallest normal.
        let mantissa = if exponent == 0 { fraction } else { fraction | (1 << 52) };
        let position = exponent.max(1) - 1;
        let (limb, shift) = ((position / LIMB_BITS) as usize, position % LIMB_BITS);
        let wide = u128::from(mantissa) << shift;
        let digit = |k: u32| ((wide >> (k * LIMB_BITS)) & 0xFFFF_FFFF) as i64;
        let sign = if (bits >> 63 == 1) != negate { -1 } else { 1 };
        self.limbs[limb] += sign * digit(0);
        self.limbs[limb + 1] += sign * digit(1);
        self.limbs[limb + 2] += sign * digit(2);
        self.adds += 1;
        if self.adds == ADDS_BETWEEN_CARRIES {
            self.carry();
        }
    }

    /// Propagates carries: every limb but the last into `[0, 2^32)`, the last
    /// holding the sign.
    fn carry(&mut self) {
        for k in 0..LIMBS - 1 {
            let carry = self.limbs[k] >> LIMB_BITS; // floor division by 2^32
            self.limbs[k] -= carry << LIMB_BITS;
            self.limbs[k + 1] += carry;
        }
        self.adds = 0;
    }

    /// The sum, rounded once to the nearest `f64` (ties to even; a sum beyond
    /// `f64`'s range gives an infinity, and one in the subnormal range may be a
    /// unit of 2^-1074 off).
    pub(crate) fn value(&self) -> f64 {
        let mut limbs = self.clone();
        limbs.carry();
        let negative = limbs.limbs[LIMBS - 1] < 0;
        if negative {
            for limb in &mut limbs.limbs {
                *limb = -*limb;
            }
            limbs.carry();
        }
        let Some(top) = limbs.limbs.iter().rposition(|&l| l != 0) else {
            return 0.0;
        };
        // The top three digits (at least 65 significant bits), and a sticky bit
        // for anything below them, round correctly in one conversion.
        let digit = |k: usize| limbs.limbs.get(k).map_or(0, |&l| l as u128);
        let low = top.saturating_sub(2);
        let mut wide = 0u128;
        for k in (low..=top).rev() {
            wide = (wide << LIMB_BITS) | digit(k);
        }
        if limbs.limbs[..low].iter().any(|&l| l != 0) {
            wide |= 1;
        }
        let magnitude = scale_by_power_of_two(wide as f64, low as i32 * LIMB_BITS as i32 - 1074);
        if negative { -magnitude } else { magnitude }
    }
}

/// `x * 2^exponent`, exact unless the result overflows or is subnormal.
fn scale_by_power_of_two(mut x: f64, mut exponent: i32) -> f64 {
    // 2^e for e in [-1022, 1023] is a normal f64 built from its bits.
    let power = |e: i32| f64::from_bits(((e + 1023) as u64) << 52);
    while exponent > 1023 {
        x *= power(1023);
        exponent -= 1023;
    }
    while exponent < -1022 {
        x *= power(-1022);
        exponent += 1022;
    }
    x * power(exponent)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_sums_are_exact() {
        let mut sum = ExactSum::default();
        for v in [1.0, 1e100, -1e100, 2.0f64.powi(-1074), 3.5] {
            sum.add(v);
        }
        assert_eq!(sum.value(), 4.5);
        sum.sub(4.5);
        assert_eq!(sum.value(), 2.0f64.powi(-1074));
    }

    #[test]
    fn cancellation_keeps_every_bit() {
        // 1e16 + 1 - 1e16 is 0 in naive f64 sums at this order, 1 exactly here.
        let mut sum = ExactSum::default();
        sum.add(1e16);
        sum.add(1.0);
        sum.sub(1e16);
        assert_eq!(sum.value(), 1.0);
        let mut sum = ExactSum::default();
        sum.add(f64::MAX);
        sum.add(f64::MAX);
        sum.sub(f64::MAX);
        assert_eq!(sum.value(), f64::MAX);
    }

    #[test]
    fn rounding_is_to_nearest_even() {
        // 1 + 2^-53 is a tie: to even (1); 1 + 2^-53 + 2^-80 rounds up.
        let mut sum = ExactSum::default();
        sum.add(1.0);
        sum.add(2.0f64.powi(-53));
        assert_eq!(sum.value(), 1.0);
        sum.add(2.0f64.powi(-80));
        assert_eq!(sum.value(), 1.0 + f64::EPSILON);
        let mut sum = ExactSum::default();
        sum.sub(1.0);
        sum.sub(2.0f64.powi(-53));
        sum.sub(2.0f64.powi(-80));
        assert_eq!(sum.value(), -(1.0 + f64::EPSILON));
    }

    #[test]
    fn many_adds_carry_without_overflow() {
        let mut sum = ExactSum { adds: ADDS_BETWEEN_CARRIES - 3, ..ExactSum::default() };
        for _ in 0..10 {
            sum.add(f64::from(f32::MAX));
        }
        assert_eq!(sum.value(), f64::from(f32::MAX) * 10.0);
    }
}
