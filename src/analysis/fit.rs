//! Power laws fitted in log-log space.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use crate::math;

/// A power law `y = coefficient * x^exponent`, fitted by ordinary least squares
/// to `(log10 x, log10 y)` points.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct PowerLawFit {
    /// The fitted exponent (the slope in log-log space).
    pub exponent: f64,
    /// The fitted coefficient (`10^intercept`).
    pub coefficient: f64,
    /// The fit's coefficient of determination, in `[0, 1]` (1: a perfect line).
    pub r_squared: f64,
    /// How many points the fit used (bins, for the binned fits).
    pub points: usize,
}

impl PowerLawFit {
    /// The least-squares line through `(log10 x, log10 y)` points; `None` for
    /// fewer than 2 points or no spread in `x`.
    pub fn of_logs(points: &[(f64, f64)]) -> Option<Self> {
        let n = points.len();
        if n < 2 {
            return None;
        }
        // (Tested on the points, not on the spread: the means below can
        // round an ulp off a value every point shares, leaving a spread of
        // 1e-33 and a made-up fit.)
        if points.iter().all(|p| p.0 == points[0].0) {
            return None;
        }
        let nf = n as f64;
        let (mx, my) = points.iter().fold((0.0, 0.0), |(sx, sy), &(x, y)| (sx + x / nf, sy + y / nf));
        let (mut sxx, mut sxy, mut syy) = (0.0, 0.0, 0.0);
        for &(x, y) in points {
            let (dx, dy) = (x - mx, y - my);
            sxx += dx * dx;
            sxy += dx * dy;
            syy += dy * dy;
        }
        if sxx.is_nan() || sxx <= 0.0 || !sxx.is_finite() || !syy.is_finite() {
            return None;
        }
        let slope = sxy / sxx;
        let r_squared = if syy > 0.0 { (sxy * sxy / (sxx * syy)).min(1.0) } else { 1.0 };
        Some(Self { exponent: slope, coefficient: math::exp10_f64(my - slope * mx), r_squared, points: n })
    }

    /// Fits `y` against `x` over the pairs with `x` in `[x_min, x_max]` and both
    /// positive and finite, binned: the `log10 x` range from `x_min` up is cut
    /// into `bins_per_decade` bins a decade, and each bin holding at least
    /// `min_per_bin` pairs gives one point, the mean `log10 x` and mean
    /// `log10 y` of its pairs. Binning keeps the many small-`x` pairs from
    /// drowning the rest, as slope-area studies do.
    ///
    /// `None` for an empty range (`x_min` not positive, `x_max` below it, a
    /// NaN bound), `bins_per_decade` 0, or fewer than 2 points. Any range and
    /// bin count are taken, `x_max` infinite too: the bins are kept only where
    /// pairs fall, so memory follows the pairs, not the range.
    pub fn binned(
        pairs: impl Iterator<Item = (f64, f64)>,
        (x_min, x_max): (f64, f64),
        bins_per_decade: u32,
        min_per_bin: usize,
    ) -> Option<Self> {
        if !(x_min > 0.0 && x_max >= x_min && bins_per_decade > 0) {
            return None;
        }
        let lo = log10(x_min);
        let per = f64::from(bins_per_decade);
        // Bin number -> (sum of log10 x, sum of log10 y, pairs), in bin order;
        // each bin sums its pairs in the order they come.
        let mut sums: BTreeMap<u64, (f64, f64, usize)> = BTreeMap::new();
        for (x, y) in pairs {
            if x >= x_min && x <= x_max && y > 0.0 && x.is_finite() && y.is_finite() {
                let (lx, ly) = (log10(x), log10(y));
                // The cast never saturates: at most 632 decades of f64
                // (subnormals too) times 2^32 bins a decade stay below 2^42.
                let bin = sums.entry(bin_of(x, lx - lo, x_min, per)).or_insert((0.0, 0.0, 0));
                *bin = (bin.0 + lx, bin.1 + ly, bin.2 + 1);
            }
        }
        let points: Vec<(f64, f64)> = sums
            .values()
            .filter(|s| s.2 >= min_per_bin.max(1))
            .map(|&(sx, sy, c)| (sx / c as f64, sy / c as f64))
            .collect();
        Self::of_logs(&points)
    }
}

/// `log10(x)` for `x > 0`.
pub(crate) fn log10(x: f64) -> f64 {
    math::log10_f64(x)
}

/// The bin of `x` (at `above = log10 x - log10 x_min`) among bins
/// `per` a decade from `x_min`: bin `b` holds `[edge(b), edge(b + 1))`,
/// [`bin_edge`]'s edges. From the logarithm, checked against the edges
/// where it falls within a hair of one: a logarithm an ulp off would put a
/// value that lies on an edge (500 for bins a decade from 50) below it.
pub(crate) fn bin_of(x: f64, above: f64, x_min: f64, per: f64) -> u64 {
    let scaled = above * per;
    // (Saturates at 0 for a hair below 0, at `x_min` itself.)
    let guess = scaled as u64;
    let fraction = scaled - guess as f64;
    const HAIR: f64 = 1e-9;
    if fraction > 1.0 - HAIR && x >= bin_edge(x_min, guess + 1, per) {
        guess + 1
    } else if fraction < HAIR && guess > 0 && x < bin_edge(x_min, guess, per) {
        guess - 1
    } else {
        guess
    }
}

/// The lower edge of bin `b`, `x_min * 10^(b / per)`: exact where `b / per`
/// is a whole number of decades up to 22 (where `10^(b / per)` is an `f64`)
/// and the product is one.
pub(crate) fn bin_edge(x_min: f64, b: u64, per: f64) -> f64 {
    let decades = b as f64 / per;
    if decades == math::floor_f64(decades) && decades <= 22.0 {
        // Products of powers of ten up to 10^22 are exact.
        let mut power = 1.0;
        for _ in 0..decades as u32 {
            power *= 10.0;
        }
        x_min * power
    } else {
        x_min * math::exp10_f64(decades)
    }
}
