//! Runs the hydrology simulator on a generated terrain and writes pictures of the
//! terrain with its streams and pools drawn on it, as seed 002 shows them.
//!
//! ```text
//! cargo run --release --features png --example hydrology -- [--size N] [--particles K] [--seed S]
//!     [--sea-level H] [--no-trees] [--plain] [--out-dir DIR] [--threads T [--tile N]]
//! ```
//!
//! Defaults: a 256 x 256 value-noise terrain, 200 000 particles, seed 1, pictures
//! in `out/`: `hydrology_before.png` (shaded relief), `hydrology.png` (relief with
//! streams in white-blue lines and pools in blue), `hydrology_map.png` (the
//! article's map view: stream map from black to blue, pools dark blue) and
//! `hydrology_vegetation.png` (root density in green over grey relief). `--plain`
//! turns off the additions beyond the article (channel grading, pit-safe
//! transfer). `--threads T` (feature `parallel`) runs the particles through
//! `Parallel::run` with a `Hydrology`, in tiles of `--tile N` cells (default 64), on a
//! pool of `T` threads: the same bits for any `T`, not those of the
//! single-core run.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use hydraulic_erosion::Simulator;
use hydraulic_erosion::{
    Heightmap, Hydrology, HydrologyParams, HydrologyReport, MassBalance, RgbImage, fbm_terrain,
};

struct Args {
    size: usize,
    particles: u32,
    seed: u64,
    sea_level: Option<f32>,
    trees: bool,
    plain: bool,
    out_dir: PathBuf,
    threads: Option<usize>,
    tile: u32,
}

const USAGE: &str = "usage: hydrology [--size N] [--particles K] [--seed S] [--sea-level H] [--no-trees] [--plain] [--out-dir DIR] [--threads T [--tile N]]";

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        size: 256,
        particles: 200_000,
        seed: 1,
        sea_level: None,
        trees: true,
        plain: false,
        out_dir: "out".into(),
        threads: None,
        tile: 64,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--size" => args.size = value()?.parse().map_err(|e| format!("--size: {e}"))?,
            "--particles" => args.particles = value()?.parse().map_err(|e| format!("--particles: {e}"))?,
            "--seed" => args.seed = value()?.parse().map_err(|e| format!("--seed: {e}"))?,
            "--sea-level" => {
                args.sea_level = Some(value()?.parse().map_err(|e| format!("--sea-level: {e}"))?)
            }
            "--no-trees" => args.trees = false,
            "--plain" => args.plain = true,
            "--out-dir" => args.out_dir = value()?.into(),
            "--threads" => {
                let threads: usize = value()?.parse().map_err(|e| format!("--threads: {e}"))?;
                if threads == 0 {
                    return Err("--threads: at least 1".into());
                }
                args.threads = Some(threads);
            }
            "--tile" => args.tile = value()?.parse().map_err(|e| format!("--tile: {e}"))?,
            "--help" | "-h" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => return Err(format!("unknown option {other}\n{USAGE}")),
        }
    }
    Ok(args)
}

/// Shaded relief: height colours lit from the north-west (as in the `erode`
/// example), each pixel's light in `[0.35, 1]`.
fn relief(map: &Heightmap, lo: f32, hi: f32) -> Vec<[f32; 3]> {
    let (w, h) = (map.width(), map.height());
    let range = (hi - lo).max(f32::MIN_POSITIVE);
    let at =
        |x: isize, y: isize| map[(x.clamp(0, w as isize - 1) as usize, y.clamp(0, h as isize - 1) as usize)];
    let exaggeration = 2.0 * w as f32 / range;
    let light = glam::Vec3::new(-1.0, 1.5, -1.0).normalize();
    let stops = [
        (0.0, [70.0, 110.0, 60.0]),
        (0.45, [140.0, 150.0, 90.0]),
        (0.75, [130.0, 110.0, 90.0]),
        (1.0, [245.0, 245.0, 250.0]),
    ];
    let mut pixels = Vec::with_capacity(w * h);
    for y in 0..h as isize {
        for x in 0..w as isize {
            let dx = (at(x + 1, y) - at(x - 1, y)) * 0.5 * exaggeration / w as f32;
            let dy = (at(x, y + 1) - at(x, y - 1)) * 0.5 * exaggeration / w as f32;
            let n = glam::Vec3::new(-dx, 4.0 / w as f32, -dy).normalize();
            let shade = 0.35 + 0.65 * n.dot(light).max(0.0);
            let t = (at(x, y) - lo) / range;
            let k = stops.windows(2).position(|s| t <= s[1].0).unwrap_or(2);
            let ((t0, c0), (t1, c1)) = (stops[k], stops[k + 1]);
            let f = ((t - t0) / (t1 - t0)).clamp(0.0, 1.0);
            pixels.push(core::array::from_fn(|i| (c0[i] + (c1[i] - c0[i]) * f) * shade));
        }
    }
    pixels
}

fn mix(a: [f32; 3], b: [f32; 3], t: f32) -> [f32; 3] {
    core::array::from_fn(|i| a[i] + (b[i] - a[i]) * t)
}

/// The article's ease-in-out shaping of the stream map, thresholded so broad flat
/// areas stay clear.
fn stream_strength(s: f32) -> f32 {
    let t = ((s - 0.3) / 2.7).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// Relief with streams (white-blue, by stream strength) and pools (blue, darker
/// with depth).
fn hydrology_picture(relief: &[[f32; 3]], stream: &Heightmap, pool: &Heightmap) -> Vec<[f32; 3]> {
    let max_depth = pool.min_max().1.max(f32::MIN_POSITIVE);
    relief
        .iter()
        .zip(stream.cells().iter().zip(pool.cells()))
        .map(|(&c, (&s, &d))| {
            if d > 0.0 {
                let t = (d / max_depth).sqrt();
                mix([90.0, 150.0, 230.0], [20.0, 40.0, 120.0], t)
            } else {
                mix(c, [200.0, 225.0, 255.0], 0.9 * stream_strength(s))
            }
        })
        .collect()
}

/// The article's map view: stream map from black to blue, pools dark blue.
fn map_view(stream: &Heightmap, pool: &Heightmap) -> Vec<[f32; 3]> {
    stream
        .cells()
        .iter()
        .zip(pool.cells())
        .map(|(&s, &d)| {
            let c = mix([0.0, 0.0, 0.0], [51.0, 128.0, 255.0], s.clamp(0.0, 1.0));
            if d > 0.0 { mix(c, [38.0, 38.0, 115.0], (1.0 - d).clamp(0.0, 1.0)) } else { c }
        })
        .collect()
}

/// Root density in green over grey relief.
fn vegetation_picture(relief: &[[f32; 3]], vegetation: &Heightmap) -> Vec<[f32; 3]> {
    relief
        .iter()
        .zip(vegetation.cells())
        .map(|(c, &v)| {
            let grey = (c[0] + c[1] + c[2]) / 3.0;
            mix([grey; 3], [30.0, 120.0, 40.0], v.clamp(0.0, 1.0))
        })
        .collect()
}

/// `--threads`: the tiled run on a pool of `threads` threads.
#[cfg(feature = "parallel")]
fn run_tiled(
    hydrology: &mut Hydrology,
    map: &mut Heightmap,
    args: &Args,
    threads: usize,
) -> Result<HydrologyReport, String> {
    use hydraulic_erosion::{Parallel, ParallelParams};
    let parallel = Parallel::new(ParallelParams { tile_size: args.tile, ..ParallelParams::default() })
        .map_err(|e| e.to_string())?;
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().map_err(|e| e.to_string())?;
    pool.install(|| parallel.run_seeded(hydrology, map, args.seed)).map_err(|e| e.to_string())
}

#[cfg(not(feature = "parallel"))]
fn run_tiled(_: &mut Hydrology, _: &mut Heightmap, _: &Args, _: usize) -> Result<HydrologyReport, String> {
    Err("--threads needs the parallel feature (cargo run --features png,parallel ...)".into())
}

fn write_png(path: &Path, width: usize, pixels: &[[f32; 3]]) -> Result<(), String> {
    let bytes = pixels.iter().map(|c| c.map(|v| v.clamp(0.0, 255.0) as u8)).collect();
    let image = RgbImage::from_pixels(width, pixels.len() / width, bytes).map_err(|e| e.to_string())?;
    image.save_png(path).map_err(|e| format!("{}: {e}", path.display()))
}

fn run() -> Result<(), String> {
    let args = parse_args()?;
    std::fs::create_dir_all(&args.out_dir).map_err(|e| format!("{}: {e}", args.out_dir.display()))?;
    let before = fbm_terrain(args.size, args.size, args.seed).map_err(|e| e.to_string())?;
    let mut map = before.clone();
    let mut params = HydrologyParams {
        particles: args.particles,
        sea_level: args.sea_level,
        trees: args.trees,
        ..HydrologyParams::default()
    };
    if args.plain {
        params.entrainment = 0.0;
        params.pit_safe = false;
    }
    let mut hydrology = Hydrology::new(params, args.size, args.size).map_err(|e| e.to_string())?;

    let start = Instant::now();
    let report = match args.threads {
        None => hydrology.run_seeded(&mut map, args.seed).map_err(|e| e.to_string())?,
        Some(threads) => run_tiled(&mut hydrology, &mut map, &args, threads)?,
    };
    let seconds = start.elapsed().as_secs_f64();
    let times = hydrology.phase_times();
    let balance = MassBalance::of_run(&before, &map, &report.erosion);
    let e = &report.erosion;
    println!(
        "{0}x{0}, {1} particles in {seconds:.2} s (descend {2:.2} s, flood {3:.2} s); {4} steps, {5} floods over {6} cells, {7} drains",
        args.size,
        e.droplets,
        times.descend_seconds,
        times.flood_seconds,
        e.steps,
        report.floods,
        report.flood_cells,
        report.drains
    );
    println!(
        "sediment: eroded {:.3}, deposited {:.3}, outflow {:.3}; balance error {:.3e} (relative {:.1e}, {})",
        e.eroded,
        e.deposited,
        e.outflow,
        balance.error(),
        balance.relative_error(),
        if balance.is_conserved() { "conserved" } else { "NOT conserved" }
    );
    println!(
        "water: rain {:.3} = pooled {:.3} + evaporated {:.3} + outflow {:.3} + dropped {:.3}; error {:.3e} ({})",
        report.rain,
        report.pooled,
        report.evaporated,
        report.water_outflow,
        report.dropped,
        report.water_error(),
        if report.is_water_balanced() { "balanced" } else { "NOT balanced" }
    );
    let wet = hydrology.pool().cells().iter().filter(|&&d| d > 0.0).count();
    println!(
        "{wet} cells under water, {} trees; particles ended in pools {}, evaporated {}, left {}, flood failed {}, spill-limited {}",
        hydrology.trees().len(),
        report.ended_in_pool,
        e.evaporated,
        e.left_map,
        report.flood_failed,
        report.spill_limited
    );

    let (lo0, hi0) = before.min_max();
    let (lo1, hi1) = map.min_max();
    let (lo, hi) = (lo0.min(lo1), hi0.max(hi1));
    let relief_after = relief(&map, lo, hi);
    let outputs = [
        ("hydrology_before.png", relief(&before, lo, hi)),
        ("hydrology.png", hydrology_picture(&relief_after, hydrology.stream(), hydrology.pool())),
        ("hydrology_map.png", map_view(hydrology.stream(), hydrology.pool())),
        ("hydrology_vegetation.png", vegetation_picture(&relief_after, hydrology.vegetation())),
    ];
    for (name, pixels) in &outputs {
        let path = args.out_dir.join(name);
        write_png(&path, args.size, pixels)?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("hydrology: {message}");
            ExitCode::FAILURE
        }
    }
}
