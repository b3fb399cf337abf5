//! The one error type of the core. Every failure a caller can cause (a damaged index, a model
//! that does not match, bad options) is a variant with a message that says what went wrong and
//! what to do; the CLI prints it, the wasm shell turns it into a `JsError`.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum Error {
    /// The bytes are not a cairn index, or the index is damaged.
    #[error("{0}")]
    InvalidIndex(String),
    /// The index was written by a different format version.
    #[error("index format version {found} is not supported (this cairn reads version {supported}); rebuild the index with `cairn index`")]
    UnsupportedVersion { found: u32, supported: u32 },
    /// The embedding model could not be loaded or does not match the index.
    #[error("{0}")]
    Model(String),
    /// A search option or query is invalid.
    #[error("{0}")]
    InvalidInput(String),
    /// An input document could not be read or parsed.
    #[error("{path}: {message}")]
    Ingest { path: String, message: String },
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(feature = "model")]
impl From<candle_core::Error> for Error {
    fn from(e: candle_core::Error) -> Self {
        Error::Model(format!("embedding model error: {e}"))
    }
}

/// A number for a message, as JavaScript writes it (`NaN`, `Infinity`, the shortest digits that
/// read back as the same value): serde_json's printer, which the results already link, so the
/// wasm core carries no second float formatter (core's `Display` of floats is about 8 kB gzip).
pub fn number<T: serde::Serialize + Into<f64> + Copy>(x: T) -> String {
    let wide: f64 = x.into();
    match wide {
        _ if wide.is_nan() => "NaN".into(),
        f64::INFINITY => "Infinity".into(),
        f64::NEG_INFINITY => "-Infinity".into(),
        _ if wide.fract() == 0.0 && wide.abs() < 1e15 => (wide as i64).to_string(),
        _ => serde_json::to_string(&x).unwrap_or_default(),
    }
}
