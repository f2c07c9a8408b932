//! Criterion benches: the Hydrology simulator at 256, 512 and 1024 a side
//! (throughput in particles), on the built-in terrain with default params; with
//! the `parallel` feature also its tiled runs (`Parallel::run` with a `Hydrology`, tiles
//! of 64) on pools of 1 and 2 threads.
//!
//! `cargo bench --bench hydrology [--features parallel]`. The bench example (`--model hydrology`)
//! prints the time spent descending and flooding for a full-size run.

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use hydraulic_erosion::Simulator;
use hydraulic_erosion::{Hydrology, HydrologyParams, fbm_terrain};

fn hydrology(c: &mut Criterion) {
    let mut group = c.benchmark_group("hydrology");
    group.sample_size(10);
    for (size, particles) in [(256, 5_000), (512, 5_000), (1024, 2_000)] {
        let map = fbm_terrain(size, size, 1).unwrap();
        let params = HydrologyParams { particles, ..HydrologyParams::default() };
        group.throughput(Throughput::Elements(u64::from(particles)));
        group.bench_function(format!("sequential/{size}"), |b| {
            b.iter_batched_ref(
                || (map.clone(), Hydrology::new(params, size, size).unwrap()),
                |(m, h)| black_box(h.run_seeded(m, 1).unwrap()),
                BatchSize::LargeInput,
            )
        });
        #[cfg(feature = "parallel")]
        for threads in [1, 2] {
            let parallel = hydraulic_erosion::Parallel::new(Default::default()).unwrap();
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            group.bench_function(format!("tiled/{size}/{threads}"), |b| {
                b.iter_batched_ref(
                    || (map.clone(), Hydrology::new(params, size, size).unwrap()),
                    |(m, h)| black_box(pool.install(|| parallel.run_seeded(h, m, 1).unwrap())),
                    BatchSize::LargeInput,
                )
            });
        }
    }
    group.finish();
}

criterion_group!(benches, hydrology);
criterion_main!(benches);
