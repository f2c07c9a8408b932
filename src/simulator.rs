//! One shape for every simulator: the [`Simulator`] trait, its [`RunOptions`]
//! and Physical's [`Mode`].

use core::fmt;

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256StarStar;

use crate::controls::Controls;
use crate::error::Error;
use crate::grid::{Grid, GridMut};
use crate::layers::Layers;
use crate::progress::Progress;
use crate::report::ErosionReport;

/// How [`Physical`](crate::Physical) moves its droplets. `Snowball` and
/// `Hydrology` have one way and ignore it.
///
/// Every mode runs the same model with the same conservation, deterministically;
/// the modes differ in the order droplets see each other's changes, so their
/// bits differ, not their landforms.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
#[non_exhaustive]
pub enum Mode {
    /// The fastest deterministic single-thread mode, the default:
    /// [`Lockstep`](Mode::Lockstep) for the seeds' model. The landscape kernel
    /// (params with [`Channels`](crate::Channels)) runs in the coloured tiles
    /// of a `Parallel` run (feature `parallel`) with the default
    /// `ParallelParams`, one turn after another on the calling thread (no
    /// thread pool, no `parallel` feature needed): the same bits as that
    /// `Parallel` run on any number of threads. Each turn's zone stays in
    /// cache and its droplets walk eight at a time, their normals and
    /// steering taken together each round: at 512² on a Zen 3, 0.6 of the
    /// time of [`Sequential`](Mode::Sequential). Progress is reported, and a stop honoured, once per sweep: a
    /// thirty-second of a droplet a cell, at least the channels' `refresh`
    /// (512 droplets at 128², 8 192 at 512²). With another sampler than the 8-facet one (the
    /// tiles carry no per-droplet sampler state) it is
    /// [`Sequential`](Mode::Sequential).
    #[default]
    Fast,
    /// One droplet after another: the order [`Physical::trace`](crate::Physical::trace)
    /// follows step by step, and the seeds' own.
    Sequential,
    /// [`LOCKSTEP_LANES`](crate::LOCKSTEP_LANES) droplets advance together,
    /// their motion computed across SIMD lanes (the widest this CPU has, chosen
    /// at run time; the bits are the same on every CPU). A sampler with a lane
    /// kernel (the 8-facet one) computes the normals across the lanes too; any
    /// other sampler runs as well, each lane keeping its own copy (its
    /// per-droplet state) and asking it for the lane's normal. The landscape
    /// kernel (params with [`Channels`](crate::Channels)) interleaves 8 droplets
    /// a step at a time instead, their normals and steering taken together
    /// each round (the 8-facet normals across the lanes): about 0.75 of
    /// [`Sequential`](Mode::Sequential)'s time at 512² on a Zen 3 (the tiles
    /// of [`Fast`](Mode::Fast) take about 0.55).
    Lockstep,
}

/// What a run is told besides the map and the generator: where to report
/// progress (and so how to cancel), and Physical's [`Mode`].
///
/// ```
/// use hydraulic_erosion::{Control, Mode, Progress, RunOptions};
///
/// let mut stop_early = |done: u64, _total: u64| if done >= 1_000 { Control::Stop } else { Control::Continue };
/// let options = RunOptions::default().with_progress(&mut stop_early).with_mode(Mode::Sequential);
/// assert_eq!(options.mode, Mode::Sequential);
/// ```
#[derive(Default)]
pub struct RunOptions<'p> {
    /// Receives progress every [`PROGRESS_INTERVAL`](crate::PROGRESS_INTERVAL)
    /// droplets and may stop the run early ([`Control::Stop`](crate::Control::Stop)):
    /// the map is left balanced and the report says `cancelled`. `None` (the
    /// default) runs to the end silently.
    pub progress: Option<&'p mut dyn Progress>,
    /// Physical's mode; default [`Mode::Fast`].
    pub mode: Mode,
    /// Output layers to record the run into (see [`Layers`]); `None` (the
    /// default) records nothing. They must have the map's size.
    pub layers: Option<&'p mut Layers>,
    /// Maps that steer the run (active mask, rain, erodibility; see
    /// [`Controls`]); none by default.
    pub controls: Controls<'p>,
}

impl<'p> RunOptions<'p> {
    /// These options, reporting to `progress`.
    #[must_use]
    pub fn with_progress(self, progress: &'p mut dyn Progress) -> Self {
        Self { progress: Some(progress), ..self }
    }

    /// These options, in `mode`.
    #[must_use]
    pub fn with_mode(self, mode: Mode) -> Self {
        Self { mode, ..self }
    }

    /// These options, steered by `controls`.
    #[must_use]
    pub fn with_controls(self, controls: Controls<'p>) -> Self {
        Self { controls, ..self }
    }

    /// These options, recording the run's output layers into `layers` (added
    /// to what they hold).
    #[must_use]
    pub fn with_layers(self, layers: &'p mut Layers) -> Self {
        Self { layers: Some(layers), ..self }
    }
}

impl fmt::Debug for RunOptions<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunOptions")
            .field("progress", &self.progress.as_ref().map(|_| "dyn Progress"))
            .field("mode", &self.mode)
            .field("layers", &self.layers.as_ref().map(|l| (l.width(), l.height())))
            .field("controls", &self.controls)
            .finish()
    }
}

/// An erosion model: [`Physical`](crate::Physical), [`Snowball`](crate::Snowball)
/// and [`Hydrology`](crate::Hydrology) all run through this one entry point, so
/// an engine can hold any of them (generically, or as `Box<dyn Simulator<Report
/// = R>>`) and swap them.
///
/// [`run_with`](Simulator::run_with) takes the map, the generator and the
/// [`RunOptions`]; [`run`](Simulator::run) and [`run_seeded`](Simulator::run_seeded)
/// are the short forms. Every run is deterministic (same map, params, options'
/// mode and generator state: same bits), conserves sediment to
/// [`MassBalance`](crate::MassBalance), leaves the map untouched when it returns
/// an error. The hydraulic models (`Physical`, `Snowball`, `Hydrology`) erode
/// maps under 3 cells on a side to themselves; [`Thermal`](crate::Thermal),
/// and so a [`Pipeline`](crate::Pipeline) with it, lets their slopes slide.
///
/// ```
/// use hydraulic_erosion::{ErosionParams, Heightmap, Hydrology, HydrologyParams, Physical, Simulator, fbm_terrain};
///
/// /// Erodes a map with whichever model the caller chose.
/// fn erode_with<M: Simulator>(model: &mut M, map: &mut Heightmap) -> Result<u64, hydraulic_erosion::Error> {
///     let report = model.run_seeded(map, 7)?;
///     Ok(report.as_ref().droplets)
/// }
///
/// let mut map = fbm_terrain(64, 64, 1)?;
/// let mut physical = Physical::new(ErosionParams { droplets: 1_000, ..Default::default() })?;
/// let mut hydrology = Hydrology::new(HydrologyParams { particles: 200, ..Default::default() }, 64, 64)?;
/// assert_eq!(erode_with(&mut physical, &mut map)?, 1_000);
/// assert_eq!(erode_with(&mut hydrology, &mut map)?, 200);
/// # Ok::<(), hydraulic_erosion::Error>(())
/// ```
pub trait Simulator {
    /// What a run reports: [`ErosionReport`] for `Physical` and `Snowball`,
    /// [`HydrologyReport`](crate::HydrologyReport) (sediment and water books) for
    /// `Hydrology`. Its sediment books are `report.as_ref()`.
    type Report: Clone + fmt::Debug + PartialEq + AsRef<ErosionReport>;

    /// Erodes `map` with droplets drawn from `rng`, as `options` say.
    ///
    /// # Errors
    /// [`Error::Grid`] if a cell is not finite or the map does not fit the
    /// simulator (a `Hydrology`'s layers) or the options' [`Layers`], or a
    /// working buffer cannot be allocated; [`Error::Param`] if a map of the
    /// options' [`Controls`](crate::Controls) is out of its range (an
    /// `active` cell above 1, a negative `rain`: see `Controls::validate`).
    /// The map is untouched on error.
    fn run_with(
        &mut self,
        map: GridMut<'_>,
        rng: &mut dyn Rng,
        options: RunOptions<'_>,
    ) -> Result<Self::Report, Error>;

    /// [`run_with`](Simulator::run_with) with the default options (silent,
    /// [`Mode::Fast`]).
    ///
    /// # Errors
    /// As [`run_with`](Simulator::run_with).
    fn run<S, R>(&mut self, map: &mut Grid<S>, rng: &mut R) -> Result<Self::Report, Error>
    where
        Self: Sized,
        S: AsRef<[f32]> + AsMut<[f32]>,
        R: Rng + ?Sized,
    {
        // `&mut R` is itself a generator, so an unsized `R` (a `dyn Rng`) works too.
        let mut rng = rng;
        self.run_with(map.view_mut(), &mut rng, RunOptions::default())
    }

    /// [`run`](Simulator::run) with a `Xoshiro256StarStar` seeded by `seed`
    /// (through `SeedableRng::seed_from_u64`): the reproducible short form.
    ///
    /// # Errors
    /// As [`run_with`](Simulator::run_with).
    fn run_seeded<S>(&mut self, map: &mut Grid<S>, seed: u64) -> Result<Self::Report, Error>
    where
        Self: Sized,
        S: AsRef<[f32]> + AsMut<[f32]>,
    {
        self.run(map, &mut Xoshiro256StarStar::seed_from_u64(seed))
    }
}

/// A borrowed simulator runs as itself: a [`Pipeline`](crate::Pipeline) or a
/// window can take `&mut model` and leave the model with its caller.
impl<T: Simulator + ?Sized> Simulator for &mut T {
    type Report = T::Report;

    fn run_with(
        &mut self,
        map: GridMut<'_>,
        rng: &mut dyn Rng,
        options: RunOptions<'_>,
    ) -> Result<Self::Report, Error> {
        (**self).run_with(map, rng, options)
    }
}

/// A boxed simulator runs as itself, so a `Box<dyn Simulator<Report = R>>`
/// (models chosen at run time) goes wherever a `Simulator` does.
impl<T: Simulator + ?Sized> Simulator for alloc::boxed::Box<T> {
    type Report = T::Report;

    fn run_with(
        &mut self,
        map: GridMut<'_>,
        rng: &mut dyn Rng,
        options: RunOptions<'_>,
    ) -> Result<Self::Report, Error> {
        (**self).run_with(map, rng, options)
    }
}

impl AsRef<ErosionReport> for ErosionReport {
    fn as_ref(&self) -> &ErosionReport {
        self
    }
}
