//! Criterion benches: the Snowball simulator at 256, 512 and 1024 a side
//! (throughput in snowballs, on an island 10 units high, blur included) and the
//! blur on its own (throughput in cells).
//!
//! `cargo bench --bench snowball`.

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use hydraulic_erosion::Simulator;
use hydraulic_erosion::{BlurParams, Heightmap, Snowball, SnowballParams, blur, island_terrain};

/// `island_terrain` raised to 10 height units, as the original's islands.
fn island(size: usize) -> Heightmap {
    let mut map = island_terrain(size, size, 1).unwrap();
    for h in map.cells_mut() {
        *h *= 10.0;
    }
    map
}

fn snowball(c: &mut Criterion) {
    let mut group = c.benchmark_group("snowball");
    group.sample_size(10);
    for size in [256, 512, 1024] {
        let map = island(size);
        let snowballs = 20_000;
        let mut sim =
            Snowball::new(SnowballParams { snowballs: Some(snowballs), ..SnowballParams::default() })
                .unwrap();
        group.throughput(Throughput::Elements(u64::from(snowballs)));
        group.bench_function(format!("island/{size}"), |b| {
            b.iter_batched_ref(
                || map.clone(),
                |m| black_box(sim.run_seeded(m, 1).unwrap()),
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

fn blur_pass(c: &mut Criterion) {
    let mut group = c.benchmark_group("blur");
    group.sample_size(20);
    for size in [256, 512, 1024] {
        let map = island(size);
        group.throughput(Throughput::Elements((size * size) as u64));
        group.bench_function(format!("pass/{size}"), |b| {
            b.iter_batched_ref(
                || map.clone(),
                |m| black_box(blur(m, &BlurParams::default()).unwrap()),
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, snowball, blur_pass);
criterion_main!(benches);
