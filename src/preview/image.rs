//! An 8-bit RGB picture.

use alloc::vec::Vec;

/// An 8-bit RGB picture, row by row from the top (pixel `(x, y)` shows cell
/// `(x, y)` of the map it was drawn from), 3 bytes a pixel.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct RgbImage {
    width: usize,
    height: usize,
    pixels: Vec<[u8; 3]>,
}

/// Checked as [`RgbImage::from_pixels`] checks: the pixels must be
/// `width * height` (a picture read with fewer panicked on `get`), and no
/// unknown field.
#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for RgbImage {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Raw {
            width: usize,
            height: usize,
            pixels: Vec<[u8; 3]>,
        }
        let raw = Raw::deserialize(deserializer)?;
        RgbImage::from_pixels(raw.width, raw.height, raw.pixels).map_err(serde::de::Error::custom)
    }
}

impl RgbImage {
    /// An image of your own pixels, row by row (to write it with the crate's PNG
    /// encoder).
    ///
    /// # Errors
    /// [`GridError::LengthMismatch`](crate::GridError::LengthMismatch) unless
    /// `pixels` holds exactly `width * height` pixels.
    pub fn from_pixels(width: usize, height: usize, pixels: Vec<[u8; 3]>) -> Result<Self, crate::GridError> {
        let expected = width.saturating_mul(height);
        if pixels.len() != expected {
            return Err(crate::GridError::LengthMismatch { expected, actual: pixels.len() });
        }
        Ok(Self::new(width, height, pixels))
    }

    /// Wraps pixels the caller has sized `width * height`.
    pub(crate) fn new(width: usize, height: usize, pixels: Vec<[u8; 3]>) -> Self {
        debug_assert_eq!(pixels.len(), width * height);
        Self { width, height, pixels }
    }

    /// Width in pixels.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Height in pixels.
    pub fn height(&self) -> usize {
        self.height
    }

    /// The pixels, row by row, `[r, g, b]` each.
    pub fn pixels(&self) -> &[[u8; 3]] {
        &self.pixels
    }

    /// The pixels as bytes, `r, g, b` a pixel, row by row: what image libraries and
    /// GPU textures (`Rgb8`) take.
    pub fn as_bytes(&self) -> &[u8] {
        self.pixels.as_flattened()
    }

    /// The pixel at column `x`, row `y`, or `None` outside the picture.
    pub fn get(&self, x: usize, y: usize) -> Option<[u8; 3]> {
        (x < self.width && y < self.height).then(|| self.pixels[y * self.width + x])
    }

    /// The picture as an 8-bit RGB PNG file.
    ///
    /// # Errors
    /// [`IoError::Png`](crate::IoError::Png) if the encoder fails.
    #[cfg(feature = "png")]
    pub fn encode_png(&self) -> Result<Vec<u8>, crate::IoError> {
        crate::io::encode_rgb8(self.width, self.height, self.as_bytes())
    }

    /// Writes the picture to `path` as an 8-bit RGB PNG.
    ///
    /// # Errors
    /// As [`encode_png`](Self::encode_png), and [`IoError::Io`](crate::IoError::Io).
    #[cfg(feature = "png")]
    pub fn save_png(&self, path: impl AsRef<std::path::Path>) -> Result<(), crate::IoError> {
        Ok(std::fs::write(path, self.encode_png()?)?)
    }
}
