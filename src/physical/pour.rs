//! A landscape droplet's last load, poured (see
//! [`Eroder::settle_poured`]).

use super::Eroder;
use crate::droplet::{Droplet, Fate};
use crate::normal::NormalSampler;

impl<S: NormalSampler> Eroder<'_, S> {
    /// [`Eroder::settle`] for the landscape kernel: a droplet that ends on the
    /// map puts its load on its cell up to the height of its highest
    /// neighbour, and pours the rest into the lowest cells of the 3 x 3 block
    /// around it (those a droplet may enter), as sediment settles into the
    /// low ground around it: the lowest cell rises to the next lowest, the two
    /// to the third, and so on, all to one level (past the block's highest
    /// cell only where the load is larger than the room below it, the whole
    /// block then rising alike). So a load put down never stands alone above
    /// all its neighbours.
    ///
    /// Why: put down on the droplet's cell alone, the loads of the droplets
    /// that reach the step limit circling on a plain (several end on one
    /// cell) stood as single-cell spikes, up to 0.37 high on the preset's
    /// 512² fBm 1 in tiles (docs/landscape.md). The droplet's cell first, as
    /// before, where that makes no spike: pouring the whole load into the
    /// lowest cells (the channels) cost the slope-area fits more.
    pub(super) fn settle_poured(&mut self, d: &mut Droplet, fate: Fate) {
        let mut total = d.sediment + self.carry;
        if fate == Fate::LeftMap || total.is_nan() || total <= 0.0 {
            // Off the map the load is outflow; a remainder a hair below 0
            // waits in the carry as [`Eroder::settle`] has it.
            return self.settle(d, fate);
        }
        self.report.count(fate);
        d.sediment = 0.0;
        self.carry = 0.0;
        let (x, y) = self.cell_of(d.position);
        let (xs, ys) = (
            x.saturating_sub(1)..=(x + 1).min(self.width - 1),
            y.saturating_sub(1)..=(y + 1).min(self.height - 1),
        );
        // First on the droplet's own cell, up to its highest neighbour.
        let here = y * self.width + x;
        let highest = ys
            .clone()
            .flat_map(|ny| xs.clone().map(move |nx| (nx, ny)))
            .filter(|&c| c != (x, y))
            .map(|(nx, ny)| self.cells[ny * self.width + nx])
            .fold(f32::NEG_INFINITY, f32::max);
        let room = f64::from(highest) - f64::from(self.cells[here]);
        // (Each add's rounding stays in `total`, to the carry at the end, not
        // into the next cell as `Eroder::deposit` would: there it could lift
        // a cell an ulp past the level, or the droplet's cell past its
        // highest neighbour.)
        if self.gate.admits(here) && room > 0.0 {
            if let Some((old, new)) = crate::carry::add(self.cells, here, room.min(total)) {
                total += self.report.book(old, new);
            }
            if total <= 0.0 {
                self.carry = total;
                return;
            }
        }
        // The block's cells a deposit may raise, lowest first (ties by index).
        let mut block = [(0.0f32, 0usize); 9];
        let mut k = 0;
        for ny in ys {
            for nx in xs.clone() {
                let i = ny * self.width + nx;
                if self.gate.admits(i) {
                    let h = self.cells[i];
                    let mut at = k;
                    while at > 0 && (block[at - 1].0 > h || (block[at - 1].0 == h && block[at - 1].1 > i)) {
                        block[at] = block[at - 1];
                        at -= 1;
                    }
                    block[at] = (h, i);
                    k += 1;
                }
            }
        }
        if k == 0 {
            // (A droplet stands on no masked cell; if none takes the load,
            // it waits in the carry.)
            self.carry = total;
            return;
        }
        let block = &block[..k];
        // The `m` lowest cells rise to `level`: the most that the load fills
        // up to the next one's height.
        let mut below = f64::from(block[0].0);
        let mut m = 1;
        while m < k {
            let next = f64::from(block[m].0);
            if next * m as f64 - below > total {
                break;
            }
            below += next;
            m += 1;
        }
        let level = (total + below) / m as f64;
        let mut placed = 0.0;
        for &(h, i) in &block[..m] {
            if let Some((old, new)) = crate::carry::add(self.cells, i, level - f64::from(h)) {
                placed += self.report.book(old, new);
            }
        }
        // `placed` is what the cells lost (negative): the rest, rounding,
        // waits in the carry for the next deposit.
        self.carry = total + placed;
    }
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;

    /// Pours `load` from a droplet ending at `(2, 2)` of a 5 x 5 map whose
    /// block around it is `block` (row by row; the ring outside at 10),
    /// through `gate`; returns the map, the report and the carry.
    fn poured(
        block: [f32; 9],
        load: f64,
        gate: crate::controls::Gate<'_>,
    ) -> (Vec<f32>, crate::ErosionReport, f64) {
        use super::super::{Constants, Eroder};
        use crate::{Droplet, ErosionParams, Fate, Heightmap};
        let mut map = Heightmap::from_fn(5, 5, |x, y| {
            if (1..4).contains(&x) && (1..4).contains(&y) { block[(y - 1) * 3 + x - 1] } else { 10.0 }
        })
        .unwrap();
        let k = Constants::new(&ErosionParams::landscape());
        let mut eroder = Eroder::new(map.view_mut(), k, crate::normal::EightFacet);
        eroder.gate = gate;
        let mut droplet = Droplet::new(glam::Vec2::new(2.4, 2.7));
        droplet.sediment = load;
        eroder.settle_poured(&mut droplet, Fate::StepLimit);
        assert_eq!(droplet.sediment, 0.0);
        let (report, carry) = (eroder.report, eroder.carry);
        (map.cells().to_vec(), report, carry)
    }

    /// The load goes on the droplet's cell up to its highest neighbour, the
    /// rest fills the lowest cells of the block to one level: 10 on a centre
    /// at 1 whose highest neighbour is at 9 raises it to 9, and the other 2
    /// raise the cells at 2 and 3 to 3.5 (the next, at 4, stays); 1.5 all
    /// goes on the centre. The books take all of it.
    #[test]
    fn a_load_fills_the_lowest_cells_around_to_one_level() {
        let block = [5.0, 2.0, 6.0, 7.0, 1.0, 3.0, 8.0, 9.0, 4.0];
        let (cells, report, carry) = poured(block, 10.0, crate::controls::Gate::default());
        let at = |x: usize, y: usize| cells[y * 5 + x];
        assert_eq!((at(2, 2), at(2, 1), at(3, 2)), (9.0, 3.5, 3.5));
        assert_eq!((at(1, 1), at(3, 3), at(2, 3)), (5.0, 4.0, 9.0));
        assert_eq!((report.deposited, report.eroded, carry), (10.0, 0.0, 0.0));
        assert_eq!(report.step_limited, 1);
        let (cells, report, _) = poured(block, 1.5, crate::controls::Gate::default());
        assert_eq!((cells[12], cells[7], report.deposited), (2.5, 2.0, 1.5));
        // More than the block holds below its top: all nine rise alike past it.
        let (cells, report, carry) = poured([1.0; 9], 4.5, crate::controls::Gate::default());
        assert!(
            cells.iter().enumerate().all(
                |(i, &h)| h == if (6..19).contains(&i) && (1..4).contains(&(i % 5)) { 1.5 } else { 10.0 }
            )
        );
        assert_eq!((report.deposited, carry), (4.5, 0.0));
    }

    /// Random blocks and loads: the books hold (what the cells gained plus
    /// the carry is the load, to the rounding of `f64` sums taken in other
    /// orders), no cell outside the block or under
    /// a mask changes, no cell falls, and no raised cell stands above all its
    /// neighbours unless the whole block rose past its top.
    #[test]
    fn a_poured_load_is_booked_and_makes_no_spike() {
        let mut state = 0x2545_F491_u32;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state
        };
        for round in 0..5_000 {
            let block: [f32; 9] = core::array::from_fn(|_| (next() % 1000) as f32 / 256.0);
            let load = f64::from(next() % 4000) / 512.0 + 1e-3;
            let mut active = [1.0f32; 25];
            if round % 3 == 0 {
                // Mask a few of the block's cells (never the droplet's).
                for i in [6, 8, 16, 18, 7].iter().take((next() % 4) as usize) {
                    active[*i] = 0.0;
                }
            }
            let gate = if round % 3 == 0 {
                crate::controls::Gate::new(Some(&active), None)
            } else {
                crate::controls::Gate::default()
            };
            let before: Vec<f32> = (0..25)
                .map(|i| {
                    if (1..4).contains(&(i % 5)) && (1..4).contains(&(i / 5)) {
                        block[(i / 5 - 1) * 3 + i % 5 - 1]
                    } else {
                        10.0
                    }
                })
                .collect();
            let (cells, report, carry) = poured(block, load, gate);
            let gained: f64 = cells.iter().zip(&before).map(|(&a, &b)| f64::from(a) - f64::from(b)).sum();
            // (Sums of the same exact differences in other orders: equal to
            // rounding of the f64 sums.)
            assert!((gained + carry - load).abs() <= 1e-12 * load, "round {round}");
            assert!((report.deposited - gained).abs() <= 1e-12 * load, "round {round}");
            let top = block.iter().copied().fold(f32::MIN, f32::max);
            for i in 0..25 {
                assert!(cells[i] >= before[i], "round {round}: cell {i} fell");
                if active[i] == 0.0 || before[i] == 10.0 {
                    assert_eq!(cells[i], before[i], "round {round}: cell {i} changed");
                }
                let (x, y) = (i % 5, i / 5);
                if cells[i] > before[i] && cells[i] <= top {
                    let highest = (y.saturating_sub(1)..=(y + 1).min(4))
                        .flat_map(|ny| (x.saturating_sub(1)..=(x + 1).min(4)).map(move |nx| ny * 5 + nx))
                        .filter(|&j| j != i)
                        .map(|j| cells[j])
                        .fold(f32::MIN, f32::max);
                    assert!(cells[i] <= highest, "round {round}: cell {i} a spike");
                }
            }
        }
    }
}
