//! `hydraulic-erosion`, the command-line tool: erodes a terrain (generated, or
//! read from a file) and writes the heightmaps and pictures of it. README's
//! first command; built with the `cli` feature, without the test and bench
//! dependencies (`cargo install --path . --features cli` from a checkout).
//!
//! ```text
//! hydraulic-erosion [--in FILE] [--model M] [--seed S] [--size N] [--droplets K] [--preset landscape|landscape-world|seeds] [--cell-size C] [--sea-level H] [--drain | --no-drain] [--pit-safe] [--thermal | --repose DEG] [--thermal-iterations N]
//!     [--layers NAMES] [--mask FILE] [--rain FILE] [--erodibility FILE | --hardness FILE] [--threads T] [--out-dir DIR]
//! ```
//!
//! `--thermal` follows the run with a thermal (talus) pass, `ThermalParams`'
//! defaults (repose 35 degrees, 50 iterations) with cells as wide as the model
//! sees them (`1 / height_scale` height units); `--repose DEG` does so with
//! another angle (steep angles trim only cliffs), and `--thermal-iterations
//! N` with `N` iterations (alone, it asks for the pass at 35 degrees): the
//! pass spreads talus one cell an iteration, so tall channel walls need
//! hundreds (its line reports the steepest slope left past the repose).
//! `--layers flux,wetness,sediment,erosion,deposition` (any of them) records
//! the run's output layers (`Layers`) and writes each as a 16-bit PNG of that
//! name (the fluxes and wetness as `ln(1 + value)`, erosion and deposition as
//! heights, each on `[0, its largest value]`, printed), and `splat.png`, an
//! 8-bit RGBA map of flux, wetness, erosion and deposition for texture
//! splatting. They describe the hydraulic run (not the thermal pass).
//! `--mask FILE`, `--rain FILE` and `--erodibility FILE` (or `--hardness
//! FILE`, erodibility `1 - hardness`) read maps of the terrain's size (a
//! 16-bit PNG's samples as `[0, 1]`) and steer the run (and the thermal pass)
//! through `Controls`: the mask's 0 cells stay untouched and get no rain, rain
//! weights where droplets start, erodibility scales the cuts (0: bedrock).
//! `--threads T` runs on `T` threads (`Parallel`, tiles: the same bits for any
//! `T`); without it, one thread in the fastest mode. Ctrl-C stops the run
//! cleanly: no droplet starts after it (those under way end their walks), the map stays balanced,
//! and the files are written from the map as it stands.
//!
//! `--preset` picks the `physical` model's params: `landscape` (default,
//! `ErosionParams::landscape_for` the map's size: 1.5 droplets per cell unless
//! `--droplets` says otherwise, the discharge map refreshed every 1/128
//! droplet per cell, and rain in rounds until the basins drain) or `seeds` (`ErosionParams::default`, the
//! articles' model, 200 000 droplets) or `landscape-world`
//! (`ErosionParams::landscape_world`: the landscape preset with the map's
//! longer side 512 unit lengths at any size and droplets that live 600 of
//! them, for the same landforms at every resolution; it refuses `--cell-size`, which it sets itself).
//! `--cell-size C` gives the landscape
//! preset's cells their side in its unit length (`Channels::cell_size`: a
//! cell of the 512² map it was tuned on, so `512 / side` for the same
//! landscape at another size): every length then holds in the world. For
//! `--model snowball` it is `SnowballParams::cell_size` (a cell of the
//! original's, in its lengths), for `--model hydrology`
//! `HydrologyParams::cell_size` (likewise).
//! `--sea-level H` makes the cells at or below height `H` sea: for the
//! landscape preset `Channels::sea_level` (droplets end there, their load
//! carried off: rivers keep their slopes to the coast), for `--model
//! hydrology` its `sea_level` (particles entering the sea leave there).
//! The landscape presets rain on in rounds until the basins drain
//! (`Channels::drain`, `Drain::default()`: half a droplet a cell a round
//! while more than 4 % of the land lies in closed depressions, at most 4
//! more a cell, ending early once two rounds in a row leave the basins'
//! room as it was (a pool's must shrink by a fifth a round), and none where
//! the first droplets leave no basin of 0.3 % of the land); `--no-drain`
//! rains their droplets alone (a time known in advance), `--drain` asks for
//! the rounds (landscape presets only).
//!
//! Without `--in` it generates a `--size` x `--size` terrain (default 256) for the
//! seed: `NoiseTerrain` with the `noise` feature, the built-in `fbm_terrain`
//! without. `--in` reads `.r16`/`.raw`, `.r32`/`.f32` or `.png` (raw files square,
//! 16-bit samples as heights in `[0, 1]`). Defaults: model `physical` with its
//! landscape preset, seed 1, output directory `out/`, where it writes
//! `before.png` and `after.png` (16-bit grayscale heightmaps), `after.r32` (the
//! exact heights), `preview.png` (shaded relief) and `change.png` (red eroded,
//! blue deposited), and prints what it wrote.

mod common;

use std::process::ExitCode;

use common::{ControlFiles, Model, Outputs, say};
use hydraulic_erosion::{Channels, Drain, ErosionParams, Layers, ThermalParams};

const CELL_SIZE_NEEDS: &str =
    "--cell-size needs the physical model's landscape preset, or the snowball or hydrology model";

const SEA_LEVEL_NEEDS: &str =
    "--sea-level needs the physical model's landscape preset or the hydrology model";

const WORLD_SETS_CELL_SIZE: &str = "--cell-size: landscape-world sets the cell size itself (512 / the map's longer side); \
     for a cell size of your own use --preset landscape --cell-size C";

const DRAIN_NEEDS: &str = "--drain and --no-drain need the physical model's landscape preset";

/// The most threads `--threads` takes: a pool of many thousands took longer
/// to start than a small run (100 000 seemed to hang).
const MAX_THREADS: usize = 1024;

/// How soon after a first Ctrl-C another counts as a second one (which ends
/// the process at once) rather than the first's echo.
const ECHO: std::time::Duration = std::time::Duration::from_millis(300);

const USAGE: &str = "usage: hydraulic-erosion [--in FILE] [--model M] [--seed S] [--size N] [--droplets K] [--preset landscape|landscape-world|seeds] [--cell-size C] [--sea-level H] [--drain | --no-drain] [--pit-safe] [--thermal | --repose DEG] [--thermal-iterations N] [--layers NAMES] [--mask FILE] [--rain FILE] [--erodibility FILE | --hardness FILE] [--threads T] [--out-dir DIR]";

/// `--help`: every option, what it does and its default.
const HELP: &str = "\
hydraulic-erosion: erodes a terrain (generated, or read from a file) with rain and writes
heightmaps and pictures of it.

usage: hydraulic-erosion [OPTIONS]

terrain:
  --in FILE             read a .r16/.raw or .r32/.f32 (square) or .png heightmap
  --size N              the generated terrain's side without --in [256]
  --seed S              the terrain's and the rain's seed [1]
model:
  --model M             physical, snowball or hydrology [physical]
  --preset P            physical's params: landscape, landscape-world or seeds [landscape]
  --droplets K          droplets (snowballs, particles) [the model's own: landscape 1.5 a cell];
                        the landscape presets' drain rounds may add more (--no-drain: K)
  --cell-size C         a cell's side in the model's lengths (landscape presets, snowball,
                        hydrology) [landscape-world: 512 / the side; else 1]
  --sea-level H         cells at or below H are sea (landscape presets, hydrology) [none]
  --drain, --no-drain   rain on in rounds until the basins drain (landscape presets) [on]
  --pit-safe            no cut below where a droplet goes next (the seeds preset)
                        [on in the landscape presets and hydrology]
  --threads T           run on T threads (1 to 1024), the same bits for any T
                        [one thread, fastest mode]
controls (maps of the terrain's size, 16-bit PNG samples read as [0, 1]):
  --mask FILE           where the run may change cells: 0 untouched and no rain there
  --rain FILE           where droplets start, weighted
  --erodibility FILE    how easily each cell erodes, 0 bedrock (or --hardness FILE: 1 - it)
after the run:
  --thermal             a talus pass: repose 35 degrees, 50 iterations
  --repose DEG          the talus pass with another repose angle, (0, 89]
  --thermal-iterations N
                        the talus pass with N iterations, 0 to 100000 [50]
output:
  --out-dir DIR         where the files go [out]: before.png, after.png (16-bit), after.r32,
                        preview.png (shaded relief), change.png (red eroded, blue deposited)
  --layers NAMES        also any of flux,wetness,sediment,erosion,deposition as 16-bit PNGs,
                        and splat.png (RGBA8)
  -h, --help            this help
  -V, --version         the version

Ctrl-C stops the run cleanly: no droplet starts after it, those under way end their walks,
the map stays balanced, and the files are written from it (exit status 130).
";

/// What the command line asks for.
enum Request {
    /// A run with these options.
    Run(Box<Args>),
    /// `--help`.
    Help,
    /// `--version`.
    Version,
}

struct Args {
    input: Option<String>,
    model: Model,
    seed: u64,
    size: usize,
    threads: Option<usize>,
    /// The landscape preset: its size-dependent fields (the refresh, and the
    /// droplets unless `--droplets` gave them) are set once the map's size is
    /// known.
    landscape: bool,
    /// `--preset landscape-world`: `ErosionParams::landscape_world` once the
    /// map's size is known.
    world: bool,
    /// No `--droplets`: the model's own count (the landscape preset's per cell).
    per_cell: bool,
    /// `--cell-size`: the landscape preset's `Channels::cell_size`, or the
    /// Snowball's or Hydrology's `cell_size`.
    cell_size: Option<f32>,
    /// `--sea-level`: the landscape preset's `Channels::sea_level`, or
    /// Hydrology's `sea_level`.
    sea_level: Option<f32>,
    /// `--drain` (`Some(true)`) or `--no-drain` (`Some(false)`): the
    /// landscape preset's rain in rounds, on or off.
    drain: Option<bool>,
    thermal: Option<f32>,
    /// `--thermal-iterations`: the talus pass's iterations.
    thermal_iterations: Option<u32>,
    /// Output layers to write (`--layers`).
    layers: Vec<String>,
    /// Control maps (`--mask`, `--rain`, `--erodibility`, `--hardness`).
    mask: Option<String>,
    rain: Option<String>,
    erodibility: Option<String>,
    hardness: Option<String>,
    out_dir: Option<String>,
}

impl Args {
    /// The talus pass's params (`--repose`, `--thermal-iterations`, the rest
    /// `ThermalParams`' defaults) with cells `cell_size` height units wide.
    fn thermal_params(&self, cell_size: f32) -> ThermalParams {
        let defaults = ThermalParams::default();
        ThermalParams {
            repose_angle: self.thermal.unwrap_or(defaults.repose_angle),
            iterations: self.thermal_iterations.unwrap_or(defaults.iterations),
            cell_size,
            ..defaults
        }
    }
}

fn parse_args() -> Result<Request, String> {
    let mut args = Args {
        input: None,
        model: Model::by_name("physical")?,
        seed: 1,
        size: 256,
        threads: None,
        landscape: false,
        world: false,
        per_cell: false,
        cell_size: None,
        sea_level: None,
        drain: None,
        thermal: None,
        thermal_iterations: None,
        layers: Vec::new(),
        mask: None,
        rain: None,
        erodibility: None,
        hardness: None,
        out_dir: None,
    };
    let (mut droplets, mut pit_safe, mut preset, mut size) = (None, false, None, None);
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--in" => args.input = Some(value()?),
            "--model" => args.model = Model::by_name(&value()?)?,
            "--seed" => args.seed = value()?.parse().map_err(|e| format!("--seed: {e}"))?,
            "--size" => size = Some(value()?.parse().map_err(|e| format!("--size: {e}"))?),
            "--droplets" => droplets = Some(value()?.parse().map_err(|e| format!("--droplets: {e}"))?),
            "--pit-safe" => pit_safe = true,
            "--cell-size" => {
                args.cell_size = Some(value()?.parse().map_err(|e| format!("--cell-size: {e}"))?)
            }
            "--sea-level" => {
                let level: f32 = value()?.parse().map_err(|e| format!("--sea-level: {e}"))?;
                if !level.is_finite() {
                    return Err("--sea-level: must be a finite height".into());
                }
                args.sea_level = Some(level);
            }
            "--drain" | "--no-drain" if args.drain.is_some() => {
                return Err("--drain and --no-drain: one at most".into());
            }
            "--drain" => args.drain = Some(true),
            "--no-drain" => args.drain = Some(false),
            "--preset" => preset = Some(value()?),
            "--thermal" | "--repose" if args.thermal.is_some() => {
                return Err("--thermal and --repose: one at most".into());
            }
            "--thermal" => args.thermal = Some(ThermalParams::default().repose_angle),
            "--repose" => args.thermal = Some(value()?.parse().map_err(|e| format!("--repose: {e}"))?),
            "--thermal-iterations" => {
                let iterations = value()?.parse().map_err(|e| format!("--thermal-iterations: {e}"))?;
                args.thermal_iterations = Some(iterations);
            }
            "--threads" => {
                let threads = value()?.parse().map_err(|e| format!("--threads: {e}"))?;
                if !(1..=MAX_THREADS).contains(&threads) {
                    return Err(format!("--threads must be from 1 to {MAX_THREADS}"));
                }
                args.threads = Some(threads);
            }
            "--layers" => {
                let names = value()?;
                if names.split(',').all(|n| n.trim().is_empty()) {
                    return Err(format!(
                        "--layers: no layer named (available: {})",
                        common::LAYER_NAMES.join(", ")
                    ));
                }
                for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                    if !common::LAYER_NAMES.contains(&name) {
                        let known = common::LAYER_NAMES.join(", ");
                        return Err(format!("--layers: unknown layer {name:?} (available: {known})"));
                    }
                    if args.layers.iter().any(|given| given == name) {
                        return Err(format!("--layers: {name} given twice"));
                    }
                    args.layers.push(name.to_string());
                }
            }
            "--mask" => args.mask = Some(value()?),
            "--rain" => args.rain = Some(value()?),
            "--erodibility" => args.erodibility = Some(value()?),
            "--hardness" => args.hardness = Some(value()?),
            "--out-dir" => {
                let dir = value()?;
                if dir.is_empty() {
                    return Err("--out-dir: an empty path (use . for the current folder)".into());
                }
                args.out_dir = Some(dir);
            }
            "--help" | "-h" => return Ok(Request::Help),
            "--version" | "-V" => return Ok(Request::Version),
            other => return Err(format!("unknown option {other}\n{USAGE}\n(--help: every option)")),
        }
    }
    match (size, &args.input) {
        (Some(_), Some(_)) => return Err("--size is the generated terrain's: not with --in".into()),
        (Some(side), None) => args.size = side,
        (None, _) => {}
    }
    // Options that tune one model's params.
    if preset.is_some() && !matches!(args.model, Model::Physical(_)) {
        return Err("--preset picks the physical model's params: not with another model".into());
    }
    if pit_safe && matches!(args.model, Model::Snowball(_)) {
        return Err("--pit-safe needs the physical or hydrology model".into());
    }
    let preset = preset.unwrap_or_else(|| "landscape".into());
    match &mut args.model {
        Model::Physical(params) => {
            match preset.as_str() {
                "landscape-world" if args.cell_size.is_some() => {
                    return Err(WORLD_SETS_CELL_SIZE.into());
                }
                "landscape" | "landscape-world" => {
                    *params = ErosionParams::landscape();
                    args.landscape = true;
                    args.world = preset == "landscape-world";
                    args.per_cell = droplets.is_none();
                }
                "seeds" if args.cell_size.is_some() => {
                    return Err(CELL_SIZE_NEEDS.into());
                }
                "seeds" if args.sea_level.is_some() => {
                    return Err(SEA_LEVEL_NEEDS.into());
                }
                "seeds" if args.drain.is_some() => {
                    return Err(DRAIN_NEEDS.into());
                }
                "seeds" => {}
                other => {
                    return Err(format!(
                        "unknown preset {other:?} (available: landscape, landscape-world, seeds)"
                    ));
                }
            }
            params.droplets = droplets.unwrap_or(params.droplets);
            params.pit_safe |= pit_safe;
        }
        Model::Snowball(_) if args.sea_level.is_some() => return Err(SEA_LEVEL_NEEDS.into()),
        Model::Snowball(_) | Model::Hydrology(_) if args.drain.is_some() => return Err(DRAIN_NEEDS.into()),
        Model::Snowball(params) => {
            params.snowballs = droplets.or(params.snowballs);
            params.cell_size = args.cell_size.unwrap_or(params.cell_size);
        }
        Model::Hydrology(params) => {
            params.particles = droplets.unwrap_or(params.particles);
            params.cell_size = args.cell_size.unwrap_or(params.cell_size);
            params.pit_safe |= pit_safe;
            params.sea_level = args.sea_level.or(params.sea_level);
        }
    }
    // Checks that need no terrain, before one is made or read.
    if args.erodibility.is_some() && args.hardness.is_some() {
        return Err("erodibility and hardness say the same thing: give one".into());
    }
    if args.thermal_iterations.is_some() && args.thermal.is_none() {
        args.thermal = Some(ThermalParams::default().repose_angle);
    }
    if args.thermal.is_some() {
        let params = args.thermal_params(1.0);
        params.validate().map_err(|e| {
            let flag = if e.field() == "iterations" { "--thermal-iterations" } else { "--repose" };
            format!("{flag}: {e}")
        })?;
    }
    Ok(Request::Run(Box::new(args)))
}

/// Runs the command line; `Ok(true)` when Ctrl-C stopped the run early (its
/// files written all the same).
fn run() -> Result<bool, String> {
    let args = match parse_args()? {
        Request::Run(args) => *args,
        Request::Help => {
            print!("{HELP}");
            return Ok(false);
        }
        Request::Version => {
            println!("hydraulic-erosion {}", env!("CARGO_PKG_VERSION"));
            return Ok(false);
        }
    };
    let before = match &args.input {
        Some(path) => {
            let map = common::read_map(path)?;
            say!("read {path}: {}x{}", map.width(), map.height());
            map
        }
        None => {
            let (map, name) = common::default_terrain(args.size, args.seed)?;
            say!("generated a {0}x{0} terrain with {name}, seed {1}", args.size, args.seed);
            map
        }
    };
    let mut args = args;
    if let (true, Model::Physical(params)) = (args.landscape, &mut args.model) {
        let (width, height) = (before.width(), before.height());
        let sized = if args.world {
            ErosionParams::landscape_world(width, height)
        } else {
            ErosionParams::landscape_for(width, height)
        };
        params.max_steps = sized.max_steps;
        params.channels = sized.channels.map(|c| Channels {
            cell_size: args.cell_size.unwrap_or(c.cell_size),
            sea_level: args.sea_level.or(c.sea_level),
            drain: match args.drain {
                Some(true) => Some(Drain::default()),
                Some(false) => None,
                None => c.drain,
            },
            ..c
        });
        if args.per_cell {
            params.droplets = sized.droplets;
        }
    }
    if let Some(threads) = args.threads {
        // `Parallel` runs on the current rayon pool: the global one, sized here.
        rayon::ThreadPoolBuilder::new().num_threads(threads).build_global().map_err(|e| e.to_string())?;
    }
    // Ctrl-C asks the run to stop at its next progress report (every 256
    // droplets, or every sweep on threads); a second one ends the process. A
    // signal within `ECHO` of the first is the same Ctrl-C (`timeout`, and
    // some terminals, signal the process and its group: two at once).
    let mut first: Option<std::time::Instant> = None;
    ctrlc::set_handler(move || match first {
        Some(at) if at.elapsed() >= ECHO => std::process::exit(130),
        Some(_) => {}
        None => {
            first = Some(std::time::Instant::now());
            common::STOP.store(true, std::sync::atomic::Ordering::SeqCst);
            eprintln!(
                "stopping: no more rain, the droplets under way end their walks; Ctrl-C again to quit now"
            );
        }
    })
    .map_err(|e| format!("Ctrl-C handler: {e}"))?;
    let mut layers = match args.layers.is_empty() {
        true => None,
        false => Some(Layers::new(before.width(), before.height()).map_err(|e| e.to_string())?),
    };
    // Cells as wide as the model sees them (`1 / height_scale`).
    let thermal_params = args.thermal.map(|_| args.thermal_params(1.0 / args.model.height_scale().max(1e-6)));
    let files = ControlFiles {
        mask: args.mask,
        rain: args.rain,
        erodibility: args.erodibility,
        hardness: args.hardness,
    };
    let maps = files.read(&before)?;
    // The model's params first (a bad `--cell-size` is the model's error,
    // not the thermal pass's cell size derived from it), then the thermal
    // pass: before the run, so bad ones cost no erosion.
    args.model.validate()?;
    let mut thermal = match thermal_params {
        Some(params) => Some(common::thermal_pass(params)?),
        None => None,
    };
    let mut outputs = Outputs::default();
    if let Some(dir) = args.out_dir {
        outputs.dir = dir;
    }
    // Before the run: an output folder that cannot be written costs no
    // erosion.
    outputs.prepare()?;
    let threaded = args.threads.is_some();
    let extras = common::RunExtras { layers: layers.as_mut(), controls: maps.controls() };
    let (mut after, outcome) = common::erode(&args.model, &before, args.seed, threaded, extras)?;
    if let Some(pass) = &mut thermal {
        common::talus(&mut after, pass, maps.controls())?;
    }

    outputs.write(&before, &after, &outcome)?;
    if let Some(layers) = &layers {
        common::write_layers(&outputs.dir, layers, &args.layers)?;
    }
    Ok(outcome.report.cancelled)
}

fn main() -> ExitCode {
    match run() {
        Ok(false) => ExitCode::SUCCESS,
        // Stopped by Ctrl-C: the files are written, but of a shorter run
        // (128 + SIGINT, as a shell reports an interrupted command).
        Ok(true) => ExitCode::from(130),
        Err(message) => {
            eprintln!("hydraulic-erosion: {message}");
            ExitCode::FAILURE
        }
    }
}
