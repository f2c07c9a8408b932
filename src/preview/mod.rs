//! Pictures of heightmaps: shaded relief with water and stream overlays, and
//! erosion/deposition maps, as RGB buffers (PNG with the `png` feature).

mod change;
mod image;
mod relief;

pub use change::erosion_map;
pub use image::RgbImage;
pub use relief::{Hillshade, Overlays};
