//! The integration tests, one binary: each file of `tests/` is a module
//! here (a binary a file compiled the crate's generic kernels once per file,
//! most of a clean CI run's build). Run one file's tests with
//! `cargo test --test integration NAME::`.

mod common;

mod analysis;
mod api;
mod blur;
mod cli;
mod controls;
mod controls_hydrology;
mod export;
mod generate;
mod grid;
mod hardening;
mod hydrology;
mod io;
mod landscape;
mod layers;
mod normals;
mod parallel;
mod parallel_hydrology;
mod parallel_snowball;
mod physical;
mod pipeline;
mod preview;
mod ranges;
mod resize;
mod serde;
mod snowball;
mod terrain;
mod thermal;
mod value_stability;

/// Every file of `tests/` is a module here: with `autotests = false`, a file
/// left out of this list would build into nothing and its tests never run.
#[test]
fn every_test_file_is_a_module() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let main = std::fs::read_to_string(dir.join("main.rs")).unwrap();
    let mut files = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let Some(name) = path.file_stem().and_then(|n| n.to_str()) else { continue };
        if path.extension().is_some_and(|e| e == "rs") && name != "main" {
            files += 1;
            assert!(
                main.contains(&format!("\nmod {name};\n")),
                "tests/{name}.rs is not a module of tests/main.rs: its tests never run"
            );
        }
    }
    assert!(files >= 28, "{files} test files found in {}", dir.display());
}
