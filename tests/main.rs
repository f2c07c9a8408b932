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
