//! Progress reports and cancellation for long runs.

/// What a [`Progress`] callback tells the run: go on, or stop early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Control {
    /// Keep running.
    Continue,
    /// Stop early: no droplet starts after this. Those in flight put their
    /// load down where they stand, except in the tiled layouts
    /// ([`Mode::Fast`](crate::Mode::Fast)'s landscape preset, `Parallel`'s
    /// tiles), where they finish their walks first (at most a sweep's worth:
    /// thousands wait at the tiles' edges, and their loads put down at once
    /// would pile up there). The map is left consistent and the report counts
    /// the work done, with
    /// [`ErosionReport::cancelled`](crate::ErosionReport::cancelled) set.
    Stop,
}

/// Receives a run's progress, in units of its work, and may stop it.
///
/// The hydraulic models count droplets (snowballs, particles) and call
/// [`update`](Self::update) every [`PROGRESS_INTERVAL`] of them (the landscape
/// preset's [`Mode::Fast`](crate::Mode::Fast) once a sweep) and once at the
/// end; [`Thermal`](crate::Thermal) counts iterations, a
/// [`Pipeline`](crate::Pipeline) 1 024 units a run. Closures `FnMut(done, total) -> Control` implement it:
///
/// ```
/// use hydraulic_erosion::rand_core::SeedableRng;
/// use hydraulic_erosion::{Control, ErosionParams, Physical, RunOptions, Simulator, fbm_terrain};
/// use rand_xoshiro::Xoshiro256StarStar;
///
/// let mut map = fbm_terrain(64, 64, 1)?;
/// let mut physical = Physical::new(ErosionParams { droplets: 100_000, ..Default::default() })?;
/// let mut rng = Xoshiro256StarStar::seed_from_u64(1);
/// // Stop after about a tenth of the droplets.
/// let mut progress = |done: u64, total: u64| if done * 10 >= total { Control::Stop } else { Control::Continue };
/// let options = RunOptions::default().with_progress(&mut progress);
/// let report = physical.run_with(map.view_mut(), &mut rng, options)?;
/// assert!(report.cancelled && report.droplets < 100_000);
/// # Ok::<(), hydraulic_erosion::Error>(())
/// ```
pub trait Progress {
    /// `done` of `total` units (droplets, for the hydraulic models) are
    /// finished. Return [`Control::Stop`] to end the run early.
    fn update(&mut self, done: u64, total: u64) -> Control;
}

impl<F: FnMut(u64, u64) -> Control + ?Sized> Progress for F {
    fn update(&mut self, done: u64, total: u64) -> Control {
        self(done, total)
    }
}

/// A [`Progress`] that never reports and never stops: what the plain `run`
/// methods use.
#[derive(Clone, Copy, Debug, Default)]
pub struct Silent;

impl Progress for Silent {
    fn update(&mut self, _done: u64, _total: u64) -> Control {
        Control::Continue
    }
}

/// Droplets between two [`Progress::update`] calls: often enough to cancel a run
/// within milliseconds, rarely enough to cost nothing.
pub const PROGRESS_INTERVAL: u64 = 256;

/// Calls a [`Progress`] every [`PROGRESS_INTERVAL`] droplets.
pub(crate) struct Ticker<'p, P: Progress + ?Sized> {
    progress: &'p mut P,
    total: u64,
    next: u64,
}

impl<'p, P: Progress + ?Sized> Ticker<'p, P> {
    pub(crate) fn new(progress: &'p mut P, total: u64) -> Self {
        Self { progress, total, next: PROGRESS_INTERVAL }
    }

    /// Records that `done` droplets are finished; true when the caller asked to stop.
    #[inline]
    pub(crate) fn should_stop(&mut self, done: u64) -> bool {
        if done < self.next {
            return false;
        }
        self.next = done.saturating_add(PROGRESS_INTERVAL);
        self.progress.update(done, self.total) == Control::Stop
    }

    /// `more` droplets beyond the total (a landscape run's extra rain).
    pub(crate) fn extend(&mut self, more: u64) {
        self.total = self.total.saturating_add(more);
    }

    /// The final report (`done` droplets of `total`).
    pub(crate) fn finish(&mut self, done: u64) {
        // The run is over either way; a late Stop changes nothing.
        let _ = self.progress.update(done, self.total);
    }
}
