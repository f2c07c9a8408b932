//! Output layers (`Layers`): what they record, that recording changes no run,
//! and that they are the same on any number of threads.

use crate::common;

use common::Replay;
use hydraulic_erosion::rand_core::SeedableRng;
use hydraulic_erosion::{
    ErosionParams, Error, GridError, Heightmap, Hydrology, HydrologyParams, Layers, Mode, Physical,
    RunOptions, Simulator, Snowball, SnowballParams, fbm_terrain,
};
use rand_xoshiro::Xoshiro256StarStar;

const SIZE: usize = 64;

/// One configured run: erodes the map with a fixed seed, recording into the
/// layers when given; returns the droplets the report counts.
type Run = Box<dyn Fn(&mut Heightmap, Option<&mut Layers>) -> Result<u64, Error>>;

fn options<'p>(layers: Option<&'p mut Layers>, mode: Mode) -> RunOptions<'p> {
    let options = RunOptions::default().with_mode(mode);
    match layers {
        Some(layers) => options.with_layers(layers),
        None => options,
    }
}

fn physical(params: ErosionParams, mode: Mode) -> Run {
    Box::new(move |map, layers| {
        let mut rng = Xoshiro256StarStar::seed_from_u64(5);
        let report = Physical::new(params)?.run_with(map.view_mut(), &mut rng, options(layers, mode))?;
        Ok(report.droplets)
    })
}

fn seeds(droplets: u32) -> ErosionParams {
    ErosionParams { droplets, ..ErosionParams::default() }
}

fn landscape(droplets: u32) -> ErosionParams {
    ErosionParams { droplets, ..ErosionParams::landscape() }
}

fn snowball() -> Run {
    Box::new(|map, layers| {
        let mut rng = Xoshiro256StarStar::seed_from_u64(5);
        let params = SnowballParams { snowballs: Some(600), ..SnowballParams::default() };
        let report =
            Snowball::new(params)?.run_with(map.view_mut(), &mut rng, options(layers, Mode::Fast))?;
        Ok(report.droplets)
    })
}

fn hydrology() -> Run {
    Box::new(|map, layers| {
        let mut rng = Xoshiro256StarStar::seed_from_u64(5);
        let params = HydrologyParams { particles: 400, ..HydrologyParams::default() };
        let mut model = Hydrology::new(params, map.width(), map.height())?;
        let report = model.run_with(map.view_mut(), &mut rng, options(layers, Mode::Fast))?;
        Ok(report.erosion.droplets)
    })
}

/// Every single-thread way to run a model.
fn runs() -> Vec<(&'static str, Run)> {
    vec![
        ("physical sequential", physical(seeds(800), Mode::Sequential)),
        ("physical lockstep", physical(seeds(800), Mode::Lockstep)),
        ("landscape sequential", physical(landscape(800), Mode::Sequential)),
        ("landscape interleaved", physical(landscape(800), Mode::Lockstep)),
        ("snowball", snowball()),
        ("hydrology", hydrology()),
    ]
}

fn bits(map: &Heightmap) -> Vec<u32> {
    map.cells().iter().map(|h| h.to_bits()).collect()
}

fn terrain() -> Heightmap {
    fbm_terrain(SIZE, SIZE, 3).unwrap()
}

#[test]
fn recording_changes_no_run() {
    for (name, run) in runs() {
        let (mut plain, mut recorded) = (terrain(), terrain());
        let mut layers = Layers::new(SIZE, SIZE).unwrap();
        let a = run(&mut plain, None).unwrap();
        let b = run(&mut recorded, Some(&mut layers)).unwrap();
        assert_eq!(a, b, "{name}");
        assert_eq!(bits(&plain), bits(&recorded), "{name}");
        assert_eq!(layers.droplets(), b, "{name}");
        assert!(layers.flux().sum() > 0.0, "{name}");
        assert!(layers.wetness().sum() > 0.0, "{name}");
        assert!(layers.sediment_flux().sum() > 0.0, "{name}");
    }
}

#[test]
fn deposition_minus_erosion_is_the_height_change_bit_for_bit() {
    for (name, run) in runs() {
        let mut map = terrain();
        let before = map.clone();
        let mut layers = Layers::new(SIZE, SIZE).unwrap();
        run(&mut map, Some(&mut layers)).unwrap();
        let (erosion, deposition) = (layers.erosion(), layers.deposition());
        let mut changed = 0;
        for i in 0..map.len() {
            let (e, d) = (erosion.cells()[i], deposition.cells()[i]);
            assert!(e >= 0.0 && d >= 0.0 && (e == 0.0 || d == 0.0), "{name}: cell {i}: {e} {d}");
            let change = map.cells()[i] - before.cells()[i];
            assert_eq!((d - e).to_bits(), change.to_bits(), "{name}: cell {i}");
            changed += usize::from(change != 0.0);
        }
        assert!(changed > 100, "{name}: {changed} cells changed");
    }
}

#[test]
fn runs_add_up_and_clear_forgets() {
    let run = physical(seeds(500), Mode::Lockstep);
    let mut map = terrain();
    let first = map.clone();
    let mut layers = Layers::new(SIZE, SIZE).unwrap();
    run(&mut map, Some(&mut layers)).unwrap();
    let flux_once = layers.flux();
    run(&mut map, Some(&mut layers)).unwrap();
    assert_eq!(layers.droplets(), 1_000);
    assert!(layers.flux().sum() > flux_once.sum());
    let (erosion, deposition) = (layers.erosion(), layers.deposition());
    for i in 0..map.len() {
        let change = f64::from(map.cells()[i]) - f64::from(first.cells()[i]);
        let recorded = f64::from(deposition.cells()[i]) - f64::from(erosion.cells()[i]);
        assert!(
            (recorded - change).abs() <= 1e-7 * change.abs().max(1e-6),
            "cell {i}: {recorded} vs {change}"
        );
    }
    layers.clear();
    assert_eq!(layers.droplets(), 0);
    for layer in
        [layers.flux(), layers.wetness(), layers.sediment_flux(), layers.erosion(), layers.deposition()]
    {
        assert!(layer.cells().iter().all(|&v| v == 0.0));
    }
}

#[test]
fn layers_of_another_size_are_an_error_and_change_nothing() {
    for (name, run) in runs() {
        let mut map = terrain();
        let mut layers = Layers::new(SIZE, SIZE + 1).unwrap();
        let error = run(&mut map, Some(&mut layers)).unwrap_err();
        assert!(matches!(error, Error::Grid(GridError::SizeMismatch { .. })), "{name}: {error:?}");
        assert_eq!(bits(&map), bits(&terrain()), "{name}");
        assert_eq!(layers, Layers::new(SIZE, SIZE + 1).unwrap(), "{name}");
    }
}

#[test]
fn a_droplet_on_a_flat_map_crosses_nothing() {
    let mut map = Heightmap::filled(16, 16, 0.5).unwrap();
    let mut layers = Layers::new(16, 16).unwrap();
    let mut rng = Xoshiro256StarStar::seed_from_u64(1);
    let mut physical = Physical::new(seeds(50)).unwrap();
    let options = RunOptions::default().with_mode(Mode::Sequential).with_layers(&mut layers);
    physical.run_with(map.view_mut(), &mut rng, options).unwrap();
    assert_eq!(layers.flux().sum(), 0.0);
    assert_eq!(layers.sediment_flux().sum(), 0.0);
    // Each droplet stands in its cell until it evaporates: its water over time.
    assert!(layers.wetness().sum() > 0.0);
}

#[test]
fn flux_gathers_downhill() {
    // A plane falling towards x = 0: water runs west, so more of it crosses
    // the western cells than the eastern ones.
    let mut map = Heightmap::from_fn(SIZE, SIZE, |x, _| x as f32 * 0.01).unwrap();
    let mut layers = Layers::new(SIZE, SIZE).unwrap();
    let mut rng = Xoshiro256StarStar::seed_from_u64(2);
    let mut physical = Physical::new(seeds(4_000)).unwrap();
    physical.run_with(map.view_mut(), &mut rng, RunOptions::default().with_layers(&mut layers)).unwrap();
    let flux = layers.flux();
    let column = |x: usize| (0..SIZE).map(|y| f64::from(flux[(x, y)])).sum::<f64>();
    let (west, east) = (column(4), column(SIZE - 5));
    assert!(west > 3.0 * east, "west {west} east {east}");
}

/// The word whose top 24 bits make the crate's unit draw `k / 2^24`.
fn word_for(k: u64) -> u64 {
    k << 40
}

#[test]
fn one_droplets_tracks_follow_its_trace() {
    // A tilted, bumpy map; one droplet placed by hand, and the same droplet
    // traced step by step on a copy: the tracks are the trace's steps.
    let map = Heightmap::from_fn(SIZE, SIZE, |x, y| {
        x as f32 * 0.02 + y as f32 * 0.007 + 0.05 * ((x * 7 + y * 3) % 5) as f32 / 5.0
    })
    .unwrap();
    let (sx, sy) = (50.25_f32, 31.5_f32);
    let words = vec![
        word_for((sx / SIZE as f32 * 16_777_216.0) as u64),
        word_for((sy / SIZE as f32 * 16_777_216.0) as u64),
    ];
    let params = seeds(1);
    let mut run = map.clone();
    let mut layers = Layers::new(SIZE, SIZE).unwrap();
    let options = RunOptions::default().with_mode(Mode::Sequential).with_layers(&mut layers);
    Physical::new(params).unwrap().run_with(run.view_mut(), &mut Replay(words, 0), options).unwrap();

    let mut traced = map.clone();
    let physical = Physical::new(params).unwrap();
    let mut flux = vec![0.0_f32; SIZE * SIZE];
    let mut wetness = vec![0.0_f32; SIZE * SIZE];
    let mut sediment = vec![0.0_f32; SIZE * SIZE];
    let cell = |p: glam::Vec2| {
        let inside = p.x >= 0.0 && p.y >= 0.0 && p.x < SIZE as f32 && p.y < SIZE as f32;
        inside.then(|| p.y as usize * SIZE + p.x as usize)
    };
    let mut trace = physical.trace(&mut traced, glam::Vec2::new(sx, sy)).unwrap();
    let mut previous = *trace.droplet();
    let mut steps = 0;
    for now in trace.by_ref() {
        let from = cell(previous.position).unwrap();
        wetness[from] += previous.water * params.dt;
        if cell(now.position) != Some(from) {
            flux[from] += previous.water;
            sediment[from] += now.sediment as f32;
        }
        previous = now;
        steps += 1;
    }
    drop(trace);
    assert!(steps > 20, "{steps} steps");
    assert_eq!(bits(&run), bits(&traced));
    let as_bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&layers.flux()), as_bits(&flux));
    assert_eq!(bits(&layers.wetness()), as_bits(&wetness));
    assert_eq!(bits(&layers.sediment_flux()), as_bits(&sediment));
}

#[cfg(feature = "parallel")]
mod parallel {
    use super::*;
    use hydraulic_erosion::{Layout, Parallel, ParallelParams, Tiled};

    fn on_threads<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
        rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(f)
    }

    fn run_parallel<M: Tiled>(
        model: &mut M,
        layout: Layout,
        map: &mut Heightmap,
        layers: Option<&mut Layers>,
    ) -> u64 {
        let params = ParallelParams {
            layout,
            tile_size: 16,
            sweep_size: 256,
            batch_size: 128,
            ..ParallelParams::default()
        };
        let mut rng = Xoshiro256StarStar::seed_from_u64(9);
        let report = Parallel::new(params)
            .unwrap()
            .run_with(model, map.view_mut(), &mut rng, options(layers, Mode::Fast))
            .unwrap();
        report.as_ref().droplets
    }

    /// A configured parallel run (see [`Run`]), on the current pool.
    type ParallelRun = Box<dyn Fn(&mut Heightmap, Option<&mut Layers>) -> u64 + Sync>;

    /// Every parallel way to run a model, on a given number of threads.
    fn parallel_runs() -> Vec<(&'static str, ParallelRun)> {
        vec![
            (
                "physical tiles",
                Box::new(|map, layers| {
                    run_parallel(&mut Physical::new(seeds(1_500)).unwrap(), Layout::Tiles, map, layers)
                }),
            ),
            (
                "physical batches",
                Box::new(|map, layers| {
                    run_parallel(&mut Physical::new(seeds(1_500)).unwrap(), Layout::Batches, map, layers)
                }),
            ),
            (
                "landscape tiles",
                Box::new(|map, layers| {
                    run_parallel(&mut Physical::new(landscape(1_500)).unwrap(), Layout::Tiles, map, layers)
                }),
            ),
            (
                "snowball tiles",
                Box::new(|map, layers| {
                    let params = SnowballParams { snowballs: Some(800), ..SnowballParams::default() };
                    run_parallel(&mut Snowball::new(params).unwrap(), Layout::Tiles, map, layers)
                }),
            ),
            (
                "snowball batches",
                Box::new(|map, layers| {
                    let params = SnowballParams { snowballs: Some(800), ..SnowballParams::default() };
                    run_parallel(&mut Snowball::new(params).unwrap(), Layout::Batches, map, layers)
                }),
            ),
            (
                "hydrology tiles",
                Box::new(|map, layers| {
                    let params = HydrologyParams { particles: 600, ..HydrologyParams::default() };
                    run_parallel(&mut Hydrology::new(params, SIZE, SIZE).unwrap(), Layout::Tiles, map, layers)
                }),
            ),
        ]
    }

    #[test]
    fn parallel_layers_are_the_same_on_any_thread_count_and_change_no_run() {
        for (name, run) in parallel_runs() {
            let mut plain = terrain();
            run(&mut plain, None);
            let mut results = Vec::new();
            for threads in [1, 2, 3] {
                let mut map = terrain();
                let before = map.clone();
                let mut layers = Layers::new(SIZE, SIZE).unwrap();
                let droplets = on_threads(threads, || run(&mut map, Some(&mut layers)));
                assert_eq!(bits(&map), bits(&plain), "{name} on {threads} threads");
                assert_eq!(layers.droplets(), droplets, "{name}");
                assert!(layers.flux().sum() > 0.0 && layers.wetness().sum() > 0.0, "{name}");
                let (erosion, deposition) = (layers.erosion(), layers.deposition());
                for i in 0..map.len() {
                    let change = map.cells()[i] - before.cells()[i];
                    let recorded = deposition.cells()[i] - erosion.cells()[i];
                    assert_eq!(recorded.to_bits(), change.to_bits(), "{name}: cell {i}");
                }
                results.push([layers.flux(), layers.wetness(), layers.sediment_flux()].map(|l| bits(&l)));
            }
            assert!(results.windows(2).all(|w| w[0] == w[1]), "{name}: layers differ between thread counts");
        }
    }

    #[test]
    fn parallel_refuses_layers_of_another_size() {
        let mut map = terrain();
        let mut layers = Layers::new(SIZE + 1, SIZE).unwrap();
        let mut rng = Xoshiro256StarStar::seed_from_u64(9);
        let parallel = Parallel::new(ParallelParams::default()).unwrap();
        let options = RunOptions::default().with_layers(&mut layers);
        let error = parallel
            .run_with(&mut Physical::new(seeds(100)).unwrap(), map.view_mut(), &mut rng, options)
            .unwrap_err();
        assert!(matches!(error, Error::Grid(GridError::SizeMismatch { .. })), "{error:?}");
        assert_eq!(bits(&map), bits(&terrain()));
    }
}

/// The layers' bits, pinned for every single-thread way to run a model (as
/// `value_stability.rs` pins the maps): a faster recording must record the
/// same sums in the same order.
#[test]
fn layers_bits_are_pinned() {
    let pinned = [
        (
            "physical sequential",
            "3b3a96dd264d375d 89a123813014b01d ddd1e9f9560822fe cc8ddb1b5684c71a feeb8b4fc547a8e8",
        ),
        (
            "physical lockstep",
            "3258ceca0547b3f1 925a0a6f814509a5 fa66bf7d320d38dc ad5ddb4bbcbf8159 bfe833e257f8a5bb",
        ),
        (
            "landscape sequential",
            "0bf649d2f3b83654 93bb12c2313c2847 01c0b874900cde2a 70d265791c1382e5 16ff2906d2312381",
        ),
        (
            "landscape interleaved",
            "0fdefb380649fb2b 84c43c4f6e30189c 3e7be5bcb47d5799 a660ee15387f2c2e 0867d4b1e4618eb6",
        ),
        ("snowball", "0cb968961ffb6325 1f8456bdc87e6325 b006440fc28e34d7 adf3914c22faf1d3 73fb41f0125408ca"),
        ("hydrology", "9938411ddb01608f fd796d57320fcc80 439096c9f1f29b51 8995603c745cb3cf dd5b4164150fe3e9"),
    ];
    let (mut found_all, mut ok) = (Vec::new(), true);
    for ((name, run), (pinned_name, hashes)) in runs().into_iter().zip(pinned) {
        assert_eq!(name, pinned_name);
        let mut map = terrain();
        let mut layers = Layers::new(SIZE, SIZE).unwrap();
        run(&mut map, Some(&mut layers)).unwrap();
        // Sums of water and loads: none below 0 (a load the books' rounding
        // left a hair below 0 made the sediment flux -1.5e-8 here and there).
        for (layer, what) in
            [(layers.flux(), "flux"), (layers.wetness(), "wetness"), (layers.sediment_flux(), "sediment")]
        {
            assert!(layer.cells().iter().all(|&v| v >= 0.0), "{name}: {what} below 0");
        }
        let found =
            [layers.flux(), layers.wetness(), layers.sediment_flux(), layers.erosion(), layers.deposition()]
                .iter()
                .map(|layer| format!("{:016x}", common::map_hash(layer)))
                .collect::<Vec<_>>()
                .join(" ");
        found_all.push(format!("(\"{name}\", \"{found}\"),"));
        ok &= found == hashes;
    }
    assert!(ok, "the layers' bits moved:\n{}", found_all.join("\n"));
}

/// A cell with no net change holds +0 in both net layers, in every build:
/// `(-0.0).max(0.0)` may give either zero (it gave -0 in a debug build).
#[test]
fn unchanged_cells_hold_positive_zero() {
    let fresh = Layers::new(5, 4).unwrap();
    for layer in [fresh.erosion(), fresh.deposition()] {
        assert!(layer.cells().iter().all(|c| c.to_bits() == 0), "{:?}", layer.cells());
    }
    // Snowball's blur moves every cell; the other runs leave some as they were.
    let mut unchanged = 0;
    for (name, run) in runs() {
        let before = terrain();
        let mut map = before.clone();
        let mut layers = Layers::new(SIZE, SIZE).unwrap();
        run(&mut map, Some(&mut layers)).unwrap();
        let (erosion, deposition) = (layers.erosion(), layers.deposition());
        for i in 0..SIZE * SIZE {
            if map.cells()[i] == before.cells()[i] {
                unchanged += 1;
                assert_eq!(erosion.cells()[i].to_bits(), 0, "{name}: erosion at {i}");
                assert_eq!(deposition.cells()[i].to_bits(), 0, "{name}: deposition at {i}");
            }
        }
    }
    assert!(unchanged > 100, "{unchanged} cells left as they were");
}
