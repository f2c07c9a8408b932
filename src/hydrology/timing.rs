//! Wall-clock time spent descending and flooding, measured only with `std`.

/// Wall-clock seconds a [`Hydrology`](crate::Hydrology) run spent in its two
/// algorithms, for profiling: descending particles (including their erosion) and
/// flooding (including the flood fills). Stream-map updates and tree growth are in
/// neither.
///
/// Measured with `std::time::Instant` at the end of each descent and each
/// flood (one clock read per call, a small fraction of either); without the `std` feature
/// nothing is measured and both are 0. Timing never affects the simulation.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct PhaseTimes {
    /// Seconds spent descending.
    pub descend_seconds: f64,
    /// Seconds spent flooding.
    pub flood_seconds: f64,
}

/// A point in time, or nothing without `std`.
#[derive(Clone, Copy)]
pub(super) struct Mark(#[cfg(feature = "std")] std::time::Instant);

impl Mark {
    #[inline]
    pub(super) fn now() -> Self {
        Mark(
            #[cfg(feature = "std")]
            std::time::Instant::now(),
        )
    }

    /// Seconds from `earlier` to this mark (0 without `std`).
    #[inline]
    pub(super) fn since(self, earlier: Mark) -> f64 {
        #[cfg(feature = "std")]
        {
            self.0.duration_since(earlier.0).as_secs_f64()
        }
        #[cfg(not(feature = "std"))]
        {
            let _ = earlier;
            0.0
        }
    }

    /// A new mark, and the seconds since this one, which it replaces: a
    /// phase that follows another reads the clock once, not twice.
    #[inline]
    pub(super) fn lap(&mut self) -> f64 {
        let now = Mark::now();
        let seconds = now.since(*self);
        *self = now;
        seconds
    }
}
