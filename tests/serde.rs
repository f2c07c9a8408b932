//! Config files: params, samplers, reports and grids round-trip through serde,
//! and invalid samplers are rejected on the way in.
#![cfg(feature = "serde")]

use hydraulic_erosion::{BaseSampler, ErosionParams, Offset, Sampler, erode_seeded, fbm_terrain};

#[test]
fn params_round_trip_and_fill_defaults() {
    let params = ErosionParams { droplets: 1234, pit_safe: true, friction: 0.2, ..ErosionParams::default() };
    let json = serde_json::to_string(&params).unwrap();
    assert_eq!(serde_json::from_str::<ErosionParams>(&json).unwrap(), params);
    // A config file names only what it changes.
    let partial: ErosionParams = serde_json::from_str(r#"{"droplets": 10, "dt": 1.0}"#).unwrap();
    assert_eq!(partial, ErosionParams { droplets: 10, dt: 1.0, ..ErosionParams::default() });
    assert!(serde_json::from_str::<ErosionParams>(r#"{"dorplets": 10}"#).is_err());
}

#[test]
fn samplers_round_trip_and_validate() {
    let sampler = Sampler::Offset(Offset::new(BaseSampler::CentralDifference, 0.8).unwrap());
    let json = serde_json::to_string(&sampler).unwrap();
    assert_eq!(serde_json::from_str::<Sampler>(&json).unwrap(), sampler);
    assert_eq!(json, r#"{"offset":{"inner":"central_difference","radius":0.8}}"#);
    let bad = r#"{"offset":{"inner":"eight_facet","radius":-1.0}}"#;
    let err = serde_json::from_str::<Sampler>(bad).unwrap_err();
    assert!(err.to_string().contains("radius"), "{err}");
    // The names before they were snake_case still read.
    let old = r#"{"Offset":{"inner":"CentralDifference","radius":0.8}}"#;
    assert_eq!(serde_json::from_str::<Sampler>(old).unwrap(), sampler);
}

/// Every enum of the crate is written in snake_case, as `Mode` always was,
/// and reads its old PascalCase name too.
#[test]
fn enums_are_snake_case_and_read_their_old_names() {
    use hydraulic_erosion::analysis::Fill;
    use hydraulic_erosion::{EngineSize, Fate, Layout, Mode};
    let name = |v: String| v.trim_matches('"').to_string();
    assert_eq!(name(serde_json::to_string(&Mode::Lockstep).unwrap()), "lockstep");
    assert_eq!(name(serde_json::to_string(&Layout::Tiles).unwrap()), "tiles");
    assert_eq!(name(serde_json::to_string(&Fill::Epsilon).unwrap()), "epsilon");
    assert_eq!(name(serde_json::to_string(&EngineSize::Unreal).unwrap()), "unreal");
    assert_eq!(name(serde_json::to_string(&Fate::LeftMap).unwrap()), "left_map");
    assert_eq!(name(serde_json::to_string(&BaseSampler::EightFacet).unwrap()), "eight_facet");
    assert_eq!(serde_json::from_str::<Layout>(r#""Batches""#).unwrap(), Layout::Batches);
    assert_eq!(serde_json::from_str::<Fate>(r#""StepLimit""#).unwrap(), Fate::StepLimit);
    assert_eq!(serde_json::from_str::<Fill>(r#""Flat""#).unwrap(), Fill::Flat);
}

#[test]
fn reports_round_trip() {
    let mut map = fbm_terrain(32, 32, 1).unwrap();
    let report =
        erode_seeded(&mut map, &ErosionParams { droplets: 200, ..ErosionParams::default() }, 1).unwrap();
    let json = serde_json::to_string(&report).unwrap();
    assert_eq!(serde_json::from_str::<hydraulic_erosion::ErosionReport>(&json).unwrap(), report);
}

#[test]
fn snowball_params_take_a_cell_size_and_fill_defaults() {
    use hydraulic_erosion::SnowballParams;
    let params = SnowballParams { cell_size: 0.5, snowballs: Some(9), ..SnowballParams::default() };
    let json = serde_json::to_string(&params).unwrap();
    assert_eq!(serde_json::from_str::<SnowballParams>(&json).unwrap(), params);
    let partial: SnowballParams = serde_json::from_str(r#"{"cell_size": 2.0}"#).unwrap();
    assert_eq!(partial, SnowballParams { cell_size: 2.0, ..SnowballParams::default() });
    // A config written before `cell_size` existed reads as cells of 1.
    let old: SnowballParams = serde_json::from_str(r#"{"speed": 0.2}"#).unwrap();
    assert_eq!(old.cell_size, 1.0);
}

#[test]
fn channels_take_a_sea_level_and_old_configs_have_none() {
    use hydraulic_erosion::Channels;
    let channels = Channels { sea_level: Some(0.002), ..Channels::default() };
    let params = ErosionParams { channels: Some(channels), ..ErosionParams::landscape() };
    let json = serde_json::to_string(&params).unwrap();
    assert_eq!(serde_json::from_str::<ErosionParams>(&json).unwrap(), params);
    // A config written before `sea_level` existed has no sea.
    let old: Channels = serde_json::from_str(r#"{"momentum": 0.5}"#).unwrap();
    assert_eq!(old, Channels { momentum: 0.5, ..Channels::default() });
    assert_eq!(old.sea_level, None);
}

/// Grids and pictures read from a file are checked as their constructors
/// check them: a picture whose pixels are not `width * height` is an error
/// (it read, and `get` panicked), and an unknown field is refused.
#[test]
fn grids_and_pictures_are_checked_on_the_way_in() {
    use hydraulic_erosion::{Heightmap, RgbImage};
    let picture = RgbImage::from_pixels(2, 1, vec![[1, 2, 3], [4, 5, 6]]).unwrap();
    let json = serde_json::to_string(&picture).unwrap();
    assert_eq!(serde_json::from_str::<RgbImage>(&json).unwrap(), picture);
    for bad in [
        r#"{"width":2,"height":2,"pixels":[]}"#,
        r#"{"width":18446744073709551615,"height":2,"pixels":[[0,0,0]]}"#,
        r#"{"width":1,"height":1,"pixels":[[0,0,0]],"depth":8}"#,
    ] {
        assert!(serde_json::from_str::<RgbImage>(bad).is_err(), "{bad}");
    }
    let map: Heightmap = serde_json::from_str(r#"{"width":2,"height":1,"cells":[1.0,2.0]}"#).unwrap();
    assert_eq!(map.cells(), [1.0, 2.0]);
    let misspelt = r#"{"width":2,"height":1,"cells":[1.0,2.0],"cell_size":2.0}"#;
    assert!(serde_json::from_str::<Heightmap>(misspelt).is_err());
}
