//! Settling single-cell pits at the end of a landscape run
//! ([`Channels::settle_pits`](crate::Channels::settle_pits)).

use super::Eroder;
use crate::normal::NormalSampler;
use crate::pits;

impl<S: NormalSampler> Eroder<'_, S> {
    /// Settles the pits the run made (see [`crate::pits::settle_pits`]): the
    /// droplets' remainder is put down first (it may dig a pit of its own,
    /// settled next). Returns how many pits were settled.
    pub(super) fn settle_pits(&mut self, before: &[f32]) -> u64 {
        self.flush_anywhere();
        let (width, height, gate) = (self.width, self.height, self.gate);
        pits::settle_pits(self.cells, width, height, before, gate, &mut self.report, &mut self.carry, |_| {
            true
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Constants, Eroder};
    use crate::analysis::count_pits;
    use crate::controls::Gate;
    use crate::grid::Heightmap;
    use crate::normal::EightFacet;
    use crate::params::ErosionParams;
    use crate::pits::{halfway_up, next_up};

    /// A 5 x 5 slope `x + y` with the given cells set.
    fn slope_with(cells: &[((usize, usize), f32)]) -> Heightmap {
        let mut map = Heightmap::from_fn(5, 5, |x, y| (x + y) as f32).unwrap();
        for &((x, y), h) in cells {
            map.cells_mut()[y * 5 + x] = h;
        }
        map
    }

    /// Settles `map` as a run that found it as [`slope_with`]`(&[])` would.
    fn settle(map: &mut Heightmap, gate: Gate<'_>) -> (u64, f64, f64, f64) {
        let before = slope_with(&[]);
        let k = Constants::new(&ErosionParams::default());
        let mut eroder = Eroder::new(map.view_mut(), k, EightFacet);
        eroder.gate = gate;
        let settled = eroder.settle_pits(before.cells());
        assert_eq!(eroder.carry, 0.0, "the remainder is paid or booked");
        (settled, eroder.report.eroded, eroder.report.deposited, eroder.report.outflow)
    }

    #[test]
    fn a_pit_and_its_lowest_neighbour_meet_halfway() {
        // (2, 2) at -1 is a pit; its lowest neighbour is (1, 1) at 2.
        let mut map = slope_with(&[((2, 2), -1.0)]);
        let before: f64 = map.cells().iter().map(|&h| f64::from(h)).sum();
        let (settled, eroded, deposited, outflow) = settle(&mut map, Gate::default());
        assert_eq!(settled, 1);
        assert_eq!((map.cells()[2 * 5 + 2], map.cells()[5 + 1]), (0.5, 0.5));
        assert_eq!((eroded, deposited, outflow), (1.5, 1.5, 0.0));
        let after: f64 = map.cells().iter().map(|&h| f64::from(h)).sum();
        assert_eq!(before, after);
        // Everything else keeps its height, and no pit is left.
        let untouched = slope_with(&[]);
        for (i, (&a, &b)) in map.cells().iter().zip(untouched.cells()).enumerate() {
            if i != 12 && i != 6 {
                assert_eq!(a, b, "cell {i}");
            }
        }
        assert_eq!(count_pits(&map).unwrap().0, 0);
    }

    #[test]
    fn ties_take_the_first_neighbour_in_order_and_the_border_pays_for_rounding() {
        // (1, 2) and (2, 1) tie at 3 once (1, 1) is raised: +x, -x, +y, -y
        // order takes -x, i.e. (1, 2).
        let mut map = slope_with(&[((2, 2), 0.1), ((1, 1), 3.0)]);
        let before: f64 = map.cells().iter().map(|&h| f64::from(h)).sum();
        let (settled, eroded, deposited, outflow) = settle(&mut map, Gate::default());
        assert_eq!(settled, 1);
        let level = map.cells()[2 * 5 + 1];
        assert_eq!(map.cells()[2 * 5 + 2], level);
        assert_eq!(map.cells()[5 + 2], 3.0);
        // 1.55 is not an f32: the halfway point rounded up, never down.
        let exact = (0.1f32 as f64 + 3.0) / 2.0;
        assert!(f64::from(level) > exact && f64::from(level) - exact < 2e-7, "{level}");
        // The surplus rounding put down is taken from the border cell of
        // smallest magnitude, (0, 0) at 0: nothing lost, nothing left over.
        let surplus = 2.0 * f64::from(level) - exact * 2.0;
        assert_eq!(f64::from(map.cells()[0]), -surplus);
        assert_eq!(outflow, 0.0);
        let after: f64 = map.cells().iter().map(|&h| f64::from(h)).sum();
        assert_eq!(after, before);
        assert_eq!(after - before, deposited - eroded);
        assert_eq!(count_pits(&map).unwrap().0, 0);
    }

    #[test]
    fn rounding_coarser_than_the_finest_cell_leaves_over_the_border() {
        // A pit at 270 beside cells at 1270 (found by the hardening suite): the
        // pair meets near 770, where a step is 6.1e-5, and the only outlet,
        // a border cell at 1270, moves in steps of 1.2e-4, coarser than the
        // map's finest cell resolves. Its lowering is rounded down and the
        // excess is outflow: the books close exactly.
        let (w, h) = (4, 3);
        let before = Heightmap::from_fn(w, h, |_, _| 1270.3064).unwrap();
        for pit in [270.306_46f32, 270.306_5, 1.0e-3, 1269.0] {
            let mut map = before.clone();
            map.cells_mut()[w + 1] = pit;
            let start: f64 = map.cells().iter().map(|&c| f64::from(c)).sum();
            let k = Constants::new(&ErosionParams::default());
            let mut eroder = Eroder::new(map.view_mut(), k, EightFacet);
            assert_eq!(eroder.settle_pits(before.cells()), 1);
            let report = eroder.report;
            let end: f64 = map.cells().iter().map(|&c| f64::from(c)).sum();
            assert_eq!(start - end, report.outflow, "pit {pit}");
            assert_eq!(report.eroded - report.deposited, report.outflow, "pit {pit}");
            assert!((0.0..1.3e-4).contains(&report.outflow), "pit {pit}: {report:?}");
            assert_eq!(count_pits(&map).unwrap().0, 0);
        }
    }

    #[test]
    fn a_wholly_masked_or_bedrock_border_settles_nothing() {
        let mut map = slope_with(&[((2, 2), -1.0)]);
        let mut open = [0.0f32; 25];
        for (i, cell) in open.iter_mut().enumerate() {
            let (x, y) = (i % 5, i / 5);
            if (1..4).contains(&x) && (1..4).contains(&y) {
                *cell = 1.0;
            }
        }
        let copy = map.clone();
        assert_eq!(settle(&mut map, Gate::new(Some(&open), None)), (0, 0.0, 0.0, 0.0));
        assert_eq!(map.cells(), copy.cells());
        // A bedrock border (erodibility 0) is no outlet either: it must not go down.
        assert_eq!(settle(&mut map, Gate::new(None, Some(&open))), (0, 0.0, 0.0, 0.0));
        assert_eq!(map.cells(), copy.cells());
    }

    #[test]
    fn halfway_up_is_never_below_the_halfway_point() {
        let mut state = 0x9E37_79B9_u32;
        for _ in 0..10_000 {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let a = f32::from_bits(state & 0x3FFF_FFFF) - 1.0;
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let b = a + f32::from_bits(state & 0x3F7F_FFFF);
            let (low, high) = (a.min(b), a.max(b));
            let level = halfway_up(low, high);
            let exact = (f64::from(low) + f64::from(high)) / 2.0;
            assert!(f64::from(level) >= exact && level <= high && level >= low, "{low} {high} {level}");
            assert!(f64::from(level) - exact <= f64::from(level.abs()) * f64::from(f32::EPSILON));
        }
        assert_eq!(next_up(0.0), f32::from_bits(1));
        assert_eq!(next_up(-f32::from_bits(1)), -0.0);
        assert_eq!(next_up(1.0), 1.0 + f32::EPSILON);
    }

    #[test]
    fn masked_pits_and_held_neighbours_are_left_alone() {
        let map = slope_with(&[((2, 2), -1.0)]);
        let mut masked = [1.0f32; 25];
        masked[12] = 0.0;
        let mut bedrock = [1.0f32; 25];
        bedrock[6] = 0.0;
        for gate in [Gate::new(Some(&masked), None), Gate::new(None, Some(&bedrock))] {
            let mut copy = map.clone();
            let (settled, eroded, deposited, _) = settle(&mut copy, gate);
            assert_eq!((settled, eroded, deposited), (0, 0.0, 0.0));
            assert_eq!(copy.cells(), map.cells());
        }
    }

    #[test]
    fn pits_the_run_found_are_left_alone() {
        // The same pit, there before the run and untouched by it.
        let mut map = slope_with(&[((2, 2), -1.0)]);
        let before = map.clone();
        let k = Constants::new(&ErosionParams::default());
        let mut eroder = Eroder::new(map.view_mut(), k, EightFacet);
        assert_eq!(eroder.settle_pits(before.cells()), 0);
        assert_eq!(map.cells(), before.cells());
        // Its lowest neighbour changed by the run: settled.
        let mut map = slope_with(&[((2, 2), -1.0), ((1, 1), 1.5)]);
        let mut eroder = Eroder::new(map.view_mut(), k, EightFacet);
        assert_eq!(eroder.settle_pits(before.cells()), 1);
        assert_eq!(count_pits(&map).unwrap().0, 0);
    }

    #[test]
    fn border_cells_are_never_settled() {
        let mut map = slope_with(&[((0, 2), -5.0), ((4, 4), -5.0)]);
        let before = map.clone();
        assert_eq!(settle(&mut map, Gate::default()).0, 0);
        assert_eq!(map.cells(), before.cells());
    }
}
