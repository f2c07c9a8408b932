//! The sediment balance of a run, for tests and for downstream property tests.

use crate::exact::ExactSum;
use crate::grid::Grid;
use crate::report::ErosionReport;

/// The sediment balance of a run: `sum(before) - sum(after)` against the outflow,
/// summed exactly.
///
/// Every simulator in this crate conserves sediment: what the terrain lost equals
/// what left the map. `MassBalance` is the oracle for that promise, so it must not
/// be wrong itself:
///
/// - **Exact measure.** The cells of both maps and the outflow go into one exact
///   fixed-point sum (every `f32` and `f64` is a multiple of 2^-1074), so
///   [`error`](Self::error) is `sum(before) - sum(after) - outflow` computed
///   exactly and rounded once, for any map: no cancellation between large cells,
///   whatever their order or magnitude.
/// - **Stated tolerance.** A run keeps its books in `f64` (each droplet is
///   credited with the change actually applied to each cell), so what it can be
///   off by grows with the mass it moves, not with the mass the map holds. The
///   bound is [`TOLERANCE`](Self::TOLERANCE) (10^-9) times the larger of
///   `sum(|before|)` ([`scale`](Self::scale)) and the mass the run moved
///   ([`moved`](Self::moved)), plus the map's [`resolution`](Self::resolution):
///   the last remainder a run places can leave half an ulp of its cell
///   unplaced, on top of the books' rounding. [`of_run`](Self::of_run) takes
///   the mass moved from the run's report (everything eroded and deposited);
///   [`new`](Self::new), without a report, from the maps (`sum(|after -
///   before|) + |outflow|`, a lower bound of it).
///
/// ```
/// use hydraulic_erosion::{ErosionParams, Heightmap, MassBalance, erode_seeded};
///
/// let before = Heightmap::from_fn(64, 64, |x, y| ((x * 7 + y * 3) % 11) as f32 * 0.1).unwrap();
/// let mut after = before.clone();
/// let params = ErosionParams { droplets: 2_000, ..ErosionParams::default() };
/// let report = erode_seeded(&mut after, &params, 42).unwrap();
///
/// let balance = MassBalance::of_run(&before, &after, &report);
/// assert!(balance.is_conserved(), "{balance:?}");
/// assert!(balance.error().abs() <= balance.bound());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct MassBalance {
    /// `sum(before)`, exact and rounded once.
    pub before: f64,
    /// `sum(after)`, exact and rounded once.
    pub after: f64,
    /// Mass that left the map, from the run's report.
    pub outflow: f64,
    /// `sum(|before|)`, the mass the map held.
    pub scale: f64,
    /// The mass the run moved: `eroded + deposited` from the report with
    /// [`of_run`](Self::of_run), at least `sum(|after - before|) + |outflow|`.
    pub moved: f64,
    /// Half a unit in the last place of the smallest-magnitude cell of `after`:
    /// the finest amount an `f32` map can hold, and so the floor of any balance
    /// (with [`of_run`](Self::of_run), at least what the run reports it could
    /// not place). The bound adds it to the books' tolerance; it matters only
    /// on small maps whose cells are all far from zero, where it is about
    /// `TOLERANCE * scale` or larger.
    pub resolution: f64,
    /// `sum(before) - sum(after) - outflow`, exact and rounded once.
    error: f64,
}

impl MassBalance {
    /// The crate's promise: `|error| <= 1e-9 * max(sum(|before|), moved)` plus
    /// the [`resolution`](Self::resolution).
    ///
    /// Each droplet is credited with the height change actually applied to each
    /// cell (old minus new, in `f64`), so what is left is the rounding of those
    /// `f64` books, below 2^-53 of the load carried per operation: far inside the
    /// bound at any step limit the params allow, and the rounding of the final
    /// deposit of a run onto one `f32` cell, below the resolution.
    pub const TOLERANCE: f64 = 1e-9;

    /// Measures the balance between two grids of the same size, with the mass
    /// moved taken from the maps (sizes are not checked: a grid of another size
    /// simply does not balance).
    pub fn new<A: AsRef<[f32]>, B: AsRef<[f32]>>(before: &Grid<A>, after: &Grid<B>, outflow: f64) -> Self {
        let (mut before_sum, mut after_sum, mut error) =
            (ExactSum::default(), ExactSum::default(), ExactSum::default());
        let (mut scale, mut moved) = (0.0, outflow.abs());
        // A non-finite cell or outflow has no balance: an infinite `moved`
        // would make the bound infinite and pass anything.
        let mut finite = outflow.is_finite();
        for (&b, &a) in before.cells().iter().zip(after.cells()) {
            finite &= b.is_finite() & a.is_finite();
            let (b, a) = (f64::from(b), f64::from(a));
            before_sum.add(b);
            after_sum.add(a);
            error.add(b);
            error.sub(a);
            scale += b.abs();
            moved += (a - b).abs();
        }
        // Cells beyond the shorter grid (sizes that differ) still count.
        for &b in before.cells().iter().skip(after.len()) {
            finite &= b.is_finite();
            before_sum.add(f64::from(b));
            error.add(f64::from(b));
            scale += f64::from(b).abs();
        }
        for &a in after.cells().iter().skip(before.len()) {
            finite &= a.is_finite();
            after_sum.add(f64::from(a));
            error.sub(f64::from(a));
        }
        error.sub(outflow);
        let finest = after.cells().iter().fold(f32::INFINITY, |m, h| m.min(h.abs()));
        Self {
            before: before_sum.value(),
            after: after_sum.value(),
            outflow,
            scale,
            moved,
            resolution: half_ulp(finest),
            error: if finite { error.value() } else { f64::NAN },
        }
    }

    /// [`new`](Self::new) with the outflow and the mass moved (`eroded +
    /// deposited`, where larger than the maps show) from the run's report,
    /// and a [`resolution`](Self::resolution) of at least the report's
    /// [`unplaced`](ErosionReport::unplaced): with an active mask the run
    /// may place its last remainder only on the cells it may change, whose
    /// finest may be coarser than the map's.
    pub fn of_run<A: AsRef<[f32]>, B: AsRef<[f32]>>(
        before: &Grid<A>,
        after: &Grid<B>,
        report: &ErosionReport,
    ) -> Self {
        let mut balance = Self::new(before, after, report.outflow);
        let booked = report.eroded + report.deposited;
        if booked.is_finite() {
            balance.moved = balance.moved.max(booked);
        }
        if report.unplaced.is_finite() {
            balance.resolution = balance.resolution.max(report.unplaced.abs());
        }
        balance
    }

    /// `sum(before) - sum(after) - outflow`: mass unaccounted for (positive: lost),
    /// computed exactly and rounded once. NaN where a cell of either map or
    /// the outflow is not finite: such a run has no balance, and
    /// [`is_conserved`](Self::is_conserved) is false.
    pub fn error(&self) -> f64 {
        self.error
    }

    /// `|error| / max(sum(|before|), moved)` (the absolute error when both are 0).
    pub fn relative_error(&self) -> f64 {
        let reference = self.scale.max(self.moved);
        if reference > 0.0 { self.error.abs() / reference } else { self.error.abs() }
    }

    /// The bound [`is_conserved`](Self::is_conserved) holds the error to:
    /// `TOLERANCE * max(scale, moved) + resolution`.
    pub fn bound(&self) -> f64 {
        self.bound_within(Self::TOLERANCE)
    }

    /// Whether `|error| <= bound()`: the crate's promise. False where a map
    /// holds a NaN or infinite cell, or the outflow is not finite.
    pub fn is_conserved(&self) -> bool {
        self.is_within(Self::TOLERANCE)
    }

    /// Whether `|error| <= relative * max(scale, moved) + resolution`.
    pub fn is_within(&self, relative: f64) -> bool {
        self.error.abs() <= self.bound_within(relative)
    }

    fn bound_within(&self, relative: f64) -> f64 {
        relative * self.scale.max(self.moved) + self.resolution
    }
}

/// Half a unit in the last place of `value` (non-negative), in `f64`; 0 for
/// non-finite values and for empty maps.
fn half_ulp(value: f32) -> f64 {
    if !value.is_finite() {
        return 0.0;
    }
    let next = f32::from_bits(value.to_bits() + 1);
    // Past the largest finite value, one ulp is 2^-23 of it (2^-24 is half of it).
    let step = if next.is_finite() {
        f64::from(next) - f64::from(value)
    } else {
        f64::from(value) * 5.960_464_477_539_063e-8
    };
    step * 0.5
}
