//! Rain in rounds until the basins drain ([`Drain`]).

use crate::analysis::{Fill, fill_depressions_to};
use crate::channels::{Channels, Drain};
use crate::controls::Gate;
use crate::grid::GridRef;

/// The extra rounds of a landscape run with [`Channels::drain`] set.
#[derive(Clone, Copy, Debug)]
pub(super) struct Rounds {
    drain: Option<Drain>,
    sea: f32,
    /// Droplets in a round on this map.
    round: u64,
    /// Extra droplets the run may still take.
    left: u64,
}

impl Rounds {
    /// The rounds `channels` ask for on a map of `cells` cells, after a run
    /// of `droplets` droplets: none after none (rounds are more of the run's
    /// rain; a run asked for no droplets leaves the map as it is).
    pub(super) fn new(channels: &Channels, cells: usize, droplets: u32) -> Self {
        // Rounded half up (`as` saturates; `round` needs `std`).
        let per_map = |per_cell: f32| (f64::from(per_cell) * cells as f64 + 0.5) as u64;
        let drain = channels.drain.filter(|_| droplets > 0);
        Self {
            drain,
            sea: channels.sea_level.unwrap_or(f32::NEG_INFINITY),
            round: drain.map_or(0, |d| per_map(d.round).max(1)),
            left: drain.map_or(0, |d| per_map(d.most)),
        }
    }

    /// How many more droplets the run takes on `heights` (`width` x
    /// `height`, finite), all its droplets ended: a round while more than
    /// [`Drain::closed`] of the land `gate` admits lies in closed
    /// depressions and extra rain is left, else 0.
    pub(super) fn next(&mut self, heights: &[f32], width: usize, height: usize, gate: &Gate<'_>) -> u64 {
        let Some(drain) = self.drain else { return 0 };
        if self.left == 0 {
            return 0;
        }
        match closed_share(heights, width, height, self.sea, gate.active) {
            Some(share) if share > f64::from(drain.closed) => {
                let more = self.round.min(self.left);
                self.left -= more;
                more
            }
            _ => 0,
        }
    }
}

/// The share of the land (the cells above `sea`, and where an `active`
/// mask is given, above 0 in it: the cells a run may change) in closed
/// depressions: deeper than 0 after a flat priority-flood fill of the whole
/// map whose outlets are the border and the sea. A basin under a mask of 0
/// never drains, so it does not count. `None` where the fill's buffers
/// cannot be allocated (or the map has more than `u32::MAX` cells).
pub(super) fn closed_share(
    heights: &[f32],
    width: usize,
    height: usize,
    sea: f32,
    active: Option<&[f32]>,
) -> Option<f64> {
    let map = GridRef::new_unchecked(width, height, heights);
    let filled = fill_depressions_to(&map, Fill::Flat, |i| heights[i] <= sea).ok()?;
    let counted = |i: usize| heights[i] > sea && active.is_none_or(|a| a[i] > 0.0);
    let land = (0..heights.len()).filter(|&i| counted(i)).count();
    let depth = filled.depth.cells();
    let closed = (0..heights.len()).filter(|&i| counted(i) && depth[i] > 0.0).count();
    Some(if land == 0 { 0.0 } else { closed as f64 / land as f64 })
}

#[cfg(test)]
mod tests {
    use super::{Rounds, closed_share};
    use crate::channels::{Channels, Drain};
    use crate::controls::Gate;
    use alloc::vec;

    /// A 5 x 5 map with one closed cell in the middle (a pit of depth 1)
    /// and, on the left, a sea cell on the border.
    #[test]
    fn the_closed_share_counts_land_cells_below_their_spill_level() {
        #[rustfmt::skip]
        let heights = vec![
            5.0, 5.0, 5.0, 5.0, 5.0,
            5.0, 4.0, 4.0, 4.0, 5.0,
            0.0, 4.0, 3.0, 4.0, 5.0,
            5.0, 4.0, 4.0, 4.0, 5.0,
            5.0, 5.0, 5.0, 5.0, 5.0,
        ];
        assert_eq!(closed_share(&heights, 5, 5, f32::NEG_INFINITY, None), Some(1.0 / 25.0));
        // With the sea: 24 land cells, the pit one of them.
        assert_eq!(closed_share(&heights, 5, 5, 0.5, None), Some(1.0 / 24.0));
        // All sea: no land.
        assert_eq!(closed_share(&heights, 5, 5, 10.0, None), Some(0.0));
        // Under an active mask of 0 the pit and the left column do not
        // count: 19 cells of land, none closed; with the pit at 0.5, 1 of 20.
        let mut active = vec![1.0f32; 25];
        for i in [0, 5, 10, 12, 15, 20] {
            active[i] = 0.0;
        }
        assert_eq!(closed_share(&heights, 5, 5, f32::NEG_INFINITY, Some(&active)), Some(0.0));
        active[12] = 0.5;
        assert_eq!(closed_share(&heights, 5, 5, f32::NEG_INFINITY, Some(&active)), Some(1.0 / 20.0));
    }

    /// Rounds of `round` droplets a cell while the share is above `closed`,
    /// `most` in all, the last round cut to what is left.
    #[test]
    fn rounds_stop_at_the_share_or_the_budget() {
        let mut heights = vec![5.0f32; 25];
        heights[12] = 3.0; // 1 of 25 cells closed: 0.04
        let open = Gate::default();
        let drain = Drain { closed: 0.03, round: 0.4, most: 1.0 };
        let mut rounds = Rounds::new(&Channels { drain: Some(drain), ..Channels::default() }, 25, 1);
        assert_eq!([rounds.next(&heights, 5, 5, &open), rounds.next(&heights, 5, 5, &open)], [10, 10]);
        assert_eq!(rounds.next(&heights, 5, 5, &open), 5, "the budget's rest");
        assert_eq!(rounds.next(&heights, 5, 5, &open), 0, "spent");
        // At or below the share: no round.
        let drain = Drain { closed: 0.05, ..drain };
        let mut rounds = Rounds::new(&Channels { drain: Some(drain), ..Channels::default() }, 25, 1);
        assert_eq!(rounds.next(&heights, 5, 5, &open), 0);
        // Without a drain: none; nor after a run of no droplets.
        assert_eq!(Rounds::new(&Channels::default(), 25, 1).next(&heights, 5, 5, &open), 0);
        let drain = Drain { closed: 0.0, ..drain };
        assert_eq!(
            Rounds::new(&Channels { drain: Some(drain), ..Channels::default() }, 25, 1)
                .next(&heights, 5, 5, &open),
            10
        );
        assert_eq!(
            Rounds::new(&Channels { drain: Some(drain), ..Channels::default() }, 25, 0)
                .next(&heights, 5, 5, &open),
            0
        );
    }
}
