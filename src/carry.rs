//! Exact books for `f32` cells: apply a change, know what was applied.

/// Adds `amount` to `cells[index]` in `f32` and returns `(old, new)`, or `None`
/// (the cell untouched) if the result would not be finite.
#[inline]
pub(crate) fn add(cells: &mut [f32], index: usize, amount: f64) -> Option<(f32, f32)> {
    let old = cells[index];
    let new = (f64::from(old) + amount) as f32;
    if new.is_finite() {
        cells[index] = new;
        Some((old, new))
    } else {
        None
    }
}

/// Places `amount` on `cells`, on the cell `target` picks, and what that add
/// rounded off on the next target while it is [`rounded_off`]
/// ([`ADD_TRIES`] adds at most); calls `book(index, old, new)` for each
/// cell changed, and returns what is left unplaced. Where a cell crosses into a coarser binade the rounding can
/// leave a whole unit of the finer one (0.99999994 plus two of its units is
/// a tie between 1 and the next float up, and rounds to 1), more than the
/// map resolves: the next target takes it. Anywhere else one add leaves at
/// most half a unit, and the cells keep the bits one add gives.
pub(crate) fn add_all(
    cells: &mut [f32],
    amount: f64,
    target: impl Fn(&[f32]) -> usize,
    mut book: impl FnMut(usize, f32, f32),
) -> f64 {
    let mut rest = amount;
    for _ in 0..ADD_TRIES {
        if rest == 0.0 {
            break;
        }
        let i = target(cells);
        let Some((old, new)) = add(cells, i, rest) else { break };
        if old == new {
            break;
        }
        rest -= f64::from(new) - f64::from(old);
        book(i, old, new);
        if !rounded_off(rest, new) {
            break;
        }
    }
    rest
}

/// The most adds [`add_all`] takes: one more than a tie needs.
const ADD_TRIES: usize = 3;

/// Whether `rest`, what an add that set a cell to `new` rounded off, is more
/// than half the gap from `new` to the next `f32` towards zero: only where
/// the cell crossed into a coarser binade (rounding to nearest leaves at
/// most half a gap anywhere else, a tie exactly half). Then a cell of the
/// finer binade can take it.
pub(crate) fn rounded_off(rest: f64, new: f32) -> bool {
    let magnitude = new.abs();
    let gap = if magnitude == 0.0 {
        f64::from(f32::from_bits(1))
    } else {
        f64::from(magnitude) - f64::from(f32::from_bits(magnitude.to_bits() - 1))
    };
    2.0 * rest.abs() > gap
}

/// Index of the first cell of smallest magnitude among `indices`: where `f32`
/// resolves a small remainder best.
pub(crate) fn smallest_magnitude(cells: &[f32], indices: impl Iterator<Item = usize>) -> usize {
    let mut best = (f32::INFINITY, 0);
    for i in indices {
        if cells[i].abs() < best.0 {
            best = (cells[i].abs(), i);
        }
    }
    best.1
}

#[cfg(test)]
mod tests {
    use super::{add_all, rounded_off};
    use alloc::vec;
    use alloc::vec::Vec;

    /// Places `amount` on the smallest-magnitude cell of `cells`, as the
    /// flushes do; returns the cells and what was booked.
    fn placed(mut cells: Vec<f32>, amount: f64) -> (Vec<f32>, f64) {
        let mut booked = 0.0;
        let smallest = |cells: &[f32]| super::smallest_magnitude(cells, 0..cells.len());
        let rest =
            add_all(&mut cells, amount, smallest, |_, old, new| booked += f64::from(new) - f64::from(old));
        assert_eq!(rest, amount - booked, "what is left is what was not booked");
        (cells, booked)
    }

    /// Two units of 0.99999994 make a tie between 1 and the next float up,
    /// which rounds to 1: the unit rounded off goes to the next cell.
    #[test]
    fn what_a_binade_crossing_rounds_off_goes_to_the_next_cell() {
        let below = 0.999_999_94f32;
        let two_units = 2.0 * (1.0 - f64::from(below));
        assert!(rounded_off(two_units / 2.0, 1.0));
        let (cells, booked) = placed(vec![below, 1.0, below, 1.0], two_units);
        assert_eq!(cells, [1.0, 1.0, 1.0, 1.0]);
        assert_eq!(booked, two_units);
    }

    /// Within a binade one add leaves at most half a unit (a tie exactly
    /// half, rounded to even): the cells keep the bits one add gives.
    #[test]
    fn one_add_within_a_binade_is_all() {
        let unit = f64::from(f32::EPSILON); // at 1.5
        assert!(!rounded_off(unit / 2.0, 1.5));
        let (cells, booked) = placed(vec![1.5, 1.75], 0.5 * unit);
        assert_eq!((cells, booked), (vec![1.5, 1.75], 0.0), "a tie, to even");
        let (cells, booked) = placed(vec![1.5, 1.75], 1.4 * unit);
        assert_eq!(cells, [1.5 + f32::EPSILON, 1.75]);
        assert_eq!(booked, unit);
        // Nothing to place, nothing booked.
        assert_eq!(placed(vec![2.0, 3.0], 0.0), (vec![2.0, 3.0], 0.0));
    }
}
