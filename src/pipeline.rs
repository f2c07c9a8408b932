//! Two simulators taking turns on one map: a hydraulic run and a thermal
//! pass, interleaved.

use alloc::vec::Vec;

use rand_core::Rng;

use crate::error::{Error, ParamError, check};
use crate::grid::{GridMut, try_copy};
use crate::layers::Layers;
use crate::progress::{Control, Progress};
use crate::report::ErosionReport;
use crate::simulator::{RunOptions, Simulator};

/// Two simulators taking turns, `rounds` times: `first` runs, then `second`,
/// each on the map the other left. The usual pair is a hydraulic model and a
/// [`Thermal`](crate::Thermal) pass, so that slopes the water steepens slide
/// back to their angle of repose as the valleys form, not only at the end:
///
/// ```
/// use hydraulic_erosion::{
///     ErosionParams, MassBalance, Physical, Pipeline, Simulator, Thermal, ThermalParams, fbm_terrain,
/// };
///
/// let mut map = fbm_terrain(64, 64, 1)?;
/// let before = map.clone();
/// // 4 rounds of 2 000 droplets, each followed by 10 talus iterations.
/// let water = Physical::new(ErosionParams { droplets: 2_000, ..ErosionParams::default() })?;
/// let talus = Thermal::new(ThermalParams { iterations: 10, ..ThermalParams::default() })?;
/// let report = Pipeline::new(water, talus, 4)?.run_seeded(&mut map, 7)?;
/// assert_eq!(report.first.len(), 4);
/// assert_eq!(report.total.droplets, 8_000);
/// assert!(MassBalance::of_run(&before, &map, &report.total).is_conserved());
/// # Ok::<(), hydraulic_erosion::Error>(())
/// ```
///
/// Each run takes the options' mode, controls and layers (which add up, so
/// the layers' erosion and deposition describe the whole pipeline, thermal
/// slides included), and draws from the one generator in turn order: the
/// same map, models and seed give the same bits. Its progress callback sees
/// the pipeline as a whole: `total` is `2 * rounds * 1024`, and each run
/// moves `done` through its own 1024 steps. A `Control::Stop` ends the
/// pipeline: at the run it stopped (which reports `cancelled`), or, where it
/// came at a run's last call (which a run alone does not stop at), before
/// the next run; either way with `total.cancelled` set, unless no run was
/// left.
///
/// The pipeline is a [`Simulator`] itself: it can be a stage of another one.
#[derive(Clone, Debug, PartialEq)]
pub struct Pipeline<A, B> {
    first: A,
    second: B,
    rounds: u32,
}

/// What a [`Pipeline`] run did: each run's own report, in turn order, and the
/// mass books of them all.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct PipelineReport<A, B> {
    /// The first simulator's reports, one a round.
    pub first: Vec<A>,
    /// The second simulator's reports, one a round (one fewer than `first`
    /// when the pipeline was stopped during a first run).
    pub second: Vec<B>,
    /// Every run's [`ErosionReport`] merged ([`ErosionReport::merge`]): what
    /// [`MassBalance::of_run`](crate::MassBalance::of_run) reads.
    pub total: ErosionReport,
}

impl<A, B> AsRef<ErosionReport> for PipelineReport<A, B> {
    fn as_ref(&self) -> &ErosionReport {
        &self.total
    }
}

impl<A, B> Pipeline<A, B> {
    /// The largest allowed `rounds`.
    pub const MAX_ROUNDS: u32 = 100_000;

    /// `first` and `second` taking turns `rounds` times (`[1, 100 000]`).
    ///
    /// # Errors
    /// A [`ParamError`] for the field `rounds` if it is out of range.
    pub fn new(first: A, second: B, rounds: u32) -> Result<Self, ParamError> {
        check((1..=Self::MAX_ROUNDS).contains(&rounds), "rounds", "in [1, 100000]")?;
        Ok(Self { first, second, rounds })
    }

    /// The simulator that runs first in each round.
    pub fn first(&self) -> &A {
        &self.first
    }

    /// The simulator that runs second in each round.
    pub fn second(&self) -> &B {
        &self.second
    }

    /// How many times the two take turns.
    pub fn rounds(&self) -> u32 {
        self.rounds
    }

    /// The two simulators back (a [`Hydrology`](crate::Hydrology)'s layers,
    /// say, to read after the run).
    pub fn into_parts(self) -> (A, B) {
        (self.first, self.second)
    }
}

/// Steps of the pipeline's progress each run moves through.
const RUN_STEPS: u64 = 1024;

/// A run's progress seen as part of the pipeline's: run `index` of `runs`.
struct Share<'p> {
    outer: &'p mut dyn Progress,
    index: u64,
    runs: u64,
    /// Whether the callback has said stop.
    stopped: bool,
}

impl Progress for Share<'_> {
    fn update(&mut self, done: u64, total: u64) -> Control {
        let part = if total == 0 {
            RUN_STEPS
        } else {
            (u128::from(done.min(total)) * 1024 / u128::from(total)) as u64
        };
        let control = self.outer.update(self.index * RUN_STEPS + part, self.runs * RUN_STEPS);
        self.stopped |= control == Control::Stop;
        control
    }
}

impl<A, B> Simulator for Pipeline<A, B>
where
    A: Simulator,
    B: Simulator,
{
    type Report = PipelineReport<A::Report, B::Report>;

    /// Runs the rounds on `map` (see [`Pipeline`]).
    ///
    /// # Errors
    /// The first error of a run, with the map and the layers put back as the
    /// pipeline found them (a copy of each is kept for that while it runs:
    /// [`GridError::OutOfMemory`](crate::GridError::OutOfMemory) if it cannot
    /// be made, before anything changes). A simulator's own state (a
    /// [`Hydrology`](crate::Hydrology)'s pool and stream maps) keeps what the
    /// runs before the error did to it.
    fn run_with(
        &mut self,
        mut map: GridMut<'_>,
        rng: &mut dyn Rng,
        options: RunOptions<'_>,
    ) -> Result<Self::Report, Error> {
        let RunOptions { mut progress, mode, mut layers, controls } = options;
        // A later run's error (a second simulator made for another size)
        // must not leave the map changed by the earlier ones, their books
        // dropped with the report.
        let map_before = try_copy(map.cells())?;
        let layers_before = layers.as_deref().map(Layers::try_snapshot).transpose()?;
        let failed = |map: &mut GridMut<'_>, layers: Option<&mut Layers>, error: Error| {
            map.cells_mut().copy_from_slice(&map_before);
            if let (Some(layers), Some(records)) = (layers, layers_before.clone()) {
                layers.restore(records);
            }
            error
        };
        let mut report =
            PipelineReport { first: Vec::new(), second: Vec::new(), total: ErosionReport::default() };
        let runs = 2 * u64::from(self.rounds);
        for index in 0..runs {
            let mut share = progress.as_deref_mut().map(|outer| Share { outer, index, runs, stopped: false });
            let options = RunOptions {
                progress: share.as_mut().map(|s| s as &mut dyn Progress),
                mode,
                layers: layers.as_deref_mut(),
                controls: controls.clone(),
            };
            let total = if index % 2 == 0 {
                let run = match self.first.run_with(map.view_mut(), rng, options) {
                    Ok(run) => run,
                    Err(e) => return Err(failed(&mut map, layers.as_deref_mut(), e)),
                };
                let total = *run.as_ref();
                report.first.push(run);
                total
            } else {
                let run = match self.second.run_with(map.view_mut(), rng, options) {
                    Ok(run) => run,
                    Err(e) => return Err(failed(&mut map, layers.as_deref_mut(), e)),
                };
                let total = *run.as_ref();
                report.second.push(run);
                total
            };
            report.total.merge(&total);
            // A stop at a run's last call (runs make one as they end, and
            // finish anyway) would be lost: the next run asks anew.
            if share.is_some_and(|s| s.stopped) && index + 1 < runs {
                report.total.cancelled = true;
            }
            if report.total.cancelled {
                break;
            }
        }
        Ok(report)
    }
}
