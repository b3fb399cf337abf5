//! `cairn merge`: joins the parts of a split build (`cairn::build::merge`) and says what it wrote.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Result;
use cairn::build::Layout;

/// `cairn merge`: joins the parts of a split build into the index one build would have written.
pub(super) fn merge(parts: &[PathBuf], out: &Path, model: &Path, layout: Layout) -> Result<()> {
    let started = Instant::now();
    let (index, path, bytes) = cairn::build::merge(parts, out, model, layout)?;
    println!(
        "merged {} parts: {} documents, {} chunks, {bytes} bytes ({path}) in {:.1} s",
        parts.len(),
        index.documents.len(),
        index.chunks.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
