//! The API as a downstream crate uses it, from the README and rustdoc only:
//! swap models through `Simulator`, plug a sampler into every mode, erode a
//! window of a larger buffer, cancel a run, and `?` across construction and run.

use core::convert::Infallible;

use glam::Vec3;
use hydraulic_erosion::rand_core::{SeedableRng, TryRng};
use hydraulic_erosion::{
    Control, DynSampler, EightFacet, ErosionParams, ErosionReport, Error, GridRef, GridWindow, Heightmap,
    Hydrology, HydrologyParams, MassBalance, Mode, NormalSampler, Physical, RunOptions, Simulator, Snowball,
    SnowballParams, erode, fbm_terrain,
};
use rand_xoshiro::Xoshiro256StarStar;

fn physical(droplets: u32) -> Physical {
    Physical::new(ErosionParams { droplets, ..ErosionParams::default() }).unwrap()
}

/// A generic caller: erodes with whatever model it is given.
fn erode_with<M: Simulator>(model: &mut M, map: &mut Heightmap, seed: u64) -> Result<ErosionReport, Error> {
    let before = map.clone();
    let report = model.run_seeded(map, seed)?;
    let books = *report.as_ref();
    assert!(MassBalance::of_run(&before, map, &books).is_conserved());
    Ok(books)
}

#[test]
fn models_swap_through_the_trait() {
    let mut map = fbm_terrain(48, 48, 1).unwrap();
    let mut hydrology =
        Hydrology::new(HydrologyParams { particles: 300, ..Default::default() }, 48, 48).unwrap();
    let snowballs = SnowballParams { snowballs: Some(500), ..Default::default() };
    assert_eq!(erode_with(&mut physical(400), &mut map, 1).unwrap().droplets, 400);
    assert_eq!(erode_with(&mut Snowball::new(snowballs).unwrap(), &mut map, 1).unwrap().droplets, 500);
    assert_eq!(erode_with(&mut hydrology, &mut map, 1).unwrap().droplets, 300);

    // Held as trait objects, chosen at run time.
    let mut models: Vec<Box<dyn Simulator<Report = ErosionReport>>> =
        vec![Box::new(physical(200)), Box::new(Snowball::new(snowballs).unwrap())];
    for model in &mut models {
        let mut rng = Xoshiro256StarStar::seed_from_u64(3);
        let before = map.clone();
        let report = model.run_with(map.view_mut(), &mut rng, RunOptions::default()).unwrap();
        assert!(MassBalance::of_run(&before, &map, &report).is_conserved());
    }
}

/// A user's sampler: forward differences.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Forward;

impl NormalSampler for Forward {
    fn cell_normal(&self, grid: &GridRef<'_>, x: usize, y: usize, scale: f32) -> Vec3 {
        let h = grid[(x, y)];
        let hx = grid.get(x + 1, y).unwrap_or(h);
        let hy = grid.get(x, y + 1).unwrap_or(h);
        Vec3::new(scale * (h - hx), 1.0, scale * (h - hy)).normalize()
    }
}

#[test]
fn samplers_with_the_8_facet_lanes_erode_as_eight_facet_in_every_mode() {
    // The built-in enum's and a boxed 8-facet sampler run as `EightFacet`
    // (the code compiled once in the crate): the same map and report in
    // every mode, for the seeds' model and the landscape preset.
    let start = fbm_terrain(48, 48, 3).unwrap();
    let seeds = ErosionParams { droplets: 400, ..ErosionParams::default() };
    let landscape = ErosionParams::landscape_for(48, 48);
    for params in [seeds, landscape] {
        for mode in [Mode::Fast, Mode::Sequential, Mode::Lockstep] {
            let run = |model: &mut dyn Simulator<Report = ErosionReport>| {
                let mut map = start.clone();
                let options = RunOptions::default().with_mode(mode);
                let report = model
                    .run_with(map.view_mut(), &mut Xoshiro256StarStar::seed_from_u64(9), options)
                    .unwrap();
                (map, report)
            };
            let (map, report) = run(&mut Physical::with_sampler(params, EightFacet).unwrap());
            assert!(report.steps > 0);
            let mut built_in =
                Physical::with_sampler(params, hydraulic_erosion::Sampler::EightFacet).unwrap();
            assert_eq!(run(&mut built_in), (map.clone(), report), "{mode:?}");
            let mut boxed =
                Physical::with_sampler(params, Box::new(EightFacet) as Box<dyn DynSampler>).unwrap();
            assert_eq!(run(&mut boxed), (map, report), "{mode:?}");
        }
    }
}

#[test]
fn a_custom_sampler_runs_in_every_mode() {
    let start = fbm_terrain(40, 40, 2).unwrap();
    let params = ErosionParams { droplets: 300, ..ErosionParams::default() };
    let mut results = Vec::new();
    for mode in [Mode::Fast, Mode::Sequential, Mode::Lockstep] {
        let mut map = start.clone();
        let mut model = Physical::with_sampler(params, Forward).unwrap();
        let options = RunOptions::default().with_mode(mode);
        let report =
            model.run_with(map.view_mut(), &mut Xoshiro256StarStar::seed_from_u64(5), options).unwrap();
        assert_eq!(report.droplets, 300);
        assert!(MassBalance::of_run(&start, &map, &report).is_conserved());
        results.push(map);
    }
    // Fast is lockstep, whose lanes ask each lane's own sampler; the
    // sequential mode erodes alike with other bits.
    assert_eq!(results[0], results[2]);
    assert_ne!(results[0], results[1]);

    // Boxed, chosen at run time: the same bits as the plain sampler (Fast).
    let mut boxed = Physical::with_sampler(params, Box::new(Forward) as Box<dyn DynSampler>).unwrap();
    let mut map = start.clone();
    boxed.run_seeded(&mut map, 5).unwrap();
    assert_eq!(map, results[0]);
    // A boxed 8-facet sampler keeps its lanes.
    let mut lanes = Physical::with_sampler(params, Box::new(EightFacet) as Box<dyn DynSampler>).unwrap();
    let (mut a, mut b) = (start.clone(), start.clone());
    lanes.run_seeded(&mut a, 5).unwrap();
    physical(300).run_seeded(&mut b, 5).unwrap();
    assert_eq!(a, b);

    // And on threads, in both layouts (a sampler without lanes runs in batches).
    #[cfg(feature = "parallel")]
    for layout in [hydraulic_erosion::Layout::Tiles, hydraulic_erosion::Layout::Batches] {
        use hydraulic_erosion::{Parallel, ParallelParams};
        let parallel = Parallel::new(ParallelParams { layout, ..ParallelParams::default() }).unwrap();
        let mut model = Physical::with_sampler(params, Forward).unwrap();
        let mut map = start.clone();
        let report = parallel.run_seeded(&mut model, &mut map, 5).unwrap();
        assert_eq!(report.droplets, 300);
        assert!(MassBalance::of_run(&start, &map, &report).is_conserved());
    }

    // Step by step.
    let model = Physical::with_sampler(params, Forward).unwrap();
    let mut map = start.clone();
    let steps = model.trace(&mut map, glam::Vec2::new(20.5, 20.5)).unwrap().count();
    assert!(steps > 0);
}

#[test]
fn a_window_of_a_larger_buffer_erodes_in_place() {
    let (world_w, world_h) = (100, 70);
    let world: Vec<f32> = (0..world_w * world_h)
        .map(|i| ((i % world_w) as f32 * 0.07).sin() + (i / world_w) as f32 * 0.01)
        .collect();
    let mut buffer = world.clone();
    let (x, y, w, h) = (20, 10, 50, 40);
    let mut window = GridWindow::new(&mut buffer, world_w, x, y, w, h).unwrap();
    let region = window.to_heightmap().unwrap();
    let mut rng = Xoshiro256StarStar::seed_from_u64(9);
    let report = window.run_with(&mut physical(800), &mut rng, RunOptions::default()).unwrap();
    assert_eq!(report.droplets, 800);

    // The same bits as a run on the region copied out.
    let mut expected = region.clone();
    physical(800).run_seeded(&mut expected, 9).unwrap();
    for row in 0..world_h {
        for col in 0..world_w {
            let got = buffer[row * world_w + col];
            let inside = (x..x + w).contains(&col) && (y..y + h).contains(&row);
            let want = if inside { expected[(col - x, row - y)] } else { world[row * world_w + col] };
            assert_eq!(got.to_bits(), want.to_bits(), "({col}, {row})");
        }
    }
    // Windows that do not fit are typed errors.
    assert!(GridWindow::new(&mut buffer, world_w, 60, 0, 50, 10).is_err());
    assert!(GridWindow::new(&mut buffer, world_w, 0, 40, 10, 40).is_err());
    assert!(GridWindow::new(&mut buffer, world_w, 0, 0, 0, 10).is_err());
}

/// A run of some model on a map, reporting to a progress sink.
type CancellableRun<'a> =
    dyn FnMut(&mut Heightmap, &mut dyn hydraulic_erosion::Progress) -> ErosionReport + 'a;

#[test]
fn runs_cancel_with_the_map_balanced() {
    let start = fbm_terrain(48, 48, 4).unwrap();
    let stop_after =
        |limit: u64| move |done: u64, _: u64| if done >= limit { Control::Stop } else { Control::Continue };
    let mut hydrology =
        Hydrology::new(HydrologyParams { particles: 100_000, ..Default::default() }, 48, 48).unwrap();
    let mut models: Vec<Box<CancellableRun<'_>>> = vec![
        Box::new(|m, p| {
            let mut rng = Xoshiro256StarStar::seed_from_u64(1);
            physical(100_000)
                .run_with(m.view_mut(), &mut rng, RunOptions::default().with_progress(p))
                .unwrap()
        }),
        Box::new(|m, p| {
            let mut rng = Xoshiro256StarStar::seed_from_u64(1);
            let mut model =
                Snowball::new(SnowballParams { snowballs: Some(100_000), ..Default::default() }).unwrap();
            model.run_with(m.view_mut(), &mut rng, RunOptions::default().with_progress(p)).unwrap()
        }),
        Box::new(move |m, p| {
            let mut rng = Xoshiro256StarStar::seed_from_u64(1);
            hydrology
                .run_with(m.view_mut(), &mut rng, RunOptions::default().with_progress(p))
                .unwrap()
                .erosion
        }),
    ];
    for run in &mut models {
        let mut map = start.clone();
        let mut progress = stop_after(1_000);
        let report = run(&mut map, &mut progress);
        assert!(report.cancelled && report.droplets < 2_000, "{report:?}");
        assert!(MassBalance::of_run(&start, &map, &report).is_conserved());
    }
}

/// A tool's function: `?` on construction, windows and runs alike.
fn tool(buffer: &mut [f32], stride: usize) -> Result<u64, Error> {
    let mut physical = Physical::new(ErosionParams { droplets: 100, ..ErosionParams::default() })?;
    let mut hydrology = Hydrology::new(HydrologyParams { particles: 50, ..Default::default() }, 16, 16)?;
    let mut window = GridWindow::new(buffer, stride, 0, 0, 16, 16)?;
    let mut rng = Xoshiro256StarStar::seed_from_u64(1);
    let a = window.run_with(&mut physical, &mut rng, RunOptions::default())?;
    let b = window.run_with(&mut hydrology, &mut rng, RunOptions::default())?;
    Ok(a.droplets + b.erosion.droplets)
}

#[test]
fn question_mark_works_across_construction_and_run() {
    let mut buffer: Vec<f32> = (0..20 * 16).map(|i| (i % 20) as f32 * 0.05).collect();
    assert_eq!(tool(&mut buffer, 20).unwrap(), 150);
    assert!(matches!(tool(&mut buffer, 10), Err(Error::Grid(_))));
    buffer[5] = f32::NAN;
    assert!(matches!(tool(&mut buffer, 20), Err(Error::Grid(_))));
    let bad = Physical::new(ErosionParams { dt: -1.0, ..ErosionParams::default() }).map_err(Error::from);
    assert!(matches!(bad, Err(Error::Param(e)) if e.field() == "dt"));
}

/// A rand 0.9 generator (another `rand_core` than this crate's 0.10) passed
/// through a newtype that implements 0.10's `TryRng` with `Error = Infallible`
/// (which makes it an `Rng`).
struct Rand09<R>(R);

impl<R: rand09::RngCore> TryRng for Rand09<R> {
    type Error = Infallible;
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok(self.0.next_u32())
    }
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        Ok(self.0.next_u64())
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        self.0.fill_bytes(dst);
        Ok(())
    }
}

#[test]
fn a_rand_09_generator_bridges_to_rand_core_010() {
    use rand09::SeedableRng as _;
    let run = || {
        let mut map = fbm_terrain(32, 32, 1).unwrap();
        let mut rng = Rand09(rand09::rngs::StdRng::seed_from_u64(7));
        let params = ErosionParams { droplets: 200, ..ErosionParams::default() };
        let report = erode(&mut map, &params, &mut rng).unwrap();
        (map, report)
    };
    let (a, ra) = run();
    let (b, _) = run();
    assert_eq!(a, b);
    assert_eq!(ra.droplets, 200);
}

/// A model of the caller's own: it reports a bad param as the crate's
/// models do (`ParamError::new`), and runs wherever a `Simulator` does.
#[test]
fn a_callers_own_simulator_reports_its_params_as_the_crates_do() {
    use hydraulic_erosion::{GridMut, ParamError};

    /// Raises every cell by `lift`, which must be finite.
    struct Lift {
        lift: f32,
    }

    impl Simulator for Lift {
        type Report = ErosionReport;

        fn run_with(
            &mut self,
            mut map: GridMut<'_>,
            _rng: &mut dyn hydraulic_erosion::rand_core::Rng,
            _options: RunOptions<'_>,
        ) -> Result<ErosionReport, Error> {
            if !self.lift.is_finite() {
                return Err(ParamError::new("lift", "finite").into());
            }
            for cell in map.cells_mut() {
                *cell += self.lift;
            }
            Ok(ErosionReport::default())
        }
    }

    let mut map = Heightmap::filled(4, 4, 1.0).unwrap();
    let err = Lift { lift: f32::NAN }.run_seeded(&mut map, 0).unwrap_err();
    assert_eq!(err, Error::Param(ParamError::new("lift", "finite")));
    assert_eq!(err.to_string(), "invalid parameter `lift`: must be finite");
    let mut boxed: Box<dyn Simulator<Report = ErosionReport>> = Box::new(Lift { lift: 0.5 });
    boxed.run_seeded(&mut map, 0).unwrap();
    assert!(map.cells().iter().all(|&h| h == 1.5));
}
