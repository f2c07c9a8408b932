//! Erodes a generated terrain and writes pictures of it before and after.
//!
//! ```text
//! cargo run --release --example erode -- [--size N] [--droplets K] [--seed S] [--pit-safe] [--out-dir DIR]
//! ```
//!
//! Defaults: a 256 x 256 value-noise terrain, 200 000 droplets (SimpleErosion's
//! setting), seed 1, pictures in `out/`: `before.png` and `after.png` (shaded
//! relief), `erosion.png` (red: eroded, blue: deposited) and `side_by_side.png`.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use hydraulic_erosion::{ErosionParams, Heightmap, MassBalance, erode_seeded, fbm_terrain};

struct Args {
    size: usize,
    droplets: u32,
    seed: u64,
    pit_safe: bool,
    out_dir: PathBuf,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args { size: 256, droplets: 200_000, seed: 1, pit_safe: false, out_dir: "out".into() };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--size" => args.size = value()?.parse().map_err(|e| format!("--size: {e}"))?,
            "--droplets" => args.droplets = value()?.parse().map_err(|e| format!("--droplets: {e}"))?,
            "--seed" => args.seed = value()?.parse().map_err(|e| format!("--seed: {e}"))?,
            "--pit-safe" => args.pit_safe = true,
            "--out-dir" => args.out_dir = value()?.into(),
            other => {
                return Err(format!(
                    "unknown option {other}\nusage: erode [--size N] [--droplets K] [--seed S] [--pit-safe] [--out-dir DIR]"
                ));
            }
        }
    }
    Ok(args)
}

/// Shaded relief: height colours (lowland green to rock to snow) lit from the
/// north-west, from central-difference slopes.
fn relief(map: &Heightmap, lo: f32, hi: f32) -> Vec<[u8; 3]> {
    let (w, h) = (map.width(), map.height());
    let range = (hi - lo).max(f32::MIN_POSITIVE);
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
            let t = (at(x, y) - lo) / range;
            let stops = [
                (0.0, [70.0, 110.0, 60.0]),
                (0.45, [140.0, 150.0, 90.0]),
                (0.75, [130.0, 110.0, 90.0]),
                (1.0, [245.0, 245.0, 250.0]),
            ];
            let k = stops.windows(2).position(|s| t <= s[1].0).unwrap_or(2);
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

/// Red where the terrain lost height, blue where it gained, scaled to the largest
/// change.
fn erosion_map(before: &Heightmap, after: &Heightmap) -> Vec<[u8; 3]> {
    let diffs: Vec<f32> = after.cells().iter().zip(before.cells()).map(|(a, b)| a - b).collect();
    let scale = diffs.iter().fold(0.0_f32, |m, d| m.max(d.abs())).max(f32::MIN_POSITIVE);
    diffs
        .iter()
        .map(|&d| {
            let t = (d / scale).abs().sqrt();
            let fade = (255.0 * (1.0 - t)) as u8;
            if d < 0.0 { [255, fade, fade] } else { [fade, fade, 255] }
        })
        .collect()
}

fn write_png(path: &Path, width: usize, height: usize, pixels: &[[u8; 3]]) -> Result<(), String> {
    let file = File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut encoder = png::Encoder::new(BufWriter::new(file), width as u32, height as u32);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
    writer.write_image_data(pixels.as_flattened()).map_err(|e| e.to_string())?;
    writer.finish().map_err(|e| e.to_string())
}

fn run() -> Result<(), String> {
    let args = parse_args()?;
    std::fs::create_dir_all(&args.out_dir).map_err(|e| format!("{}: {e}", args.out_dir.display()))?;
    let before = fbm_terrain(args.size, args.size, args.seed).map_err(|e| e.to_string())?;
    let mut after = before.clone();
    let params =
        ErosionParams { droplets: args.droplets, pit_safe: args.pit_safe, ..ErosionParams::default() };

    let start = Instant::now();
    let report = erode_seeded(&mut after, &params, args.seed).map_err(|e| e.to_string())?;
    let seconds = start.elapsed().as_secs_f64();
    let balance = MassBalance::new(&before, &after, report.outflow);

    println!(
        "eroded {0}x{0} with {1} droplets in {seconds:.2} s ({2} steps, {3:.1} per droplet)",
        args.size,
        report.droplets,
        report.steps,
        report.steps_per_droplet()
    );
    println!(
        "sediment: eroded {:.3}, deposited {:.3}, outflow {:.3}; balance error {:.3e} (relative {:.1e}, {})",
        report.eroded,
        report.deposited,
        report.outflow,
        balance.error(),
        balance.relative_error(),
        if balance.is_conserved() { "conserved" } else { "NOT conserved" }
    );

    // One height range for both pictures, so they compare.
    let (lo0, hi0) = before.min_max();
    let (lo1, hi1) = after.min_max();
    let (lo, hi) = (lo0.min(lo1), hi0.max(hi1));
    let n = args.size;
    let (relief_before, relief_after) = (relief(&before, lo, hi), relief(&after, lo, hi));
    let mut side = Vec::with_capacity(2 * n * n + 4 * n);
    for y in 0..n {
        side.extend_from_slice(&relief_before[y * n..(y + 1) * n]);
        side.extend_from_slice(&[[255, 255, 255]; 4]);
        side.extend_from_slice(&relief_after[y * n..(y + 1) * n]);
    }
    let outputs = [
        ("before.png", n, relief_before),
        ("after.png", n, relief_after),
        ("erosion.png", n, erosion_map(&before, &after)),
        ("side_by_side.png", 2 * n + 4, side),
    ];
    for (name, width, pixels) in &outputs {
        let path = args.out_dir.join(name);
        write_png(&path, *width, n, pixels)?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("erode: {message}");
            ExitCode::FAILURE
        }
    }
}
