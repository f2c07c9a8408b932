//! Value stability: hashes of seeded runs, pinned.
//!
//! These hashes are the crate's reproducibility promise: the same map, params and
//! seed give the same bits on every platform, with the `std` or the `libm` backend
//! (CI runs this file under both). If a change moves one of them, the change is
//! value-breaking: bump the minor version and say so in CHANGELOG.md.

use crate::common;

use hydraulic_erosion::{BaseSampler, ErosionParams, Offset, Physical, Sampler, erode_seeded, fbm_terrain};
use hydraulic_erosion::{Mode, RunOptions, Simulator};

#[test]
fn built_in_terrain_is_stable_and_matches_refbench() {
    // `ref_physical 64 0 7 --write-map` writes exactly this map.
    let map = fbm_terrain(64, 64, 7).unwrap();
    assert_eq!(format!("{:016x}", common::map_hash(&map)), "37883f36df050192");
}

/// One droplet after another (`Mode::Sequential`), the seeds' order.
#[test]
fn physical_sequential_run_is_stable() {
    use hydraulic_erosion::rand_core::SeedableRng;
    let mut map = fbm_terrain(64, 64, 7).unwrap();
    let params = ErosionParams { droplets: 5_000, ..ErosionParams::default() };
    let mut rng = rand_xoshiro::Xoshiro256StarStar::seed_from_u64(11);
    let sequential = RunOptions::default().with_mode(Mode::Sequential);
    let report = Physical::new(params).unwrap().run_with(map.view_mut(), &mut rng, sequential).unwrap();
    assert_eq!(report.steps, 3_323_683);
    assert_eq!(format!("{:016x}", common::map_hash(&map)), "a3508f4a45e1ec5e");
}

/// `erode` runs the default `Mode::Fast`: lockstep for the 8-facet sampler, so
/// the same bits as the lockstep pin below.
#[test]
fn physical_default_run_is_stable() {
    let mut map = fbm_terrain(64, 64, 7).unwrap();
    let params = ErosionParams { droplets: 5_000, ..ErosionParams::default() };
    let report = erode_seeded(&mut map, &params, 11).unwrap();
    assert_eq!(report.steps, 2_995_988);
    assert_eq!(format!("{:016x}", common::map_hash(&map)), "51da79c72c8ae01e");
}

/// A sampler without a lane kernel, one droplet after another and in lanes
/// (each lane asking its own sampler, `Mode::Fast`).
#[test]
fn physical_pit_safe_offset_run_is_stable() {
    use hydraulic_erosion::rand_core::SeedableRng;
    let params = ErosionParams { droplets: 3_000, pit_safe: true, ..ErosionParams::default() };
    let sampler = Sampler::Offset(Offset::new(BaseSampler::EightFacet, 0.8).unwrap());
    let mut map = fbm_terrain(48, 40, 3).unwrap();
    let mut rng = rand_xoshiro::Xoshiro256StarStar::seed_from_u64(5);
    let sequential = RunOptions::default().with_mode(Mode::Sequential);
    Physical::with_sampler(params, sampler).unwrap().run_with(map.view_mut(), &mut rng, sequential).unwrap();
    assert_eq!(format!("{:016x}", common::map_hash(&map)), "8e87b074e96e5eb4");
    let mut map = fbm_terrain(48, 40, 3).unwrap();
    Physical::with_sampler(params, sampler).unwrap().run_seeded(&mut map, 5).unwrap();
    assert_eq!(format!("{:016x}", common::map_hash(&map)), "22067e8bbd209ea1");
}

#[test]
fn physical_lockstep_run_is_stable() {
    use hydraulic_erosion::rand_core::SeedableRng;
    let mut map = fbm_terrain(64, 64, 7).unwrap();
    let params = ErosionParams { droplets: 5_000, ..ErosionParams::default() };
    let mut rng = rand_xoshiro::Xoshiro256StarStar::seed_from_u64(11);
    let report = Physical::new(params)
        .unwrap()
        .run_with(map.view_mut(), &mut rng, RunOptions::default().with_mode(Mode::Lockstep))
        .unwrap();
    assert_eq!(hydraulic_erosion::LOCKSTEP_LANES, 32);
    assert_eq!(report.steps, 2_995_988);
    assert_eq!(format!("{:016x}", common::map_hash(&map)), "51da79c72c8ae01e");
}

/// The landscape preset (`Channels`): `Mode::Fast` (what `erode` runs) takes
/// its droplets in tiles, `Mode::Sequential` one after another,
/// `Mode::Lockstep` interleaves 8, their headings taken together.
#[test]
fn physical_landscape_runs_are_stable() {
    use hydraulic_erosion::rand_core::SeedableRng;
    let params = ErosionParams { droplets: 6_000, ..ErosionParams::landscape() };
    let mut map = fbm_terrain(64, 64, 7).unwrap();
    let report = erode_seeded(&mut map, &params, 11).unwrap();
    assert_eq!(
        (report.steps, format!("{:016x}", common::map_hash(&map)).as_str()),
        (373_502, "be8761e4f54096b8")
    );
    for (mode, steps, hash) in
        [(Mode::Sequential, 410_545, "4e0ffeaebd75547a"), (Mode::Lockstep, 403_427, "f7fdb86196d3f2b1")]
    {
        let mut map = fbm_terrain(64, 64, 7).unwrap();
        let mut rng = rand_xoshiro::Xoshiro256StarStar::seed_from_u64(11);
        let options = RunOptions::default().with_mode(mode);
        let report = Physical::new(params).unwrap().run_with(map.view_mut(), &mut rng, options).unwrap();
        assert_eq!(report.steps, steps, "{mode:?}");
        assert_eq!(format!("{:016x}", common::map_hash(&map)), hash, "{mode:?}");
    }
}

/// `landscape_for` (discharge refreshed every 32 droplets here; its rain in
/// rounds on, this map takes none) in `Mode::Fast`, `Mode::Sequential` and
/// `Mode::Lockstep`, and with `Channels::stride` on, whose two-cell turns its
/// channels take (the bits differ from the run without).
#[test]
fn physical_landscape_for_runs_are_stable() {
    use hydraulic_erosion::rand_core::SeedableRng;
    let params = ErosionParams::landscape_for(64, 64);
    let run = |params: ErosionParams, mode: Mode| {
        let mut map = fbm_terrain(64, 64, 7).unwrap();
        let mut rng = rand_xoshiro::Xoshiro256StarStar::seed_from_u64(11);
        let options = RunOptions::default().with_mode(mode);
        let report = Physical::new(params).unwrap().run_with(map.view_mut(), &mut rng, options).unwrap();
        (report.droplets, report.steps, format!("{:016x}", common::map_hash(&map)))
    };
    let strided = params.channels.map(|c| hydraulic_erosion::Channels { stride: 0.2, ..c });
    let strided = ErosionParams { channels: strided, ..params };
    let pins = [
        (params, Mode::Fast, (6144, 304_631, "502836d7bfa21db4")),
        (params, Mode::Sequential, (6144, 293_759, "f5cbba711241c056")),
        (params, Mode::Lockstep, (6144, 304_869, "36743dcf899c910e")),
        (strided, Mode::Fast, (6144, 284_768, "90748cc700dc3be2")),
        (strided, Mode::Sequential, (6144, 298_238, "cfcc79895ecf32dd")),
        (strided, Mode::Lockstep, (6144, 290_971, "a64153b7f517904d")),
    ];
    for (params, mode, (droplets, steps, hash)) in pins {
        assert_eq!(run(params, mode), (droplets, steps, hash.to_string()), "{mode:?}, {:?}", params.channels);
    }
}
