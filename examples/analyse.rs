//! Prints a terrain's drainage figures as one JSON line: the land cells
//! measured, closed depressions, pits, channel flats, Flint's concavity θ, the
//! drainage-area exceedance exponent β and Hack's h (see
//! `hydraulic_erosion::analysis`).
//!
//! ```text
//! cargo run --release --example analyse -- FILE [--ground GROUND] [--cell-size S] [--channel-area A] [--sea-level H] [--beta-max F] [--time]
//! cargo run --release --example analyse -- --fbm SIZE SEED | --island SIZE SEED
//! ```
//!
//! `FILE` is any heightmap the crate reads (`.r16`/`.raw`, `.r32`/`.f32`, and
//! `.png` with the `png` feature; raw files square). `--sea-level H` makes every
//! cell at or below height `H` (in the map's units) sea, an outlet like the
//! border, and measures the land only; without it every cell is land. An
//! `--island` map's sea lies flat at 0: pass `--sea-level 0` to measure its land
//! (nothing sets it by itself). `--beta-max F` fits β up to drainage areas of
//! `F` of the map (default 0.01, `AnalysisOptions::exceedance_max_fraction`).
//! `--ground GROUND` takes `FILE` as a water surface (`Hydrology`'s terrain
//! plus water, `bench --out-surface`) over the ground in `GROUND` (`bench
//! --out`) and adds the lakes' figures (`LakeStats`): `water`, the share of
//! the land under water, `dry_channel_cells` and `dry_channel_flats`, the
//! channel cells outside it and the share of them that is flat (the lakes
//! are flat, and `channel_flats` counts them).
//! `--time` prints the time taken to stderr. With `--features parallel` the
//! two depression fills run side by side (the same figures; 4096² took a
//! quarter less time on two cores).

use std::process::ExitCode;
use std::time::Instant;

use hydraulic_erosion::analysis::{AnalysisOptions, LakeStats, PowerLawFit, TerrainStats};
use hydraulic_erosion::{Heightmap, ReadOptions, fbm_terrain, island_terrain, read_heightmap};

/// What the command line asks for.
struct Args {
    map: Heightmap,
    name: String,
    ground: Option<Heightmap>,
    options: AnalysisOptions,
    time: bool,
}

const USAGE: &str = "usage: analyse FILE [--ground GROUND] | --fbm SIZE SEED | --island SIZE SEED [--cell-size S] [--channel-area A] [--sea-level H] [--beta-max F] [--time]";

fn parse() -> Result<Args, String> {
    let mut options = AnalysisOptions::default();
    let (mut map, mut name, mut ground, mut time) = (None, String::new(), None, false);
    let read = |path: &str| read_heightmap(path, &ReadOptions::default()).map_err(|e| format!("{path}: {e}"));
    let mut args = std::env::args().skip(1);
    let number = |v: Option<String>, what: &str| -> Result<f64, String> {
        v.ok_or(format!("{what} needs a value"))?.parse().map_err(|e| format!("{what}: {e}"))
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--cell-size" => options.cell_size = number(args.next(), "--cell-size")? as f32,
            "--channel-area" => options.channel_area = number(args.next(), "--channel-area")?,
            "--sea-level" => {
                let level = number(args.next(), "--sea-level")? as f32;
                if !level.is_finite() {
                    return Err("--sea-level: must be a finite height".into());
                }
                options.sea_level = Some(level);
            }
            "--ground" => {
                ground = Some(read(&args.next().ok_or("--ground needs a file: the ground under FILE")?)?)
            }
            "--beta-max" => options.exceedance_max_fraction = number(args.next(), "--beta-max")?,
            "--time" => time = true,
            "--fbm" | "--island" => {
                let size = number(args.next(), &arg)? as usize;
                let seed = number(args.next(), &arg)? as u64;
                let generated = if arg == "--fbm" {
                    fbm_terrain(size, size, seed)
                } else {
                    island_terrain(size, size, seed)
                };
                map = Some(generated.map_err(|e| e.to_string())?);
                name = format!("{}:{size}:{seed}", &arg[2..]);
            }
            "--help" | "-h" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            unknown if unknown.starts_with("--") => return Err(format!("unknown option {unknown}\n{USAGE}")),
            path => {
                map = Some(read(path)?);
                name = path.into();
            }
        }
    }
    let map = map.ok_or("give a heightmap file, or --fbm SIZE SEED")?;
    Ok(Args { map, name, ground, options, time })
}

/// A fit as JSON: its exponent's figure, r² and points, or nulls.
fn fit(key: &str, fit: Option<PowerLawFit>, sign: f64) -> String {
    match fit {
        Some(f) => format!(
            "\"{key}\":{:.4},\"{key}_r2\":{:.4},\"{key}_points\":{}",
            sign * f.exponent,
            f.r_squared,
            f.points
        ),
        None => format!("\"{key}\":null,\"{key}_r2\":null,\"{key}_points\":0"),
    }
}

fn run() -> Result<(), String> {
    let Args { map, name, ground, options, time } = parse()?;
    let start = Instant::now();
    let stats = TerrainStats::measure(&map, &options).map_err(|e| e.to_string())?;
    let lakes = match &ground {
        Some(ground) => {
            let lakes = LakeStats::measure(&map, ground, &options).map_err(|e| format!("--ground: {e}"))?;
            format!(
                ",\"water\":{:.4},\"dry_channel_cells\":{},\"dry_channel_flats\":{:.4}",
                lakes.water_fraction, lakes.dry_channel_cells, lakes.dry_channel_flat_fraction
            )
        }
        None => String::new(),
    };
    if time {
        eprintln!("analysed {}x{} in {:.3} s", map.width(), map.height(), start.elapsed().as_secs_f64());
    }
    println!(
        "{{\"map\":\"{name}\",\"width\":{},\"height\":{},\"sea_level\":{},\"land_cells\":{},\"depressions\":{:.4},\"pits\":{},\"pit_fraction\":{:.5},\"channel_cells\":{},\"channel_flats\":{:.4},{},{},{}{}}}",
        stats.width,
        stats.height,
        options.sea_level.map_or("null".into(), |level| level.to_string()),
        stats.land_cells,
        stats.depression_fraction,
        stats.pits,
        stats.pit_fraction,
        stats.channel_cells,
        stats.channel_flat_fraction,
        fit("theta", stats.slope_area, -1.0),
        fit("beta", stats.area_exceedance, -1.0),
        fit("hack", stats.hack_fit, 1.0),
        lakes,
    );
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("analyse: {message}");
            ExitCode::FAILURE
        }
    }
}
