//! A window's reach: which cells a run on a window of a map (a tile's zone) may
//! read, given which of the window's sides are the map's own edges.

/// Which sides of a window onto a map are the map's edges: low and high `x`,
/// low and high `y`. Beyond a map edge the border rules read only edge cells;
/// beyond any other side lie cells the window does not hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Reach {
    pub(crate) edge: [bool; 4],
}

impl Reach {
    /// The whole map: every side is the map's edge, every read is inside.
    pub(crate) const WHOLE: Reach = Reach { edge: [true; 4] };

    /// Whether a traveller at `(px, py)`, in the coordinates of a `width` x
    /// `height` window, that reads `r` cells (a whole number) around its cell
    /// reads only inside the window: its cell and those around it, or, across
    /// the map's edge, the edge cells (`r` 1: the cell and its neighbours).
    #[cfg(any(test, feature = "parallel"))]
    #[inline(always)]
    pub(crate) fn holds_within(&self, width: usize, height: usize, px: f32, py: f32, r: f32) -> bool {
        self.holds_inside(r, [width as f32 - r, height as f32 - r], px, py)
    }

    /// The far bounds [`holds_inside`](Self::holds_inside) takes for a
    /// `width` x `height` window and a traveller that reads its cell's
    /// neighbours: `[width - 1, height - 1]` as `f32`.
    pub(crate) fn far_bounds(width: usize, height: usize) -> [f32; 2] {
        [width as f32 - 1.0, height as f32 - 1.0]
    }

    /// As [`holds_within`](Self::holds_within) with the window's far bounds
    /// worked out: `high` is `[width - r, height - r]` as `f32` (a loop that
    /// asks every step converts the sides once: a `usize` takes six
    /// instructions to convert).
    #[inline(always)]
    pub(crate) fn holds_inside(&self, r: f32, high: [f32; 2], px: f32, py: f32) -> bool {
        (self.edge[0] || px >= r)
            && (self.edge[1] || px < high[0])
            && (self.edge[2] || py >= r)
            && (self.edge[3] || py < high[1])
    }

    /// Whether all neighbours of cell `(x, y)` of the window that lie on the
    /// map lie in the window.
    #[inline]
    pub(crate) fn holds_cell(&self, width: usize, height: usize, x: usize, y: usize) -> bool {
        (self.edge[0] || x >= 1)
            && (self.edge[1] || x + 1 < width)
            && (self.edge[2] || y >= 1)
            && (self.edge[3] || y + 1 < height)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_whole_map_holds_everything() {
        assert!(Reach::WHOLE.holds_within(4, 4, -100.0, 1e9, 1.0));
        assert!(Reach::WHOLE.holds_cell(4, 4, 0, 3));
    }

    #[test]
    fn a_window_holds_cells_whose_neighbours_it_holds() {
        // A window whose low x side and high y side are the map's edges.
        let reach = Reach { edge: [true, false, false, true] };
        assert!(reach.holds_within(10, 10, -0.5, 1.0, 1.0));
        assert!(!reach.holds_within(10, 10, 9.0, 5.0, 1.0));
        assert!(reach.holds_within(10, 10, 8.99, 5.0, 1.0));
        assert!(!reach.holds_within(10, 10, 5.0, 0.99, 1.0));
        assert!(reach.holds_within(10, 10, 5.0, 12.0, 1.0));
        assert!(reach.holds_cell(10, 10, 0, 9));
        assert!(!reach.holds_cell(10, 10, 9, 5));
        assert!(!reach.holds_cell(10, 10, 5, 0));
        assert!(reach.holds_cell(10, 10, 8, 1));
    }
}
