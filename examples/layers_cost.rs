//! Measures what recording the output layers (`Layers`) costs a run: the
//! benchmark behind docs/engine.md's figures.
//!
//! ```text
//! cargo run --release --example layers_cost -- [--model physical|landscape|snowball|hydrology] [--mode fast|lockstep|sequential] [--size N] [--chunk K] [--chunks C]
//! ```
//!
//! Two copies of the same fBm map (seed 1, `N` a side, default 256) are eroded
//! side by side in `C` chunks (default 40) of `K` droplets (default 2 000; for
//! Hydrology, particles), each chunk with the same rain on both: one copy with
//! layers, the other without, taking turns at going first. Layers never change
//! a run, so both copies take the same steps and end with the same bits
//! (checked). Chunks of a fraction of a second, interleaved, see the same
//! machine: on a shared machine whose speed wanders by a third within
//! minutes, separate runs cannot tell 5 % apart, while the ratio of the
//! chunks' summed times repeats to a few per cent (with the layers on
//! neither copy, it measured 1.00-1.01). The seeds' sequential mode wanders
//! most (1.10-1.19 from one run to the next of one build).
//!
//! `physical` runs the seeds' model (`ErosionParams::default()`) and
//! `landscape` the landscape preset (`ErosionParams::landscape_for`, its
//! droplets without the rounds of rain), in `--mode` (default `fast`, what
//! `erode` runs: lockstep for the seeds' model, the tiles for the preset;
//! `lockstep` runs the preset's interleaved kernel); `snowball` and
//! `hydrology` run their defaults.
//! Prints one line: the time a step without and with layers (ns, summed over
//! the chunks), their ratio, and the median and quartiles of the chunks' own
//! ratios.

use std::process::ExitCode;
use std::time::Instant;

use hydraulic_erosion::rand_core::SeedableRng;
use hydraulic_erosion::{
    Channels, ErosionParams, Heightmap, Hydrology, HydrologyParams, Layers, Mode, Physical, RunOptions,
    Simulator, Snowball, SnowballParams, fbm_terrain,
};
use rand_xoshiro::Xoshiro256StarStar;

const USAGE: &str = "usage: layers_cost [--model physical|landscape|snowball|hydrology] [--mode fast|lockstep|sequential] [--size N] [--chunk K] [--chunks C]";

struct Args {
    model: String,
    mode: Mode,
    size: usize,
    chunk: u32,
    chunks: u64,
}

fn parse() -> Result<Args, String> {
    let mut args = Args { model: "physical".into(), mode: Mode::Fast, size: 256, chunk: 2_000, chunks: 40 };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value\n{USAGE}"));
        match flag.as_str() {
            "--model" => args.model = value()?,
            "--mode" => {
                args.mode = match value()?.as_str() {
                    "fast" => Mode::Fast,
                    "lockstep" => Mode::Lockstep,
                    "sequential" => Mode::Sequential,
                    other => return Err(format!("unknown mode {other} (fast, lockstep, sequential)")),
                }
            }
            "--size" => args.size = value()?.parse().map_err(|e| format!("--size: {e}"))?,
            "--chunk" => args.chunk = value()?.parse().map_err(|e| format!("--chunk: {e}"))?,
            "--chunks" => args.chunks = value()?.parse().map_err(|e| format!("--chunks: {e}"))?,
            _ => return Err(USAGE.into()),
        }
    }
    if args.chunks == 0 {
        return Err("--chunks must be at least 1".into());
    }
    Ok(args)
}

/// A run of one chunk on a map, with the chunk's seed and layers or none:
/// returns the steps it took.
type Chunk = Box<dyn FnMut(&mut Heightmap, u64, Option<&mut Layers>) -> u64>;

/// `sim`'s runs as chunks: in `mode` (Physical) and with layers when given;
/// `steps` reads a report's step count.
fn chunks<S: Simulator + 'static>(mut sim: S, mode: Option<Mode>, steps: fn(&S::Report) -> u64) -> Chunk {
    Box::new(move |map, seed, layers| {
        let mut options = RunOptions::default();
        if let Some(mode) = mode {
            options = options.with_mode(mode);
        }
        if let Some(layers) = layers {
            options = options.with_layers(layers);
        }
        let mut rng = Xoshiro256StarStar::seed_from_u64(seed);
        steps(&sim.run_with(map.view_mut(), &mut rng, options).expect("a valid run"))
    })
}

/// One simulator per copy (the landscape preset and Hydrology keep maps of
/// their own between runs).
fn simulators(args: &Args) -> Result<[Chunk; 2], String> {
    let (n, chunk) = (args.size, args.chunk);
    let make = || -> Result<Chunk, String> {
        let error = |e: hydraulic_erosion::ParamError| e.to_string();
        Ok(match args.model.as_str() {
            "physical" | "landscape" => {
                let params = match args.model.as_str() {
                    "physical" => ErosionParams::default(),
                    // Chunks of the preset's droplets alone: its rounds of
                    // rain until the basins drain would follow each chunk.
                    _ => {
                        let landscape = ErosionParams::landscape_for(n, n);
                        let channels = landscape.channels.map(|c| Channels { drain: None, ..c });
                        ErosionParams { channels, ..landscape }
                    }
                };
                let sim = Physical::new(ErosionParams { droplets: chunk, ..params }).map_err(error)?;
                chunks(sim, Some(args.mode), |r| r.steps)
            }
            "snowball" => {
                let params = SnowballParams { snowballs: Some(chunk), ..SnowballParams::default() };
                chunks(Snowball::new(params).map_err(error)?, None, |r| r.steps)
            }
            "hydrology" => {
                let params = HydrologyParams { particles: chunk, ..HydrologyParams::default() };
                let sim = Hydrology::new(params, n, n).map_err(|e| e.to_string())?;
                chunks(sim, None, |r| r.erosion.steps)
            }
            other => return Err(format!("unknown model {other}\n{USAGE}")),
        })
    };
    Ok([make()?, make()?])
}

fn run() -> Result<(), String> {
    let args = parse()?;
    let n = args.size;
    let mut plain = fbm_terrain(n, n, 1).map_err(|e| e.to_string())?;
    let mut layered = plain.clone();
    let mut layers = Layers::new(n, n).map_err(|e| e.to_string())?;
    let [mut run_plain, mut run_layered] = simulators(&args)?;
    let (mut t_plain, mut t_layered, mut steps) = (0.0f64, 0.0f64, 0u64);
    let mut ratios = Vec::new();
    for chunk in 0..args.chunks {
        let mut timed = |with_layers: bool| {
            let start = Instant::now();
            let steps = match with_layers {
                true => run_layered(&mut layered, chunk, Some(&mut layers)),
                false => run_plain(&mut plain, chunk, None),
            };
            (start.elapsed().as_secs_f64(), steps)
        };
        // Taking turns at going first, so neither copy always runs on a warm cache.
        let (with, without) = match chunk % 2 {
            0 => (timed(true), timed(false)),
            _ => {
                let without = timed(false);
                (timed(true), without)
            }
        };
        if with.1 != without.1 {
            return Err(format!("chunk {chunk}: {} steps with layers, {} without", with.1, without.1));
        }
        (t_layered, t_plain, steps) = (t_layered + with.0, t_plain + without.0, steps + with.1);
        ratios.push(with.0 / without.0);
    }
    if plain.cells() != layered.cells() {
        return Err("the copies' heights differ".into());
    }
    ratios.sort_by(f64::total_cmp);
    let at = |q: usize| ratios[(ratios.len() - 1) * q / 4];
    let per_step = |t: f64| t * 1e9 / steps.max(1) as f64;
    let mode = match (args.model.as_str(), args.mode) {
        ("physical" | "landscape", Mode::Sequential) => " sequential",
        ("physical" | "landscape", Mode::Lockstep) => " lockstep",
        ("physical" | "landscape", _) => " fast",
        _ => "",
    };
    println!(
        "{}{mode} {n}², {} x {}: without layers {:.2} ns a step, with {:.2}: ratio {:.3} (chunks: median {:.3}, quartiles {:.3}-{:.3})",
        args.model,
        args.chunks,
        args.chunk,
        per_step(t_plain),
        per_step(t_layered),
        t_layered / t_plain,
        at(2),
        at(1),
        at(3),
    );
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("layers_cost: {message}");
            ExitCode::FAILURE
        }
    }
}
