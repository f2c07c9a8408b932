//! Output layers: what a run leaves besides the heights (water flux, wetness,
//! sediment flux, erosion and deposition), recorded only when asked for.

use alloc::vec::Vec;

use crate::error::{Error, GridError};
use crate::grid::{Grid, GridMut, GridRef, Heightmap, cell_count, try_copy, try_filled};

/// One cell's tracks, `[flux, wetness, sediment flux, 0]` (see [`Layers`]):
/// four, so that a passage is one addition of 16 aligned bytes (in three
/// fields, 12 bytes a cell, it was three, and one cell in eight straddled
/// two cache lines).
pub(crate) type Track = [f32; 4];

/// A cell no traveller has passed.
pub(crate) const NO_TRACK: Track = [0.0; 4];

/// Adds a traveller's passage to `track`: `water * dt` to the wetness always,
/// and `water` and `sediment` to the fluxes when it `crossed` out of the cell.
///
/// Without a branch (whether a droplet crossed is a coin toss the predictor
/// loses: a third of the layers' cost in a lockstep run); adding `v * 0`
/// leaves the same bits as not adding, the fluxes never being `-0`.
#[inline(always)]
pub(crate) fn add(track: &mut Track, water: f32, dt: f32, sediment: f64, crossed: bool) {
    add_passage(track, passage(water, dt, sediment, crossed));
}

/// What a traveller's passage adds to a cell's track (see [`add`]).
#[inline(always)]
pub(crate) fn passage(water: f32, dt: f32, sediment: f64, crossed: bool) -> Track {
    let crossed = f32::from(u8::from(crossed));
    // A load the books' rounding left a hair below 0 (-1.5e-8 in a
    // Hydrology run) carries nothing out: the layer is a sum of loads.
    [water * crossed, water * dt, crate::math::larger(sediment as f32, 0.0) * crossed, 0.0]
}

/// Adds a [`passage`] to `track`.
#[inline(always)]
pub(crate) fn add_passage(track: &mut Track, passage: Track) {
    for (t, p) in track.iter_mut().zip(passage) {
        *t += p;
    }
}

/// [`add`]s a traveller's passage through cell `here` to `tracks`, and asks
/// the cache for cell `next`'s track, where its next passage is recorded
/// (any index: a hint, never read here).
///
/// Why: the traveller enters `next` on this step, so its track is a line no
/// step has touched; without the hint the recording waited for it once the
/// tracks (12 bytes a cell then, 16 now) outgrew the caches. Measured with
/// `examples/layers_cost.rs` (interleaved runs with and without layers, Zen
/// 3, 2026-11-27): the seeds' lockstep loop's +33 % at 512² came to +15 %,
/// the landscape preset's interleaved kernel's +31 % to +4 % (docs/engine.md).
#[inline(always)]
pub(crate) fn pass(
    tracks: &mut [Track],
    here: usize,
    next: usize,
    water: f32,
    dt: f32,
    sediment: f64,
    crossed: bool,
) {
    add(&mut tracks[here], water, dt, sediment, crossed);
    crate::physical::simd::prefetch(tracks.as_ptr().wrapping_add(next));
}

/// The output layers of one or more runs, for texturing and for placing
/// rivers. Pass them to a run with
/// [`RunOptions::with_layers`](crate::RunOptions::with_layers); a run without
/// them records nothing and costs nothing more. Every simulator fills them, in
/// every mode and in `Parallel` runs, deterministically:
/// the same bits for the same run on any number of threads. Successive runs
/// add up (call [`clear`](Self::clear) to start over).
///
/// | layer | what each cell holds | unit |
/// | --- | --- | --- |
/// | [`flux`](Self::flux) | the water that crossed the cell: each droplet's water as it moved out of it | droplet water (a droplet starts with 1) |
/// | [`wetness`](Self::wetness) | the water present over time: each step's water times its `dt` | water x time |
/// | [`sediment_flux`](Self::sediment_flux) | the sediment carried out of the cell | height x cell area |
/// | [`erosion`](Self::erosion) | the height the cell lost, net, over the runs | height |
/// | [`deposition`](Self::deposition) | the height the cell gained, net, over the runs | height |
///
/// A cell is either eroded or built up, never both: after one run,
/// `deposition - erosion` is the cell's height change (`after - before` in
/// `f32`), bit for bit. The fluxes are sums over the run: divide by
/// [`droplets`](Self::droplets) for a per-droplet figure, and map them through
/// a logarithm (`ln(1 + flux)`) to show channels and slopes in one picture.
/// The layers are `f32`: a cell whose sum passes `f32`'s range holds an
/// infinity (the erosion of a map with heights near `±f32::MAX`, whose
/// `after - before` is itself infinite; the sediment flux of loads beyond
/// `f32::MAX`).
///
/// [`Hydrology`](crate::Hydrology) counts its particles' visits the same way,
/// its water being a particle's volume; its own stream and pool maps (moving
/// averages) stay where they are.
///
/// ```
/// use hydraulic_erosion::{ErosionParams, Layers, Physical, RunOptions, Simulator, fbm_terrain};
/// use rand_xoshiro::Xoshiro256StarStar;
/// use rand_core::SeedableRng;
///
/// let mut map = fbm_terrain(64, 64, 1)?;
/// let before = map.clone();
/// let mut layers = Layers::new(64, 64)?;
/// let mut physical = Physical::new(ErosionParams { droplets: 2_000, ..ErosionParams::default() })?;
/// let mut rng = Xoshiro256StarStar::seed_from_u64(7);
/// physical.run_with(map.view_mut(), &mut rng, RunOptions::default().with_layers(&mut layers))?;
/// let (erosion, deposition) = (layers.erosion(), layers.deposition());
/// for i in 0..map.len() {
///     assert_eq!(deposition.cells()[i] - erosion.cells()[i], map.cells()[i] - before.cells()[i]);
/// }
/// assert!(layers.flux().sum() > 0.0);
/// # Ok::<(), hydraulic_erosion::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Layers {
    width: usize,
    height: usize,
    tracks: Vec<Track>,
    /// The net height change of each cell over the recorded runs.
    change: Vec<f64>,
    /// The map as the current run found it.
    before: Vec<f32>,
    droplets: u64,
}

/// Layers are equal when they hold the same records (the working copy of the
/// map a run keeps does not count).
impl PartialEq for Layers {
    fn eq(&self, other: &Self) -> bool {
        (self.width, self.height, self.droplets) == (other.width, other.height, other.droplets)
            && self.tracks == other.tracks
            && self.change == other.change
    }
}

impl Layers {
    /// Empty layers for maps of `width x height` cells.
    ///
    /// # Errors
    /// [`GridError::Empty`] or [`GridError::TooLarge`] for an invalid size,
    /// [`GridError::OutOfMemory`] if the layers cannot be allocated.
    pub fn new(width: usize, height: usize) -> Result<Self, GridError> {
        let len = cell_count(width, height)?;
        Ok(Self {
            width,
            height,
            tracks: try_filled(len, NO_TRACK)?,
            change: try_filled(len, 0.0)?,
            before: try_filled(len, 0.0)?,
            droplets: 0,
        })
    }

    /// Width in cells.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Height in cells.
    pub fn height(&self) -> usize {
        self.height
    }

    /// The droplets (or snowballs, or particles) of the recorded runs.
    pub fn droplets(&self) -> u64 {
        self.droplets
    }

    /// Forgets every recorded run.
    pub fn clear(&mut self) {
        self.tracks.fill(NO_TRACK);
        self.change.fill(0.0);
        self.droplets = 0;
    }

    /// Water flux: the water that crossed each cell, in droplet water.
    pub fn flux(&self) -> Heightmap {
        self.track(0)
    }

    /// Wetness: the water present in each cell over time (water x `dt`).
    pub fn wetness(&self) -> Heightmap {
        self.track(1)
    }

    /// Sediment flux: the sediment carried out of each cell.
    pub fn sediment_flux(&self) -> Heightmap {
        self.track(2)
    }

    /// Erosion: the height each cell lost, net (0 where it gained).
    pub fn erosion(&self) -> Heightmap {
        // Comparisons, not `max`: `(-0.0).max(0.0)` may be either zero, and
        // was -0 in a debug build, +0 in a release one.
        self.net(|change| if change < 0.0 { -change } else { 0.0 })
    }

    /// Deposition: the height each cell gained, net (0 where it lost).
    pub fn deposition(&self) -> Heightmap {
        self.net(|change| if change > 0.0 { change } else { 0.0 })
    }

    fn track(&self, layer: usize) -> Heightmap {
        self.grid(self.tracks.iter().map(|t| t[layer]).collect())
    }

    fn net(&self, part: impl Fn(f64) -> f64) -> Heightmap {
        // `after - before` is exact in f64 for every pair of f32 heights whose
        // exponents are within 29 of each other, so one run's change rounds to
        // f32's own `after - before`.
        self.grid(self.change.iter().map(|&c| part(c) as f32).collect())
    }

    fn grid(&self, cells: Vec<f32>) -> Heightmap {
        Grid::new_unchecked(self.width, self.height, cells)
    }

    /// Checks that `map` fits and keeps its heights, at the start of a run.
    pub(crate) fn begin(&mut self, map: GridRef<'_>) -> Result<(), GridError> {
        if (map.width(), map.height()) != (self.width, self.height) {
            return Err(GridError::size_mismatch((self.width, self.height), (map.width(), map.height())));
        }
        self.before.copy_from_slice(map.cells());
        Ok(())
    }

    /// Books the run's height changes and its `droplets`, at its end.
    pub(crate) fn end(&mut self, map: GridRef<'_>, droplets: u64) {
        for ((change, &before), &after) in self.change.iter_mut().zip(&self.before).zip(map.cells()) {
            *change += f64::from(after) - f64::from(before);
        }
        self.droplets += droplets;
    }

    /// A copy of these layers' records (not the run's working copy of the
    /// map), to put back with [`restore`](Self::restore) if a run fails.
    ///
    /// # Errors
    /// [`GridError::OutOfMemory`] if the copy cannot be allocated.
    pub(crate) fn try_snapshot(&self) -> Result<(Vec<Track>, Vec<f64>, u64), GridError> {
        Ok((try_copy(&self.tracks)?, try_copy(&self.change)?, self.droplets))
    }

    /// Puts back the records of a [`try_snapshot`](Self::try_snapshot).
    pub(crate) fn restore(&mut self, (tracks, change, droplets): (Vec<Track>, Vec<f64>, u64)) {
        (self.tracks, self.change, self.droplets) = (tracks, change, droplets);
    }

    /// The per-cell tracks, for the kernels to add to.
    pub(crate) fn tracks_mut(&mut self) -> &mut [Track] {
        &mut self.tracks
    }
}

/// Runs `run` on `map`, recording into `layers` when given: checks their
/// size, keeps the map's heights, hands the run the tracks, and books the
/// height changes and the report's `droplets` after it. Without layers the
/// run gets no tracks and nothing else happens.
pub(crate) fn record<R>(
    layers: Option<&mut Layers>,
    map: &mut GridMut<'_>,
    droplets: impl Fn(&R) -> u64,
    run: impl FnOnce(&mut GridMut<'_>, Option<&mut [Track]>) -> Result<R, Error>,
) -> Result<R, Error> {
    let Some(layers) = layers else {
        return run(map, None);
    };
    layers.begin(map.view())?;
    let report = run(map, Some(layers.tracks_mut()))?;
    layers.end(map.view(), droplets(&report));
    Ok(report)
}
