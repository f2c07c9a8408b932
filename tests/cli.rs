//! The command-line tool (`--features cli`): options it refuses, with a
//! message, and a small run that writes its files.
#![cfg(feature = "cli")]

use std::process::Command;

fn tool(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_hydraulic-erosion")).args(args).output().expect("the tool runs")
}

/// Runs the tool with `args` and checks that it refuses them, saying `says`
/// on stderr.
fn refuses(args: &[&str], says: &str) {
    let out = tool(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} ran");
    assert!(stderr.contains(says), "{args:?}: {stderr}");
}

/// A folder of one test's own for the tool's files, removed when dropped
/// (a failing test's too).
struct OutDir(std::path::PathBuf);

impl OutDir {
    fn new(name: &str) -> Self {
        Self(std::env::temp_dir().join(format!("he-cli-{name}-{}", std::process::id())))
    }

    fn path(&self) -> &str {
        self.0.to_str().expect("a temporary folder with a UTF-8 path")
    }
}

impl Drop for OutDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `--help` prints every option the tool takes, on stdout, and succeeds;
/// `--version` the package's version; an unknown option points to `--help`.
#[test]
fn help_lists_every_option_and_version_prints_the_version() {
    for flag in ["--help", "-h"] {
        let out = tool(&[flag]);
        assert!(out.status.success(), "{flag}: {}", String::from_utf8_lossy(&out.stderr));
        let help = String::from_utf8(out.stdout).unwrap();
        for option in [
            "--in FILE",
            "--size N",
            "--seed S",
            "--model M",
            "--preset P",
            "--droplets K",
            "--cell-size C",
            "--sea-level H",
            "--drain, --no-drain",
            "--pit-safe",
            "--threads T",
            "--mask FILE",
            "--rain FILE",
            "--erodibility FILE",
            "--hardness FILE",
            "--thermal",
            "--repose DEG",
            "--thermal-iterations N",
            "--out-dir DIR",
            "--layers NAMES",
            "--version",
        ] {
            assert!(help.contains(option), "{flag} does not list {option}:\n{help}");
        }
        for name in ["physical", "snowball", "hydrology", "landscape-world", "seeds", "flux,wetness,sediment"]
        {
            assert!(help.contains(name), "{flag} does not name {name}");
        }
    }
    for flag in ["--version", "-V"] {
        let out = tool(&[flag]);
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        assert_eq!(text, format!("hydraulic-erosion {}\n", env!("CARGO_PKG_VERSION")));
    }
    refuses(&["--frobnicate"], "--help");
}

#[test]
fn cell_size_needs_a_model_with_world_units_and_a_valid_size() {
    refuses(&["--preset", "seeds", "--cell-size", "2"], "--cell-size needs");
    let out_dir = OutDir::new("run");
    let dir = out_dir.path();
    refuses(&["--size", "32", "--cell-size", "100", "--out-dir", dir], "channels.cell_size");
    let out = tool(&["--size", "48", "--cell-size", "2", "--out-dir", dir]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let heights = std::fs::read(format!("{dir}/after.r32")).unwrap();
    assert_eq!(heights.len(), 48 * 48 * 4);
    // The same run in cells of the preset's own size carves other bits.
    assert!(tool(&["--size", "48", "--out-dir", dir]).status.success());
    assert_ne!(std::fs::read(format!("{dir}/after.r32")).unwrap(), heights);
    // Snowball takes it too, and names its own field when out of range.
    refuses(&["--model", "snowball", "--cell-size", "1e-5", "--out-dir", dir], "cell_size");
    let out = tool(&["--model", "snowball", "--size", "48", "--cell-size", "0.5", "--out-dir", dir]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // And Hydrology: 10 is valid alone but its rates times dt * 10 pass 1.
    refuses(&["--model", "hydrology", "--cell-size", "10", "--out-dir", dir], "cell_size");
    let hydrology = ["--model", "hydrology", "--size", "48", "--droplets", "3000", "--out-dir", dir];
    assert!(tool(&hydrology).status.success());
    let heights = std::fs::read(format!("{dir}/after.r32")).unwrap();
    let out = tool(&[&hydrology[..], &["--cell-size", "0.5"]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_ne!(std::fs::read(format!("{dir}/after.r32")).unwrap(), heights);
}

#[test]
fn drain_and_no_drain_need_the_landscape_preset() {
    for args in [
        &["--model", "snowball", "--drain"][..],
        &["--model", "hydrology", "--drain"],
        &["--preset", "seeds", "--drain"],
        &["--model", "snowball", "--no-drain"],
        &["--preset", "seeds", "--no-drain"],
    ] {
        refuses(args, "need the physical model's landscape preset");
    }
    refuses(&["--drain", "--no-drain"], "one at most");
    // The landscape presets rain in rounds until the basins drain: this
    // terrain takes one (2 droplets a cell, not 1.5); `--drain` is the same
    // run, `--no-drain` the droplets alone.
    let out_dir = OutDir::new("drain");
    let dir = out_dir.path();
    let run = |extra: &[&str]| {
        let out = tool(&[&["--size", "96", "--seed", "1", "--out-dir", dir][..], extra].concat());
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(said.contains("conserved"), "{said}");
        (said, std::fs::read(format!("{dir}/after.r32")).unwrap())
    };
    let (said, rounds) = run(&[]);
    assert!(said.contains("with 18432 droplets"), "{said}");
    assert_eq!(run(&["--drain"]).1, rounds);
    let (said, alone) = run(&["--no-drain"]);
    assert!(said.contains("with 13824 droplets"), "{said}");
    assert_ne!(alone, rounds);
    let world = ["--preset", "landscape-world"];
    assert_ne!(run(&world).1, run(&[&world[..], &["--no-drain"]].concat()).1);
}

#[test]
fn sea_level_needs_the_landscape_preset_or_hydrology_and_a_finite_height() {
    for args in [["--model", "snowball", "--sea-level", "0.1"], ["--preset", "seeds", "--sea-level", "0.1"]] {
        refuses(&args, "--sea-level needs");
    }
    refuses(&["--size", "32", "--sea-level", "NaN"], "finite");
    let out_dir = OutDir::new("sea");
    let dir = out_dir.path();
    // A sea above every height: each droplet ends where it starts, nothing moves.
    let out = tool(&["--size", "48", "--sea-level", "10", "--out-dir", dir]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let after = std::fs::read(format!("{dir}/after.r32")).unwrap();
    let out = tool(&["--size", "48", "--droplets", "0", "--out-dir", dir]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read(format!("{dir}/after.r32")).unwrap(), after);
    let out = tool(&[
        "--model",
        "hydrology",
        "--size",
        "32",
        "--droplets",
        "500",
        "--sea-level",
        "0.2",
        "--out-dir",
        dir,
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_bad_repose_angle_is_refused_before_the_run() {
    let out_dir = OutDir::new("repose");
    let dir = out_dir.path();
    for angle in ["90", "0", "-5", "NaN"] {
        let out = tool(&["--size", "32", "--repose", angle, "--out-dir", dir]);
        assert!(!out.status.success(), "--repose {angle}");
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(stderr.contains("repose_angle"), "--repose {angle}: {stderr}");
        // Refused before eroding: no run report, no files.
        assert!(!stdout.contains("sediment:") && !stderr.contains("sediment:"), "--repose {angle}: {stdout}");
        assert!(!std::path::Path::new(dir).exists(), "--repose {angle}");
    }
    let out = tool(&["--size", "32", "--repose", "30", "--out-dir", dir]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("thermal:")
            || String::from_utf8_lossy(&out.stderr).contains("thermal:")
    );
}

/// `--thermal-iterations N` runs the talus pass (at 35 degrees unless
/// `--repose` says otherwise) for `N` iterations; a count out of range is
/// refused before the run.
#[test]
fn thermal_iterations_set_the_talus_pass_and_bad_counts_are_refused() {
    let out_dir = OutDir::new("thermal-iterations");
    let dir = out_dir.path();
    for (args, says) in [
        (&["--thermal-iterations", "100001"][..], "--thermal-iterations: invalid parameter `iterations`"),
        (&["--thermal-iterations", "-1"][..], "--thermal-iterations: invalid digit"),
        (&["--thermal-iterations"][..], "--thermal-iterations needs a value"),
        (&["--repose", "95", "--thermal-iterations", "5"][..], "--repose: invalid parameter `repose_angle`"),
    ] {
        let args = [&["--size", "32", "--out-dir", dir][..], args].concat();
        refuses(&args, says);
        assert!(!std::path::Path::new(dir).exists(), "{args:?}");
    }
    for (args, line) in [
        (&["--thermal-iterations", "7"][..], "thermal: 7 iterations"),
        (&["--repose", "30", "--thermal-iterations", "0"][..], "thermal: 0 iterations"),
        (&["--thermal"][..], "thermal: 50 iterations"),
    ] {
        let out = tool(&[args, &["--size", "32", "--droplets", "500", "--out-dir", dir]].concat());
        let text = [out.stdout, out.stderr].concat();
        let text = String::from_utf8_lossy(&text);
        assert!(out.status.success() && text.contains(line), "{args:?}: {text}");
    }
}

/// Options that do not apply to the run asked for, or that say one thing
/// twice, are refused with a message (they were ignored, or the last one
/// won); so are a pool of threads too large to start quickly, an empty
/// output folder and a hardness map outside [0, 1].
#[test]
fn options_that_do_not_apply_or_conflict_are_refused() {
    refuses(&["--model", "snowball", "--preset", "bogus"], "--preset picks the physical model's params");
    refuses(&["--model", "hydrology", "--preset", "seeds"], "--preset picks the physical model's params");
    refuses(&["--model", "snowball", "--pit-safe"], "--pit-safe needs the physical or hydrology model");
    refuses(&["--thermal", "--repose", "30"], "--thermal and --repose: one at most");
    refuses(&["--repose", "30", "--thermal"], "--thermal and --repose: one at most");
    refuses(&["--in", "terrain.r32", "--size", "64"], "--size is the generated terrain's");
    refuses(&["--threads", "100000"], "--threads must be from 1 to 1024");
    refuses(&["--threads", "0"], "--threads must be from 1 to 1024");
    refuses(&["--out-dir", ""], "--out-dir: an empty path");
    refuses(&["--layers", "flux,wetness,flux"], "--layers: flux given twice");
    refuses(&["--layers", ""], "--layers: no layer named");
    let out_dir = OutDir::new("hardness");
    std::fs::create_dir_all(&out_dir.0).unwrap();
    let hard = out_dir.0.join("hard.r32");
    let below = hydraulic_erosion::Heightmap::filled(16, 16, -1.0).unwrap();
    hydraulic_erosion::write_heightmap(&hard, &below, hydraulic_erosion::HeightRange::of(&below)).unwrap();
    let path = hard.to_str().unwrap();
    refuses(&["--size", "16", "--hardness", path, "--out-dir", out_dir.path()], "hardness must be in [0, 1]");
}

#[test]
fn the_world_preset_is_a_preset_of_its_own() {
    refuses(&["--preset", "world"], "available: landscape, landscape-world, seeds");
    // The world preset derives its cell size from the map: one given as well
    // is refused, not silently put in its place.
    refuses(
        &["--preset", "landscape-world", "--cell-size", "2"],
        "landscape-world sets the cell size itself",
    );
    let out_dir = OutDir::new("world");
    let dir = out_dir.path();
    let out = tool(&["--size", "64", "--preset", "landscape-world", "--out-dir", dir]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("conserved"));
    let world = std::fs::read(format!("{dir}/after.r32")).unwrap();
    assert_eq!(world.len(), 64 * 64 * 4);
    // The preset in cells with the world's cell size and rounds: the step
    // limit still differs (300 against 600 unit lengths), and so do the bits.
    let out = tool(&["--size", "64", "--cell-size", "8", "--drain", "--out-dir", dir]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_ne!(std::fs::read(format!("{dir}/after.r32")).unwrap(), world);
}

/// An output folder the tool cannot write is refused before the run (no
/// erosion spent on it), and a control map out of its range is refused
/// naming its file.
#[test]
fn bad_outputs_and_control_maps_are_refused_before_the_run() {
    let out_dir = OutDir::new("bad-outputs");
    std::fs::create_dir_all(&out_dir.0).unwrap();
    let file = out_dir.0.join("a-file");
    std::fs::write(&file, b"not a folder").unwrap();
    let path = file.to_str().unwrap();
    for dir in [path.to_string(), format!("{path}/below")] {
        let out = tool(&["--size", "32", "--out-dir", &dir]);
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(!out.status.success(), "{dir}: {stdout}");
        assert!(stderr.contains(path) && !stdout.contains("eroded"), "{dir}: {stdout} {stderr}");
    }
    let below = out_dir.0.join("below.r32");
    let negative = hydraulic_erosion::Heightmap::filled(16, 16, -0.5).unwrap();
    hydraulic_erosion::write_heightmap(&below, &negative, hydraulic_erosion::HeightRange::of(&negative))
        .unwrap();
    let below = below.to_str().unwrap();
    // A raw file that is not square: the tool reads raw files as squares.
    let odd = out_dir.0.join("odd.r32");
    std::fs::write(&odd, [0u8; 12]).unwrap();
    refuses(&["--in", odd.to_str().unwrap(), "--out-dir", out_dir.path()], "are read as squares");
    for (flag, field) in [("--mask", "controls.active"), ("--rain", "controls.rain")] {
        let args = ["--size", "16", flag, below, "--out-dir", out_dir.path()];
        let out = tool(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert!(stderr.contains(below) && stderr.contains(field), "{args:?}: {stderr}");
    }
}
