//! Criterion bench: the thermal (talus) pass, 50 iterations (the default) at
//! 256, 512 and 1024 a side (throughput in cell iterations), on `fbm_terrain`
//! raised to a quarter of the side in height, so its slopes pass the angle of
//! repose and material slides.
//!
//! `cargo bench --bench thermal` (one thread: the bench builds without
//! `parallel` unless asked).

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use hydraulic_erosion::{Heightmap, ThermalParams, fbm_terrain, thermal};

/// `fbm_terrain` with heights up to a quarter of its side.
fn rugged(size: usize) -> Heightmap {
    let mut map = fbm_terrain(size, size, 1).unwrap();
    for h in map.cells_mut() {
        *h *= size as f32 / 4.0;
    }
    map
}

fn talus(c: &mut Criterion) {
    let mut group = c.benchmark_group("thermal");
    group.sample_size(10);
    let params = ThermalParams::default();
    for size in [256, 512, 1024] {
        let map = rugged(size);
        group.throughput(Throughput::Elements((size * size) as u64 * u64::from(params.iterations)));
        group.bench_function(format!("rugged/{size}"), |b| {
            b.iter_batched_ref(
                || map.clone(),
                |m| black_box(thermal(m, &params).unwrap()),
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, talus);
criterion_main!(benches);
