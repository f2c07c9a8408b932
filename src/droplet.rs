//! The droplet: the particle every simulator moves.

use glam::Vec2;

/// One droplet's state: where it is, how fast it moves, how much water it holds
/// and how much sediment it carries.
///
/// Positions are in cells (`x` a column, `y` a row, both continuous: the droplet
/// at `(2.7, 4.2)` sits in cell `(2, 4)`), velocities in cells per time unit.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Droplet {
    /// Position in cells.
    pub position: Vec2,
    /// Velocity in cells per unit of time.
    pub velocity: Vec2,
    /// Water volume; starts at 1 and shrinks by evaporation.
    pub water: f32,
    /// Sediment carried, as a mass in height units (one unit is one cell raised by
    /// 1). Kept in `f64`: it is the exact sum of the height changes the droplet
    /// made, so what it puts down balances what it took.
    pub sediment: f64,
}

impl Droplet {
    /// A fresh droplet at `position`: at rest, one unit of water, no sediment.
    pub const fn new(position: Vec2) -> Self {
        Self { position, velocity: Vec2::ZERO, water: 1.0, sediment: 0.0 }
    }

    /// Sediment concentration, `sediment / water`: the quantity the mass-transfer
    /// law drives towards the capacity.
    #[inline]
    pub fn concentration(&self) -> f32 {
        self.sediment as f32 / self.water
    }
}

/// Why a droplet stopped.
///
/// "Put its load down where it stood": on its cell (the seeds' models; a
/// [`Snowball`](crate::Snowball) bilinearly around its position); a landscape
/// droplet ([`Channels`](crate::Channels)) puts it on its cell up to its
/// highest neighbour and pours the rest into the lowest cells around it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Fate {
    /// Its water fell to `min_water`; it put its load down where it stood.
    #[cfg_attr(feature = "serde", serde(alias = "Evaporated"))]
    Evaporated,
    /// It moved off the map, or into the sea of a landscape run with a
    /// [`sea_level`](crate::Channels::sea_level), carrying its load out
    /// (counted as outflow).
    #[cfg_attr(feature = "serde", serde(alias = "LeftMap"))]
    LeftMap,
    /// It reached `max_steps`; it put its load down where it stood.
    #[cfg_attr(feature = "serde", serde(alias = "StepLimit"))]
    StepLimit,
    /// Its next step would have produced a non-finite velocity, position or height
    /// (extreme heights or parameters); it stopped before that step and put its
    /// load down where it stood.
    #[cfg_attr(feature = "serde", serde(alias = "Unstable"))]
    Unstable,
    /// It reached flat ground (a surface normal of exactly `(0, 1, 0)`: a
    /// [`Snowball`](crate::Snowball) in the sea or on a plateau); it put its load
    /// down where it stood.
    #[cfg_attr(feature = "serde", serde(alias = "Flat"))]
    Flat,
    /// The caller stopped it (a [`DropletTrace`](crate::DropletTrace) dropped
    /// before its end); it put its load down where it stood.
    #[cfg_attr(feature = "serde", serde(alias = "Stopped"))]
    Stopped,
    /// Its next step would have entered a cell the active mask keeps
    /// unchanged (see [`Controls`](crate::Controls)); it stopped at the centre
    /// of the cell it was in and put its load down there.
    #[cfg_attr(feature = "serde", serde(alias = "Masked"))]
    Masked,
}
