//! Pictures of what a run leaves besides the heights, for each model, and of
//! the controls and the thermal pipeline: the figures of `docs/engine.md`.
//!
//! ```text
//! cargo run --release --features png --example gallery -- [--size N] [--seed S] [--out-dir DIR]
//! ```
//!
//! Writes into `--out-dir` (default `out/gallery`), each a strip of
//! `--size` (default 256) pixel panels:
//! - `layers_physical.png`, `layers_snowball.png`, `layers_hydrology.png`:
//!   relief before and after, then the `Layers`: flux and wetness (as
//!   `ln(1 + v)`), erosion and deposition (as `sqrt(v)`), each on
//!   `[0, its largest value]`, black to white;
//! - `masked.png`: a landscape run with an active mask (left third 0, a ramp
//!   across the middle third, 1 on the right), before, after, and the change
//!   (red eroded, blue deposited), then the mask;
//! - `thermal.png`: a rugged terrain after 4 rounds of droplets alone, after
//!   the same rounds each followed by a talus pass (`Pipeline`), and the
//!   difference between the two (red: lower with talus).
//!
//! It prints each run's figures: droplets, time, mass balance, the layers'
//! largest values, masked cells changed, the steepest slope past repose; and
//! fails if a run's books do not balance or a masked cell changed.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use hydraulic_erosion::rand_core::SeedableRng;
use hydraulic_erosion::{
    Channels, Controls, ErosionParams, ErosionReport, Heightmap, Hillshade, Hydrology, HydrologyParams,
    Layers, MassBalance, Overlays, Physical, Pipeline, RgbImage, RunOptions, Simulator, Snowball,
    SnowballParams, Thermal, ThermalParams, erosion_map, fbm_terrain, island_terrain,
};
use rand_xoshiro::Xoshiro256StarStar;

struct Args {
    size: usize,
    seed: u64,
    out_dir: PathBuf,
}

const USAGE: &str = "usage: gallery [--size N] [--seed S] [--out-dir DIR]";

fn parse_args() -> Result<Args, String> {
    let mut args = Args { size: 256, seed: 1, out_dir: "out/gallery".into() };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--size" => args.size = value()?.parse().map_err(|e| format!("--size: {e}"))?,
            "--seed" => args.seed = value()?.parse().map_err(|e| format!("--seed: {e}"))?,
            "--out-dir" => args.out_dir = value()?.into(),
            "--help" | "-h" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => return Err(format!("unknown option {other}\n{USAGE}")),
        }
    }
    if args.size < 16 {
        return Err("--size: at least 16".into());
    }
    Ok(args)
}

/// Panels side by side, each `width x height` (a white gap of 4 pixels between).
fn strip(panels: &[RgbImage]) -> Result<RgbImage, String> {
    let (w, h) = (panels[0].width(), panels[0].height());
    let gap = 4;
    let total = panels.len() * (w + gap) - gap;
    let mut pixels = vec![[255u8; 3]; total * h];
    for (p, panel) in panels.iter().enumerate() {
        for y in 0..h {
            let row = &panel.pixels()[y * w..(y + 1) * w];
            pixels[y * total + p * (w + gap)..][..w].copy_from_slice(row);
        }
    }
    RgbImage::from_pixels(total, h, pixels).map_err(text)
}

/// A layer as grey levels: `shape(v / max)` black to white (all black when
/// the layer is all 0).
fn grey(layer: &Heightmap, shape: impl Fn(f64) -> f64) -> RgbImage {
    let max = layer.cells().iter().fold(0.0f32, |m, &v| m.max(v));
    let pixels = layer
        .cells()
        .iter()
        .map(|&v| {
            let t =
                if max > 0.0 { shape(f64::from(v.max(0.0)) / f64::from(max)).clamp(0.0, 1.0) } else { 0.0 };
            [(t * 255.0 + 0.5) as u8; 3]
        })
        .collect();
    RgbImage::from_pixels(layer.width(), layer.height(), pixels).expect("a layer's size")
}

/// `ln(1 + v)` of every cell.
fn log1p(layer: &Heightmap) -> Heightmap {
    Heightmap::from_cells(
        layer.width(),
        layer.height(),
        layer.cells().iter().map(|v| v.max(0.0).ln_1p()).collect(),
    )
    .expect("a layer's size")
}

fn relief(map: &Heightmap, shade: &Hillshade) -> Result<RgbImage, String> {
    shade.render(map, Overlays::default()).map_err(text)
}

fn save(image: &RgbImage, dir: &Path, name: &str) -> Result<(), String> {
    let path = dir.join(name);
    image.save_png(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    println!("  wrote {}", path.display());
    Ok(())
}

/// Runs `model` on `map` recording layers, prints its figures, and writes the
/// strip `layers_{name}.png`.
fn layers_strip<M: Simulator>(
    name: &str,
    model: &mut M,
    map: &mut Heightmap,
    seed: u64,
    dir: &Path,
) -> Result<(), String> {
    let before = map.clone();
    let mut layers = Layers::new(map.width(), map.height()).map_err(text)?;
    let mut rng = Xoshiro256StarStar::seed_from_u64(seed);
    let clock = Instant::now();
    let report = model
        .run_with(map.view_mut(), &mut rng, RunOptions::default().with_layers(&mut layers))
        .map_err(text)?;
    let seconds = clock.elapsed().as_secs_f64();
    let books: &ErosionReport = report.as_ref();
    let balance = MassBalance::of_run(&before, map, books);
    let largest = |l: &Heightmap| l.cells().iter().fold(0.0f32, |m, &v| m.max(v));
    let (flux, wetness, erosion, deposition) =
        (layers.flux(), layers.wetness(), layers.erosion(), layers.deposition());
    println!(
        "{name}: {} droplets in {seconds:.2} s, mass error {:.2e} ({}); largest flux {:.3}, wetness {:.3}, erosion {:.5}, deposition {:.5}",
        books.droplets,
        balance.relative_error(),
        conserved(&balance, name)?,
        largest(&flux),
        largest(&wetness),
        largest(&erosion),
        largest(&deposition),
    );
    let shade =
        Hillshade { range: Some(hydraulic_erosion::HeightRange::of(&before)), ..Hillshade::default() };
    let panels = [
        relief(&before, &shade)?,
        relief(map, &shade)?,
        grey(&log1p(&flux), |t| t),
        grey(&log1p(&wetness), |t| t),
        grey(&erosion, f64::sqrt),
        grey(&deposition, f64::sqrt),
    ];
    save(&strip(&panels)?, dir, &format!("layers_{name}.png"))
}

/// "conserved", or an error naming the run whose books do not balance.
fn conserved(balance: &MassBalance, run: &str) -> Result<&'static str, String> {
    match balance.is_conserved() {
        true => Ok("conserved"),
        false => Err(format!("{run}: the books do not balance: {balance:?}")),
    }
}

/// An error as the message `main` prints.
fn text<E: std::fmt::Display>(error: E) -> String {
    error.to_string()
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("gallery: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let Args { size, seed, out_dir } = parse_args()?;
    std::fs::create_dir_all(&out_dir).map_err(|e| format!("{}: {e}", out_dir.display()))?;
    let terrain = fbm_terrain(size, size, seed).map_err(text)?;

    // Each model's layers.
    let mut physical = Physical::new(ErosionParams::landscape_for(size, size)).map_err(text)?;
    layers_strip("physical", &mut physical, &mut terrain.clone(), seed, &out_dir)?;
    let mut island = island_terrain(size, size, seed).map_err(text)?;
    island.cells_mut().iter_mut().for_each(|h| *h *= 10.0);
    let snowballs = Some((size * size) as u32 * 3 / 4);
    let mut snowball =
        Snowball::new(SnowballParams { snowballs, ..SnowballParams::default() }).map_err(text)?;
    layers_strip("snowball", &mut snowball, &mut island, seed, &out_dir)?;
    let particles = (size * size) as u32 * 3 / 4;
    let mut hydrology =
        Hydrology::new(HydrologyParams { particles, ..HydrologyParams::default() }, size, size)
            .map_err(text)?;
    layers_strip("hydrology", &mut hydrology, &mut terrain.clone(), seed, &out_dir)?;

    // A masked landscape run.
    let third = size as f32 / 3.0;
    let mask =
        Heightmap::from_fn(size, size, |x, _| ((x as f32 - third) / third).clamp(0.0, 1.0)).map_err(text)?;
    let mut masked = terrain.clone();
    let mut rng = Xoshiro256StarStar::seed_from_u64(seed);
    let controls = Controls { active: Some(mask.view()), ..Controls::default() };
    let report = physical
        .run_with(masked.view_mut(), &mut rng, RunOptions::default().with_controls(controls))
        .map_err(text)?;
    let untouched = (0..terrain.len())
        .filter(|&i| mask.cells()[i] == 0.0)
        .filter(|&i| masked.cells()[i].to_bits() != terrain.cells()[i].to_bits())
        .count();
    println!(
        "masked: {} droplets, {} stopped at the mask, {untouched} masked cells changed, {}",
        report.droplets,
        report.masked,
        conserved(&MassBalance::of_run(&terrain, &masked, &report), "masked")?,
    );
    if untouched > 0 {
        return Err(format!("masked: {untouched} masked cells changed"));
    }
    let shade =
        Hillshade { range: Some(hydraulic_erosion::HeightRange::of(&terrain)), ..Hillshade::default() };
    let panels = [
        relief(&terrain, &shade)?,
        relief(&masked, &shade)?,
        erosion_map(&terrain, &masked, None).map_err(text)?,
        grey(&mask, |t| t),
    ];
    save(&strip(&panels)?, &out_dir, "masked.png")?;

    // Water alone against water with a talus pass after each round, on a
    // rugged terrain (heights to 40 over as many cells as the map is wide / 6).
    let rugged =
        Heightmap::from_cells(size, size, terrain.cells().iter().map(|h| h * size as f32 / 6.0).collect())
            .map_err(text)?;
    // A quarter of a droplet a cell a round, and no more: the rounds of
    // rain until the basins drain would rain on after each.
    let droplets = (size * size) as u32 / 4;
    let landscape = ErosionParams::landscape_for(size, size);
    let channels = landscape.channels.map(|c| Channels { drain: None, ..c });
    let water = Physical::new(ErosionParams { droplets, channels, ..landscape }).map_err(text)?;
    let talus = Thermal::new(ThermalParams { iterations: 25, ..ThermalParams::default() }).map_err(text)?;
    let steepest = |map: &Heightmap| -> Result<f64, String> {
        let mut measure =
            Thermal::new(ThermalParams { iterations: 0, ..ThermalParams::default() }).map_err(text)?;
        Ok(measure.run_seeded(&mut map.clone(), 0).map_err(text)?.steepest_excess)
    };
    let mut alone = rugged.clone();
    let mut rng = Xoshiro256StarStar::seed_from_u64(seed);
    let mut water_alone = water.clone();
    for _ in 0..4 {
        water_alone.run(&mut alone, &mut rng).map_err(text)?;
    }
    let mut piped = rugged.clone();
    let clock = Instant::now();
    let report = Pipeline::new(water, talus, 4).map_err(text)?.run_seeded(&mut piped, seed).map_err(text)?;
    println!(
        "thermal: 4 rounds of {droplets} droplets; steepest slope past 35 degrees: {:.3} at the start, {:.3} water alone, {:.3} with talus ({:.2} s, {})",
        steepest(&rugged)?,
        steepest(&alone)?,
        steepest(&piped)?,
        clock.elapsed().as_secs_f64(),
        conserved(&MassBalance::of_run(&rugged, &piped, &report.total), "thermal")?,
    );
    let shade =
        Hillshade { range: Some(hydraulic_erosion::HeightRange::of(&rugged)), ..Hillshade::default() };
    let panels =
        [relief(&alone, &shade)?, relief(&piped, &shade)?, erosion_map(&alone, &piped, None).map_err(text)?];
    save(&strip(&panels)?, &out_dir, "thermal.png")
}
