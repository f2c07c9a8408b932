//! Run-time choice of the vector width for the lockstep kernel and, through
//! [`widest`] and [`widest_with`], the other hot loops (the landscape kernel's
//! and its maps' refresh, Snowball's roll, Hydrology's descent, the thermal
//! pass's rows), the landscape tiles' 8-facet normals across eight droplets
//! ([`eight_facet_lanes`]), [`truncate`], [`prefetch`] and [`read_cells`]:
//! the crate's one module with `unsafe`.
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
//! [`read_cells`] reads a round's cells without a bounds check each, having
//! checked the largest index against the slice's length (measured in its
//! docs; a test feeds it indices past the end). The AVX2 block readers
//! (`blocks_avx2`, and `block_row8` for the landscape's normals) load four
//! cells a row after one check a round that every block's fourth cell is on
//! the map.
#![allow(unsafe_code)]

use super::Eroder;
use super::lockstep::{self, Feed, LOCKSTEP_LANES as L, Round};
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

/// `cells[at[l]]` into `out[l]` for every lane, when every index is on the
/// map; false, with `out` unchanged, when one is not.
///
/// Why: the lockstep kernel's trades computed ahead read two cells a lane;
/// a check on each read cost the step 5.2 of its 135 instructions
/// (callgrind, 128², the seeds' model), where one check of the largest index
/// a round costs under one. Against the checked reads on a Zen 3 EPYC (256²,
/// ten alternated pairs of runs): 0.945 of the time, paired median.
#[inline(always)]
pub(crate) fn read_cells(cells: &[f32], at: &[u32; L], out: &mut [f32; L]) -> bool {
    let last = at.iter().fold(0, |last, &i| last.max(i));
    if last as usize >= cells.len() {
        return false;
    }
    for l in 0..L {
        // SAFETY: `at[l] <= last < cells.len()`, checked above.
        out[l] = unsafe { *cells.get_unchecked(at[l] as usize) };
    }
    true
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
pub(super) trait FacetKernel {
    /// Reads each lane's 3 x 3 block of cells into `round`'s facet arrays
    /// (see [`lockstep::blocks_by_lane`], the default).
    #[inline(always)]
    fn blocks(cells: &[f32], w: usize, start: &[usize; L], round: &mut Round) {
        lockstep::blocks_by_lane(cells, w, start, &mut round.centre, &mut round.around);
    }

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
    widest_with(
        isa,
        #[inline(always)]
        |_| body(),
    )
}

/// [`widest`], handing `body` the set it is compiled for as a constant, so
/// that code which picks a kernel by the set (as
/// [`eight_facet_lanes`]) keeps only that kernel in each copy.
#[inline(always)]
pub(crate) fn widest_with<R>(isa: Isa, body: impl FnOnce(Isa) -> R) -> R {
    match isa {
        Isa::Baseline => body(Isa::Baseline),
        // SAFETY: `isa` came from `Isa::detect` or `Isa::available`, which
        // report only sets this CPU has.
        #[cfg(all(feature = "std", target_arch = "x86_64"))]
        Isa::Avx2 => unsafe {
            x86::avx2(
                #[inline(always)]
                || body(Isa::Avx2),
            )
        },
        // SAFETY: as above.
        #[cfg(all(feature = "std", target_arch = "x86_64"))]
        Isa::Avx512 => unsafe {
            x86::avx512(
                #[inline(always)]
                || body(Isa::Avx512),
            )
        },
    }
}

/// The 8-facet normals' `x` and `z` at eight cells at once in AVX2
/// vectors, where `isa` has them and the map allows (see
/// `x86::eight_facet_avx2`): each lane's bits those of [`EightFacet::at`]
/// at its cell. `None` elsewhere: the caller takes them one at a time (on
/// the baseline, the same arithmetic across the lanes written as arrays took
/// 6 % more of the step's instructions than one at a time, callgrind 256²).
#[inline(always)]
pub(crate) fn eight_facet_lanes(
    isa: Isa,
    grid: &crate::grid::GridRef<'_>,
    cells: [(usize, usize); 8],
    height_scale: f32,
) -> Option<([f32; 8], [f32; 8])> {
    // Without x86-64's sets only the baseline exists.
    let _ = (grid, cells, height_scale);
    match isa {
        Isa::Baseline => None,
        // SAFETY: `isa` came from `Isa::detect` or `Isa::available`, which
        // report only sets this CPU has; both wide ones include AVX2.
        #[cfg(all(feature = "std", target_arch = "x86_64"))]
        Isa::Avx2 | Isa::Avx512 => unsafe { x86::eight_facet_avx2(grid, cells, height_scale) },
    }
}

#[cfg(all(feature = "std", target_arch = "x86_64"))]
mod x86 {
    use core::arch::x86_64::{
        __m256, _mm_loadu_ps, _mm256_add_ps, _mm256_div_ps, _mm256_mul_ps, _mm256_set_m128, _mm256_set1_ps,
        _mm256_shuffle_ps, _mm256_sqrt_ps, _mm256_storeu_ps, _mm256_sub_ps, _mm256_unpackhi_ps,
        _mm256_unpacklo_ps,
    };

    use super::*;
    use crate::grid::GridRef;
    use crate::normal::eight_facet::{SLOPE, SQUARES, WEIGHT};

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

    /// [`lockstep::blocks_by_lane`]'s result, eight lanes at a time: each
    /// block row of eight lanes is eight 4-float loads and a 4 x 4 transpose
    /// in each 128-bit half, where the lane loop takes 24 loads and 24
    /// stores. The same values (a copy: no arithmetic).
    ///
    /// Why: the lane loop was a fifth of the seeds' lockstep step on a Zen 3
    /// EPYC (`perf`, 256²), its stores queueing (measured in
    /// `docs/performance.md`).
    ///
    /// # Safety
    /// The CPU must have AVX2.
    ///
    /// # Panics
    /// If a block reaches past `cells`, as the lane loop.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) unsafe fn blocks_avx2(
        cells: &[f32],
        w: usize,
        start: &[usize; L],
        centre: &mut [f32; L],
        around: &mut [[f32; L]; 8],
    ) {
        use core::arch::x86_64::{__m256, _mm256_storeu_ps};
        const { assert!(L % 8 == 0) };
        // Each lane reads its three rows as four cells, the fourth unused: one
        // past the block, so past the map only at its last inner cell. Then
        // (a round in tens of thousands on a large map) the lane loop does it.
        let end = start.iter().fold(0, |end, &s| end.max(s)) + 2 * w + 4;
        if end > cells.len() {
            return lockstep::blocks_by_lane(cells, w, start, centre, around);
        }
        let cells = cells.as_ptr();
        #[inline(always)]
        fn put(to: &mut [f32; L], g: usize, v: __m256) {
            let eight: &mut [f32; 8] =
                (&mut to[8 * g..8 * g + 8]).try_into().unwrap_or_else(|_| unreachable!());
            // SAFETY: `eight` is 32 writable bytes; the caller has AVX.
            unsafe { _mm256_storeu_ps(eight.as_mut_ptr(), v) }
        }
        for g in 0..L / 8 {
            let s: &[usize; 8] = (&start[8 * g..8 * g + 8]).try_into().unwrap_or_else(|_| unreachable!());
            for r in 0..3 {
                // SAFETY: cells `s[l] + r * w` to `+ 3` are before `end`, on
                // the map; the caller has AVX2.
                let [first, second, third] = unsafe { block_row8(cells, s, r * w) };
                // Lane order `+x, -x, +y, -y, (+x+y), (+x-y), (-x+y), (-x-y)`:
                // rows y-1, y, y+1 hold (-x-y, -y, +x-y), (-x, centre, +x),
                // (-x+y, +y, +x+y).
                match r {
                    0 => (
                        put(&mut around[7], g, first),
                        put(&mut around[3], g, second),
                        put(&mut around[5], g, third),
                    ),
                    1 => {
                        (put(&mut around[1], g, first), put(centre, g, second), put(&mut around[0], g, third))
                    }
                    _ => (
                        put(&mut around[6], g, first),
                        put(&mut around[2], g, second),
                        put(&mut around[4], g, third),
                    ),
                };
            }
        }
    }

    /// One row of eight lanes' 3 x 3 blocks, `row` cells past each block's
    /// upper-left cell `s[l]`, as the row's first, second and third cell
    /// across the lanes: eight 4-float loads (the fourth cell unused) and a
    /// 4 x 4 transpose in each 128-bit half.
    ///
    /// # Safety
    /// The CPU must have AVX2, and cells `s[l] + row` to `s[l] + row + 3`
    /// must lie inside the allocation `cells` points into, for every lane.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn block_row8(cells: *const f32, s: &[usize; 8], row: usize) -> [__m256; 3] {
        // SAFETY: the caller's promise; the load needs SSE only, which every
        // x86-64 target has.
        let at = |l: usize| unsafe { _mm_loadu_ps(cells.add(s[l] + row)) };
        // Lanes 0-3 in the low halves, 4-7 in the high ones.
        let (y0, y1) = (_mm256_set_m128(at(4), at(0)), _mm256_set_m128(at(5), at(1)));
        let (y2, y3) = (_mm256_set_m128(at(6), at(2)), _mm256_set_m128(at(7), at(3)));
        let (t0, t1) = (_mm256_unpacklo_ps(y0, y1), _mm256_unpackhi_ps(y0, y1));
        let (t2, t3) = (_mm256_unpacklo_ps(y2, y3), _mm256_unpackhi_ps(y2, y3));
        [
            _mm256_shuffle_ps::<0x44>(t0, t2),
            _mm256_shuffle_ps::<0xEE>(t0, t2),
            _mm256_shuffle_ps::<0x44>(t1, t3),
        ]
    }

    /// The 8-facet normals' `x` and `z` at eight cells, each lane's bits
    /// those of [`EightFacet::at`] at its cell: each lane's block read by
    /// [`block_row8`], each facet one vector operation per step of
    /// [`EightFacet::from_neighbours`]'s arithmetic (the scalar operations in
    /// the same order, every one exactly rounded), the border band's lanes
    /// from `at` itself (central differences). `None` on a map narrower than
    /// 3 cells, or where a block's row read as four cells would reach past
    /// the map (a lane at its last inner cell).
    ///
    /// Why: the landscape tiles take eight droplets' headings together. One
    /// droplet's normal, its eight facets in one vector, spent a tenth of the
    /// step's instructions building that vector and summing across it; here
    /// each facet is one vector operation for all eight droplets, and the
    /// landscape preset takes 8.5 % fewer instructions (callgrind, 256²;
    /// written as arrays instead, the compiler vectorised each lane's facets
    /// and transposed: 4 % more; docs/performance.md).
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) unsafe fn eight_facet_avx2(
        grid: &GridRef<'_>,
        cells: [(usize, usize); 8],
        height_scale: f32,
    ) -> Option<([f32; 8], [f32; 8])> {
        let (w, h) = (grid.width(), grid.height());
        if w < 3 || h < 3 {
            return None;
        }
        let map = grid.cells();
        let (mut start, mut border) = ([0usize; 8], [false; 8]);
        for l in 0..8 {
            // A border lane reads its nearest inner block, replaced below.
            let (x, y) = cells[l];
            let (gx, gy) = (x.clamp(1, w - 2), y.clamp(1, h - 2));
            border[l] = (gx != x) | (gy != y);
            start[l] = (gy - 1) * w + gx - 1;
        }
        if start.iter().fold(0, |end, &s| end.max(s)) + 2 * w + 4 > map.len() {
            return None;
        }
        let p = map.as_ptr();
        // SAFETY: every block's rows, four cells each, end before the
        // largest start + 2 w + 4, checked to be on the map; the CPU has AVX2.
        let rows =
            unsafe { [block_row8(p, &start, 0), block_row8(p, &start, w), block_row8(p, &start, 2 * w)] };
        // `EightFacet::from_neighbours`'s lane order: rows y-1, y, y+1 hold
        // (-x-y, -y, +x-y), (-x, centre, +x), (-x+y, +y, +x+y).
        let centre = rows[1][1];
        let around =
            [rows[1][2], rows[1][0], rows[2][1], rows[0][1], rows[2][2], rows[0][2], rows[2][0], rows[0][0]];
        let one = _mm256_set1_ps(1.0);
        let t: [__m256; 8] = core::array::from_fn(|k| {
            let d = _mm256_sub_ps(centre, around[k]);
            let e = _mm256_mul_ps(_mm256_set1_ps(height_scale * SLOPE[k]), d);
            let e_squares = _mm256_mul_ps(_mm256_set1_ps(height_scale * (SLOPE[k] * SQUARES[k])), d);
            let len = _mm256_sqrt_ps(_mm256_add_ps(_mm256_mul_ps(e, e_squares), one));
            _mm256_div_ps(_mm256_mul_ps(_mm256_set1_ps(WEIGHT[k]), e), len)
        });
        let (add, sub) = (_mm256_add_ps, _mm256_sub_ps);
        let nx = add(sub(t[0], t[1]), sub(add(t[4], t[5]), add(t[6], t[7])));
        let nz = add(sub(t[2], t[3]), add(sub(t[4], t[5]), sub(t[6], t[7])));
        let (mut out_x, mut out_z) = ([0.0f32; 8], [0.0f32; 8]);
        // SAFETY: each array is 32 writable bytes; the CPU has AVX.
        unsafe {
            _mm256_storeu_ps(out_x.as_mut_ptr(), nx);
            _mm256_storeu_ps(out_z.as_mut_ptr(), nz);
        }
        if border.contains(&true) {
            for (l, &(x, y)) in cells.iter().enumerate() {
                if border[l] {
                    // `at`'s own border rule (central differences).
                    let n = EightFacet::at(grid, x, y, height_scale);
                    (out_x[l], out_z[l]) = (n.x, n.z);
                }
            }
        }
        Some((out_x, out_z))
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
                fn blocks(cells: &[f32], w: usize, start: &[usize; L], round: &mut Round) {
                    // SAFETY: only reached from `$run`, which runs only where
                    // the CPU has these features, AVX2 among them.
                    unsafe { blocks_avx2(cells, w, start, &mut round.centre, &mut round.around) }
                }

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

    use super::{L, read_cells, truncate};

    /// A xorshift generator from `state` (not 0): test inputs without a
    /// dependency.
    fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        }
    }

    /// `read_cells` reads what indexing does, and refuses, changing nothing,
    /// a set of indices with one past the map (the last lane's, or the
    /// first's), without reading it.
    #[test]
    fn read_cells_reads_the_cells_or_refuses() {
        let cells: Vec<f32> = (0..100).map(|i| i as f32 * 0.5 - 7.0).collect();
        let mut at = [0u32; L];
        for (l, i) in at.iter_mut().enumerate() {
            *i = (l as u32 * 37 + 11) % 100;
        }
        at[3] = 99;
        let mut out = [f32::NAN; L];
        assert!(read_cells(&cells, &at, &mut out));
        for l in 0..L {
            assert_eq!(out[l].to_bits(), cells[at[l] as usize].to_bits());
        }
        for (lane, index) in [(L - 1, 100), (0, 100), (5, u32::MAX)] {
            let mut past = at;
            past[lane] = index;
            let mut out = [1.25f32; L];
            assert!(!read_cells(&cells, &past, &mut out));
            assert!(out.iter().all(|&v| v == 1.25));
        }
        assert!(!read_cells(&[], &[0; L], &mut [0.0; L]));
    }

    /// The AVX2 block reader copies exactly what the lane loop does, lane by
    /// lane, on maps from the smallest (3 x 3) up, with lanes anywhere on the
    /// inner cells: the map's last inner cell (whose fourth cell would lie past
    /// the map, so the lane loop takes the round) and every other.
    #[cfg(all(feature = "std", target_arch = "x86_64"))]
    #[test]
    fn the_avx2_blocks_are_the_lane_loops() {
        use super::{L, lockstep};
        if !std::is_x86_feature_detected!("avx2") {
            return;
        }
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
        for (w, h) in [(3, 3), (4, 3), (3, 5), (17, 9), (64, 40)] {
            // Distinct bits in every cell, signed zeros and a NaN among them.
            let mut cells: Vec<f32> = (0..w * h).map(|i| i as f32 * 0.37 - 5.0).collect();
            cells[0] = -0.0;
            cells[w * h / 2] = f32::NAN;
            for with_last in [false, true] {
                let mut start = [0usize; L];
                for (l, s) in start.iter_mut().enumerate() {
                    let (gx, gy) = (1 + next() as usize % (w - 2), 1 + next() as usize % (h - 2));
                    let last = with_last && l == L / 2;
                    let (gx, gy) = if last { (w - 2, h - 2) } else { (gx, gy) };
                    *s = (gy - 1) * w + gx - 1;
                }
                let (mut centre, mut around) = ([1.5f32; L], [[2.5f32; L]; 8]);
                lockstep::blocks_by_lane(&cells, w, &start, &mut centre, &mut around);
                let (mut centre2, mut around2) = ([7.5f32; L], [[8.5f32; L]; 8]);
                // SAFETY: this CPU has AVX2 (checked above).
                unsafe { super::x86::blocks_avx2(&cells, w, &start, &mut centre2, &mut around2) };
                let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&centre), bits(&centre2), "{w} x {h}, last {with_last}");
                for k in 0..8 {
                    assert_eq!(bits(&around[k]), bits(&around2[k]), "{w} x {h}, last {with_last}, facet {k}");
                }
            }
        }
    }

    /// The 8-facet normals of eight lanes in AVX2 vectors are
    /// [`EightFacet::at`]'s at each lane's cell, bit for bit, on maps from
    /// 3 x 3 up: lanes on the border band, all on one cell, anywhere else,
    /// over heights with signed zeros, a NaN (a NaN for a NaN) and steep
    /// steps. They refuse (the caller takes the normals one at a time) where
    /// a lane reads the last inner cell's block, whose rows read as four
    /// cells would pass the map's end, on maps narrower than 3 cells (2 x 5),
    /// and on the baseline.
    #[test]
    fn eight_facet_lanes_are_at_on_every_path() {
        use super::{Isa, eight_facet_lanes};
        use crate::grid::GridRef;
        use crate::normal::EightFacet;

        let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
        for (w, h) in [(2, 5), (3, 3), (4, 3), (3, 7), (17, 9), (64, 40)] {
            let mut cells: Vec<f32> = (0..w * h)
                .map(|_| (next() % 20_000) as f32 * 0.013 - 60.0 + (next() % 4) as f32 * 50.0)
                .collect();
            cells[0] = -0.0;
            cells[w * h - 1] = 0.0;
            if w * h > 8 {
                cells[w * h / 2 + 1] = f32::NAN;
            }
            let grid = GridRef::new_unchecked(w, h, &cells[..]);
            for case in 0..12 {
                let lanes: [(usize, usize); 8] = core::array::from_fn(|l| match (case, l) {
                    (0, _) => (w.saturating_sub(2), h.saturating_sub(2)),
                    (1, 3) | (2, 7) => (w.saturating_sub(2), h.saturating_sub(2)),
                    (2, 0) => (0, 0),
                    (3, 1) => (w - 1, h / 2),
                    (4, 2) => (w / 2, h - 1),
                    (5, 5) => (w - 1, h - 1),
                    _ => (next() as usize % w, next() as usize % h),
                });
                let last = (w.saturating_sub(2), h.saturating_sub(2));
                // A border lane reads its nearest inner cell's block.
                let refused = w < 3
                    || h < 3
                    || lanes.iter().any(|&(x, y)| (x.clamp(1, w - 2), y.clamp(1, h - 2)) == last);
                for isa in Isa::available() {
                    for scale in [1.0, 0.37] {
                        let normals = eight_facet_lanes(isa, &grid, lanes, scale);
                        assert_eq!(
                            normals.is_none(),
                            refused || isa == Isa::Baseline,
                            "{w} x {h}, case {case}"
                        );
                        let Some((nx, nz)) = normals else { continue };
                        for (l, &(x, y)) in lanes.iter().enumerate() {
                            let n = EightFacet::at(&grid, x, y, scale);
                            // A NaN for a NaN: which operand's NaN an
                            // operation passes on (its sign) is the
                            // compiler's choice; the step ends on any NaN.
                            let same =
                                |a: f32, b: f32| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
                            assert!(
                                same(nx[l], n.x) && same(nz[l], n.z),
                                "{w} x {h}, case {case}, lane {l}, {isa:?}: {} {} against {n}",
                                nx[l],
                                nz[l]
                            );
                        }
                    }
                }
            }
        }
    }

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
