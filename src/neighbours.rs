//! The 8 neighbours of a cell, in one fixed order shared by the terrain
//! analysis and the thermal pass (ties break the same way everywhere).

/// The neighbours as `(dx, dy, distance in cells)`: the 4 edges, then the 4
/// corners, opposite directions paired (`n` and `n ^ 1`).
pub(crate) const NEIGHBOURS: [(isize, isize, f64); 8] = [
    (1, 0, 1.0),
    (-1, 0, 1.0),
    (0, 1, 1.0),
    (0, -1, 1.0),
    (1, 1, core::f64::consts::SQRT_2),
    (-1, -1, core::f64::consts::SQRT_2),
    (1, -1, core::f64::consts::SQRT_2),
    (-1, 1, core::f64::consts::SQRT_2),
];

// Each direction's opposite is its pair.
const _: () = {
    let mut n = 0;
    while n < 8 {
        assert!(NEIGHBOURS[n].0 == -NEIGHBOURS[n ^ 1].0 && NEIGHBOURS[n].1 == -NEIGHBOURS[n ^ 1].1);
        n += 1;
    }
};

/// Calls `f(neighbour index, distance in cells)` for each neighbour of cell
/// `i` of a `width` x `height` grid that lies on the grid.
#[inline(always)]
pub(crate) fn for_each_neighbour(i: usize, width: usize, height: usize, mut f: impl FnMut(usize, f64)) {
    for_each_neighbour_of(i % width, i / width, width, height, |_, j, d| f(j, d));
}

/// Calls `f(n, neighbour index, distance in cells)` for each neighbour of
/// cell `(x, y)` of a `width` x `height` grid that lies on the grid, `n` its
/// place in [`NEIGHBOURS`].
#[inline(always)]
pub(crate) fn for_each_neighbour_of(
    x: usize,
    y: usize,
    width: usize,
    height: usize,
    mut f: impl FnMut(usize, usize, f64),
) {
    for (n, (dx, dy, d)) in NEIGHBOURS.into_iter().enumerate() {
        let (nx, ny) = (x as isize + dx, y as isize + dy);
        if nx >= 0 && ny >= 0 && (nx as usize) < width && (ny as usize) < height {
            f(n, ny as usize * width + nx as usize, d);
        }
    }
}
