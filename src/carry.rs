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
