//! Particle-based hydraulic erosion for heightmaps.
//!
//! Droplets of rain run downhill over a [`Heightmap`], pick up sediment where the
//! water is fast and put it down where it slows, carving branching valleys, sharp
//! ridges and fans of deposit into noise-generated terrain.
//!
//! # Quick start
//!
//! ```
//! use hydraulic_erosion::{ErosionParams, MassBalance, erode_seeded, fbm_terrain};
//!
//! let mut map = fbm_terrain(128, 128, 1)?;          // heights in [0, 1]
//! let before = map.clone();
//! let params = ErosionParams { droplets: 20_000, ..ErosionParams::default() };
//! let report = erode_seeded(&mut map, &params, 42)?;
//!
//! // Every unit of sediment is accounted for: what the terrain lost left the map.
//! assert!(MassBalance::of_run(&before, &map, &report).is_conserved());
//! # Ok::<(), hydraulic_erosion::Error>(())
//! ```
//!
//! To erode a buffer you own (a game engine's) in place, view it as a grid:
//!
//! ```
//! use hydraulic_erosion::{ErosionParams, Grid, erode_seeded};
//!
//! let mut buffer = vec![0.5_f32; 64 * 64];
//! let mut view = Grid::from_cells(64, 64, &mut buffer[..])?;
//! erode_seeded(&mut view, &ErosionParams { droplets: 100, ..Default::default() }, 1)?;
//! # Ok::<(), hydraulic_erosion::Error>(())
//! ```
//!
//! # What is here
//!
//! - [`Grid`] (and [`Heightmap`], [`GridMut`], [`GridRef`]): one grid type for
//!   every layer, owned or borrowed, with checked construction; [`GridWindow`]
//!   for a sub-rectangle of a larger buffer with a row stride.
//! - [`NormalSampler`] and the built-in samplers [`EightFacet`],
//!   [`CentralDifference`] and [`Offset`], plus [`Sampler`] for run-time choice.
//! - [`Simulator`]: the one entry point every model runs through
//!   ([`run_with`](Simulator::run_with) with [`RunOptions`]: progress,
//!   cancellation and Physical's [`Mode`]), so an engine can swap models.
//! - [`Physical`]: Newtonian droplets with mass transfer (seed 000), with
//!   [`Physical::trace`] to follow one droplet step by step.
//! - [`Snowball`]: seed 001's snowballs, fast coarse erosion for islands, with
//!   [`blur`], its 3 x 3 Gaussian as a mass-conserving post-process for any map.
//! - [`Hydrology`]: seed 002's particles coupled to stream, pool and vegetation
//!   maps (descend, flood, drains, trees), with water books in
//!   [`HydrologyReport`].
//! - [`analysis`]: terrain analysis (depression filling, D8 flow, drainage
//!   area, slope-area, exceedance and Hack fits, pits): the figures that tell
//!   carved terrain from noise, and texturing masks.
//! - [`thermal`]: a talus pass (material on slopes past the angle of repose
//!   slides down), mass-conserving, to pair with any hydraulic run.
//! - [`ErosionReport`] and [`MassBalance`]: what a run did, and the conservation
//!   check downstream property tests need.
//! - Heightmap files ([`Format`]): raw r16 and r32 ([`decode_r16`],
//!   [`encode_r32`], ...), 16-bit PNG with the `png` feature, single-channel
//!   EXR (`f32` or `f16`) with the `exr` feature, an explicit [`HeightRange`]
//!   for 16- and 8-bit samples, layers as 8-bit PNGs and RGBA splat maps
//!   ([`splat_rgba8`]), typed [`IoError`]s; previews
//!   ([`Hillshade`] with [`Overlays`], [`erosion_map`]) as [`RgbImage`]s.
//! - `Parallel` (feature `parallel`): any `Tiled` simulator ([`Physical`],
//!   [`Snowball`], [`Hydrology`]) on the caller's rayon pool, in coloured tiles
//!   or fixed batches, with the same bits for any thread count.
//!
//! # Generators
//!
//! Runs take any `rand_core` **0.10** generator (re-exported as
//! [`rand_core`]): a type that implements `TryRng` with `Error = Infallible`
//! is an `Rng`. The crate's own is `rand_xoshiro`'s `Xoshiro256StarStar`
//! (the `*_seeded` forms). A generator of another `rand_core` (rand 0.9's
//! `StdRng`, say) is a different trait, so wrap it in a newtype:
//!
//! ```
//! use core::convert::Infallible;
//! use hydraulic_erosion::rand_core::TryRng;
//!
//! /// A rand 0.9 (`rand_core` 0.9) generator as a `rand_core` 0.10 one.
//! struct Rand09<R>(R);
//!
//! impl<R: rand09::RngCore> TryRng for Rand09<R> {
//!     type Error = Infallible;
//!     fn try_next_u32(&mut self) -> Result<u32, Infallible> { Ok(self.0.next_u32()) }
//!     fn try_next_u64(&mut self) -> Result<u64, Infallible> { Ok(self.0.next_u64()) }
//!     fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
//!         self.0.fill_bytes(dst);
//!         Ok(())
//!     }
//! }
//!
//! use rand09::SeedableRng;
//! let mut map = hydraulic_erosion::fbm_terrain(32, 32, 1)?;
//! let mut rng = Rand09(rand09::rngs::StdRng::seed_from_u64(7));
//! let params = hydraulic_erosion::ErosionParams { droplets: 100, ..Default::default() };
//! hydraulic_erosion::erode(&mut map, &params, &mut rng)?;
//! # Ok::<(), hydraulic_erosion::Error>(())
//! ```
//!
//! (`rand09` is this crate's name for rand 0.9 in its dev-dependencies; in
//! yours it is `rand`.)
//!
//! # Guarantees
//!
//! - **Mass**: `sum(before) - sum(after) == report.outflow` within `1e-9` of the
//!   larger of `sum(|before|)` and the mass the run moved
//!   ([`MassBalance::TOLERANCE`]), or half an ulp of the finest cell where that
//!   is coarser ([`MassBalance::resolution`]); [`MassBalance`] sums exactly, so
//!   it can serve as a property test's oracle.
//! - **Determinism**: the same map, params and seed give the same bits, with the
//!   `std` or the `libm` backend, on every platform. A change of output for a
//!   fixed seed is value-breaking: it bumps the minor version and is listed in the
//!   changelog. Value-stability tests pin hashes of seeded runs.
//! - **Robustness**: bad sizes, buffers, non-finite heights and out-of-range
//!   params are typed errors ([`GridError`], [`ParamError`]); finite input never
//!   yields NaN or infinite output, and every droplet is bounded by a step limit.
//!
//! # Features
//!
//! - `std` (default): float maths through the standard library.
//! - `libm`: float maths through `libm`, for `no_std` targets (the crate is
//!   `no_std` + `alloc` without `std`). Both give identical bits.
//! - `serde`: `Serialize`/`Deserialize` for params, reports, samplers and grids.
//! - `noise` (implies `std`): the `NoiseTerrain` generators.
//! - `png` (implies `std`): 16-bit grayscale PNG heightmaps, 8-bit grayscale
//!   layers, RGBA splat maps and RGB PNG previews.
//! - `exr` (implies `std`): single-channel EXR heightmaps (`f32` or `f16`).
//! - `parallel` (implies `std`): `Parallel`, deterministic multi-threaded runs on
//!   the caller's rayon pool.
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod analysis;
mod balance;
mod blur;
mod carry;
mod channels;
mod controls;
mod droplet;
mod error;
mod exact;
#[cfg(feature = "noise")]
mod generate;
mod grid;
mod hydrology;
mod io;
mod layers;
mod math;
mod neighbours;
mod normal;
#[cfg(feature = "parallel")]
mod parallel;
mod params;
mod physical;
mod pipeline;
mod pits;
mod preview;
mod progress;
mod random;
mod reach;
mod report;
mod resize;
mod simulator;
mod snowball;
mod terrain;
mod thermal;
mod tiles;
mod transfer;
mod window;

pub use balance::MassBalance;
pub use blur::{BlurParams, BlurReport, blur};
pub use channels::{Channels, Drain};
pub use controls::Controls;
pub use droplet::{Droplet, Fate};
pub use error::{Error, GridError, ParamError};
#[cfg(feature = "noise")]
pub use generate::{NoiseKind, NoiseTerrain};
pub use grid::{Grid, GridMut, GridRef, Heightmap, MAX_SIDE};
pub use hydrology::{Hydrology, HydrologyParams, HydrologyReport, PhaseTimes};
pub use io::{
    DEFAULT_MAX_CELLS, Format, HeightRange, IoError, ReadOptions, decode_r16, decode_r32, encode_r16,
    encode_r32, splat_rgba8,
};
#[cfg(feature = "exr")]
pub use io::{ExrSample, decode_exr, encode_exr};
#[cfg(feature = "png")]
pub use io::{decode_png, encode_png, encode_png8, encode_splat_png};
#[cfg(feature = "std")]
pub use io::{read_heightmap, write_heightmap};
pub use layers::Layers;
pub use normal::{
    BaseSampler, CentralDifference, DynSampler, EightFacet, LaneKernel, NormalSampler, Offset, Sampler, UP,
};
#[cfg(feature = "parallel")]
pub use parallel::{Layout, Parallel, ParallelParams, Tiled};
pub use params::ErosionParams;
pub use physical::{DropletTrace, LOCKSTEP_LANES, Physical};
pub use pipeline::{Pipeline, PipelineReport};
pub use preview::{Hillshade, Overlays, RgbImage, erosion_map};
pub use progress::{Control, PROGRESS_INTERVAL, Progress, Silent};
pub use report::ErosionReport;
pub use resize::{EngineSize, pad, resample};
pub use simulator::{Mode, RunOptions, Simulator};
pub use snowball::{Snowball, SnowballParams};
pub use terrain::{fbm_terrain, island_falloff, island_terrain};
pub use thermal::{Thermal, ThermalParams, ThermalReport, thermal};
pub use window::GridWindow;

/// The `rand_core` version in this crate's signatures (0.10).
pub use rand_core;

/// The `glam` version in this crate's signatures (`Vec2`, `Vec3` in
/// [`NormalSampler`], [`Droplet`] and [`Physical::trace`]): use it rather than a
/// second copy, so the types match whatever glam your engine uses.
pub use glam;

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256StarStar;

/// Erodes `map` with the [`Physical`] model and the 8-facet sampler, drawing
/// droplets from `rng`, in the fastest deterministic mode ([`Mode::Fast`]:
/// [`LOCKSTEP_LANES`] droplets in SIMD lanes; params with
/// [`Channels`] run the landscape kernel in tiles).
///
/// The one-liner; to report progress, cancel or pick the mode, build the model
/// and call [`Simulator::run_with`] with [`RunOptions`]:
/// `Physical::new(params)?.run_with(map.view_mut(), rng, options)`.
///
/// # Errors
/// [`Error::Param`] if `params` is out of range, [`Error::Grid`] if a cell is not
/// finite. The map is untouched on error.
pub fn erode<S, R>(map: &mut Grid<S>, params: &ErosionParams, rng: &mut R) -> Result<ErosionReport, Error>
where
    S: AsRef<[f32]> + AsMut<[f32]>,
    R: Rng + ?Sized,
{
    // `&mut R` is itself a generator, so an unsized `R` (a `dyn Rng`) works too.
    let mut rng = rng;
    Physical::new(*params)?.run_with(map.view_mut(), &mut rng, RunOptions::default())
}

/// [`erode`] with a `Xoshiro256StarStar` seeded by `seed` (through
/// `SeedableRng::seed_from_u64`): the reproducible one-liner.
///
/// # Errors
/// As [`erode`].
pub fn erode_seeded<S>(map: &mut Grid<S>, params: &ErosionParams, seed: u64) -> Result<ErosionReport, Error>
where
    S: AsRef<[f32]> + AsMut<[f32]>,
{
    erode(map, params, &mut Xoshiro256StarStar::seed_from_u64(seed))
}

/// README.md's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
