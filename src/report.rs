//! What a run did, counted.

use crate::droplet::Fate;

/// What a run did: droplets, steps, and where every unit of sediment went.
///
/// Masses are in height units (one unit is one cell raised by 1), summed in `f64`
/// from the height changes actually applied. `eroded - deposited` equals `outflow`
/// up to rounding of those sums; the map-level check is
/// [`MassBalance`](crate::MassBalance).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
// Fields added later read as their default from older files.
#[cfg_attr(feature = "serde", serde(default))]
#[non_exhaustive]
pub struct ErosionReport {
    /// Droplets simulated. Zero when the map is under 3 cells on a side (such maps
    /// erode to themselves).
    pub droplets: u64,
    /// Droplet steps taken: steps that computed a surface normal, including each
    /// droplet's last step off the map (the reference's count).
    pub steps: u64,
    /// Total mass taken from the terrain.
    pub eroded: f64,
    /// Total mass put down on the terrain.
    pub deposited: f64,
    /// Mass carried off the map by droplets that left it (in a landscape run,
    /// with what settling pits washes over the border: under one rounding step
    /// of a border cell, see [`Channels::settle_pits`](crate::Channels::settle_pits)).
    pub outflow: f64,
    /// Droplets that stopped because their water evaporated.
    pub evaporated: u64,
    /// Droplets that left the map.
    pub left_map: u64,
    /// Droplets stopped by the step limit.
    pub step_limited: u64,
    /// Droplets stopped before a step that would have overflowed.
    pub unstable: u64,
    /// Droplets stopped by the caller: in flight when a
    /// [`Progress`](crate::Progress) stopped a run one droplet (or one
    /// lockstep round) at a time, or a dropped trace's. A tiled run's
    /// droplets finish their walks instead (see
    /// [`Control::Stop`](crate::Control::Stop)).
    pub stopped: u64,
    /// Droplets (snowballs) that came to rest on flat ground.
    pub flat: u64,
    /// Droplets stopped at the edge of the active mask ([`Controls`](crate::Controls)).
    pub masked: u64,
    /// The rounding remainder of the run's exact books that no cell it may
    /// change could take (height units, signed: positive is mass the map
    /// lacks): below half a unit in the last place of the finest such cell,
    /// so 0 or a hair. It is not in `outflow`; [`MassBalance::of_run`](crate::MassBalance::of_run)
    /// allows it. It shows where an active mask leaves only coarse cells to
    /// take the remainder (a masked cell of height 0 takes none).
    pub unplaced: f64,
    /// Whether a [`Progress`](crate::Progress) callback stopped the run early;
    /// the counts above are then those of the work done.
    pub cancelled: bool,
}

impl ErosionReport {
    /// Adds another report's counts and masses to this one.
    pub fn merge(&mut self, other: &ErosionReport) {
        self.droplets += other.droplets;
        self.steps += other.steps;
        self.eroded += other.eroded;
        self.deposited += other.deposited;
        self.outflow += other.outflow;
        self.evaporated += other.evaporated;
        self.left_map += other.left_map;
        self.step_limited += other.step_limited;
        self.unstable += other.unstable;
        self.stopped += other.stopped;
        self.flat += other.flat;
        self.masked += other.masked;
        self.unplaced += other.unplaced;
        self.cancelled |= other.cancelled;
    }

    /// Mean steps per droplet (0 for no droplets).
    pub fn steps_per_droplet(&self) -> f64 {
        if self.droplets == 0 { 0.0 } else { self.steps as f64 / self.droplets as f64 }
    }

    /// Counts one droplet's end.
    pub(crate) fn count(&mut self, fate: Fate) {
        self.droplets += 1;
        match fate {
            Fate::Evaporated => self.evaporated += 1,
            Fate::LeftMap => self.left_map += 1,
            Fate::StepLimit => self.step_limited += 1,
            Fate::Unstable => self.unstable += 1,
            Fate::Stopped => self.stopped += 1,
            Fate::Flat => self.flat += 1,
            Fate::Masked => self.masked += 1,
        }
    }

    /// Books a height change actually applied to a cell: `old - new` is mass taken.
    #[inline]
    pub(crate) fn book(&mut self, old: f32, new: f32) -> f64 {
        let taken = f64::from(old) - f64::from(new);
        // Branch-free: erosion and deposition alternate unpredictably.
        self.eroded += taken.max(0.0);
        self.deposited += (-taken).max(0.0);
        taken
    }

    /// [`book`](Self::book) for a change that cannot raise the cell (`new <=
    /// old`): the same bits, with half the work (`book` would add 0 to the
    /// deposits).
    #[inline(always)]
    pub(crate) fn book_cut(&mut self, old: f32, new: f32) -> f64 {
        debug_assert!(new <= old, "a cut raised a cell: {old} -> {new}");
        let taken = f64::from(old) - f64::from(new);
        self.eroded += taken;
        taken
    }

    /// [`book`](Self::book) for a change that cannot lower the cell (`new >=
    /// old`): the same bits, with half the work.
    #[inline(always)]
    pub(crate) fn book_fill(&mut self, old: f32, new: f32) -> f64 {
        debug_assert!(new >= old, "a deposit lowered a cell: {old} -> {new}");
        let taken = f64::from(old) - f64::from(new);
        self.deposited -= taken;
        taken
    }
}

#[cfg(test)]
mod tests {
    use super::ErosionReport;

    /// Height pairs with rounding to show: ulps apart, far apart, across 0,
    /// equal, and of very different sizes.
    const PAIRS: [(f32, f32); 8] = [
        (1.0, 0.999_999_94),
        (0.75, 0.125),
        (0.1, -0.3),
        (2.5, 2.5),
        (0.0, 0.0),
        (1e-30, -1e-30),
        (3.0e5, 1.0e-7),
        (-0.5, -0.750_000_06),
    ];

    /// A cut books what `book` books, bit for bit, the deposits untouched;
    /// a fill likewise, the erosion untouched; in a running account too.
    #[test]
    fn one_sided_books_match_book_bit_for_bit() {
        let (mut both, mut sided) = (ErosionReport::default(), ErosionReport::default());
        for &(high, low) in PAIRS.iter().chain(PAIRS.iter().rev()) {
            assert!(high >= low);
            let (a, b) = (both.book(high, low), sided.book_cut(high, low));
            assert_eq!(a.to_bits(), b.to_bits(), "cut {high} -> {low}");
            let (a, b) = (both.book(low, high), sided.book_fill(low, high));
            assert_eq!(a.to_bits(), b.to_bits(), "fill {low} -> {high}");
            assert_eq!(both.eroded.to_bits(), sided.eroded.to_bits());
            assert_eq!(both.deposited.to_bits(), sided.deposited.to_bits());
        }
        assert!(both.eroded > 3.0e5 && both.deposited > 3.0e5, "{both:?}");
    }
}
