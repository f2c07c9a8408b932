//! The stream map: the time-averaged water through each cell (seed 002's
//! later discharge map).

use super::world::World;

impl World<'_> {
    /// Updates the stream map after a batch of `particles` particles:
    /// `stream = (1 - lrate) * stream + lrate * flow`, where `flow` is the water
    /// that crossed the cell in the batch times `cells / (particles *
    /// channel_area)` (1 for a cell that drains `channel_area` cells), at most
    /// `f32::MAX`. Then clears the batch's track.
    pub(super) fn update_streams(&mut self, particles: u64) {
        let lrate = self.k.lrate;
        let keep = 1.0 - lrate;
        let cells = (self.width * self.height) as f32;
        let scale =
            if particles == 0 { 0.0 } else { lrate * cells / (particles as f32 * self.k.channel_area) };
        for (s, t) in self.stream.iter_mut().zip(self.track.iter_mut()) {
            // Saturating: a track of pools near f32::MAX deep overflowed, and
            // an infinite stream fed the next particles' speeds.
            *s = (keep * *s + scale * *t).min(f32::MAX);
            *t = 0.0;
        }
    }
}
