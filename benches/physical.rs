//! Criterion benches: the Physical simulator, sequential and lockstep, at 256,
//! 512 and 1024 a side (throughput in droplets) and the normal samplers on their
//! own.
//!
//! `cargo bench --bench physical`. Speed is compared with `../shared/refbench`
//! by the bench example, as a ratio in one run; these report absolute times.

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use glam::Vec2;
use hydraulic_erosion::{
    CentralDifference, EightFacet, ErosionParams, NormalSampler, Offset, Physical, fbm_terrain,
};
use hydraulic_erosion::{Mode, RunOptions, Simulator};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256StarStar;

fn physical(c: &mut Criterion) {
    let mut group = c.benchmark_group("physical");
    group.sample_size(10);
    for size in [256, 512, 1024] {
        let map = fbm_terrain(size, size, 1).unwrap();
        let droplets = 10_000;
        let mut sim = Physical::new(ErosionParams { droplets, ..ErosionParams::default() }).unwrap();
        group.throughput(Throughput::Elements(u64::from(droplets)));
        group.bench_function(format!("sequential/{size}"), |b| {
            b.iter_batched_ref(
                || map.clone(),
                |m| black_box(sim.run_seeded(m, 1).unwrap()),
                BatchSize::LargeInput,
            )
        });
        group.bench_function(format!("lockstep/{size}"), |b| {
            b.iter_batched_ref(
                || (map.clone(), Xoshiro256StarStar::seed_from_u64(1)),
                |(m, rng)| {
                    black_box(
                        sim.run_with(m.view_mut(), rng, RunOptions::default().with_mode(Mode::Lockstep))
                            .unwrap(),
                    )
                },
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

fn samplers(c: &mut Criterion) {
    let map = fbm_terrain(256, 256, 1).unwrap();
    let view = map.view();
    let points: Vec<Vec2> =
        (0..1024).map(|i| Vec2::new((i * 37 % 254) as f32 + 1.3, (i * 91 % 254) as f32 + 1.6)).collect();
    let mut group = c.benchmark_group("normal");
    group.throughput(Throughput::Elements(points.len() as u64));
    let mut bench = |name: &str, sampler: &dyn Fn(Vec2) -> glam::Vec3| {
        group.bench_function(name, |b| {
            b.iter(|| points.iter().map(|&p| sampler(black_box(p))).sum::<glam::Vec3>())
        });
    };
    bench("eight_facet", &|p| EightFacet.normal(&view, p, 60.0));
    bench("central_difference", &|p| CentralDifference.normal(&view, p, 60.0));
    let offset = Offset::new(EightFacet, 0.8).unwrap();
    bench("offset_eight_facet", &|p| offset.normal(&view, p, 60.0));
    group.finish();
}

criterion_group!(benches, physical, samplers);
criterion_main!(benches);
