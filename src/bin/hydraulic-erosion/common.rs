//! What the `hydraulic-erosion` tool and the `config` example share: the models
//! by name, the default terrain, a progress bar that Ctrl-C can stop, and the
//! files they write.
//!
//! A new model plugs in with a variant of [`Model`] and its arms in
//! [`Model::by_name`], [`Model::name`] and [`Model::run`].
#![allow(dead_code)]

/// `println!` that gives up quietly when stdout is closed (`tool | head`): the
/// files are what the run is for, the lines only report them.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}
pub(crate) use say;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use hydraulic_erosion::rand_core::SeedableRng;
use hydraulic_erosion::{
    Controls, Format, ReadOptions, RunOptions, Simulator, Thermal, ThermalParams, read_heightmap,
};
use hydraulic_erosion::{
    ErosionParams, ErosionReport, HeightRange, Heightmap, Hillshade, Hydrology, HydrologyParams, Layers,
    MassBalance, Overlays, Physical, Progress, Snowball, SnowballParams, erosion_map, write_heightmap,
};
use indicatif::{ProgressBar, ProgressStyle};
use rand_xoshiro::Xoshiro256StarStar;

/// An erosion model and its params; in a config file `{"physical": {...}}`.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase", deny_unknown_fields))]
pub enum Model {
    /// Newtonian droplets (seed 000).
    Physical(ErosionParams),
    /// Snowballs (seed 001), blurred after the run.
    Snowball(SnowballParams),
    /// Particles with stream, pool and vegetation maps (seed 002).
    Hydrology(HydrologyParams),
}

/// The model names `by_name` knows, for messages.
pub const MODELS: &str = "physical, snowball, hydrology";

/// What a run produced besides the eroded map: its report and any layers to draw
/// over the preview (Hydrology's pool and stream maps).
pub struct Outcome {
    pub report: ErosionReport,
    pub water: Option<Heightmap>,
    pub streams: Option<Heightmap>,
}

impl Model {
    /// The model called `name`, with its default params.
    pub fn by_name(name: &str) -> Result<Self, String> {
        match name {
            "physical" => Ok(Self::Physical(ErosionParams::default())),
            "snowball" => Ok(Self::Snowball(SnowballParams::default())),
            "hydrology" => Ok(Self::Hydrology(HydrologyParams::default())),
            other => Err(format!("unknown model {other:?} (available: {MODELS})")),
        }
    }

    /// The model's vertical exaggeration per cell: slopes are this times the
    /// height difference per cell, so a cell is its inverse in height units
    /// wide in the model's eyes (the landscape preset's, Snowball's and
    /// Hydrology's `height_scale` are per unit length: over their `cell_size`).
    pub fn height_scale(&self) -> f32 {
        match self {
            Self::Physical(p) => p.height_scale / p.channels.map_or(1.0, |c| c.cell_size),
            Self::Snowball(p) => p.in_cells().height_scale,
            Self::Hydrology(p) => p.in_cells().height_scale,
        }
    }

    /// Checks the model's params (as its constructor will).
    pub fn validate(&self) -> Result<(), String> {
        match self {
            Self::Physical(p) => p.validate(),
            Self::Snowball(p) => p.validate(),
            Self::Hydrology(p) => p.validate(),
        }
        .map_err(|e| e.to_string())
    }

    pub fn name(&self) -> &'static str {
        match self {
            Self::Physical(_) => "physical",
            Self::Snowball(_) => "snowball",
            Self::Hydrology(_) => "hydrology",
        }
    }

    /// Erodes `map` with droplets from `Xoshiro256StarStar::seed_from_u64(seed)`,
    /// on the current rayon pool if `threaded` (with the `parallel` feature).
    pub fn run(
        &self,
        map: &mut Heightmap,
        seed: u64,
        progress: &mut dyn Progress,
        threaded: bool,
        extras: RunExtras<'_>,
    ) -> Result<Outcome, String> {
        let run = Run { seed, threaded, extras };
        match self {
            Self::Physical(params) => {
                let report =
                    run.model(&mut Physical::new(*params).map_err(|e| e.to_string())?, map, progress)?;
                Ok(Outcome { report, water: None, streams: None })
            }
            Self::Snowball(params) => {
                let report =
                    run.model(&mut Snowball::new(*params).map_err(|e| e.to_string())?, map, progress)?;
                Ok(Outcome { report, water: None, streams: None })
            }
            Self::Hydrology(params) => {
                let mut hydrology =
                    Hydrology::new(*params, map.width(), map.height()).map_err(|e| e.to_string())?;
                let report = run.model(&mut hydrology, map, progress)?;
                say!(
                    "water: rain {:.3}, pooled {:.3}, evaporated {:.3}, outflow {:.3}, dropped {:.3}; error {:.3e} ({})",
                    report.rain,
                    report.pooled,
                    report.evaporated,
                    report.water_outflow,
                    report.dropped,
                    report.water_error(),
                    if report.is_water_balanced() { "balanced" } else { "NOT balanced" },
                );
                let (water, streams) = (hydrology.pool().clone(), hydrology.stream().clone());
                Ok(Outcome { report: report.erosion, water: Some(water), streams: Some(streams) })
            }
        }
    }
}

/// A model the tools can run: any `Simulator`, and with the `parallel` feature
/// one `Parallel` can run on threads.
#[cfg(feature = "parallel")]
pub trait Runnable: hydraulic_erosion::Tiled {}
#[cfg(feature = "parallel")]
impl<T: hydraulic_erosion::Tiled> Runnable for T {}
/// A model the tools can run.
#[cfg(not(feature = "parallel"))]
pub trait Runnable: hydraulic_erosion::Simulator {}
#[cfg(not(feature = "parallel"))]
impl<T: hydraulic_erosion::Simulator> Runnable for T {}

/// What a run takes besides the model and the map: output layers to record
/// into, and controls (mask, rain, erodibility) to obey.
#[derive(Debug, Default)]
pub struct RunExtras<'a> {
    pub layers: Option<&'a mut Layers>,
    pub controls: Controls<'a>,
}

/// Control maps to read from files (each the terrain's size; a 16-bit PNG's
/// samples as `[0, 1]`): `mask` (the active mask), `rain`, and `erodibility`
/// or `hardness` (erodibility `1 - hardness`). In a config file
/// `{"mask": "mask.png", "hardness": "rock.png"}`.
#[derive(Clone, Debug, Default)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default, deny_unknown_fields))]
pub struct ControlFiles {
    pub mask: Option<String>,
    pub rain: Option<String>,
    pub erodibility: Option<String>,
    pub hardness: Option<String>,
}

/// Reads the heightmap at `path` for the tool: a raw file's size is taken
/// as a square (the tool has no option for another), which its error says.
pub fn read_map(path: &str) -> Result<Heightmap, String> {
    read_heightmap(path, &ReadOptions::default()).map_err(|e| match e {
        hydraulic_erosion::IoError::UnknownSize { bytes, bytes_per_cell } => format!(
            "{path}: {bytes} bytes are not a square of {bytes_per_cell}-byte cells, and raw files \
             (.r16/.raw, .r32/.f32) are read as squares: save it as a PNG, or pad it to a square"
        ),
        e => format!("{path}: {e}"),
    })
}

/// The maps of [`ControlFiles`], read.
pub struct ControlMaps {
    active: Option<Heightmap>,
    rain: Option<Heightmap>,
    erodibility: Option<Heightmap>,
}

impl ControlFiles {
    /// Reads the maps, checking each has the size of `terrain`.
    pub fn read(&self, terrain: &Heightmap) -> Result<ControlMaps, String> {
        let read = |path: &Option<String>| -> Result<Option<Heightmap>, String> {
            let Some(path) = path else { return Ok(None) };
            let map = read_map(path)?;
            terrain.check_same_size(&map).map_err(|e| format!("{path}: {e}"))?;
            Ok(Some(map))
        };
        if self.erodibility.is_some() && self.hardness.is_some() {
            return Err("erodibility and hardness say the same thing: give one".into());
        }
        // Hardness in [0, 1] (1: bedrock) is erodibility `1 - hardness`.
        let erodibility = match read(&self.hardness)? {
            // Outside [0, 1] it would be silently an erodibility above 1 or
            // bedrock (a PNG's samples are in range; an r32's need not be).
            Some(hard) if hard.cells().iter().any(|h| !(0.0..=1.0).contains(h)) => {
                let path = self.hardness.as_deref().unwrap_or_default();
                return Err(format!("{path}: hardness must be in [0, 1] in every cell (1: bedrock)"));
            }
            Some(hard) => Some(
                Heightmap::from_fn(hard.width(), hard.height(), |x, y| (1.0 - hard[(x, y)]).max(0.0))
                    .map_err(|e| e.to_string())?,
            ),
            None => read(&self.erodibility)?,
        };
        let maps = ControlMaps { active: read(&self.mask)?, rain: read(&self.rain)?, erodibility };
        // Each map's range here, naming its file (the run would check it too,
        // naming only the field).
        maps.controls().validate(terrain.width(), terrain.height()).map_err(|e| {
            let file = match &e {
                hydraulic_erosion::Error::Param(p) => match p.field() {
                    "controls.active" => self.mask.as_deref(),
                    "controls.rain" => self.rain.as_deref(),
                    _ => self.erodibility.as_deref().or(self.hardness.as_deref()),
                },
                _ => None,
            };
            match file {
                Some(path) => format!("{path}: {e}"),
                None => e.to_string(),
            }
        })?;
        Ok(maps)
    }
}

impl ControlMaps {
    /// The maps as a run's `Controls`.
    pub fn controls(&self) -> Controls<'_> {
        Controls {
            active: self.active.as_ref().map(|m| m.view()),
            rain: self.rain.as_ref().map(|m| m.view()),
            erodibility: self.erodibility.as_ref().map(|m| m.view()),
        }
    }
}

/// A thermal (talus) pass with `params`, checked before the hydraulic run so
/// that bad params do not cost the run's work.
pub fn thermal_pass(params: ThermalParams) -> Result<Thermal, String> {
    Thermal::new(params).map_err(|e| e.to_string())
}

/// Runs `pass` over `after` with the controls a run obeyed, and says what it did.
pub fn talus(after: &mut Heightmap, pass: &mut Thermal, controls: Controls<'_>) -> Result<(), String> {
    let options = RunOptions::default().with_controls(controls);
    let mut no_draws = Xoshiro256StarStar::seed_from_u64(0);
    let report = pass.run_with(after.view_mut(), &mut no_draws, options).map_err(|e| e.to_string())?;
    say!(
        "thermal: {} iterations, {:.3} moved, steepest slope beyond repose {:.4}",
        report.iterations,
        report.moved,
        report.steepest_excess
    );
    Ok(())
}

/// How a run is made: its seed, whether on the current rayon pool, and its
/// extras.
struct Run<'l> {
    seed: u64,
    threaded: bool,
    extras: RunExtras<'l>,
}

impl Run<'_> {
    /// Runs `model` over `map` through the one `Simulator` entry point (or
    /// `Parallel`'s), in the default (fastest) mode.
    fn model<M: Runnable>(
        self,
        model: &mut M,
        map: &mut Heightmap,
        progress: &mut dyn Progress,
    ) -> Result<M::Report, String> {
        let mut rng = Xoshiro256StarStar::seed_from_u64(self.seed);
        let mut options = RunOptions::default().with_progress(progress);
        if let Some(layers) = self.extras.layers {
            options = options.with_layers(layers);
        }
        options = options.with_controls(self.extras.controls);
        #[cfg(feature = "parallel")]
        if self.threaded {
            let parallel = hydraulic_erosion::Parallel::new(hydraulic_erosion::ParallelParams::default())
                .map_err(|e| e.to_string())?;
            return parallel.run_with(model, map.view_mut(), &mut rng, options).map_err(|e| e.to_string());
        }
        #[cfg(not(feature = "parallel"))]
        if self.threaded {
            return Err("threads need the `parallel` feature".into());
        }
        model.run_with(map.view_mut(), &mut rng, options).map_err(|e| e.to_string())
    }
}

/// Set (by a Ctrl-C handler) to stop the run at its next progress report.
pub static STOP: AtomicBool = AtomicBool::new(false);

/// The terrain to erode when no file is given: a `NoiseTerrain` with the `noise`
/// feature, else the built-in `fbm_terrain`.
pub fn default_terrain(size: usize, seed: u64) -> Result<(Heightmap, &'static str), String> {
    #[cfg(feature = "noise")]
    let generated = hydraulic_erosion::NoiseTerrain::default()
        .generate(size, size, seed)
        .map(|map| (map, "NoiseTerrain (fBm)"))
        .map_err(|e| e.to_string());
    #[cfg(not(feature = "noise"))]
    let generated = hydraulic_erosion::fbm_terrain(size, size, seed)
        .map(|map| (map, "fbm_terrain"))
        .map_err(|e| e.to_string());
    generated
}

/// An `indicatif` bar on stderr, as a [`Progress`] callback (hidden when stderr
/// is not a terminal), that stops the run once [`STOP`] is set.
pub fn progress_bar() -> impl FnMut(u64, u64) -> hydraulic_erosion::Control {
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {pos}/{len} droplets, eta {eta}")
            .expect("the template is valid")
            .progress_chars("=> "),
    );
    move |done, total| {
        bar.set_length(total);
        bar.set_position(done);
        if done == total {
            bar.finish_and_clear();
        }
        if STOP.load(Ordering::SeqCst) {
            bar.finish_and_clear();
            hydraulic_erosion::Control::Stop
        } else {
            hydraulic_erosion::Control::Continue
        }
    }
}

/// Erodes a copy of `before` with a progress bar, prints the report and the mass
/// balance, and returns the eroded map.
pub fn erode(
    model: &Model,
    before: &Heightmap,
    seed: u64,
    threaded: bool,
    extras: RunExtras<'_>,
) -> Result<(Heightmap, Outcome), String> {
    let mut after = before.clone();
    let start = Instant::now();
    let outcome = model.run(&mut after, seed, &mut progress_bar(), threaded, extras)?;
    if outcome.report.cancelled {
        say!("stopped early: {} droplets done", outcome.report.droplets);
    }
    let seconds = start.elapsed().as_secs_f64();
    let balance = MassBalance::of_run(before, &after, &outcome.report);
    print_report(model.name(), (after.width(), after.height()), seconds, &outcome.report, &balance);
    Ok((after, outcome))
}

/// Prints what a run did and whether it balanced.
fn print_report(
    name: &str,
    size: (usize, usize),
    seconds: f64,
    report: &ErosionReport,
    balance: &MassBalance,
) {
    say!(
        "{name}: eroded {}x{} with {} droplets in {seconds:.2} s ({} steps, {:.1} per droplet)",
        size.0,
        size.1,
        report.droplets,
        report.steps,
        report.steps_per_droplet()
    );
    say!(
        "sediment: eroded {:.3}, deposited {:.3}, outflow {:.3}; exact balance error {:.3e} (bound {:.1e}, {})",
        report.eroded,
        report.deposited,
        report.outflow,
        balance.error(),
        balance.bound(),
        if balance.is_conserved() { "conserved" } else { "NOT conserved" }
    );
    // Otherwise silent: heights far beyond the model's scale (a cone 1e30
    // high) leave every droplet where it started (its slopes overflow to a
    // flat normal) or end it unstable.
    if report.droplets > 0 && report.steps == 0 {
        say!(
            "no droplet took a step: is the map flat, or its heights far beyond the model's scale (scale it down)?"
        );
    } else if report.unstable > 0 {
        say!(
            "{} of {} droplets ended unstable (a step would have overflowed): are the heights far beyond \
             the model's scale (scale the map down)?",
            report.unstable,
            report.droplets
        );
    }
}

/// The files to write, named in a directory; a config file's `outputs`.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default, deny_unknown_fields))]
pub struct Outputs {
    /// The directory, created if missing.
    pub dir: String,
    /// Heightmap files of the map before erosion (format from the extension).
    pub before: Vec<String>,
    /// Heightmap files of the eroded map.
    pub after: Vec<String>,
    /// Shaded relief of the eroded map, with the run's water and streams.
    pub preview: Option<String>,
    /// The height change: red eroded, blue deposited.
    pub change: Option<String>,
    /// The height range of 16-bit files; `None`: the range of both maps.
    pub range: Option<HeightRange>,
    /// How the preview is drawn.
    pub hillshade: Hillshade,
}

impl Default for Outputs {
    fn default() -> Self {
        Self {
            dir: "out".into(),
            before: vec!["before.png".into()],
            after: vec!["after.png".into(), "after.r32".into()],
            preview: Some("preview.png".into()),
            change: Some("change.png".into()),
            range: None,
            hillshade: Hillshade::default(),
        }
    }
}

impl Outputs {
    /// Checks the pictures' names before a run: the preview and the change
    /// map are PNG files, and a name of another extension (`preview.r16`)
    /// would hold PNG bytes under it.
    ///
    /// The heightmaps' names need a format's extension (`Format::from_path`),
    /// and a given `range` must be valid.
    pub fn validate(&self) -> Result<(), String> {
        for (field, name) in [("preview", &self.preview), ("change", &self.change)] {
            let Some(name) = name else { continue };
            let png = Path::new(name).extension().is_some_and(|e| e.eq_ignore_ascii_case("png"));
            if !png {
                return Err(format!("outputs.{field}: {name:?} is a PNG picture: name it .png"));
            }
        }
        for (field, names) in [("before", &self.before), ("after", &self.after)] {
            if let Some(name) = names.iter().find(|n| Format::from_path(Path::new(n)).is_none()) {
                return Err(format!(
                    "outputs.{field}: {name:?}: unknown extension: use r16, raw, r32, f32, png or exr"
                ));
            }
        }
        if let Some(range) = &self.range {
            range.validate().map_err(|e| format!("outputs.range: {e}"))?;
        }
        Ok(())
    }

    /// Before a run: [`validate`](Self::validate)s the names, creates the
    /// directory and checks that a file can be written there, so that a bad
    /// output costs no erosion.
    pub fn prepare(&self) -> Result<(), String> {
        self.validate()?;
        let dir = Path::new(&self.dir);
        if dir.exists() && !dir.is_dir() {
            return Err(format!("{}: not a directory", self.dir));
        }
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", self.dir))?;
        let probe = dir.join(".hydraulic-erosion-write-check");
        std::fs::write(&probe, b"").map_err(|e| format!("{}: cannot write there: {e}", self.dir))?;
        // Only the check's own empty file; a failure to remove it is harmless.
        let _ = std::fs::remove_file(&probe);
        Ok(())
    }

    /// Writes every file, printing each with its size.
    pub fn write(&self, before: &Heightmap, after: &Heightmap, outcome: &Outcome) -> Result<(), String> {
        std::fs::create_dir_all(&self.dir).map_err(|e| format!("{}: {e}", self.dir))?;
        let range = self.range.unwrap_or_else(|| HeightRange::of(before).union(HeightRange::of(after)));
        say!("16-bit files map heights [{}, {}] to [0, 65535]", range.min, range.max);
        for (names, map) in [(&self.before, before), (&self.after, after)] {
            for name in names {
                let path = Path::new(&self.dir).join(name);
                write_heightmap(&path, map, range).map_err(|e| format!("{}: {e}", path.display()))?;
                report_file(&path);
            }
        }
        if let Some(name) = &self.preview {
            let overlays = Overlays {
                water: outcome.water.as_ref().map(|g| g.view()),
                streams: outcome.streams.as_ref().map(|g| g.view()),
            };
            let picture = self.hillshade.render(after, overlays).map_err(|e| e.to_string())?;
            let path = Path::new(&self.dir).join(name);
            picture.save_png(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            report_file(&path);
        }
        if let Some(name) = &self.change {
            let picture = erosion_map(before, after, None).map_err(|e| e.to_string())?;
            let path = Path::new(&self.dir).join(name);
            picture.save_png(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            report_file(&path);
        }
        Ok(())
    }
}

/// The output layers the tool writes, by name (`--layers`).
pub const LAYER_NAMES: [&str; 5] = ["flux", "wetness", "sediment", "erosion", "deposition"];

/// The layer `name` as its picture's heights, and how they were made: the
/// fluxes through `ln(1 + v)` (channels and hillslopes in one picture),
/// erosion and deposition as they are.
fn layer_picture(layers: &Layers, name: &str) -> Result<(Heightmap, &'static str), String> {
    let (grid, log) = match name {
        "flux" => (layers.flux(), true),
        "wetness" => (layers.wetness(), true),
        "sediment" => (layers.sediment_flux(), true),
        "erosion" => (layers.erosion(), false),
        "deposition" => (layers.deposition(), false),
        other => return Err(format!("unknown layer {other:?} (available: {})", LAYER_NAMES.join(", "))),
    };
    if !log {
        return Ok((grid, "height"));
    }
    let cells = grid.cells().iter().map(|&v| v.max(0.0).ln_1p()).collect();
    let picture = Heightmap::from_cells(grid.width(), grid.height(), cells).map_err(|e| e.to_string())?;
    Ok((picture, "ln(1 + value)"))
}

/// The range a layer's picture is written on: `[0, its largest value]` (or
/// `[0, 1]` for an empty layer).
fn layer_range(picture: &Heightmap) -> HeightRange {
    let max = picture.cells().iter().fold(0.0_f32, |m, &v| m.max(v));
    HeightRange { min: 0.0, max: if max > 0.0 { max } else { 1.0 } }
}

/// Writes each named layer as a 16-bit PNG `<name>.png` in `dir` (see
/// [`layer_picture`]), printing its mapping, and `splat.png`, an 8-bit RGBA
/// map of flux, wetness, erosion and deposition, when any layer is named.
pub fn write_layers(dir: &str, layers: &Layers, names: &[String]) -> Result<(), String> {
    if names.is_empty() {
        return Ok(());
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("{dir}: {e}"))?;
    for name in names {
        let (picture, how) = layer_picture(layers, name)?;
        let range = layer_range(&picture);
        let path = Path::new(dir).join(format!("{name}.png"));
        write_heightmap(&path, &picture, range).map_err(|e| format!("{}: {e}", path.display()))?;
        say!("{name}: {how} on [0, {:.4e}] as 16-bit samples [0, 65535]", range.max);
        report_file(&path);
    }
    let mut channels = Vec::new();
    for name in ["flux", "wetness", "erosion", "deposition"] {
        let (picture, _) = layer_picture(layers, name)?;
        let range = layer_range(&picture);
        channels.push((picture, range));
    }
    let layer = |i: usize| (&channels[i].0, channels[i].1);
    let splat = hydraulic_erosion::encode_splat_png([layer(0), layer(1), layer(2), layer(3)])
        .map_err(|e| e.to_string())?;
    let path = Path::new(dir).join("splat.png");
    std::fs::write(&path, splat).map_err(|e| format!("{}: {e}", path.display()))?;
    say!(
        "splat: R flux, G wetness (both ln(1 + value)), B erosion, A deposition, each on [0, its largest value], 8 bits"
    );
    report_file(&path);
    Ok(())
}

fn report_file(path: &Path) {
    let bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    say!("wrote {} ({bytes} bytes)", path.display());
}
