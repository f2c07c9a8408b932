//! Rain in rounds until the basins drain ([`Drain`]).

use crate::analysis::{Fill, fill_depressions_to};
use crate::channels::{Channels, Drain};
use crate::controls::Gate;
use crate::grid::GridRef;
use crate::neighbours::for_each_neighbour;
use alloc::vec::Vec;

/// The extra rounds of a landscape run with [`Channels::drain`] set.
#[derive(Clone, Copy, Debug)]
pub(super) struct Rounds {
    drain: Option<Drain>,
    sea: f32,
    /// Droplets in a round: `Drain::round` of the run's.
    round: u64,
    /// Extra droplets the run may still take.
    left: u64,
    /// The least closed volume measured so far, once there is one.
    least: Option<f64>,
    /// Rounds in a row that did not bring the volume far enough below
    /// `least` (a tenth; a fifth where pools alone are left).
    misses: u32,
    /// Whether a measure has found no basin since the rounds began: the
    /// basins the first droplets left have drained, and a basin that forms
    /// later is the rain's own pools grown together.
    drained: bool,
    /// The run's steps at the last measure (0 before the first).
    steps: u64,
}

/// How far below its least so far a round must bring the closed volume to
/// count as progress: a tenth.
const PROGRESS: f64 = 0.9;

/// Rounds in a row without progress that end the rain once the first basins
/// have drained.
const PATIENCE: u32 = 2;

/// Where a measure finds no basin, how far below its least a round must
/// bring the volume (the rain's own pools') to count as progress: a fifth.
const POOLS_PROGRESS: f64 = 0.8;

impl Rounds {
    /// The rounds `channels` ask for after a run of `droplets` droplets:
    /// none after none (rounds are more of the run's rain; a run asked for
    /// no droplets leaves the map as it is).
    pub(super) fn new(channels: &Channels, droplets: u32) -> Self {
        // Rounded half up (`as` saturates; `round` needs `std`).
        let of_run = |share: f32| (f64::from(share) * f64::from(droplets) + 0.5) as u64;
        let drain = channels.drain.filter(|_| droplets > 0);
        Self {
            drain,
            sea: channels.sea_level.unwrap_or(f32::NEG_INFINITY),
            round: drain.map_or(0, |d| of_run(d.round).max(1)),
            left: drain.map_or(0, |d| of_run(d.most)),
            least: None,
            misses: 0,
            drained: false,
            steps: 0,
        }
    }

    /// How many more droplets the run takes on `heights` (`width` x
    /// `height`, finite), all its droplets ended: a round while more than
    /// [`Drain::closed`] of the land `gate` admits lies in closed
    /// depressions and extra rain is left, unless the first measure finds no
    /// basin among them (connected closed land of at least [`Drain::basin`]
    /// of the land), or a measure has found no basin and two rounds in a row
    /// have failed to bring the room in the depressions (their volume) a
    /// tenth below the least it has been (a fifth where the measure finds
    /// pools alone, no basin); else 0 (and none after that).
    /// `steps` is the run's steps so far: where no droplet has taken a step
    /// since the last measure (or in the whole run, at the first), no rain
    /// changes the map and none follows.
    pub(super) fn next(
        &mut self,
        heights: &[f32],
        width: usize,
        height: usize,
        gate: &Gate<'_>,
        steps: u64,
    ) -> u64 {
        let Some(drain) = self.drain else { return 0 };
        // A round whose droplets took no step moved no sediment: another
        // would not either (a 3 x 3 pit rained 10^8 such droplets, to a
        // budget of 10^6 runs).
        if self.left == 0 || steps == self.steps {
            self.left = 0;
            return 0;
        }
        self.steps = steps;
        let Some(closed) = closed_land(heights, width, height, self.sea, gate.active, drain.basin) else {
            self.left = 0;
            return 0;
        };
        // Progress is the volume, not the share: a basin filling with
        // deposit keeps its area closed until it is full. Where the rounds
        // make no progress and no basin is left, the pools are the rain's
        // own (droplets that end mid-river at the step limit) and more rain
        // builds more of them. One miss is allowed: a basin's room may grow
        // for a round (a sill built up) before a river cuts it. While the
        // basins the first droplets left hold (no measure has found none),
        // misses do not end the rain: a basin filled to a shallow plain
        // below its sill keeps its room small but steady for rounds before a
        // river cuts the sill. Once they have drained, a basin that forms is
        // the rain's own pools grown together, and misses end the rain
        // again (docs/landscape.md). Where pools alone are left, a round
        // must take a fifth of their room: at 1 024² in cells the rounds
        // took a tenth a round from pools that the step limit's loads keep
        // building, to the budget, and left more land closed (0.052
        // against 0.047 after two).
        let none_left = closed.basins == 0.0;
        let pools = self.least.is_some() && none_left;
        let progress = if pools { POOLS_PROGRESS } else { PROGRESS };
        match self.least {
            Some(least) if closed.volume >= least * progress => self.misses += 1,
            _ => self.misses = 0,
        }
        // Pools alone after the first rain are the rain's own: the rounds
        // are for basins the noise left. Once a basin has started them,
        // the pools it leaves drain with it or end the rain by the rule
        // above.
        let no_basin = self.least.is_none() && none_left;
        self.least = Some(self.least.map_or(closed.volume, |least| least.min(closed.volume)));
        self.drained |= none_left;
        let stalled = self.misses >= PATIENCE && self.drained;
        if closed.share <= f64::from(drain.closed) || no_basin || stalled {
            self.left = 0;
            return 0;
        }
        let more = self.round.min(self.left);
        self.left -= more;
        more
    }
}

/// The land in closed depressions (see [`closed_land`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Closed {
    /// The share of the land in closed depressions.
    pub(super) share: f64,
    /// The share of the land in basins: the closed depressions large enough
    /// to count as one.
    pub(super) basins: f64,
    /// The room in the depressions: the sum over their land of the fill's
    /// depth (height x cells).
    pub(super) volume: f64,
}

/// The land (the cells above `sea`, and where an `active` mask is given,
/// above 0 in it: the cells a run may change) in closed depressions: deeper
/// than 0 after a flat priority-flood fill of the whole map whose outlets
/// are the border and the sea. A basin under a mask of 0 never drains, so it
/// does not count. The basins are the closed cells connected (through their
/// eight neighbours) to at least `basin` of the land. `None` where the
/// buffers cannot be allocated (or the map has more than `u32::MAX` cells).
pub(super) fn closed_land(
    heights: &[f32],
    width: usize,
    height: usize,
    sea: f32,
    active: Option<&[f32]>,
    basin: f32,
) -> Option<Closed> {
    let map = GridRef::new_unchecked(width, height, heights);
    let filled = fill_depressions_to(&map, Fill::Flat, |i| heights[i] <= sea).ok()?;
    let counted = |i: usize| heights[i] > sea && active.is_none_or(|a| a[i] > 0.0);
    let depth = filled.depth.cells();
    let land = (0..heights.len()).filter(|&i| counted(i)).count();
    if land == 0 {
        return Some(Closed { share: 0.0, basins: 0.0, volume: 0.0 });
    }
    let least = f64::from(basin) * land as f64;
    let (mut closed, mut in_basins, mut volume) = (0usize, 0usize, 0.0f64);
    for_each_depression(depth, width, height, |cells| {
        let (mut size, mut room) = (0usize, 0.0f64);
        for &i in cells.iter().filter(|&&i| counted(i as usize)) {
            size += 1;
            room += f64::from(depth[i as usize]);
        }
        closed += size;
        volume += room;
        if size > 0 && size as f64 >= least {
            in_basins += size;
        }
    })?;
    let share_of = |cells: usize| cells as f64 / land as f64;
    Some(Closed { share: share_of(closed), basins: share_of(in_basins), volume })
}

/// Calls `visit` with the cells of each connected patch (through the eight
/// neighbours) of cells deeper than 0 in `depth` (`width` x `height`), in
/// order of their first cell. `None` where the buffers cannot be allocated
/// or the map has more than `u32::MAX` cells.
fn for_each_depression(
    depth: &[f32],
    width: usize,
    height: usize,
    mut visit: impl FnMut(&[u32]),
) -> Option<()> {
    u32::try_from(depth.len()).ok()?;
    let mut seen = Vec::new();
    seen.try_reserve_exact(depth.len()).ok()?;
    seen.resize(depth.len(), false);
    // The patch's cells, each pushed once and visited in turn: the queue is
    // the patch. Room for the whole map, so a push never allocates.
    let mut patch: Vec<u32> = Vec::new();
    patch.try_reserve_exact(depth.len()).ok()?;
    for start in 0..depth.len() {
        if depth[start] <= 0.0 || seen[start] {
            continue;
        }
        patch.clear();
        patch.push(start as u32);
        seen[start] = true;
        let mut next = 0;
        while let Some(&i) = patch.get(next) {
            next += 1;
            for_each_neighbour(i as usize, width, height, |j, _| {
                if depth[j] > 0.0 && !seen[j] {
                    seen[j] = true;
                    patch.push(j as u32);
                }
            });
        }
        visit(&patch);
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::{Closed, Rounds, closed_land};
    use crate::channels::{Channels, Drain};
    use crate::controls::Gate;
    use alloc::vec;
    use alloc::vec::Vec;

    /// A 5 x 5 map with one closed cell in the middle (a pit of depth 1)
    /// and, on the left, a sea cell on the border.
    #[test]
    fn the_closed_land_counts_land_cells_below_their_spill_level() {
        let closed = |share, volume| Some(Closed { share, basins: share, volume });
        #[rustfmt::skip]
        let heights = vec![
            5.0, 5.0, 5.0, 5.0, 5.0,
            5.0, 4.0, 4.0, 4.0, 5.0,
            0.0, 4.0, 3.0, 4.0, 5.0,
            5.0, 4.0, 4.0, 4.0, 5.0,
            5.0, 5.0, 5.0, 5.0, 5.0,
        ];
        assert_eq!(closed_land(&heights, 5, 5, f32::NEG_INFINITY, None, 0.0), closed(1.0 / 25.0, 1.0));
        // With the sea: 24 land cells, the pit one of them.
        assert_eq!(closed_land(&heights, 5, 5, 0.5, None, 0.0), closed(1.0 / 24.0, 1.0));
        // All sea: no land.
        assert_eq!(closed_land(&heights, 5, 5, 10.0, None, 0.0), closed(0.0, 0.0));
        // Under an active mask of 0 the pit and the left column do not
        // count: 19 cells of land, none closed; with the pit at 0.5, 1 of 20.
        let mut active = vec![1.0f32; 25];
        for i in [0, 5, 10, 12, 15, 20] {
            active[i] = 0.0;
        }
        assert_eq!(closed_land(&heights, 5, 5, f32::NEG_INFINITY, Some(&active), 0.0), closed(0.0, 0.0));
        active[12] = 0.5;
        assert_eq!(
            closed_land(&heights, 5, 5, f32::NEG_INFINITY, Some(&active), 0.0),
            closed(1.0 / 20.0, 1.0)
        );
    }

    /// A 10 x 10 map of height 5 with single-cell pits (depth 2) at the
    /// first `pits` of four interior cells apart: `pits` of 100 cells closed.
    fn pitted(pits: usize) -> Vec<f32> {
        let mut heights = vec![5.0f32; 100];
        for &i in [22, 27, 72, 77].iter().take(pits) {
            heights[i] = 3.0;
        }
        heights
    }

    /// Rounds of `round` times the run's droplets while the share is above
    /// `closed` and falling, `most` times them in all, the last round cut
    /// to what is left: a run of fewer droplets takes fewer more.
    #[test]
    fn rounds_stop_at_the_share_or_the_budget() {
        let open = Gate::default();
        let drain = Drain { closed: 0.005, round: 0.4, most: 1.0, basin: 0.0 };
        let with = |drain: Drain, droplets: u32| {
            Rounds::new(&Channels { drain: Some(drain), ..Channels::default() }, droplets)
        };
        let mut rounds = with(drain, 100);
        assert_eq!(rounds.next(&pitted(3), 10, 10, &open, 1), 40);
        assert_eq!(rounds.next(&pitted(2), 10, 10, &open, 2), 40);
        assert_eq!(rounds.next(&pitted(1), 10, 10, &open, 3), 20, "the budget's rest");
        assert_eq!(rounds.next(&pitted(1), 10, 10, &open, 4), 0, "spent");
        let mut rounds = with(drain, 10);
        assert_eq!(rounds.next(&pitted(3), 10, 10, &open, 5), 4, "a tenth of the run, a tenth of the rain");
        assert_eq!(rounds.next(&pitted(2), 10, 10, &open, 6), 4);
        assert_eq!(rounds.next(&pitted(1), 10, 10, &open, 7), 2);
        assert_eq!(rounds.next(&pitted(1), 10, 10, &open, 8), 0);
        // At least a droplet a round.
        assert_eq!(with(Drain { round: 0.01, ..drain }, 10).next(&pitted(3), 10, 10, &open, 9), 1);
        // At or below the share: no round.
        assert_eq!(with(Drain { closed: 0.035, ..drain }, 100).next(&pitted(3), 10, 10, &open, 10), 0);
        // Without a drain: none; nor after a run of no droplets.
        assert_eq!(Rounds::new(&Channels::default(), 100).next(&pitted(3), 10, 10, &open, 11), 0);
        assert_eq!(with(drain, 0).next(&pitted(3), 10, 10, &open, 12), 0);
    }

    /// Two rounds in a row that do not bring the room in the depressions far
    /// enough below the least it has been end the rain, with budget left,
    /// where no basin is left (here: every depression a single cell, under
    /// `basin`): none after them, even once the room shrinks. Pools alone
    /// must lose a fifth of their room a round (a tenth would do while a
    /// basin is left); a basin filling up (as many cells closed, shallower)
    /// is progress.
    #[test]
    fn two_rounds_in_a_row_without_progress_end_the_rain() {
        let open = Gate::default();
        let drain = Drain { closed: 0.005, round: 0.1, most: 4.0, basin: 0.02 };
        let with = || Rounds::new(&Channels { drain: Some(drain), ..Channels::default() }, 100);
        // A 10 x 10 map of height 5 with single-cell pits of these depths,
        // four cells apart: the volume is their sum. The first map of each
        // run has a basin (a second cell beside the first pit, depth 1), so
        // that the rounds start.
        let map = |depths: &[f32]| {
            let mut heights = vec![5.0f32; 100];
            for (&i, &depth) in [22, 27, 72, 77].iter().zip(depths) {
                heights[i] = 5.0 - depth;
            }
            heights
        };
        let start = |depths: &[f32]| {
            let mut heights = map(depths);
            heights[23] = 4.0;
            heights
        };
        let mut rounds = with();
        assert_eq!(rounds.next(&start(&[2.0, 2.0]), 10, 10, &open, 13), 10, "room 5");
        assert_eq!(rounds.next(&map(&[2.0, 1.9]), 10, 10, &open, 14), 10, "3.9, below 5 x 0.8");
        assert_eq!(
            rounds.next(&map(&[1.0, 1.0, 1.2]), 10, 10, &open, 15),
            10,
            "3.2, not below 3.9 x 0.8: a miss"
        );
        assert_eq!(
            rounds.next(&map(&[1.0, 1.0, 0.9]), 10, 10, &open, 16),
            0,
            "2.9, not below 3.2 x 0.8: two"
        );
        assert_eq!(rounds.next(&map(&[1.0]), 10, 10, &open, 17), 0, "ended");
        let mut rounds = with();
        assert_eq!(rounds.next(&start(&[2.0, 1.0]), 10, 10, &open, 18), 10, "4");
        assert_eq!(rounds.next(&map(&[1.0, 1.0, 1.0]), 10, 10, &open, 19), 10, "3, below 4 x 0.8");
        assert_eq!(rounds.next(&map(&[1.0, 0.7]), 10, 10, &open, 20), 10, "1.7, below 3 x 0.8");
        assert_eq!(rounds.next(&map(&[1.0, 0.6]), 10, 10, &open, 21), 10, "1.6: a miss");
        assert_eq!(rounds.next(&map(&[0.5, 0.5]), 10, 10, &open, 22), 10, "1, filling up: progress");
        assert_eq!(rounds.next(&map(&[0.5, 0.4]), 10, 10, &open, 23), 10, "0.9: a miss");
        assert_eq!(rounds.next(&map(&[0.5, 0.35]), 10, 10, &open, 24), 0, "0.85: two");
    }

    /// While the first basins hold, rounds without progress do not end the
    /// rain: it goes on to the share or the budget, and ends by the room once
    /// the basin is gone, or once a basin forms again after a measure found
    /// none (the rain's own pools grown together).
    #[test]
    fn a_basin_keeps_the_rain_going_without_progress() {
        let open = Gate::default();
        let drain = Drain { closed: 0.005, round: 0.1, most: 0.5, basin: 0.02 };
        let with = || Rounds::new(&Channels { drain: Some(drain), ..Channels::default() }, 100);
        // A basin of two cells side by side (depths 1), and pools of a cell.
        let basin = |pools: usize| {
            let mut heights = pitted(pools);
            (heights[33], heights[34]) = (4.0, 4.0);
            heights
        };
        let mut rounds = with();
        assert_eq!(rounds.next(&basin(0), 10, 10, &open, 22), 10, "room 2");
        assert_eq!(rounds.next(&basin(1), 10, 10, &open, 23), 10, "room 4: a miss");
        assert_eq!(rounds.next(&basin(2), 10, 10, &open, 24), 10, "room 6: two, but the basin holds");
        assert_eq!(rounds.next(&basin(2), 10, 10, &open, 25), 10, "three");
        assert_eq!(rounds.next(&basin(2), 10, 10, &open, 26), 10, "the budget's last round");
        assert_eq!(rounds.next(&basin(2), 10, 10, &open, 27), 0, "spent");
        let mut rounds = with();
        assert_eq!(rounds.next(&basin(0), 10, 10, &open, 28), 10, "room 2");
        assert_eq!(rounds.next(&basin(1), 10, 10, &open, 29), 10, "room 4: a miss");
        assert_eq!(rounds.next(&pitted(3), 10, 10, &open, 30), 0, "room 6, a second miss, and no basin left");
        let mut rounds = with();
        assert_eq!(rounds.next(&basin(3), 10, 10, &open, 31), 10, "room 8");
        assert_eq!(rounds.next(&pitted(2), 10, 10, &open, 32), 10, "room 4, pools alone: progress");
        assert_eq!(rounds.next(&basin(2), 10, 10, &open, 33), 10, "room 6, a basin again: a miss");
        assert_eq!(
            rounds.next(&basin(2), 10, 10, &open, 34),
            0,
            "room 6, a second miss: the basin is the rain's own"
        );
    }

    /// A measure with no step taken since the last (or, at the first, in the
    /// whole run) ends the rain, budget and basin or not: no droplet moved
    /// any sediment, and more rain would not either.
    #[test]
    fn rain_without_a_step_ends_the_rounds() {
        let open = Gate::default();
        let drain = Drain { closed: 0.005, round: 0.1, most: 1e6, basin: 0.0 };
        let with = || Rounds::new(&Channels { drain: Some(drain), ..Channels::default() }, 100);
        let mut rounds = with();
        assert_eq!(rounds.next(&pitted(3), 10, 10, &open, 0), 0, "a run of no step");
        assert_eq!(rounds.next(&pitted(3), 10, 10, &open, 5), 0, "ended");
        let mut rounds = with();
        assert_eq!(rounds.next(&pitted(3), 10, 10, &open, 500), 10);
        assert_eq!(rounds.next(&pitted(3), 10, 10, &open, 501), 10, "a step: on");
        assert_eq!(rounds.next(&pitted(3), 10, 10, &open, 501), 0, "none since");
        assert_eq!(rounds.next(&pitted(3), 10, 10, &open, 502), 0, "ended");
    }

    /// Closed cells touching through an edge or a corner are one patch; a
    /// patch of at least `basin` of the land is a basin.
    #[test]
    fn basins_are_patches_of_closed_land_at_least_basin_large() {
        // 10 x 10 of height 5: a patch of three closed cells, two of them
        // touching only at a corner (depths 1, 2, 1), and a pit apart
        // (depth 3).
        let mut heights = vec![5.0f32; 100];
        for (i, depth) in [(22, 1.0), (33, 2.0), (34, 1.0), (77, 3.0)] {
            heights[i] = 5.0 - depth;
        }
        let closed = |basin| closed_land(&heights, 10, 10, f32::NEG_INFINITY, None, basin);
        let all = Closed { share: 0.04, basins: 0.04, volume: 7.0 };
        assert_eq!(closed(0.0), Some(all));
        assert_eq!(closed(0.01), Some(all), "one cell of 100 is a basin at 0.01");
        assert_eq!(closed(0.02), Some(Closed { basins: 0.03, ..all }), "the pit is not");
        assert_eq!(closed(0.03), Some(Closed { basins: 0.03, ..all }));
        assert_eq!(closed(0.031), Some(Closed { basins: 0.0, ..all }), "nor is the patch");
        // Under an active mask of 0 a patch's cells do not count: the patch
        // keeps two of its three.
        let mut active = vec![1.0f32; 100];
        active[22] = 0.0;
        let masked = closed_land(&heights, 10, 10, f32::NEG_INFINITY, Some(&active), 0.02);
        let land = 99.0;
        assert_eq!(masked, Some(Closed { share: 3.0 / land, basins: 2.0 / land, volume: 6.0 }));
    }

    /// Closed land above the share but in pools only (no patch of
    /// `basin`) after the first rain takes no round; one basin among them
    /// does, and the rounds go on by the share and the room once the basin
    /// is gone.
    #[test]
    fn pools_alone_take_no_round() {
        let open = Gate::default();
        let drain = Drain { closed: 0.005, round: 0.1, most: 4.0, basin: 0.02 };
        let with = || Rounds::new(&Channels { drain: Some(drain), ..Channels::default() }, 100);
        let mut rounds = with();
        assert_eq!(rounds.next(&pitted(4), 10, 10, &open, 34), 0, "four pits of a cell each");
        assert_eq!(rounds.next(&pitted(4), 10, 10, &open, 35), 0, "ended");
        let mut rounds = with();
        let mut basin = pitted(4);
        basin[23] = 3.0;
        assert_eq!(rounds.next(&basin, 10, 10, &open, 37), 10, "two pits side by side: room 10");
        assert_eq!(rounds.next(&pitted(3), 10, 10, &open, 38), 10, "pools alone, room 6: progress");
        assert_eq!(rounds.next(&pitted(1), 10, 10, &open, 39), 10, "room 2");
    }
}
