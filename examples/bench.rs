//! Measures one erosion run and prints one line of JSON.
//!
//! ```text
//! cargo run --release --example bench -- --model physical|snowball|hydrology [--mode fast|sequential|lockstep] [--preset landscape|landscape-world] --size N [--droplets K] --seed S [--rain-seed R] [--island | --in FILE] [--layers] [--out FILE] [--out-surface FILE]
//! ```
//!
//! `--preset landscape` runs Physical with `ErosionParams::landscape_for(N, N)`
//! (its own droplet count unless `--droplets` is given), `--preset
//! landscape-world` with `ErosionParams::landscape_world(N, N)`; `--set FIELD=VALUE`
//! (repeatable) overrides one Physical field, `channels.FIELD` a `Channels` one
//! (turning them on); `--island` starts from `island_terrain` instead of fBm
//! (its sea at 0.03 for the landscape preset, `Channels::sea_level`, and
//! for Hydrology, `HydrologyParams::sea_level`);
//! `--layers` records the output layers (`Layers`, single-thread Physical runs)
//! to time what they cost.
//!
//! `--model snowball` runs [`Snowball`] with its defaults and `K` snowballs
//! (`droplets` and `steps` in the output count snowballs and their iterations).
//!
//! `--in` reads `N*N` little-endian `f32`, row-major (the format of
//! `../shared/refbench`'s `--write-map`); without it the built-in
//! [`fbm_terrain`] is used, which for the same `N` and seed is the reference's own
//! map. Droplets come from `Xoshiro256StarStar::seed_from_u64(seed ^ 0xD50F1E7D)`,
//! the reference's stream, so both start droplets at the same positions;
//! `--rain-seed R` draws them from `R` instead (the same terrain, another draw
//! of the rain: one draw of a run is not its landscape, see
//! `bench/draws.sh`). `--out`
//! writes the eroded map in the input's format. Only the simulation is timed.
//! `hash` is FNV-1a over the output's bits, as the reference's `map_hash`.
//! `cpu_seconds` is the thread's CPU time over the simulation (Linux; elsewhere
//! the wall time), steadier than `seconds` on a shared machine. `fates`
//! counts how the droplets ended (`ErosionReport`'s counts).
//!
//! `--threads T` (feature `parallel`) runs `physical` or `snowball` through
//! `Parallel` on a rayon pool of `T` threads built here. `--layout tiles` (the
//! default) runs tiles of `--tile N` cells with `--sweep K` droplets (or
//! snowballs) per sweep; `--layout batches` runs `--batch B` droplets per batch
//! and `--rounds R` batches per round (`ParallelParams`' defaults: 64, 32 768,
//! 4096 and 2); `--mode` picks the inner loop. `T = 1` runs the same algorithm
//! on one thread (same bits as any `T`); the streams derive from the seed below.
//! `cpu_seconds` then counts the calling thread only: compare `seconds`.
//!
//! `--out-surface FILE` (Hydrology) writes the terrain plus the pools' water
//! depth, the water surface, in the same format.
//!
//! `--model hydrology` runs `Hydrology` with its defaults (`--set
//! hydrology.FIELD=VALUE` overrides one) and `--droplets` particles on the
//! same map and stream, and adds the water books, the flood
//! counts, the time spent descending and flooding (`descend_seconds`,
//! `flood_seconds`, summed over the threads of a tiled run), the wet cells and
//! the trees to the line. With `--threads T` it runs `Parallel::run` with a `Hydrology`
//! in tiles of `--tile N` cells (default 64).

use std::process::ExitCode;
use std::time::Instant;

use hydraulic_erosion::rand_core::SeedableRng;
use hydraulic_erosion::{
    Channels, Drain, ErosionParams, Heightmap, Hydrology, HydrologyParams, Layers, MassBalance, Physical,
    Snowball, SnowballParams, fbm_terrain, island_terrain,
};
use hydraulic_erosion::{Mode, RunOptions, Simulator};
use rand_xoshiro::Xoshiro256StarStar;

struct Args {
    model: String,
    mode: String,
    size: usize,
    droplets: Option<u32>,
    preset: Option<String>,
    island: bool,
    /// `--layers`: record the output layers (single-thread Physical runs).
    layers: bool,
    /// `--set FIELD=VALUE` overrides of the Physical params.
    set: Vec<String>,
    seed: u64,
    /// `--rain-seed`: the droplets' seed, when not `seed`.
    rain_seed: Option<u64>,
    input: Option<String>,
    output: Option<String>,
    /// `--out-surface`: Hydrology's terrain plus water depth.
    surface: Option<String>,
    threads: Option<usize>,
    layout: Option<String>,
    tile: Option<u32>,
    sweep: Option<u32>,
    batch: Option<u32>,
    rounds: Option<u32>,
}

/// The sea level `--island` gives the landscape preset (`Channels::sea_level`)
/// and Hydrology (`HydrologyParams::sea_level`).
const ISLAND_SEA: f32 = 0.03;

const USAGE: &str = "usage: bench --model physical|snowball|hydrology [--mode fast|sequential|lockstep] [--preset landscape|landscape-world] --size N [--droplets K] --seed S [--rain-seed R] [--island | --in FILE] [--layers] [--out FILE] [--out-surface FILE] [--threads T [--layout tiles|batches] [--tile N] [--sweep K] [--batch B] [--rounds R]]";

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        model: "physical".into(),
        mode: "fast".into(),
        size: 256,
        droplets: None,
        preset: None,
        island: false,
        layers: false,
        set: Vec::new(),
        seed: 1,
        rain_seed: None,
        input: None,
        output: None,
        surface: None,
        threads: None,
        layout: None,
        tile: None,
        sweep: None,
        batch: None,
        rounds: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--model" => args.model = value()?,
            "--mode" => args.mode = value()?,
            "--size" => args.size = value()?.parse().map_err(|e| format!("--size: {e}"))?,
            "--droplets" => args.droplets = Some(value()?.parse().map_err(|e| format!("--droplets: {e}"))?),
            "--preset" => args.preset = Some(value()?),
            "--island" => args.island = true,
            "--layers" => args.layers = true,
            "--set" => args.set.push(value()?),
            "--seed" => args.seed = value()?.parse().map_err(|e| format!("--seed: {e}"))?,
            "--rain-seed" => {
                args.rain_seed = Some(value()?.parse().map_err(|e| format!("--rain-seed: {e}"))?)
            }
            "--in" => args.input = Some(value()?),
            "--out" => args.output = Some(value()?),
            "--out-surface" => args.surface = Some(value()?),
            "--threads" => args.threads = Some(value()?.parse().map_err(|e| format!("--threads: {e}"))?),
            "--layout" => args.layout = Some(value()?),
            "--tile" => args.tile = Some(value()?.parse().map_err(|e| format!("--tile: {e}"))?),
            "--sweep" => args.sweep = Some(value()?.parse().map_err(|e| format!("--sweep: {e}"))?),
            "--batch" => args.batch = Some(value()?.parse().map_err(|e| format!("--batch: {e}"))?),
            "--rounds" => args.rounds = Some(value()?.parse().map_err(|e| format!("--rounds: {e}"))?),
            "--help" | "-h" => return Err(USAGE.into()),
            other => return Err(format!("unknown option {other}\n{USAGE}")),
        }
    }
    Ok(args)
}

/// The field and value of a `--set FIELD=VALUE`.
fn parse_set(set: &str) -> Result<(&str, f32), String> {
    let (field, value) = set.split_once('=').ok_or_else(|| format!("--set {set}: expected FIELD=VALUE"))?;
    let v = value.parse().map_err(|e| format!("--set {set}: {e}"))?;
    Ok((field, v))
}

/// Hydrology's `params` with one field set from `hydrology.FIELD=VALUE` (`--set`).
fn override_hydrology(mut p: HydrologyParams, set: &str) -> Result<HydrologyParams, String> {
    let (field, v) = parse_set(set)?;
    match field {
        "hydrology.dt" => p.dt = v,
        "hydrology.friction" => p.friction = v,
        "hydrology.deposition_rate" => p.deposition_rate = v,
        "hydrology.evaporation_rate" => p.evaporation_rate = v,
        "hydrology.height_scale" => p.height_scale = v,
        "hydrology.lrate" => p.lrate = v,
        "hydrology.volume_factor" => p.volume_factor = v,
        "hydrology.drainage" => p.drainage = v,
        "hydrology.entrainment" => p.entrainment = v,
        "hydrology.max_steps" => p.max_steps = v as u32,
        "hydrology.trees" => p.trees = v != 0.0,
        "hydrology.stall_stream" => p.stall_stream = v,
        "hydrology.stall_acceleration" => p.stall_acceleration = v,
        "hydrology.approach" => p.approach = v,
        "hydrology.spill" => p.spill = v as u32,
        "hydrology.max_fails" => p.max_fails = v as u32,
        "hydrology.density" => p.density = v,
        "hydrology.min_volume" => p.min_volume = v,
        "hydrology.batch" => p.batch = v as u32,
        "hydrology.sea_level" => p.sea_level = Some(v),
        "hydrology.sea_deltas" => p.sea_deltas = v != 0.0,
        "hydrology.channel_area" => p.channel_area = v,
        "hydrology.outlet_erosion" => p.outlet_erosion = v,
        "hydrology.spill_speed" => p.spill_speed = v,
        "hydrology.stall_in_pits" => p.stall_in_pits = v != 0.0,
        "hydrology.open_border" => p.open_border = v != 0.0,
        "hydrology.settle_pits" => p.settle_pits = v != 0.0,
        "hydrology.exact_flood" => p.exact_flood = v != 0.0,
        "hydrology.cell_size" => p.cell_size = v,
        other => return Err(format!("--set: unknown Hydrology field {other} (hydrology.FIELD)")),
    }
    Ok(p)
}

/// `params` with one field set from `FIELD=VALUE` (`--set`; `channels.FIELD` for
/// the [`hydraulic_erosion::Channels`] fields, which turns them on).
fn override_field(mut p: ErosionParams, set: &str) -> Result<ErosionParams, String> {
    let (field, v) = parse_set(set)?;
    let mut channels = p.channels.unwrap_or_default();
    let c = &mut channels;
    match field {
        "dt" => p.dt = v,
        "density" => p.density = v,
        "friction" => p.friction = v,
        "deposition_rate" => p.deposition_rate = v,
        "evaporation_rate" => p.evaporation_rate = v,
        "min_water" => p.min_water = v,
        "height_scale" => p.height_scale = v,
        "max_steps" => p.max_steps = v as u32,
        "pit_safe" => p.pit_safe = v != 0.0,
        "channels.capacity" => c.capacity = v,
        "channels.discharge_gain" => c.discharge_gain = v,
        "channels.channel_area" => c.channel_area = v,
        "channels.river_area" => c.river_area = v,
        "channels.cell_size" => c.cell_size = v,
        "channels.discharge_rate" => c.discharge_rate = v,
        "channels.refresh" => c.refresh = v as u32,
        "channels.channel_relief" => c.channel_relief = v,
        "channels.momentum" => c.momentum = v,
        "channels.stride" => c.stride = v,
        "channels.brush_radius" => c.brush_radius = v,
        "channels.settle_pits" => c.settle_pits = v != 0.0,
        "channels.sea_level" => c.sea_level = Some(v),
        // Any of these turns the rain in rounds on, the rest at their defaults.
        "channels.drain.closed" => c.drain = Some(Drain { closed: v, ..c.drain.unwrap_or_default() }),
        "channels.drain.round" => c.drain = Some(Drain { round: v, ..c.drain.unwrap_or_default() }),
        "channels.drain.most" => c.drain = Some(Drain { most: v, ..c.drain.unwrap_or_default() }),
        "channels.drain.basin" => c.drain = Some(Drain { basin: v, ..c.drain.unwrap_or_default() }),
        // Hydrology's own, read by `override_hydrology`.
        other if other.starts_with("hydrology.") => {}
        other => return Err(format!("--set: unknown field {other}")),
    }
    if field.starts_with("channels.") {
        p.channels = Some(channels);
    }
    Ok(p)
}

fn read_map(path: &str, size: usize) -> Result<Heightmap, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    let expected = size.checked_mul(size).and_then(|n| n.checked_mul(4));
    if Some(bytes.len()) != expected {
        return Err(format!("{path}: expected exactly {size}x{size} f32 values ({} bytes)", size * size * 4));
    }
    let cells = bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
    Heightmap::from_cells(size, size, cells).map_err(|e| format!("{path}: {e}"))
}

fn write_map(path: &str, map: &Heightmap) -> Result<(), String> {
    let bytes: Vec<u8> = map.cells().iter().flat_map(|h| h.to_le_bytes()).collect();
    std::fs::write(path, bytes).map_err(|e| format!("{path}: {e}"))
}

/// FNV-1a over the cells' bits, as refbench's `map_hash`.
fn map_hash(map: &Heightmap) -> u64 {
    map.cells()
        .iter()
        .fold(0xCBF2_9CE4_8422_2325, |x, h| (x ^ u64::from(h.to_bits())).wrapping_mul(0x0000_0100_0000_01B3))
}

fn run() -> Result<(), String> {
    let args = parse_args()?;
    let mut map = match &args.input {
        Some(path) => read_map(path, args.size)?,
        None if args.island => island_terrain(args.size, args.size, args.seed).map_err(|e| e.to_string())?,
        None => fbm_terrain(args.size, args.size, args.seed).map_err(|e| e.to_string())?,
    };
    let droplets = args.droplets.unwrap_or(200_000);
    let before = map.clone();
    // The droplets' stream: the reference's for `--seed`, or `--rain-seed`'s.
    let stream = args.rain_seed.unwrap_or(args.seed) ^ 0xD50F_1E7D;
    let mut rng = Xoshiro256StarStar::seed_from_u64(stream);
    let params = match args.preset.as_deref() {
        None => ErosionParams { droplets, ..ErosionParams::default() },
        Some(name @ ("landscape" | "landscape-world")) => {
            let mut preset = if name == "landscape" {
                ErosionParams::landscape_for(args.size, args.size)
            } else {
                ErosionParams::landscape_world(args.size, args.size)
            };
            if args.island {
                // The island's sea, a shelf 3 % of its relief deep over its
                // flat floor at 0 (`bench/draws.sh` measures the land above it).
                preset.channels = preset.channels.map(|c| Channels { sea_level: Some(ISLAND_SEA), ..c });
            }
            ErosionParams { droplets: args.droplets.unwrap_or(preset.droplets), ..preset }
        }
        Some(other) => return Err(format!("unknown preset {other} (known: landscape, landscape-world)")),
    };
    let params = args.set.iter().try_fold(params, |p, s| override_field(p, s))?;

    // Model-specific fields appended to the JSON line.
    let mut extra = String::new();
    let (report, (seconds, cpu_seconds)) = match args.model.as_str() {
        "physical" | "snowball" if args.threads.is_some() => {
            let (report, times, fields) = parallel::run(&args, &mut map, params, stream)?;
            extra = fields;
            (report, times)
        }
        "physical" => {
            let mut physical = Physical::new(params).map_err(|e| e.to_string())?;
            let mut options = RunOptions::default().with_mode(mode_named(&args.mode)?);
            // Allocated outside the clock, as an engine keeps them between runs.
            let mut layers = match args.layers {
                true => Some(Layers::new(map.width(), map.height()).map_err(|e| e.to_string())?),
                false => None,
            };
            if let Some(layers) = layers.as_mut() {
                options = options.with_layers(layers);
            }
            let clock = Clock::start();
            let report = physical.run_with(map.view_mut(), &mut rng, options).map_err(|e| e.to_string())?;
            let times = clock.stop();
            if let Some(layers) = &layers {
                extra += &format!(",\"layers\":true,\"flux_sum\":{:.6}", layers.flux().sum());
            }
            (report, times)
        }
        "snowball" => {
            // `--droplets` snowballs (0.4 per cell is round(0.4 * N * N)); steps
            // are snowball iterations; the run includes the final blur.
            let params = SnowballParams { snowballs: Some(droplets), ..SnowballParams::default() };
            let mut snowball = Snowball::new(params).map_err(|e| e.to_string())?;
            let clock = Clock::start();
            let report = snowball.run(&mut map, &mut rng).map_err(|e| e.to_string())?;
            (report, clock.stop())
        }
        "hydrology" => {
            // The island's sea, as for the landscape preset.
            let sea_level = args.island.then_some(ISLAND_SEA);
            let mut params = HydrologyParams { particles: droplets, sea_level, ..HydrologyParams::default() };
            for set in args.set.iter().filter(|s| s.starts_with("hydrology.")) {
                params = override_hydrology(params, set)?;
            }
            let mut hydrology =
                Hydrology::new(params, map.width(), map.height()).map_err(|e| e.to_string())?;
            let (report, seconds) = if args.threads.is_some() {
                let (report, seconds, fields) =
                    parallel::run_hydrology(&args, &mut hydrology, &mut map, stream)?;
                extra = fields;
                (report, seconds)
            } else {
                let clock = Clock::start();
                let report = hydrology.run(&mut map, &mut rng).map_err(|e| e.to_string())?;
                (report, clock.stop())
            };
            let times = hydrology.phase_times();
            extra += &format!(
                concat!(
                    ",\"rain\":{:.9},\"pooled\":{:.9},\"evaporated\":{:.9},\"water_outflow\":{:.9},",
                    "\"dropped\":{:.9},\"water_error\":{:e},\"water_balanced\":{},\"floods\":{},",
                    "\"flood_cells\":{},\"drains\":{},\"descend_seconds\":{:.6},\"flood_seconds\":{:.6},",
                    "\"wet_cells\":{},\"trees\":{}"
                ),
                report.rain,
                report.pooled,
                report.evaporated,
                report.water_outflow,
                report.dropped,
                report.water_error(),
                report.is_water_balanced(),
                report.floods,
                report.flood_cells,
                report.drains,
                times.descend_seconds,
                times.flood_seconds,
                hydrology.pool().cells().iter().filter(|&&d| d > 0.0).count(),
                hydrology.trees().len(),
            );
            if let Some(path) = &args.surface {
                // The water surface: lakes count at their level, not their floor.
                let surface = Heightmap::from_fn(map.width(), map.height(), |x, y| {
                    map.get(x, y).unwrap_or(0.0) + hydrology.pool().get(x, y).unwrap_or(0.0)
                })
                .map_err(|e| e.to_string())?;
                write_map(path, &surface)?;
            }
            (report.erosion, seconds)
        }
        other => return Err(format!("unknown model {other:?} (available: physical, snowball, hydrology)")),
    };

    let balance = MassBalance::of_run(&before, &map, &report);
    let per_step = |s: f64| if report.steps > 0 { s * 1e9 / report.steps as f64 } else { 0.0 };
    let (ns_per_step, cpu_ns_per_step) = (per_step(seconds), per_step(cpu_seconds));
    println!(
        concat!(
            "{{\"model\":\"{}\",\"mode\":\"{}\",\"width\":{},\"height\":{},\"droplets\":{},\"steps\":{},",
            "\"steps_per_droplet\":{:.1},\"seconds\":{:.6},\"ns_per_step\":{:.3},",
            "\"cpu_seconds\":{:.6},\"cpu_ns_per_step\":{:.3},",
            "\"mass_before\":{:.9},\"mass_after\":{:.9},\"outflow\":{:.9},\"eroded\":{:.9},",
            "\"deposited\":{:.9},\"balance_error\":{:e},\"relative_error\":{:e},\"conserved\":{},",
            "\"hash\":\"{:016x}\",\"fates\":{{\"left_map\":{},\"step_limited\":{},\"evaporated\":{},",
            "\"flat\":{},\"unstable\":{},\"masked\":{},\"stopped\":{}}}{}}}"
        ),
        args.model,
        args.mode,
        map.width(),
        map.height(),
        report.droplets,
        report.steps,
        report.steps_per_droplet(),
        seconds,
        ns_per_step,
        cpu_seconds,
        cpu_ns_per_step,
        balance.before,
        balance.after,
        balance.outflow,
        report.eroded,
        report.deposited,
        balance.error(),
        balance.relative_error(),
        balance.is_conserved(),
        map_hash(&map),
        report.left_map,
        report.step_limited,
        report.evaporated,
        report.flat,
        report.unstable,
        report.masked,
        report.stopped,
        extra,
    );
    if let Some(path) = &args.output {
        write_map(path, &map)?;
    }
    Ok(())
}

/// A parallel run's report, `(seconds, cpu_seconds)` and its settings as JSON
/// fields (each with a leading comma).
type Outcome = (hydraulic_erosion::ErosionReport, (f64, f64), String);

/// `--threads`: the `Parallel` runs, on a pool built here.
#[cfg(feature = "parallel")]
mod parallel {
    use super::{Args, Clock, Outcome, mode_named};
    use hydraulic_erosion::rand_core::SeedableRng;
    use hydraulic_erosion::{
        ErosionParams, Heightmap, Hydrology, HydrologyReport, Layout, Parallel, ParallelParams, Physical,
        RunOptions, Snowball, SnowballParams,
    };
    use rand_xoshiro::Xoshiro256StarStar;

    /// A tiled Hydrology run: the report, `(seconds, cpu_seconds)` and the
    /// run's settings as JSON fields.
    pub fn run_hydrology(
        args: &Args,
        hydrology: &mut Hydrology,
        map: &mut Heightmap,
        seed: u64,
    ) -> Result<(HydrologyReport, (f64, f64), String), String> {
        let (parallel, pool) = runner(args)?;
        let threads = pool.current_num_threads();
        let (report, times) = pool
            .install(|| {
                let clock = Clock::start();
                parallel.run_seeded(hydrology, map, seed).map(|r| (r, clock.stop()))
            })
            .map_err(|e| e.to_string())?;
        let fields =
            format!(",\"threads\":{threads},\"layout\":\"tiles\",\"tile\":{}", parallel.params().tile_size);
        Ok((report, times, fields))
    }

    /// The runner `args` ask for, and a pool of `--threads` threads.
    fn runner(args: &Args) -> Result<(Parallel, rayon::ThreadPool), String> {
        let layout = match args.layout.as_deref() {
            None | Some("tiles") => Layout::Tiles,
            Some("batches") => Layout::Batches,
            Some(other) => return Err(format!("unknown layout {other:?} (tiles, batches)")),
        };
        let defaults = ParallelParams::default();
        let parallel = Parallel::new(ParallelParams {
            layout,
            tile_size: args.tile.unwrap_or(defaults.tile_size),
            sweep_size: args.sweep.unwrap_or(defaults.sweep_size),
            batch_size: args.batch.unwrap_or(defaults.batch_size),
            batches_per_round: args.rounds.unwrap_or(defaults.batches_per_round),
        })
        .map_err(|e| e.to_string())?;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(args.threads.unwrap_or(1))
            .build()
            .map_err(|e| e.to_string())?;
        Ok((parallel, pool))
    }

    /// The report, `(seconds, cpu_seconds)` and the run's settings as JSON fields.
    pub fn run(
        args: &Args,
        map: &mut Heightmap,
        params: ErosionParams,
        seed: u64,
    ) -> Result<Outcome, String> {
        let (parallel, pool) = runner(args)?;
        let threads = pool.current_num_threads();
        let result = if args.model == "physical" {
            let mut physical = Physical::new(params).map_err(|e| e.to_string())?;
            pool.install(|| {
                let clock = Clock::start();
                let options = RunOptions::default().with_mode(mode_named(&args.mode)?);
                let mut rng = Xoshiro256StarStar::seed_from_u64(seed);
                parallel
                    .run_with(&mut physical, map.view_mut(), &mut rng, options)
                    .map_err(|e| e.to_string())
                    .map(|r| (r, clock.stop()))
            })
        } else {
            let params = SnowballParams { snowballs: Some(params.droplets), ..SnowballParams::default() };
            let snowball = Snowball::new(params).map_err(|e| e.to_string())?;
            pool.install(|| {
                let clock = Clock::start();
                parallel
                    .run_seeded(&mut snowball.clone(), map, seed)
                    .map_err(|e| e.to_string())
                    .map(|r| (r, clock.stop()))
            })
        };
        let (report, times) = result?;
        let p = parallel.params();
        // The bench's snowballs use the default sampler, whose reach (4) suits
        // every tile size: both models run in tiles when asked.
        let fields = if p.layout == Layout::Tiles {
            format!(
                ",\"threads\":{threads},\"layout\":\"tiles\",\"tile\":{},\"sweep\":{}",
                p.tile_size, p.sweep_size
            )
        } else {
            format!(
                ",\"threads\":{threads},\"layout\":\"batches\",\"batch\":{},\"rounds\":{}",
                p.batch_size, p.batches_per_round
            )
        };
        Ok((report, times, fields))
    }
}

/// `--threads` without the `parallel` feature.
#[cfg(not(feature = "parallel"))]
mod parallel {
    use super::{Args, Outcome};
    use hydraulic_erosion::{ErosionParams, Heightmap, Hydrology, HydrologyReport};

    const NEEDS: &str = "--threads needs the parallel feature (cargo run --features parallel ...)";

    pub fn run(_: &Args, _: &mut Heightmap, _: ErosionParams, _: u64) -> Result<Outcome, String> {
        Err(NEEDS.into())
    }

    pub fn run_hydrology(
        _: &Args,
        _: &mut Hydrology,
        _: &mut Heightmap,
        _: u64,
    ) -> Result<(HydrologyReport, (f64, f64), String), String> {
        Err(NEEDS.into())
    }
}

/// Wall time and this thread's CPU time over the simulation.
struct Clock {
    wall: Instant,
    cpu: Option<f64>,
}

impl Clock {
    fn start() -> Self {
        Self { wall: Instant::now(), cpu: thread_cpu_seconds() }
    }

    /// `(wall seconds, CPU seconds)`; the CPU time is the wall time where the
    /// platform does not tell it.
    fn stop(self) -> (f64, f64) {
        let wall = self.wall.elapsed().as_secs_f64();
        let cpu = match (self.cpu, thread_cpu_seconds()) {
            (Some(a), Some(b)) => b - a,
            _ => wall,
        };
        (wall, cpu)
    }
}

/// This thread's CPU time in seconds, from Linux's `/proc/thread-self/schedstat`
/// (nanoseconds on the CPU, first field), steadier than wall time on a shared
/// machine; `None` elsewhere.
fn thread_cpu_seconds() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanos: u64 = text.split_whitespace().next()?.parse().ok()?;
    Some(nanos as f64 * 1e-9)
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("bench: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The Physical mode named by `--mode`.
fn mode_named(name: &str) -> Result<Mode, String> {
    match name {
        "fast" => Ok(Mode::Fast),
        "sequential" => Ok(Mode::Sequential),
        "lockstep" => Ok(Mode::Lockstep),
        other => Err(format!("unknown mode {other:?} (fast, sequential, lockstep)")),
    }
}
