//! Run-time choice of the vector width for the lockstep kernel and, through
//! [`widest`], the other hot loops (the landscape kernel's and its maps'
//! refresh, Snowball's roll, Hydrology's descent, the thermal pass's rows), [`truncate`] and
//! [`prefetch`]: the crate's one module with `unsafe`.
//!
//! Why: a dependent crate builds for the baseline target (SSE2 on x86-64), where
//! the lockstep lanes lose about a third of their speed against the same code
//! built for AVX2 or AVX-512 (measured in `docs/performance.md`), and the
//! landscape step's 8-facet normal (eight lanes) takes a tenth more
//! instructions. The loops are compiled three times, with `#[target_feature]`,
//! and the widest set the CPU has is picked when a run starts.
//!
//! Why it is sound: a `#[target_feature]` function may only run on a CPU with
//! those features; each is called only from [`run_fed`] or [`widest`] for an
//! [`Isa`] that [`Isa::detect`] (through `is_x86_feature_detected!`) reported,
//! or that a test checked with [`Isa::available`].
//!
//! Why the bits cannot change: the three copies are the same source; every
//! operation in it is exactly rounded (`+ - * /`, `sqrt`, comparisons), nothing
//! calls `mul_add`, and the compiler never fuses a multiply and an add on its
//! own, so wider vectors change how many lanes run per instruction, not any
//! lane's result. Tests in `lockstep` and `landscape` compare every available
//! path bit for bit.
//!
//! [`truncate`] converts a float on the map to its cell with the one x86-64
//! instruction for it, where `as` adds five around it to saturate (measured
//! in its docs); the intrinsic is `unsafe` to call only for the
//! `#[target_feature]` attribute it carries, and its feature (SSE) is part of
//! every x86-64 target. [`prefetch`] asks for a cache line that a loop reads
//! a step or a round later (the output layers' next track, the lockstep
//! lanes' next rows; measured where they call it); it reads nothing, no
//! address faults, and elsewhere than x86-64 it does nothing.
#![allow(unsafe_code)]

use super::Eroder;
use super::lockstep::{self, Feed, LOCKSTEP_LANES as L};
use crate::normal::EightFacet;
use crate::progress::{Progress, Ticker};

/// `x` rounded toward zero, for `x` within `i32`'s range: there, exactly what
/// `x as i32` gives. Outside it (or for NaN) the value is unspecified but
/// deterministic (`i32::MIN` on x86-64), never undefined behaviour. Callers
/// convert positions on the map or a step beyond its edge (sides below
/// 2^31), and `math::floor` values it has checked are in range.
///
/// Why: on x86-64 `as` saturates, five instructions around the conversion
/// (`cvttss2si` returns `i32::MIN` out of range). A step converts its next
/// cell's two coordinates; with this, the seeds' lockstep loop takes 181
/// instructions a step instead of 192 (callgrind, AVX2 path, 128², the same
/// bits) and ran 10-13 % faster on a Zen 3 EPYC (`docs/performance.md`).
#[inline(always)]
pub(crate) fn truncate(x: f32) -> i32 {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_cvttss_si32, _mm_set_ss};
        // SAFETY: both need SSE only, which every x86-64 target has.
        unsafe { _mm_cvttss_si32(_mm_set_ss(x)) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        x as i32
    }
}

/// Asks the cache for the line at `at` (a hint: it reads nothing, faults on
/// no address and changes no result).
#[inline(always)]
pub(crate) fn prefetch<T>(at: *const T) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: a prefetch reads nothing, so any address will do, and it needs
        // SSE only, which every x86-64 target has.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(at.cast::<i8>()) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}

/// An instruction set the lockstep kernel is compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Isa {
    /// The build's own target (SSE2 on a default x86-64 build, NEON on aarch64).
    Baseline,
    /// AVX2 (x86-64, with `std` for detection).
    #[cfg(all(feature = "std", target_arch = "x86_64"))]
    Avx2,
    /// AVX-512 F/VL/BW/DQ (x86-64, with `std` for detection).
    #[cfg(all(feature = "std", target_arch = "x86_64"))]
    Avx512,
}

impl Isa {
    /// The widest set this CPU has (the baseline without `std`, which cannot
    /// detect), or a narrower one named by the `HYDRAULIC_EROSION_ISA`
    /// environment variable (`baseline`, `avx2`, `avx512`), to measure the
    /// paths against each other; a set the CPU lacks is never chosen. The bits
    /// are the same either way. Decided once a process (the variable is read
    /// by the first run), so a loop may ask for every droplet or tile.
    #[inline]
    pub(crate) fn detect() -> Isa {
        #[cfg(all(feature = "std", target_arch = "x86_64"))]
        {
            static CHOSEN: std::sync::OnceLock<Isa> = std::sync::OnceLock::new();
            *CHOSEN.get_or_init(|| {
                let asked = std::env::var("HYDRAULIC_EROSION_ISA").ok();
                let allows = |name: &str| {
                    asked.as_deref().is_none_or(|a| a == name || (name == "avx2" && a == "avx512"))
                };
                if allows("avx512") && avx512() {
                    Isa::Avx512
                } else if allows("avx2") && std::arch::is_x86_feature_detected!("avx2") {
                    Isa::Avx2
                } else {
                    Isa::Baseline
                }
            })
        }
        #[cfg(not(all(feature = "std", target_arch = "x86_64")))]
        Isa::Baseline
    }

    /// Every set this CPU can run, narrowest first (for tests).
    #[cfg(test)]
    pub(crate) fn available() -> alloc::vec::Vec<Isa> {
        let all = [
            Isa::Baseline,
            #[cfg(all(feature = "std", target_arch = "x86_64"))]
            Isa::Avx2,
            #[cfg(all(feature = "std", target_arch = "x86_64"))]
            Isa::Avx512,
        ];
        let widest = Isa::detect();
        all.into_iter().take_while(|&isa| isa != widest).chain([widest]).collect()
    }
}

#[cfg(all(feature = "std", target_arch = "x86_64"))]
fn avx512() -> bool {
    use std::arch::is_x86_feature_detected as has;
    has!("avx512f") && has!("avx512vl") && has!("avx512bw") && has!("avx512dq")
}

/// The facet step of the 8-facet normal across the lanes, compiled for one
/// instruction set (a function of its own, not inlined: see
/// [`lockstep::facet_lanes`]).
pub(crate) trait FacetKernel {
    fn facet_lanes(
        t: &mut [f32; L],
        centre: &[f32; L],
        around: &[f32; L],
        slope: f32,
        squares: f32,
        weight: f32,
    );
}

/// The build's own target.
pub(crate) struct Baseline;

impl FacetKernel for Baseline {
    #[inline(never)]
    fn facet_lanes(
        t: &mut [f32; L],
        centre: &[f32; L],
        around: &[f32; L],
        slope: f32,
        squares: f32,
        weight: f32,
    ) {
        lockstep::facet_lanes(t, centre, around, slope, squares, weight);
    }
}

/// Runs the lockstep loop with `isa`'s kernel.
#[inline]
pub(super) fn run_fed<F, P>(
    isa: Isa,
    eroder: &mut Eroder<'_, EightFacet>,
    feed: &mut F,
    ticker: &mut Ticker<'_, P>,
) where
    F: Feed<EightFacet> + ?Sized,
    P: Progress + ?Sized,
{
    match isa {
        Isa::Baseline => {
            lockstep::run_fed_with(eroder, feed, ticker, |e, l, _, r| lockstep::normals::<Baseline>(e, l, r))
        }
        // SAFETY: `isa` came from `Isa::detect` or `Isa::available`, which
        // report only sets this CPU has.
        #[cfg(all(feature = "std", target_arch = "x86_64"))]
        Isa::Avx2 => unsafe { x86::run_fed_avx2(eroder, feed, ticker) },
        // SAFETY: as above.
        #[cfg(all(feature = "std", target_arch = "x86_64"))]
        Isa::Avx512 => unsafe { x86::run_fed_avx512(eroder, feed, ticker) },
    }
}

/// Runs `body` compiled for `isa` (from [`Isa::detect`] or [`Isa::available`]): the code it
/// inlines (a loop over droplets, `#[inline(always)]` down to the step) is
/// compiled for that set, what it calls without inlining stays the build's.
/// The same bits on every path (see the module's docs).
#[inline(always)]
pub(crate) fn widest<R>(isa: Isa, body: impl FnOnce() -> R) -> R {
    match isa {
        Isa::Baseline => body(),
        // SAFETY: `isa` came from `Isa::detect` or `Isa::available`, which
        // report only sets this CPU has.
        #[cfg(all(feature = "std", target_arch = "x86_64"))]
        Isa::Avx2 => unsafe { x86::avx2(body) },
        // SAFETY: as above.
        #[cfg(all(feature = "std", target_arch = "x86_64"))]
        Isa::Avx512 => unsafe { x86::avx512(body) },
    }
}

#[cfg(all(feature = "std", target_arch = "x86_64"))]
mod x86 {
    use super::*;

    /// `body`, compiled with AVX2 where inlined.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn avx2<R>(body: impl FnOnce() -> R) -> R {
        body()
    }

    /// `body`, compiled with AVX-512 where inlined.
    ///
    /// # Safety
    /// The CPU must have AVX-512 F, VL, BW and DQ.
    #[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2")]
    pub(super) unsafe fn avx512<R>(body: impl FnOnce() -> R) -> R {
        body()
    }

    /// The AVX2 build of the kernel.
    pub(super) struct Avx2;

    /// The AVX-512 build of the kernel.
    pub(super) struct Avx512;

    /// Defines, for one instruction set, the not-inlined facet function, its
    /// [`FacetKernel`] and the loop's entry point compiled with those features.
    macro_rules! kernel {
        ($isa:ident, $features:literal, $facet:ident, $run:ident) => {
            #[target_feature(enable = $features)]
            #[inline(never)]
            unsafe fn $facet(
                t: &mut [f32; L],
                centre: &[f32; L],
                around: &[f32; L],
                slope: f32,
                squares: f32,
                weight: f32,
            ) {
                lockstep::facet_lanes(t, centre, around, slope, squares, weight);
            }

            impl FacetKernel for $isa {
                #[inline(always)]
                fn facet_lanes(
                    t: &mut [f32; L],
                    centre: &[f32; L],
                    around: &[f32; L],
                    slope: f32,
                    squares: f32,
                    weight: f32,
                ) {
                    // SAFETY: only reached from `$run`, which runs only where
                    // the CPU has these features (see `run_fed`).
                    unsafe { $facet(t, centre, around, slope, squares, weight) }
                }
            }

            /// # Safety
            /// The CPU must have the features named in `target_feature`.
            #[target_feature(enable = $features)]
            pub(super) unsafe fn $run<F, P>(
                eroder: &mut Eroder<'_, EightFacet>,
                feed: &mut F,
                ticker: &mut Ticker<'_, P>,
            ) where
                F: Feed<EightFacet> + ?Sized,
                P: Progress + ?Sized,
            {
                lockstep::run_fed_with(eroder, feed, ticker, |e, l, _, r| lockstep::normals::<$isa>(e, l, r));
            }
        };
    }

    kernel!(Avx2, "avx2", facet_lanes_avx2, run_fed_avx2);
    kernel!(Avx512, "avx512f,avx512vl,avx512bw,avx512dq,avx2", facet_lanes_avx512, run_fed_avx512);
}

#[cfg(test)]
mod tests {
    use alloc::vec;
    use alloc::vec::Vec;

    use super::truncate;

    /// Within `i32`'s range `truncate` is `as i32`, bit for bit: around every
    /// power of two up to 2^31 (each side of it by ulps), fractions, signed
    /// zeros and subnormals, both signs. Outside the range it gives some value
    /// without panicking, the same each time.
    #[test]
    fn truncate_is_as_within_i32() {
        let mut values = vec![0.0f32, -0.0, f32::MIN_POSITIVE, -f32::MIN_POSITIVE, 1e-40, 0.5, 0.999_999_9];
        for e in 0..31 {
            let p = (1u32 << e) as f32;
            let mut v = p;
            for _ in 0..4 {
                v = f32::from_bits(v.to_bits() - 1);
            }
            for _ in 0..9 {
                values.push(v);
                v = f32::from_bits(v.to_bits() + 1);
            }
            values.extend([p + 0.25, p + 0.5, p + 0.75]);
        }
        // The largest float below 2^31, and -2^31 itself, are in range.
        values.push(f32::from_bits((2_147_483_648.0f32).to_bits() - 1));
        let signed: Vec<f32> = values.iter().flat_map(|&v| [v, -v]).chain([-2_147_483_648.0]).collect();
        for v in signed {
            assert_eq!(truncate(v), v as i32, "{v:e}");
        }
        for v in [2_147_483_648.0f32, -2_147_483_904.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 1e30] {
            assert_eq!(truncate(v), truncate(v));
        }
    }
}
