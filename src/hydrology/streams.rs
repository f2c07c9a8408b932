//! The stream map: time-averaged particle visits (seed 002).

use super::world::World;

impl World<'_> {
    /// Updates the stream map after a batch, as seed 002:
    /// `stream = (1 - lrate) * stream + lrate * visited`, where `visited` is 1 on
    /// cells a particle of the batch descended through. Then starts a new batch.
    pub(super) fn update_streams(&mut self) {
        let lrate = self.k.lrate;
        let keep = 1.0 - lrate;
        for (s, &t) in self.stream.iter_mut().zip(self.track.iter()) {
            let visited = if t == self.stamp { lrate } else { 0.0 };
            *s = keep * *s + visited;
        }
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            // Once in 2^32 batches: stamps of old batches could come back, clear them.
            self.track.fill(0);
            self.stamp = 1;
        }
    }
}
