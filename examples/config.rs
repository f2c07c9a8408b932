//! Runs an erosion described by a JSON config file: the terrain (generated or read
//! from a file), the model and its params, the seed, and the files to write.
//!
//! ```text
//! cargo run --release --features png,serde,noise --example config -- [CONFIG]
//! ```
//!
//! `CONFIG` defaults to `examples/config.json`, which shows every section:
//!
//! - `seed`: the run's seed (default 1); it also seeds a generated terrain.
//! - `terrain`: `{"builtin": {"size": [W, H]}}` (the built-in `fbm_terrain`),
//!   `{"noise": {"size": [W, H], "params": {...}}}` (`NoiseTerrain`'s fields), or
//!   `{"file": {"path": "...", "options": {...}}}` (`ReadOptions`' fields).
//! - `model`: `{"physical": {...}}` with `ErosionParams`' fields; missing ones
//!   take their defaults, unknown ones are errors.
//! - `controls`: control maps the run obeys, each a file of the terrain's size
//!   (`{"mask": "...", "rain": "...", "erodibility" or "hardness": "..."}`;
//!   optional). The sample's mask keeps the map's rim untouched.
//! - `thermal`: a thermal (talus) pass after the run, `ThermalParams`' fields
//!   (optional); it obeys the controls too. The sample's `cell_size` 0.0167
//!   is a cell as wide as `height_scale` 60 (the default) sees it.
//! - `layers`: output layers to record and write into `outputs.dir` (any of
//!   `flux`, `wetness`, `sediment`, `erosion`, `deposition`; with `splat.png`).
//! - `outputs`: `dir`, `before` and `after` (lists of heightmap files, format from
//!   the extension), `preview` and `change` (PNG names), `range` (of 16-bit
//!   files), `hillshade` (`Hillshade`'s fields).
//! - `report`: a file for the run's report, as JSON (optional).
//!
//! Paths are relative to the current directory.

#[path = "../src/bin/hydraulic-erosion/common.rs"]
mod common;

use std::path::PathBuf;
use std::process::ExitCode;

use common::{ControlFiles, Model, Outputs, say};
use hydraulic_erosion::{
    Heightmap, Layers, NoiseTerrain, ReadOptions, ThermalParams, fbm_terrain, read_heightmap,
};
use serde::Deserialize;

/// A whole run.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    #[serde(default = "default_seed")]
    seed: u64,
    terrain: Terrain,
    model: Model,
    #[serde(default)]
    controls: ControlFiles,
    #[serde(default)]
    thermal: Option<ThermalParams>,
    #[serde(default)]
    layers: Vec<String>,
    #[serde(default)]
    outputs: Outputs,
    #[serde(default)]
    report: Option<PathBuf>,
}

fn default_seed() -> u64 {
    1
}

/// Where the terrain comes from.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
enum Terrain {
    Builtin {
        size: [usize; 2],
    },
    Noise {
        size: [usize; 2],
        #[serde(default)]
        params: NoiseTerrain,
    },
    File {
        path: PathBuf,
        #[serde(default)]
        options: ReadOptions,
    },
}

impl Terrain {
    fn load(&self, seed: u64) -> Result<Heightmap, String> {
        match self {
            Self::Builtin { size: [w, h] } => fbm_terrain(*w, *h, seed).map_err(|e| e.to_string()),
            Self::Noise { size: [w, h], params } => params.generate(*w, *h, seed).map_err(|e| e.to_string()),
            Self::File { path, options } => {
                read_heightmap(path, options).map_err(|e| format!("{}: {e}", path.display()))
            }
        }
    }
}

fn parse(text: &str) -> Result<Config, String> {
    serde_json::from_str(text).map_err(|e| e.to_string())
}

fn run() -> Result<(), String> {
    let path = std::env::args().nth(1).unwrap_or_else(|| "examples/config.json".into());
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    let config = parse(&text).map_err(|e| format!("{path}: {e}"))?;
    // Checked (and the directory made) before the run, so a bad output costs no erosion.
    config.outputs.prepare().map_err(|e| format!("{path}: {e}"))?;
    let before = config.terrain.load(config.seed)?;
    say!(
        "{path}: {}x{} terrain, model {}, seed {}",
        before.width(),
        before.height(),
        config.model.name(),
        config.seed
    );
    if let Some(unknown) = config.layers.iter().find(|n| !common::LAYER_NAMES.contains(&n.as_str())) {
        return Err(format!(
            "{path}: unknown layer {unknown:?} (available: {})",
            common::LAYER_NAMES.join(", ")
        ));
    }
    let maps = config.controls.read(&before)?;
    let mut layers = match config.layers.is_empty() {
        true => None,
        false => Some(Layers::new(before.width(), before.height()).map_err(|e| e.to_string())?),
    };
    // Checked before the run, so bad thermal params cost no erosion.
    let mut thermal = config.thermal.map(common::thermal_pass).transpose()?;
    let extras = common::RunExtras { layers: layers.as_mut(), controls: maps.controls() };
    let (mut after, outcome) = common::erode(&config.model, &before, config.seed, false, extras)?;
    if let Some(pass) = &mut thermal {
        common::talus(&mut after, pass, maps.controls())?;
    }
    config.outputs.write(&before, &after, &outcome)?;
    if let Some(layers) = &layers {
        common::write_layers(&config.outputs.dir, layers, &config.layers)?;
    }
    if let Some(report) = &config.report {
        let json = serde_json::to_string_pretty(&outcome.report).map_err(|e| e.to_string())?;
        std::fs::write(report, json + "\n").map_err(|e| format!("{}: {e}", report.display()))?;
        say!("wrote {}", report.display());
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("config: {message}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sample_config_parses_and_its_params_are_valid() {
        let config = parse(include_str!("config.json")).unwrap();
        let Terrain::Noise { size, params } = &config.terrain else { panic!("{:?}", config.terrain) };
        assert_eq!(*size, [256, 256]);
        params.validate().unwrap();
        let Model::Physical(p) = &config.model else { panic!("{:?}", config.model) };
        p.validate().unwrap();
        assert!(p.pit_safe && p.droplets == 150_000);
        config.outputs.hillshade.validate().unwrap();
        assert_eq!(config.outputs.after.len(), 3);
        config.thermal.unwrap().validate().unwrap();
        assert!(config.layers.iter().all(|n| common::LAYER_NAMES.contains(&n.as_str())));
        // The mask it names is there, at the terrain's size.
        let mask = config.controls.mask.as_deref().unwrap();
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(mask);
        let map = read_heightmap(&file, &ReadOptions::default()).unwrap();
        assert_eq!([map.width(), map.height()], *size);
    }

    #[test]
    fn mistakes_in_a_config_are_errors() {
        let base = r#""terrain": {"builtin": {"size": [8, 8]}}"#;
        assert!(parse(&format!(r#"{{{base}, "model": {{"physical": {{}}}}}}"#)).is_ok());
        assert!(parse(&format!(r#"{{{base}, "model": {{"snowball": {{"blur": false}}}}}}"#)).is_ok());
        assert!(parse(&format!(r#"{{{base}, "model": {{"hydrology": {{"trees": false}}}}}}"#)).is_ok());
        for bad in [
            format!(r#"{{{base}, "model": {{"physcial": {{}}}}}}"#),
            format!(r#"{{{base}, "model": {{"physical": {{"dorplets": 5}}}}}}"#),
            format!(r#"{{{base}, "model": {{"physical": {{}}}}, "sed": 3}}"#),
            format!(
                r#"{{{base}, "model": {{"physical": {{}}}}, "controls": {{"mask": "m.png", "hard": "h.png"}}}}"#
            ),
            format!(r#"{{{base}, "model": {{"physical": {{}}}}, "thermal": {{"repose": 30}}}}"#),
            r#"{"model": {"physical": {}}}"#.to_string(),
        ] {
            assert!(parse(&bad).is_err(), "{bad}");
        }
        // Pictures are PNG files: another extension is refused before the run.
        let outputs = |field: &str, name: &str| {
            format!(r#"{{{base}, "model": {{"physical": {{}}}}, "outputs": {{"{field}": "{name}"}}}}"#)
        };
        assert!(parse(&outputs("preview", "relief.PNG")).unwrap().outputs.validate().is_ok());
        for (field, name) in [("preview", "preview.r16"), ("change", "change"), ("change", "c.png.r32")] {
            let config = parse(&outputs(field, name)).unwrap();
            assert!(config.outputs.validate().unwrap_err().contains(field), "{field}: {name}");
        }
    }
}
