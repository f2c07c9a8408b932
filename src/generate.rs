//! Terrain generators over the `noise` crate: fBm and ridged fBm, optionally an
//! island, deterministic from a seed.

use alloc::vec::Vec;

use noise::{Fbm, MultiFractal, NoiseFn, Perlin, RidgedMulti, SuperSimplex};

use crate::error::GridError;
use crate::error::{Error, ParamError, check, check_above, check_range};
use crate::grid::{Heightmap, try_filled};
use crate::terrain::{island_falloff, splitmix64};

/// The fractal a [`NoiseTerrain`] sums.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
#[non_exhaustive]
pub enum NoiseKind {
    /// Fractal Brownian motion: octaves of Perlin noise summed, rolling hills at
    /// every scale (`noise::Fbm<Perlin>`).
    #[default]
    Fbm,
    /// Ridged multifractal: each octave folded (`1 - |n|`, squared) and weighted by
    /// the one before, sharp crests between smooth valleys, mountain ranges
    /// (`noise::RidgedMulti<SuperSimplex>`: folding shows Perlin's axis-aligned
    /// gradients as straight creases, SuperSimplex has none). A persistence of 1
    /// gives the crests more detail.
    Ridged,
}

/// A noise terrain generator (feature `noise`): [`NoiseKind`] octaves of
/// gradient noise, normalised to heights in `[0, 1]`, optionally made an island.
///
/// Sized in cells, scaled to the map: cell `(x, y)` samples the noise at
/// `((x + 0.5) / side, (y + 0.5) / side) * frequency`, with `side` the map's longer
/// side, so a map twice the size shows the same terrain at twice the resolution,
/// and cells stay square. The same params, size and seed give the same map.
///
/// ```
/// use hydraulic_erosion::{NoiseKind, NoiseTerrain};
///
/// let terrain = NoiseTerrain { kind: NoiseKind::Ridged, island: Some(0.2), ..NoiseTerrain::default() };
/// let map = terrain.generate(128, 96, 7)?;
/// assert_eq!(map.min_max(), (0.0, 1.0));
/// assert_eq!(map, terrain.generate(128, 96, 7)?);
/// # Ok::<(), hydraulic_erosion::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default, deny_unknown_fields))]
pub struct NoiseTerrain {
    /// The fractal. Default [`NoiseKind::Fbm`].
    pub kind: NoiseKind,
    /// Periods of the base octave across the map's longer side: the size of the
    /// largest features. Default 3; range `(0, 1e6]`.
    pub frequency: f32,
    /// Octaves summed: more adds finer detail. Default 7; range `[1, 32]`.
    pub octaves: u32,
    /// Frequency ratio of successive octaves. Default 2π/3 (about 2.094, the noise
    /// crate's default: not a whole number, so the octaves' lattices never line up
    /// into visible grid lines); range `[1, 16]`.
    pub lacunarity: f32,
    /// Amplitude ratio of successive octaves (roughness). Default 0.5; range
    /// `(0, 1]`.
    pub persistence: f32,
    /// Make an island: the normalised terrain goes through
    /// [`island_falloff`](crate::island_falloff) at this sea level, so the border
    /// is a flat sea at 0, and is scaled back to `[0, 1]`. Default `None`; range
    /// `[0, 1)`.
    pub island: Option<f32>,
}

impl Default for NoiseTerrain {
    fn default() -> Self {
        Self {
            kind: NoiseKind::Fbm,
            frequency: 3.0,
            octaves: 7,
            lacunarity: core::f32::consts::FRAC_PI_3 * 2.0,
            persistence: 0.5,
            island: None,
        }
    }
}

impl NoiseTerrain {
    /// Checks every field against its documented range.
    ///
    /// # Errors
    /// A [`ParamError`] naming the first field out of range.
    pub fn validate(&self) -> Result<(), ParamError> {
        check_above(self.frequency, 0.0, 1e6, "frequency", "finite and in (0, 1e6]")?;
        check((1..=32).contains(&self.octaves), "octaves", "in [1, 32]")?;
        check_range(self.lacunarity, 1.0, 16.0, "lacunarity", "finite and in [1, 16]")?;
        check_above(self.persistence, 0.0, 1.0, "persistence", "finite and in (0, 1]")?;
        let sea_ok = self.island.is_none_or(|sea| sea.is_finite() && (0.0..1.0).contains(&sea));
        check(sea_ok, "island", "None or a sea level in [0, 1)")
    }

    /// A `width` x `height` terrain for `seed`, heights in `[0, 1]` (all 0 if the
    /// noise is constant, as on a 1 x 1 map).
    ///
    /// The noise crate takes a `u32` seed; it gets the top 31 bits of SplitMix64
    /// of `seed` (so its per-octave `seed + octave` cannot overflow).
    ///
    /// # Errors
    /// [`Error::Param`] if a field is out of range, [`Error::Grid`] for an empty or
    /// too large size, or for memory that cannot be allocated (the map, and
    /// its noise at 8 bytes a cell).
    pub fn generate(&self, width: usize, height: usize, seed: u64) -> Result<Heightmap, Error> {
        self.validate()?;
        let mut map = Heightmap::new(width, height)?;
        let mut state = seed;
        let seed = (splitmix64(&mut state) >> 33) as u32;
        let raw = match self.kind {
            NoiseKind::Fbm => self.sample(Fbm::<Perlin>::new(seed), width, height)?,
            NoiseKind::Ridged => self.sample(RidgedMulti::<SuperSimplex>::new(seed), width, height)?,
        };
        let (lo, hi) =
            raw.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &h| (lo.min(h), hi.max(h)));
        if hi > lo {
            for (cell, h) in map.cells_mut().iter_mut().zip(&raw) {
                *cell = ((h - lo) / (hi - lo)) as f32;
            }
        }
        if let Some(sea) = self.island {
            island_falloff(&mut map, sea).expect("validated: a finite sea level");
            let (_, top) = map.min_max();
            if top > 0.0 {
                map.cells_mut().iter_mut().for_each(|h| *h = (*h / top).min(1.0));
            }
        }
        Ok(map)
    }
}

impl NoiseTerrain {
    /// `fractal` with these octaves, sampled at every cell centre, row by row,
    /// scaled to the longer side.
    ///
    /// # Errors
    /// [`GridError::OutOfMemory`] if the samples (8 bytes a cell, twice the
    /// map's) cannot be allocated.
    fn sample<F: MultiFractal + NoiseFn<f64, 2>>(
        &self,
        fractal: F,
        width: usize,
        height: usize,
    ) -> Result<Vec<f64>, GridError> {
        let noise = fractal
            .set_octaves(self.octaves as usize)
            .set_lacunarity(f64::from(self.lacunarity))
            .set_persistence(f64::from(self.persistence));
        let scale = f64::from(self.frequency) / width.max(height) as f64;
        let mut raw = try_filled(width * height, 0.0)?;
        for (y, row) in raw.chunks_exact_mut(width).enumerate() {
            for (x, h) in row.iter_mut().enumerate() {
                *h = noise.get([(x as f64 + 0.5) * scale, (y as f64 + 0.5) * scale]);
            }
        }
        Ok(raw)
    }
}
