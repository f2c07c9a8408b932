//! A built-in deterministic terrain, so examples, benches and tests need no
//! generator crate.

use alloc::vec::Vec;

use crate::error::{GridError, ParamError};
use crate::grid::{Grid, Heightmap};
use crate::math;

/// Seeded value-noise fBm in `[0, 1]`: 6 octaves, 4 periods across the map at the
/// base octave, lacunarity 2, gain 0.5, quintic fade.
///
/// For a square map it is cell for cell the map `../shared/refbench` generates
/// for the same size and seed (`ref_physical N 0 SEED --write-map FILE`), so the
/// crate and the reference can be compared on the same input without a file. It
/// is computed in `f64` with exactly rounded operations only, so it is the same on
/// every platform and backend. A constant map (1 x 1) is all zeros.
///
/// # Errors
/// [`GridError::Empty`] or [`GridError::TooLarge`] for a bad size.
pub fn fbm_terrain(width: usize, height: usize, seed: u64) -> Result<Heightmap, GridError> {
    let mut map = Heightmap::new(width, height)?;
    let mut state = seed ^ 0x5EED_F00D;
    let octave_seeds: [u32; 6] = core::array::from_fn(|_| splitmix64(&mut state) as u32);
    let mut raw = Vec::with_capacity(map.len());
    for y in 0..height {
        for x in 0..width {
            let (u, v) = (x as f64 / width as f64, y as f64 / height as f64);
            let (mut frequency, mut amplitude, mut sum) = (4.0, 1.0, 0.0);
            for &s in &octave_seeds {
                sum += amplitude * value_noise(u * frequency, v * frequency, s);
                frequency *= 2.0;
                amplitude *= 0.5;
            }
            raw.push(sum);
        }
    }
    let (lo, hi) = raw.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &h| (lo.min(h), hi.max(h)));
    let range = hi - lo;
    if range > 0.0 {
        for (cell, h) in map.cells_mut().iter_mut().zip(&raw) {
            *cell = ((h - lo) / range) as f32;
        }
    }
    Ok(map)
}

/// SplitMix64: one step of the seed sequence.
pub(crate) fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Hash of a lattice point, uniform in `u32`.
fn lattice_hash(x: i32, y: i32, seed: u32) -> u32 {
    let mut h = (x as u32).wrapping_mul(0x8DA6_B343)
        ^ (y as u32).wrapping_mul(0xD816_3841)
        ^ seed.wrapping_mul(0xCB1A_B31F);
    h ^= h >> 16;
    h = h.wrapping_mul(0x7FEB_352D);
    h ^= h >> 15;
    h = h.wrapping_mul(0x846C_A68B);
    h ^= h >> 16;
    h
}

/// Value noise in `[0, 1)`: lattice values blended with the quintic fade.
fn value_noise(u: f64, v: f64, seed: u32) -> f64 {
    let (fu, fv) = (math::floor_f64(u), math::floor_f64(v));
    let (iu, iv) = (fu as i32, fv as i32);
    let (tu, tv) = (u - fu, v - fv);
    let corner = |dx: i32, dy: i32| {
        f64::from(lattice_hash(iu.wrapping_add(dx), iv.wrapping_add(dy), seed)) * (1.0 / 4_294_967_296.0)
    };
    let (a, b, c, d) = (corner(0, 0), corner(1, 0), corner(0, 1), corner(1, 1));
    let fade = |t: f64| t * t * t * (t * (t * 6.0 - 15.0) + 10.0);
    let (su, sv) = (fade(tu), fade(tv));
    let ab = a + (b - a) * su;
    let cd = c + (d - c) * su;
    ab + (cd - ab) * sv
}

/// Turns a terrain into an island: multiplies each height by a radial falloff
/// (1 inside half the map's inner radius, down to 0 at the edge midpoints and
/// beyond, a smoothstep between), then lowers everything by `sea_level` and
/// clamps at 0, so the sea is exactly flat at height 0 and the map border is sea.
///
/// Heights are not rescaled: an `[0, 1]` terrain becomes `[0, 1 - sea_level]` at
/// most. Deterministic and exactly rounded like [`fbm_terrain`]. Maps of any size
/// are valid; a finite `sea_level` is used as given (a negative one raises the
/// sea floor above 0).
///
/// # Errors
/// A [`ParamError`] (`sea_level`, the map unchanged) if `sea_level` is not
/// finite: a NaN level would flatten the map to 0, an infinite one raise it
/// to infinity.
pub fn island_falloff<S: AsRef<[f32]> + AsMut<[f32]>>(
    map: &mut Grid<S>,
    sea_level: f32,
) -> Result<(), ParamError> {
    crate::error::check(sea_level.is_finite(), "sea_level", "finite")?;
    let (width, height) = (map.width(), map.height());
    for y in 0..height {
        for x in 0..width {
            // Cell centres, -1..1 across each axis.
            let dx = (x as f64 + 0.5) / width as f64 * 2.0 - 1.0;
            let dy = (y as f64 + 0.5) / height as f64 * 2.0 - 1.0;
            let r = math::sqrt_f64(dx * dx + dy * dy);
            let t = ((r - 0.5) / 0.5).clamp(0.0, 1.0);
            let falloff = 1.0 - t * t * (3.0 - 2.0 * t);
            let cell = &mut map[(x, y)];
            // +0 for the sea, even where a negative height met a sea level of
            // 0 (`max` may keep either zero).
            *cell = math::larger((f64::from(*cell) * falloff) as f32 - sea_level, 0.0);
        }
    }
    Ok(())
}

/// A smooth island in a flat sea at 0, heights in `[0, 1]`: the kind of input
/// seed 001's snowballs erode. [`fbm_terrain`] blended with a central dome (so the
/// land gathers in the middle), made an island by [`island_falloff`] at sea level
/// 0.25, then scaled back to `[0, 1]`.
///
/// # Errors
/// As [`fbm_terrain`].
pub fn island_terrain(width: usize, height: usize, seed: u64) -> Result<Heightmap, GridError> {
    let mut map = fbm_terrain(width, height, seed)?;
    for y in 0..height {
        for x in 0..width {
            let dx = (x as f64 + 0.5) / width as f64 * 2.0 - 1.0;
            let dy = (y as f64 + 0.5) / height as f64 * 2.0 - 1.0;
            let dome = (1.0 - math::sqrt_f64(dx * dx + dy * dy)).max(0.0);
            let cell = &mut map[(x, y)];
            *cell = (0.6 * f64::from(*cell) + 0.4 * dome) as f32;
        }
    }
    island_falloff(&mut map, ISLAND_SEA_LEVEL).expect("a finite sea level");
    let (_, top) = map.min_max();
    if top > 0.0 {
        for cell in map.cells_mut() {
            *cell /= top;
        }
    }
    Ok(map)
}

/// The sea level [`island_terrain`] cuts at.
const ISLAND_SEA_LEVEL: f32 = 0.25;
