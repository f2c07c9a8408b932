//! Wall-clock time spent descending and flooding, measured only with `std`.

/// Wall-clock seconds a [`Hydrology`](crate::Hydrology) run spent in its two
/// algorithms, for profiling: descending particles (including their erosion) and
/// flooding (including the flood fills). Stream-map updates and tree growth are in
/// neither.
///
/// Measured with `std::time::Instant` around each descent and each flood (two
/// clock reads per call, a small fraction of either); without the `std` feature
/// nothing is measured and both are 0. Timing never affects the simulation.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
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

    /// Seconds since this mark (0 without `std`).
    #[inline]
    pub(super) fn seconds(self) -> f64 {
        #[cfg(feature = "std")]
        {
            self.0.elapsed().as_secs_f64()
        }
        #[cfg(not(feature = "std"))]
        {
            0.0
        }
    }
}
