//! Erodes an island with seed 001's snowballs and writes pictures of it before
//! and after 35 000, 50 000 and 100 000 snowballs, as in the article's figure 3.
//!
//! ```text
//! cargo run --release --features png --example island -- [--size N] [--seed S] [--relief H] [--no-blur] [--out-dir DIR]
//! ```
//!
//! Defaults: a 354 x 354 [`island_terrain`] (125 316 cells, so the article's
//! 50 000 snowballs are the original's 0.4 per cell), raised to `--relief` 10
//! height units (the original's islands are about that high over cells 0.1 units
//! wide, hence `height_scale` 10), seed 1, pictures in `out/`:
//! `island_before.png`, `island_35000.png`, `island_50000.png`,
//! `island_100000.png` (shaded relief, one height range for all) and
//! `island_strip.png` (the four side by side). Each count starts from the same
//! island with the same seed.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use hydraulic_erosion::Simulator;
use hydraulic_erosion::{Heightmap, MassBalance, RgbImage, Snowball, SnowballParams, island_terrain};

const COUNTS: [u32; 3] = [35_000, 50_000, 100_000];

struct Args {
    size: usize,
    seed: u64,
    relief: f32,
    blur: bool,
    out_dir: PathBuf,
}

const USAGE: &str = "usage: island [--size N] [--seed S] [--relief H] [--no-blur] [--out-dir DIR]";

fn parse_args() -> Result<Args, String> {
    let mut args = Args { size: 354, seed: 1, relief: 10.0, blur: true, out_dir: "out".into() };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--size" => args.size = value()?.parse().map_err(|e| format!("--size: {e}"))?,
            "--seed" => args.seed = value()?.parse().map_err(|e| format!("--seed: {e}"))?,
            "--relief" => {
                args.relief = value()?.parse().map_err(|e| format!("--relief: {e}"))?;
                if !(args.relief.is_finite() && args.relief > 0.0) {
                    return Err(format!(
                        "--relief: {} is not a height: give a finite number above 0",
                        args.relief
                    ));
                }
            }
            "--no-blur" => args.blur = false,
            "--out-dir" => args.out_dir = value()?.into(),
            "--help" | "-h" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => return Err(format!("unknown option {other}\n{USAGE}")),
        }
    }
    Ok(args)
}

/// Cells strictly lower than all 8 neighbours (single-cell pits).
fn pits(map: &Heightmap) -> usize {
    let (w, h) = (map.width(), map.height());
    let mut count = 0;
    for y in 1..h.saturating_sub(1) {
        for x in 1..w.saturating_sub(1) {
            let c = map[(x, y)];
            let lowest = (0..9)
                .filter(|&k| k != 4)
                .map(|k| map[(x + k % 3 - 1, y + k / 3 - 1)])
                .fold(f32::INFINITY, f32::min);
            count += usize::from(c < lowest);
        }
    }
    count
}

/// Shaded relief: sea blue below `sea`, land from green to rock to snow, lit
/// from the north-west, from central-difference slopes.
fn relief(map: &Heightmap, sea: f32, hi: f32) -> Vec<[u8; 3]> {
    let (w, h) = (map.width(), map.height());
    let range = (hi - sea).max(f32::MIN_POSITIVE);
    let at =
        |x: isize, y: isize| map[(x.clamp(0, w as isize - 1) as usize, y.clamp(0, h as isize - 1) as usize)];
    let exaggeration = 2.0 * w as f32 / range;
    let light = glam::Vec3::new(-1.0, 1.5, -1.0).normalize();
    let mut pixels = Vec::with_capacity(w * h);
    for y in 0..h as isize {
        for x in 0..w as isize {
            let dx = (at(x + 1, y) - at(x - 1, y)) * 0.5 * exaggeration / w as f32;
            let dy = (at(x, y + 1) - at(x, y - 1)) * 0.5 * exaggeration / w as f32;
            let n = glam::Vec3::new(-dx, 1.0 / w as f32 * 4.0, -dy).normalize();
            let shade = 0.35 + 0.65 * n.dot(light).max(0.0);
            let height = at(x, y);
            if height <= sea {
                pixels.push([(40.0 * shade) as u8, (80.0 * shade) as u8, (140.0 * shade) as u8]);
                continue;
            }
            let t = (height - sea) / range;
            let stops = [
                (0.0, [200.0, 190.0, 140.0]),
                (0.08, [70.0, 120.0, 60.0]),
                (0.5, [140.0, 150.0, 90.0]),
                (0.8, [130.0, 110.0, 90.0]),
                (1.0, [245.0, 245.0, 250.0]),
            ];
            let k = stops.windows(2).position(|s| t <= s[1].0).unwrap_or(stops.len() - 2);
            let (t0, c0) = stops[k];
            let (t1, c1) = stops[k + 1];
            let f = ((t - t0) / (t1 - t0)).clamp(0.0, 1.0);
            let colour =
                core::array::from_fn(|i| ((c0[i] + (c1[i] - c0[i]) * f) * shade).clamp(0.0, 255.0) as u8);
            pixels.push(colour);
        }
    }
    pixels
}

fn write_png(path: &Path, width: usize, height: usize, pixels: &[[u8; 3]]) -> Result<(), String> {
    let image = RgbImage::from_pixels(width, height, pixels.to_vec()).map_err(|e| e.to_string())?;
    image.save_png(path).map_err(|e| format!("{}: {e}", path.display()))
}

fn run() -> Result<(), String> {
    let args = parse_args()?;
    std::fs::create_dir_all(&args.out_dir).map_err(|e| format!("{}: {e}", args.out_dir.display()))?;
    let n = args.size;
    let mut before = island_terrain(n, n, args.seed).map_err(|e| e.to_string())?;
    for h in before.cells_mut() {
        *h *= args.relief;
    }
    println!("island {n}x{n}, relief {}, seed {}: {} pits", args.relief, args.seed, pits(&before));

    let mut maps = vec![("before".to_string(), before.clone())];
    for count in COUNTS {
        let params = SnowballParams { snowballs: Some(count), blur: args.blur, ..SnowballParams::default() };
        let mut snowball = Snowball::new(params).map_err(|e| e.to_string())?;
        let mut after = before.clone();
        let start = Instant::now();
        let report = snowball.run_seeded(&mut after, args.seed).map_err(|e| e.to_string())?;
        let seconds = start.elapsed().as_secs_f64();
        let balance = MassBalance::of_run(&before, &after, &report);
        println!(
            "{count} snowballs in {seconds:.3} s: {} steps ({:.1} per snowball), flat {}, left {}, step limit {}; \
             eroded {:.3}, deposited {:.3}, outflow {:.3}; balance error {:.3e} ({}); {} pits",
            report.steps,
            report.steps_per_droplet(),
            report.flat,
            report.left_map,
            report.step_limited,
            report.eroded,
            report.deposited,
            report.outflow,
            balance.error(),
            if balance.is_conserved() { "conserved" } else { "NOT conserved" },
            pits(&after),
        );
        maps.push((count.to_string(), after));
    }

    // One height range for every picture, so they compare; the sea is at 0.
    let hi = maps.iter().map(|(_, m)| m.min_max().1).fold(f32::MIN, f32::max);
    let pictures: Vec<(String, Vec<[u8; 3]>)> =
        maps.iter().map(|(name, m)| (format!("island_{name}.png"), relief(m, 0.0, hi))).collect();
    let gap = 4;
    let mut strip = Vec::with_capacity((4 * n + 3 * gap) * n);
    for y in 0..n {
        for (k, (_, pixels)) in pictures.iter().enumerate() {
            if k > 0 {
                strip.extend(std::iter::repeat_n([255, 255, 255], gap));
            }
            strip.extend_from_slice(&pixels[y * n..(y + 1) * n]);
        }
    }
    for (name, pixels) in &pictures {
        let path = args.out_dir.join(name);
        write_png(&path, n, n, pixels)?;
        println!("wrote {}", path.display());
    }
    let path = args.out_dir.join("island_strip.png");
    write_png(&path, 4 * n + 3 * gap, n, &strip)?;
    println!("wrote {}", path.display());
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("island: {message}");
            ExitCode::FAILURE
        }
    }
}
